import { Validator } from '@seriousme/openapi-schema-validator';
import Ajv2020Module from 'ajv/dist/2020.js';
import addFormatsModule from 'ajv-formats';
import { exportJWK, generateKeyPair } from 'jose';
import Koa from 'koa';
import { serveWithNext } from '../support/koa-app.js';
import { openApiHandler } from '../../src/http/openapi.js';
import { openApiDocument } from '../../src/endpoints/index.js';
import { testAccounts } from '../support/accounts.js';
import { basic, postToken, startServer, type RunningServer } from '../support/server.js';
import { signInForCode } from '../support/sign-in.js';
import { UserAgent } from '../support/user-agent.js';

type Json = Record<string, unknown>;

/**
 * Every (method, path) we serve, read off the route code:
 * - src/compose/engine.ts mounts the engine at `{prefix}/oauth2`; src/engine/configuration.ts routes
 *   `/authorize` (GET and POST), `/token`, `/jwks`, the engine's discovery document and its
 *   sign-out pages (browser pages, left out); the engine's userinfo, introspection, revocation and
 *   PAR are off, ours are `/userinfo` (GET, POST), `/introspect` and `/revoke` (POST);
 * - src/endpoints/ops/discovery.ts: the RFC 8414 alias at `/.well-known/oauth-authorization-server{prefix}/oauth2`;
 * - src/endpoints/consents/consent-api.ts: GET `{base}`, DELETE `{base}/{clientId}`;
 * - src/endpoints/management/management-api.ts: the `routes` table (two collections × five operations), the
 *   audit events, the platform's apps and the sign-in unlock.
 * The interaction pages (`/oauth2/interaction/...`) are browser pages, left out on purpose.
 */
const served = (prefix: string): Array<[string, string]> => [
  ['post', `${prefix}/oauth2/token`],
  ['get', `${prefix}/oauth2/jwks`],
  ['get', `${prefix}/oauth2/.well-known/openid-configuration`],
  ['get', `/.well-known/oauth-authorization-server${prefix}/oauth2`],
  ['get', `${prefix}/oauth2/authorize`],
  ['post', `${prefix}/oauth2/authorize`],
  ['post', `${prefix}/oauth2/par`],
  ['get', `${prefix}/oauth2/userinfo`],
  ['post', `${prefix}/oauth2/userinfo`],
  ['post', `${prefix}/oauth2/introspect`],
  ['post', `${prefix}/oauth2/revoke`],
  ['get', `${prefix}/api/oauth2/consents`],
  ['delete', `${prefix}/api/oauth2/consents/{clientId}`],
  ['get', `${prefix}/api/oauth2/openapi.json`],
  ['get', `${prefix}/api/oauth2/audit-events`],
  ['get', `${prefix}/api/oauth2/platform-apps`],
  ['post', `${prefix}/api/oauth2/sign-ins/unlock`],
  ['get', `${prefix}/api/oauth2/users/{sub}/factors`],
  ['post', `${prefix}/api/oauth2/users/{sub}/factors/reset-request`],
  ['get', `${prefix}/api/oauth2/tenant-settings`],
  ['put', `${prefix}/api/oauth2/tenant-settings`],
  ['get', `${prefix}/api/oauth2/connections`],
  ['post', `${prefix}/api/oauth2/connections`],
  ['get', `${prefix}/api/oauth2/connections/{id}`],
  ['patch', `${prefix}/api/oauth2/connections/{id}`],
  ['delete', `${prefix}/api/oauth2/connections/{id}`],
  ...['client-configurations', 'app-registrations'].flatMap((collection): Array<[string, string]> => [
    ['get', `${prefix}/api/oauth2/${collection}`],
    ['post', `${prefix}/api/oauth2/${collection}`],
    ['get', `${prefix}/api/oauth2/${collection}/{clientId}`],
    ['patch', `${prefix}/api/oauth2/${collection}/{clientId}`],
    ['delete', `${prefix}/api/oauth2/${collection}/{clientId}`],
    ['post', `${prefix}/api/oauth2/${collection}/{clientId}/secret`],
  ]),
];

