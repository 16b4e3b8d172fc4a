import Koa from 'koa';
import type { AddressInfo } from 'node:net';
import { Form, readForm } from '../../src/http/forms.js';

/** One reader for every form of our pages (src/http/forms.ts). */
describe('forms (src/http/forms.ts)', () => {
  it('reads each field once, lets listed fields repeat, reads empty fields as absent', () => {
    const form = new Form([['name', 'Ada'], ['scope', 'a'], ['scope', ''], ['scope', 'b'], ['empty', '']], new Set(['scope']));
    expect(form.get('name')).toBe('Ada');
    expect(form.getAll('scope')).toEqual(['a', 'b']);
    expect(form.getAll('scope', { keepEmpty: true })).toEqual(['a', '', 'b']);
    expect(form.get('empty')).toBeUndefined();
    expect(form.has('empty')).toBe(false);
    expect(form.toQuery()).toBe('name=Ada&scope=a&scope=b');
    expect(() => new Form([['name', 'a'], ['name', 'b']])).toThrow("parameter 'name' must not be provided twice");
  });

  describe('over a real socket', () => {
    let base: string;
    let close: () => void;
    beforeAll(async () => {
      const app = new Koa();
      app.use(async (ctx) => {
        try {
          const form = await readForm(ctx, 64, new Set(['scope']));
          ctx.body = { name: form.get('name'), scopes: form.getAll('scope') };
        } catch (error) {
          ctx.status = (error as { status: number }).status;
          ctx.body = { error: (error as Error).message };
        }
      });
      const server = app.listen(0, '127.0.0.1');
      await new Promise((resolve) => server.once('listening', resolve));
      base = `http://127.0.0.1:${(server.address() as AddressInfo).port}/`;
      close = () => server.close();
    });
    afterAll(() => close());
    const post = async (body: string, type = 'application/x-www-form-urlencoded') => {
      const answer = await fetch(base, { method: 'POST', headers: { 'content-type': type }, body });
      return { status: answer.status, body: (await answer.json()) as Record<string, unknown> };
    };

    it.each([
      ['a form', 'name=Ada&scope=a&scope=b', 'application/x-www-form-urlencoded', 200],
      ['a form in upper case', 'name=Ada', 'Application/X-WWW-Form-URLEncoded', 200],
      ['JSON', '{"name":"Ada"}', 'application/json', 415],
      ['a body past the limit', `name=${'x'.repeat(100)}`, 'application/x-www-form-urlencoded', 413],
      ['a field twice', 'name=a&name=b', 'application/x-www-form-urlencoded', 400],
      ['a malformed escape', 'name=%ZZ', 'application/x-www-form-urlencoded', 400],
    ])('%s → %i', async (_what, body, type, status) => {
      expect((await post(body, type)).status).toBe(status);
    });
  });
});
