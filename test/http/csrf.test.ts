import Koa from 'koa';
import type { AddressInfo } from 'node:net';
import { CsrfTokens } from '../../src/http/csrf.js';

/** The CSRF rule of our pages (src/http/csrf.ts), over a real socket: the cookie it sets, the checks it makes. */
describe('CSRF tokens (src/http/csrf.ts)', () => {
  const ORIGIN = 'https://auth.example';
  let base: string;
  let close: () => void;
  beforeAll(async () => {
    const app = new Koa();
    app.keys = ['a-cookie-key-of-at-least-32-characters'];
    const tokens = new CsrfTokens('test_csrf', '/pages', ORIGIN);
    app.use((ctx) => {
      // `?twice`: a page that asks for a token twice (two forms).
      if (ctx.method === 'GET') ctx.body = ctx.query.twice === undefined ? tokens.issue(ctx) : [tokens.issue(ctx), tokens.issue(ctx)][1];
      else ctx.body = tokens.refusal(ctx, ctx.get('x-form-csrf') || undefined) ?? 'ok';
    });
    const server = app.listen(0, '127.0.0.1');
    await new Promise((resolve) => server.once('listening', resolve));
    base = `http://127.0.0.1:${(server.address() as AddressInfo).port}/pages`;
    close = () => server.close();
  });
  afterAll(() => close());

  async function issued(): Promise<{ token: string; cookie: string }> {
    const answer = await fetch(base);
    const cookies = answer.headers.getSetCookie();
    expect(cookies.join('\n')).toMatch(/test_csrf=[^;]+; path=\/pages; samesite=strict; httponly/i);
    return { token: await answer.text(), cookie: cookies.map((line) => line.split(';')[0]).join('; ') };
  }
  const post = (headers: Record<string, string>) => fetch(base, { method: 'POST', headers }).then((answer) => answer.text());

  it.each([
    ['the token of its page, from our origin', (t: string) => ({ 'x-form-csrf': t, origin: ORIGIN }), 'ok'],
    ['no Origin at all (an older browser)', (t: string) => ({ 'x-form-csrf': t }), 'ok'],
    ['Origin: null with Sec-Fetch-Site same-origin', (t: string) => ({ 'x-form-csrf': t, origin: 'null', 'sec-fetch-site': 'same-origin' }), 'ok'],
    ['Origin: null from another site', (t: string) => ({ 'x-form-csrf': t, origin: 'null', 'sec-fetch-site': 'cross-site' }), 'other_site'],
    ['another origin', (t: string) => ({ 'x-form-csrf': t, origin: 'https://evil.example' }), 'other_site'],
    ['another token', () => ({ 'x-form-csrf': 'A'.repeat(32), origin: ORIGIN }), 'expired'],
    ['no token', () => ({ origin: ORIGIN }), 'expired'],
  ])('%s → %s', async (_what, headersOf, answer) => {
    const { token, cookie } = await issued();
    expect(await post({ ...headersOf(token), cookie })).toBe(answer);
  });

  it('signs its cookie, and refuses a cookie it did not sign: a token chosen by another (a cookie set from a sibling host)', async () => {
    const { token, cookie } = await issued();
    expect(cookie).toMatch(/(^|; )test_csrf\.sig=[^;]+/);
    const chosen = 'B'.repeat(32);
    expect(await post({ 'x-form-csrf': chosen, origin: ORIGIN, cookie: `test_csrf=${chosen}` })).toBe('expired');
    const signature = /test_csrf\.sig=([^;]+)/.exec(cookie)![1]!;
    expect(await post({ 'x-form-csrf': chosen, origin: ORIGIN, cookie: `test_csrf=${chosen}; test_csrf.sig=${signature}` })).toBe('expired');
    expect(await post({ 'x-form-csrf': token, origin: ORIGIN, cookie })).toBe('ok');
  });

  it('a token asked twice for one answer sets one cookie (and one signature): the last token\'s', async () => {
    const answer = await fetch(`${base}?twice`);
    const cookies = answer.headers.getSetCookie();
    expect(cookies.filter((line) => line.startsWith('test_csrf='))).toHaveLength(1);
    expect(cookies.filter((line) => line.startsWith('test_csrf.sig='))).toHaveLength(1);
    const cookie = cookies.map((line) => line.split(';')[0]).join('; ');
    expect(await post({ 'x-form-csrf': await answer.text(), origin: ORIGIN, cookie })).toBe('ok');
  });

  it('a token without its cookie is refused', async () => {
    const { token } = await issued();
    expect(await post({ 'x-form-csrf': token, origin: ORIGIN })).toBe('expired');
  });
});
