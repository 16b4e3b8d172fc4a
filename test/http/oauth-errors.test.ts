import Koa from 'koa';
import type { AddressInfo } from 'node:net';
import { oauthErrors } from '../../src/http/oauth-errors.js';

const quiet = { info() {}, warn() {}, error() {} };

/**
 * The one renderer of errors (src/http/oauth-errors.ts) keeps every `error_description` it lets
 * out in the RFC 6749 charset, whoever wrote it: a JSON body of the engine's, or an error the
 * engine sends back to the app in a redirect.
 */
describe('oauthErrors: descriptions that pass through', () => {
  async function answer(handler: Koa.Middleware): Promise<Response> {
    const app = new Koa();
    app.use(oauthErrors('https://issuer.example', quiet));
    app.use(handler);
    const server = app.listen(0, '127.0.0.1');
    await new Promise((resolve) => server.once('listening', resolve));
    try {
      return await fetch(`http://127.0.0.1:${(server.address() as AddressInfo).port}/`, { redirect: 'manual' });
    } finally {
      server.close();
    }
  }

  it('a JSON body of another writer (the engine): quotes, backslashes and non-ASCII replaced', async () => {
    const response = await answer((ctx) => {
      ctx.status = 400;
      ctx.body = { error: 'invalid_request', error_description: 'origin "https://a\\b.example" not allowed é' };
    });
    expect(await response.json()).toEqual({ error: 'invalid_request', error_description: "origin 'https://a/b.example' not allowed ?" });
  });

  it('an error redirected back to the app: its error_description too, the rest of the URL untouched', async () => {
    const back = new URL('https://app.example/cb?x=1');
    back.searchParams.set('error', 'invalid_scope');
    back.searchParams.set('error_description', 'unknown scope "address"');
    back.searchParams.set('state', 'a"b');
    const response = await answer((ctx) => {
      ctx.status = 303;
      ctx.set('Location', back.href);
    });
    const location = new URL(response.headers.get('location')!);
    expect(location.searchParams.get('error_description')).toBe("unknown scope 'address'");
    expect(location.searchParams.get('state')).toBe('a"b');
    expect(location.searchParams.get('x')).toBe('1');
  });

  it('a redirect without an error, or with a description in the charset, is left as it is', async () => {
    for (const location of ['https://app.example/cb?code=a%22b&state=s', 'https://app.example/cb?error=access_denied&error_description=the+user+denied']) {
      const response = await answer((ctx) => {
        ctx.status = 303;
        ctx.set('Location', location);
      });
      expect(response.headers.get('location')).toBe(location);
    }
  });
});