const METHODS = ['get', 'put', 'post', 'delete', 'options', 'head', 'patch', 'trace'];

function documented(document: Json): Array<[string, string]> {
  const paths = document.paths as Record<string, Json>;
  return Object.entries(paths).flatMap(([path, item]) =>
    Object.keys(item).filter((key) => METHODS.includes(key)).map((method): [string, string] => [method, path]));
}

const key = ([method, path]: [string, string]) => `${method.toUpperCase()} ${path}`;

const documentFor = (prefix: string, baseUrl = 'https://auth.example.com') =>
  openApiDocument({ issuer: `${baseUrl}${prefix}/oauth2`, baseUrl, pathPrefix: prefix });

async function validate(document: Json) {
  const validator = new Validator();
  const result = await validator.validate(document);
  return { result, validator };
}

/** The document with every `$ref` replaced, and a validator of its schemas (JSON Schema 2020-12). */
async function schemaChecker(document: Json) {
  const { result, validator } = await validate(document);
  expect(result).toEqual({ valid: true });
  const resolved = validator.resolveRefs() as Json;
  const ajv = new Ajv2020Module.default({ strict: false, allErrors: true });
  addFormatsModule.default(ajv);
  const operation = (method: string, path: string) => {
    const item = (resolved.paths as Record<string, Json>)[path];
    expect(item).toBeDefined();
    const found = item![method] as Json | undefined;
    expect(found).toBeDefined();
    return found!;
  };
  return {
    operation,
    schemaOf(method: string, path: string, status: number, mediaType = 'application/json'): Json {
      const responses = operation(method, path).responses as Record<string, Json>;
      const described = responses[String(status)];
      if (!described) throw new Error(`${method.toUpperCase()} ${path} does not document ${status}`);
      const content = described.content as Record<string, { schema: Json }> | undefined;
      const schema = content?.[mediaType]?.schema;
      if (!schema) throw new Error(`${method.toUpperCase()} ${path} ${status} has no ${mediaType} schema`);
      return schema;
    },
    /** Asserts `body` matches the schema, with Ajv's errors in the failure message. */
    check(schema: Json, body: unknown, what: string): void {
      const valid = ajv.validate(schema, body);
      if (!valid) throw new Error(`${what} does not match the document: ${ajv.errorsText(ajv.errors)}\n${JSON.stringify(body)}`);
    },
    ajv,
    resolved,
  };
}

