import Koa from 'koa';
import { serveWithNext } from '../support/koa-app.js';
import { NotFound, OAuthError } from '../../policies/errors.js';
import { Router, type RouteHandler } from '../../src/http/router.js';
import type { RouteName } from '../../src/http/routes.js';
import { routeTable } from '../../src/endpoints/index.js';

const table = routeTable('/auth2');
const router = new Router(table, {});

describe('the route table (src/http/routes.ts)', () => {
  it.each([
    ['/auth2/oauth2/token', 'token', {}],
    ['/auth2/OAuth2/Token/', 'token', {}],
    ['/auth2/oauth2/authorize', 'authorize', {}],
    ['/auth2/oauth2/authorize/abc', 'authorizeResume', { uid: 'abc' }],
    ['/auth2/oauth2/jwks', 'jwks', {}],
    ['/auth2/oauth2/.well-known/openid-configuration', 'openidConfiguration', {}],
    ['/.well-known/oauth-authorization-server/auth2/oauth2', 'metadataAlias', {}],
    ['/auth2/oauth2/interaction/Ab_-9', 'interaction', { uid: 'Ab_-9' }],
    ['/auth2/oauth2/interaction/Ab9/login', 'interactionStep', { uid: 'Ab9', step: 'login' }],
    ['/auth2/oauth2/session/end', 'endSession', {}],
    ['/auth2/oauth2/session/end/confirm', 'endSessionConfirm', {}],
    ['/auth2/oauth2/userinfo', 'userinfo', {}],
    ['/auth2/oauth2/introspect', 'introspection', {}],
    ['/auth2/oauth2/revoke', 'revocation', {}],
    ['/auth2/oauth2/certs', 'engine', { rest: 'certs' }],
    ['/auth2/api/oauth2/consents', 'consents', {}],
    ['/auth2/api/oauth2/consents/a%20b', 'consent', { clientId: 'a b' }],
    ['/auth2/api/oauth2/client-configurations', 'clientConfigurations', {}],
    ['/auth2/api/oauth2/client-configurations/x', 'clientConfiguration', { clientId: 'x' }],
    ['/auth2/api/oauth2/client-configurations/x/secret', 'clientConfigurationSecret', { clientId: 'x' }],
    ['/auth2/api/oauth2/app-registrations/x', 'appRegistration', { clientId: 'x' }],
    ['/auth2/api/oauth2/openapi.json', 'openapi', {}],
    ['/auth2/healthz', 'healthz', {}],
    ['/auth2/readyz', 'readyz', {}],
    ['/auth2/metrics', 'metrics', {}],
  ])('%s is %s %j', (path, name, params) => {
    expect(router.match(path)).toEqual({ route: expect.objectContaining({ name }), params });
  });

  it.each([
    ['/oauth2/token', 'without the prefix'],
    ['/auth2/API/oauth2/consents', 'our API paths are exact'],
    ['/auth2/api/oauth2/consents/', 'no trailing slash on ours'],
    ['/auth2/api/oauth2/client-configurations/x/y', 'no such row'],
    ['/auth2/healthz/x', 'no such row'],
  ])('%s is no route (%s)', (path) => {
    expect(router.match(path)).toBeUndefined();
  });

  it('a parameter that is not valid percent-encoding is 404', () => {
    expect(() => router.match('/auth2/api/oauth2/client-configurations/%E0%A4%A')).toThrow(NotFound);
  });

  it.each(table.map((route) => [route.name, route] as const))('%s: its documented methods are methods it answers, its groups are labels', (_name, route) => {
    for (const method of route.documented) expect(route.methods).toContain(method);
    expect([
      'token', 'authorize', 'interaction', 'jwks', 'discovery', 'consent_api', 'management_api',
      'userinfo', 'introspection', 'revocation', 'sign_out', 'health', 'metrics', 'other',
    ]).toContain(route.group);
  });

  it('the store is needed everywhere but the documents answered from memory, the passkey script, the health routes and the way back from a provider sign-out (sealed)', () => {
    const storeFree = table.filter((route) => !route.store).map((route) => route.name).sort();
    expect(storeFree).toEqual(['endSessionSuccess', 'federationSignedOut', 'healthz', 'jwks', 'metadataAlias', 'metrics', 'openapi', 'openidConfiguration', 'passkeyScript', 'readyz']);
  });
});

describe('the router (src/http/router.ts)', () => {
  let served: Awaited<ReturnType<typeof serveWithNext>>;
  let url: string;
  const seen: string[] = [];
  const handler = (name: RouteName): RouteHandler => async (ctx, params) => {
    seen.push(`${ctx.method} ${name} ${JSON.stringify(params)}`);
    ctx.body = { name };
  };

  beforeAll(async () => {
    const app = new Koa();
    const routed = new Router(routeTable(''), {
      token: handler('token'),
      consents: handler('consents'),
      interaction: handler('interaction'),
      authorize: async (_ctx, _params, next) => next(),
    });
    app.use(async (ctx, next) => {
      try {
        await next();
      } catch (error) {
        if (!(error instanceof OAuthError)) throw error;
        ctx.status = error.status;
        ctx.set(error.headers);
        ctx.body = error.toJSON();
      }
    });
    app.use(routed.dispatch());
    served = await serveWithNext(app);
    url = served.url;
  });
  afterAll(() => served.close());

  it.each([
    ['POST', '/oauth2/token', 200, null, 'POST token {}'],
    ['OPTIONS', '/oauth2/token', 200, null, 'OPTIONS token {}'],
    ['GET', '/oauth2/token', 405, 'POST', undefined],
    ['PUT', '/api/oauth2/consents', 405, 'GET', undefined],
    ['GET', '/api/oauth2/consents', 200, null, 'GET consents {}'],
    ['HEAD', '/oauth2/interaction/abc', 200, null, 'HEAD interaction {"uid":"abc"}'],
    // The engine decides for its rows, and rows without a handler are not ours to answer.
    ['PUT', '/oauth2/authorize', 418, null, undefined],
    ['POST', '/oauth2/authorize', 418, null, undefined],
    ['GET', '/oauth2/jwks', 418, null, undefined],
    ['DELETE', '/healthz', 418, null, undefined],
    ['GET', '/elsewhere', 418, null, undefined],
  ])('%s %s → %i (Allow %s)', async (method, path, status, allow, handled) => {
    seen.length = 0;
    const response = await fetch(`${url}${path}`, { method });
    expect(response.status).toBe(status);
    expect(response.headers.get('allow')).toBe(allow);
    expect(seen).toEqual(handled ? [handled] : []);
  });

  it('another method on a sign-in page is a 405 page', async () => {
    const response = await fetch(`${url}/oauth2/interaction/abc`, { method: 'PUT' });
    expect(response.status).toBe(405);
    expect(response.headers.get('allow')).toBe('GET, HEAD');
    expect(response.headers.get('content-type')).toContain('text/html');
  });
});