describe('OpenAPI document', () => {
  it.each([[''], ['/auth2']])('is a valid OpenAPI 3.1 document (pathPrefix %j)', async (prefix) => {
    const document = documentFor(prefix);
    const { result, validator } = await validate(document);
    expect(result.errors).toBeUndefined();
    expect(result.valid).toBe(true);
    expect(validator.version).toBe('3.1');
    expect(document.openapi).toMatch(/^3\.1\./);
    expect(document.servers).toEqual([{ url: 'https://auth.example.com' }]);
  });

  it('every schema of it compiles as JSON Schema 2020-12', async () => {
    const checker = await schemaChecker(documentFor(''));
    const { schemas } = checker.resolved.components as { schemas: Record<string, Json> };
    expect(Object.keys(schemas).length).toBeGreaterThan(20);
    for (const schema of Object.values(schemas)) expect(() => checker.ajv.compile(schema)).not.toThrow();
  });

  it('describes every endpoint we serve and nothing else', () => {
    for (const prefix of ['', '/auth2']) {
      const expected = served(prefix).map(key).sort();
      expect(documented(documentFor(prefix)).map(key).sort()).toEqual(expected);
    }
  });

  it('carries the path prefix in every path but the RFC 8414 alias, which carries it at the end', () => {
    const paths = Object.keys(documentFor('/auth2').paths as Json);
    expect(paths).toHaveLength(26);
    for (const path of paths) {
      if (path.startsWith('/.well-known/')) expect(path).toBe('/.well-known/oauth-authorization-server/auth2/oauth2');
      else expect(path.startsWith('/auth2/')).toBe(true);
    }
    expect(Object.keys(documentFor('').paths as Json).some((path) => path.includes('/auth2'))).toBe(false);
  });

  it('says which browser pages it leaves out', () => {
    const info = documentFor('').info as { description: string };
    expect(info.description).toContain('/oauth2/interaction/{uid}');
  });

  it('the token endpoint takes the three grants, urlencoded and multipart, with Basic or (public apps) none', async () => {
    const document = documentFor('');
    const checker = await schemaChecker(document);
    const token = checker.operation('post', '/oauth2/token');
    expect(token.security).toEqual([{ basicAuth: [] }, {}]);
    const content = (token.requestBody as { content: Record<string, { schema: Json }> }).content;
    expect(Object.keys(content).sort()).toEqual(['application/x-www-form-urlencoded', 'multipart/form-data']);
    const request = content['application/x-www-form-urlencoded']!.schema;
    const ok = [
      { grant_type: 'client_credentials', scope: 'scim.read' },
      { grant_type: 'authorization_code', code: 'c', redirect_uri: 'https://a.example/cb', code_verifier: 'v'.repeat(43), client_id: 'x' },
      { grant_type: 'refresh_token', refresh_token: 'r' },
    ];
    for (const body of ok) checker.check(request, body, body.grant_type);
    expect(checker.ajv.validate(request, { grant_type: 'password' })).toBe(false);
    expect(checker.ajv.validate(request, { grant_type: 'authorization_code', code: 'c' })).toBe(false);
    const statuses = Object.keys(token.responses as Json).sort();
    expect(statuses).toEqual(['200', '400', '401', '413', '500']);
  });
});

describe('openApiHandler', () => {
  let served: Awaited<ReturnType<typeof serveWithNext>>;
  let url: string;
  const document = documentFor('/auth2');

  beforeAll(async () => {
    const app = new Koa();
    const handler = openApiHandler(document);
    app.use((ctx, next) => (ctx.path === '/auth2/api/oauth2/openapi.json' ? handler(ctx, {}, next) : next()));
    served = await serveWithNext(app);
    url = served.url;
  });
  afterAll(() => served.close());

  it('serves the document as cacheable JSON on GET', async () => {
    const response = await fetch(`${url}/auth2/api/oauth2/openapi.json`);
    expect(response.status).toBe(200);
    expect(response.headers.get('content-type')).toBe('application/json; charset=utf-8');
    expect(response.headers.get('cache-control')).toBe('public, max-age=300');
    expect(await response.json()).toEqual(document);
  });

  it('passes every other request on', async () => {
    for (const [method, path] of [['POST', '/auth2/api/oauth2/openapi.json'], ['GET', '/api/oauth2/openapi.json'], ['GET', '/auth2/api/oauth2/openapi.json/x']]) {
      const response = await fetch(`${url}${path}`, { method });
      expect(response.status).toBe(418);
    }
  });
});

describe('OpenAPI document against the running server', () => {
  let server: RunningServer;
  let checker: Awaited<ReturnType<typeof schemaChecker>>;
  let document: Json;
  const admin = { sub: 'admin', password: 'admin-pw', tenant: 'acme', permissions: ['integration_setup'] };
  const PORTAL = 'https://portal.example/cb';

  beforeAll(async () => {
    server = await startServer({ pathPrefix: '/auth2', accounts: testAccounts([admin]) });
    document = openApiDocument({ issuer: server.auth.issuer, baseUrl: server.baseUrl, pathPrefix: '/auth2' });
    checker = await schemaChecker(document);
  });
  afterAll(async () => {
    await server.stop();
  });

  it('the route table is what the server routes: each row answers, the engine endpoints we turned off do not', async () => {
    const id = '00000000-0000-4000-8000-000000000000';
    for (const [method, path] of served('/auth2')) {
      const response = await fetch(`${server.baseUrl}${path.replace('{clientId}', id)}`, {
        method: method.toUpperCase(),
        redirect: 'manual',
        ...(method === 'post' || method === 'patch' ? { headers: { 'content-type': 'application/x-www-form-urlencoded' }, body: '' } : {}),
      });
      // Bearer APIs check the token first (401); the token endpoint refuses the empty form; the
      // authorize endpoint without parameters shows its error page.
      expect([key([method, path]), response.status]).not.toEqual([key([method, path]), 404]);
      await response.arrayBuffer();
    }
    // The engine's own forms of what we serve elsewhere (`/request` is its path of the pushed
    // authorization requests we serve at `/par`), and what we turned off.
    for (const [method, path] of [['GET', '/auth2/oauth2/me'], ['POST', '/auth2/oauth2/token/introspection'], ['POST', '/auth2/oauth2/token/revocation'], ['POST', '/auth2/oauth2/reg'], ['POST', '/auth2/oauth2/request']] as const) {
      const response = await fetch(`${server.baseUrl}${path}`, { method, redirect: 'manual' });
      expect([method, path, response.status]).toEqual([method, path, 404]);
    }
  });

  it('a client_credentials token response has exactly the properties the token-response schema requires', async () => {
    const client = await server.auth.clientConfigurations.create({
      tenant: 'acme', name: 'n', category: 'c', resources: { scim: { scopes: ['scim.read'] } },
    });
    const response = await postToken(server.oauthUrl, 'grant_type=client_credentials', { authorization: basic(client.clientId, client.clientSecret) });
    expect(response.status).toBe(200);
    const schema = checker.schemaOf('post', '/auth2/oauth2/token', 200);
    expect(Object.keys(response.body).sort()).toEqual([...(schema.required as string[])].sort());
    checker.check(schema, response.body, 'token response');
    expect(response.headers.get('cache-control')).toBe('no-store');

    const wrong = await postToken(server.oauthUrl, 'grant_type=client_credentials', { authorization: basic(client.clientId, 'x'.repeat(43)) });
    expect(wrong.status).toBe(401);
    checker.check(checker.schemaOf('post', '/auth2/oauth2/token', 401), wrong.body, 'invalid_client');
    const grant = await postToken(server.oauthUrl, 'grant_type=password', { authorization: basic(client.clientId, client.clientSecret) });
    expect(grant.status).toBe(400);
    checker.check(checker.schemaOf('post', '/auth2/oauth2/token', 400), grant.body, 'unsupported_grant_type');
  });

  it('keys and metadata match their schemas, at the documented paths', async () => {
    const jwks = await fetch(`${server.oauthUrl}/jwks`);
    expect(jwks.status).toBe(200);
    checker.check(checker.schemaOf('get', '/auth2/oauth2/jwks', 200, 'application/jwk-set+json'), await jwks.json(), 'jwks');
    for (const path of ['/auth2/oauth2/.well-known/openid-configuration', '/.well-known/oauth-authorization-server/auth2/oauth2']) {
      const response = await fetch(`${server.baseUrl}${path}`);
      expect(response.status).toBe(200);
      checker.check(checker.schemaOf('get', path, 200), await response.json(), path);
    }
  });

  it('the APIs answer as documented: management, consents, a code exchange (with a signed-in user)', async () => {
    const api = `${server.baseUrl}/auth2/api/oauth2`;
    const missing = await fetch(`${api}/consents`);
    expect(missing.status).toBe(401);
    checker.check(checker.schemaOf('get', '/auth2/api/oauth2/consents', 401), await missing.json(), 'consents 401');

    const app = await server.auth.appRegistrations.create({ name: 'Portal', redirectUris: [PORTAL], clientType: 'confidential', firstParty: true });
    const { code, verifier } = await signInForCode(server, { clientId: app.clientId, redirectUri: PORTAL }, admin, 'openid scim.read manage.integrations', new UserAgent(server.baseUrl));
    const tokens = await postToken(server.oauthUrl, { grant_type: 'authorization_code', code, redirect_uri: PORTAL, code_verifier: verifier }, { authorization: basic(app.clientId, app.clientSecret!) });
    expect(tokens.status).toBe(200);
    checker.check(checker.schemaOf('post', '/auth2/oauth2/token', 200), tokens.body, 'code exchange');
    expect(tokens.body).toHaveProperty('refresh_token');
    expect(tokens.body).toHaveProperty('id_token');

    const call = async (method: string, template: string, id: string | undefined, body?: unknown) => {
      const path = template.replace('{clientId}', id ?? '').replace('{id}', id ?? '').replace('{sub}', encodeURIComponent(id ?? ''));
      const operation = checker.operation(method, template);
      if (body !== undefined) {
        const request = (operation.requestBody as { content: Record<string, { schema: Json }> }).content['application/json']!.schema;
        checker.check(request, body, `${method} ${template} request`);
      }
      const response = await fetch(`${server.baseUrl}${path}`, {
        method: method.toUpperCase(),
        headers: {
          authorization: `Bearer ${tokens.body.access_token as string}`,
          ...(body !== undefined ? { 'content-type': 'application/json' } : {}),
        },
        ...(body !== undefined ? { body: JSON.stringify(body) } : {}),
      });
      const text = await response.text();
      const parsed: unknown = text ? JSON.parse(text) : undefined;
      const described = (operation.responses as Record<string, Json>)[String(response.status)];
      if (!described) throw new Error(`${method} ${template} answered ${response.status}, which is not documented: ${text}`);
      if (described.content) checker.check(checker.schemaOf(method, template, response.status), parsed, `${method} ${template} ${response.status}`);
      else expect(text).toBe('');
      return { status: response.status, body: parsed as Json };
    };

    const clients = '/auth2/api/oauth2/client-configurations';
    const created = await call('post', clients, undefined, { name: 'Payroll sync', category: 'payroll', description: 'd', resources: { scim: { scopes: ['scim.read'], constraints: { group: ['eng'] } } } });
    expect(created.status).toBe(201);
    const clientId = created.body.client_id as string;
    expect((await call('get', clients, undefined)).status).toBe(200);
    expect((await call('get', `${clients}/{clientId}`, clientId)).status).toBe(200);
    expect((await call('patch', `${clients}/{clientId}`, clientId, { name: 'Renamed', description: '' })).status).toBe(200);
    expect((await call('post', `${clients}/{clientId}/secret`, clientId)).status).toBe(200);
    const invalid = await call('post', clients, undefined, { name: 'x', category: 'c', resources: { scim: { scopes: ['nope'] } } });
    expect(invalid.status).toBe(400);
    expect(invalid.body.field).toBe('resources.scim.scopes');
    expect((await call('delete', `${clients}/{clientId}`, clientId)).status).toBe(204);
    expect((await call('get', `${clients}/{clientId}`, clientId)).status).toBe(404);
    // private_key_jwt: the keys in, shown, no secret; the secret route's 400; back to Basic with a new secret.
    const { publicKey } = await generateKeyPair('ES256', { extractable: true });
    const jwks = { keys: [{ ...(await exportJWK(publicKey)), kid: 'k1', alg: 'ES256', use: 'sig' }] };
    const keyed = await call('post', clients, undefined, { name: 'Keys', category: 'payroll', resources: { scim: { scopes: ['scim.read'] } }, token_endpoint_auth_method: 'private_key_jwt', jwks });
    expect(keyed.body).toMatchObject({ token_endpoint_auth_method: 'private_key_jwt', jwks });
    expect(keyed.body).not.toHaveProperty('client_secret');
    const keyedId = keyed.body.client_id as string;
    expect((await call('post', `${clients}/{clientId}/secret`, keyedId)).body).toMatchObject({ field: 'token_endpoint_auth_method' });
    expect((await call('patch', `${clients}/{clientId}`, keyedId, { jwks_uri: 'https://keys.example.com/jwks' })).body).toMatchObject({ jwks_uri: 'https://keys.example.com/jwks' });
    expect((await call('patch', `${clients}/{clientId}`, keyedId, { token_endpoint_auth_method: 'client_secret_basic' })).body).toHaveProperty('client_secret');
    expect((await call('post', clients, undefined, { name: 'x', category: 'c', resources: { scim: { scopes: ['scim.read'] } }, token_endpoint_auth_method: 'private_key_jwt', jwks: { keys: [{ ...jwks.keys[0], d: 'AAAA' }] } })).body)
      .toMatchObject({ field: 'jwks.keys.0' });

    const apps = '/auth2/api/oauth2/app-registrations';
    const spa = await call('post', apps, undefined, { name: 'SPA', redirect_uris: [PORTAL], client_type: 'public' });
    expect(spa.status).toBe(201);
    const spaId = spa.body.client_id as string;
    expect((await call('post', `${apps}/{clientId}/secret`, spaId)).status).toBe(400);
    const confidential = await call('patch', `${apps}/{clientId}`, spaId, { client_type: 'confidential' });
    expect(confidential.body).toHaveProperty('client_secret');
    expect((await call('get', apps, undefined)).status).toBe(200);
    expect((await call('get', `${apps}/{clientId}`, spaId)).status).toBe(200);
    expect((await call('post', `${apps}/{clientId}/secret`, spaId)).status).toBe(200);
    expect((await call('delete', `${apps}/{clientId}`, spaId)).status).toBe(204);
    const keyedApp = await call('post', apps, undefined, { name: 'Keys', redirect_uris: [PORTAL], client_type: 'confidential', token_endpoint_auth_method: 'private_key_jwt', jwks_uri: 'https://keys.example.com/web' });
    expect(keyedApp.body).toMatchObject({ token_endpoint_auth_method: 'private_key_jwt', jwks_uri: 'https://keys.example.com/web' });
    expect((await call('post', `${apps}/{clientId}/secret`, keyedApp.body.client_id as string)).body).toMatchObject({ field: 'token_endpoint_auth_method' });

    const platform = await call('get', '/auth2/api/oauth2/platform-apps', undefined);
    expect(platform.body.platform_apps).toEqual([expect.objectContaining({ client_id: app.clientId, name: 'Portal', registered_by: 'platform', first_party: true })]);
    expect((await call('post', '/auth2/api/oauth2/sign-ins/unlock', undefined, { username: 'admin' })).body).toEqual({ unlocked: false });
    const settings = '/auth2/api/oauth2/tenant-settings';
    expect((await call('get', settings, undefined)).body).toEqual({ effective: { second_factor: 'required_for_permissions', passkey_only_sign_in: false, sso: 'optional' } });
    expect((await call('put', settings, undefined, { second_factor: 'required' })).body).toEqual({ second_factor: 'required', effective: { second_factor: 'required', passkey_only_sign_in: false, sso: 'optional' } });
    expect((await call('put', settings, undefined, {})).status).toBe(200);

    const connections = '/auth2/api/oauth2/connections';
    const connection = await call('post', connections, undefined, { name: 'Acme Okta', issuer: 'https://acme.okta.com', client_id: 'okta-client', client_secret: 'okta-secret', domains: ['acme.example'], claim_mapping: { email: 'upn' } });
    expect(connection.status).toBe(201);
    const connectionId = connection.body.id as string;
    expect((await call('get', connections, undefined)).status).toBe(200);
    expect((await call('get', `${connections}/{id}`, connectionId)).status).toBe(200);
    expect((await call('patch', `${connections}/{id}`, connectionId, { client_secret: 'new-secret', sign_out_upstream: true })).body).toMatchObject({ has_client_secret: true, sign_out_upstream: true });
    expect((await call('post', connections, undefined, { name: 'x', issuer: 'http://127.0.0.1', client_id: 'c', domains: [] })).body).toMatchObject({ field: 'issuer' });
    expect((await call('delete', `${connections}/{id}`, connectionId)).status).toBe(204);
    expect((await call('get', `${connections}/{id}`, connectionId)).status).toBe(404);

    const factors = '/auth2/api/oauth2/users/{sub}/factors';
    // The admin enrolled at her first sign-in (a management permission asks for a second factor).
    expect((await call('get', factors, 'admin')).body).toMatchObject({ factors: [{ type: 'totp' }, { type: 'recovery_codes' }], reset_requested: false });
    expect((await call('get', factors, 'nobody')).status).toBe(404);
    expect((await call('post', `${factors}/reset-request`, 'admin')).body).toEqual({ reset_requested: true });
    expect((await call('get', factors, 'nobody')).status).toBe(404);
    expect((await call('post', `${factors}/reset-request`, 'x'.repeat(256))).status).toBe(400);
    // The tests after this one sign her in with the password alone.
    expect(await server.auth.factors.reset({ tenant: 'acme', sub: 'admin' })).toBe(true);

    const activity = await call('get', '/auth2/api/oauth2/audit-events', undefined);
    expect((activity.body.events as unknown[]).length).toBeGreaterThan(0);
    const consents = await call('get', '/auth2/api/oauth2/consents', undefined);
    expect((consents.body.consents as unknown[]).length).toBe(1);
    expect((await call('delete', '/auth2/api/oauth2/consents/{clientId}', spaId)).status).toBe(404);
    expect((await call('delete', '/auth2/api/oauth2/consents/{clientId}', app.clientId)).status).toBe(204);
  });

  it('userinfo, introspection and revocation answer as documented', async () => {
    const app = await server.auth.appRegistrations.create({ name: 'Doc RP', redirectUris: [PORTAL], clientType: 'confidential' });
    const { code, verifier } = await signInForCode(server, { clientId: app.clientId, redirectUri: PORTAL }, admin, 'openid profile email scim.read', new UserAgent(server.baseUrl));
    const tokens = await postToken(server.oauthUrl, { grant_type: 'authorization_code', code, redirect_uri: PORTAL, code_verifier: verifier }, { authorization: basic(app.clientId, app.clientSecret!) });
    const accessToken = tokens.body.access_token as string;
    const userinfo = await fetch(`${server.oauthUrl}/userinfo`, { headers: { authorization: `Bearer ${accessToken}` } });
    expect(userinfo.status).toBe(200);
    checker.check(checker.schemaOf('get', '/auth2/oauth2/userinfo', 200), await userinfo.json(), 'userinfo');
    const refused = await fetch(`${server.oauthUrl}/userinfo`);
    checker.check(checker.schemaOf('get', '/auth2/oauth2/userinfo', 401), await refused.json(), 'userinfo 401');
    const form = (token: string) => ({ method: 'POST', headers: { authorization: basic(app.clientId, app.clientSecret!), 'content-type': 'application/x-www-form-urlencoded' }, body: `token=${token}` });
    for (const token of [accessToken, 'unknown']) {
      const introspection = await fetch(`${server.oauthUrl}/introspect`, form(token));
      expect(introspection.status).toBe(200);
      checker.check(checker.schemaOf('post', '/auth2/oauth2/introspect', 200), await introspection.json(), `introspection of ${token === accessToken ? 'a live' : 'an unknown'} token`);
    }
    const badCaller = await fetch(`${server.oauthUrl}/introspect`, { ...form(accessToken), headers: { 'content-type': 'application/x-www-form-urlencoded' } });
    checker.check(checker.schemaOf('post', '/auth2/oauth2/introspect', 401), await badCaller.json(), 'introspection 401');
    const revoked = await fetch(`${server.oauthUrl}/revoke`, form(tokens.body.refresh_token as string));
    expect(revoked.status).toBe(200);
    expect(await revoked.text()).toBe('');
  });

  it('serves the document at {pathPrefix}/api/oauth2/openapi.json', async () => {
    const response = await fetch(`${server.baseUrl}/auth2/api/oauth2/openapi.json`);
    expect(response.status).toBe(200);
    expect(response.headers.get('cache-control')).toBe('public, max-age=300');
    expect(await response.json()).toEqual(openApiDocument({ issuer: server.auth.issuer, baseUrl: server.baseUrl, pathPrefix: '/auth2' }));
  });
});
