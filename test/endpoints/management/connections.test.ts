import { ConnectionBody, ConnectionList } from '../../../src/http/wire-connections.js';
import { testAccounts } from '../../support/accounts.js';
import { basic, postToken, startServer, type RunningServer } from '../../support/server.js';
import { signInForCode } from '../../support/sign-in.js';
import { STORE_KINDS, useStore } from '../../support/stores.js';
import { UserAgent } from '../../support/user-agent.js';
import { auditEventsOnceWritten } from '../../support/audit.js';

const PORTAL = 'https://portal.example/cb';
const SECRET = 'entra-client-secret-9d3f1a7c5e2b4d6f8a0c';
const NEW_SECRET = 'entra-client-secret-replaced-1b3d5f7a9c';

type Answer = { error?: string; error_description?: string; field?: string } & Record<string, unknown>;

/**
 * A TENANT'S CONNECTIONS in the management API (src/endpoints/management/connections.ts), over
 * real sockets on both stores: its admins list, create, read, change and delete their tenant's
 * identity providers only; another tenant's is a 404 like nobody's; a tenant names https public
 * issuers and public domains only; the secret goes in and never comes out; every change audited
 * with the admin as actor; bad input a clear 4xx naming the wire field, nothing stored.
 */
describe.each(STORE_KINDS)('connections in the management API (%s store)', (kind) => {
  const store = useStore(kind);
  let server: RunningServer;
  const admin = { sub: 'admin', password: 'admin-pw', tenant: 'acme', permissions: ['integration_setup'] };
  const other = { sub: 'other-admin', password: 'other-pw', tenant: 'globex', permissions: ['integration_setup'] };
  const plain = { sub: 'plain', password: 'plain-pw', tenant: 'acme' };
  const tokens = new Map<string, string>();

  beforeAll(async () => {
    server = await startServer({ store: store.option(), accounts: testAccounts([admin, other, plain]) });
    const app = await server.auth.appRegistrations.create({ name: 'Portal', redirectUris: [PORTAL], clientType: 'confidential', firstParty: true });
    for (const user of [admin, other, plain]) {
      const { code, verifier } = await signInForCode(server, { clientId: app.clientId, redirectUri: PORTAL }, user, 'openid manage.integrations', new UserAgent(server.baseUrl));
      const response = await postToken(server.oauthUrl, { grant_type: 'authorization_code', code, redirect_uri: PORTAL, code_verifier: verifier }, { authorization: basic(app.clientId, app.clientSecret!) });
      tokens.set(user.sub, response.body.access_token as string);
    }
  });
  afterAll(() => server.stop());
  afterEach(async () => {
    for (const tenant of ['acme', 'globex']) {
      for (const connection of await server.auth.connections.list(tenant)) await server.auth.connections.delete(connection.id);
    }
  });

  const call = async (path: string, init: { method?: string; body?: string | object; as?: string; type?: string } = {}) => {
    const response = await fetch(`${server.baseUrl}/api/oauth2/connections${path}`, {
      method: init.method ?? 'GET',
      headers: {
        ...(init.as === 'nobody' ? {} : { authorization: `Bearer ${tokens.get(init.as ?? 'admin')}` }),
        ...(init.body !== undefined ? { 'content-type': init.type ?? 'application/json' } : {}),
      },
      ...(init.body !== undefined ? { body: typeof init.body === 'string' ? init.body : JSON.stringify(init.body) } : {}),
    });
    const text = await response.text();
    return { status: response.status, headers: response.headers, text, body: (text ? JSON.parse(text) : undefined) as Answer };
  };
  const entra = {
    name: 'Acme Entra ID',
    issuer: 'https://login.microsoftonline.com/3f2a7c1e-0000-4000-8000-000000000001/v2.0',
    client_id: 'acme-portal',
    client_secret: SECRET,
    domains: ['acme.example'],
  };
  const create = (body: object = entra, as?: string) => call('', { method: 'POST', body, ...(as ? { as } : {}) });
  const events = async (tenant: string, type: string) => auditEventsOnceWritten(server.auth.audit, { tenant, type: type as never });

  it('creates (201), lists, reads, changes and deletes the tenant\'s connections; the secret never comes out', async () => {
    const created = await create();
    expect(created.status).toBe(201);
    expect(created.headers.get('cache-control')).toBe('no-store');
    expect(ConnectionBody.parse(created.body)).toEqual({
      id: expect.any(String),
      tenant: 'acme',
      name: 'Acme Entra ID',
      issuer: entra.issuer,
      client_id: 'acme-portal',
      token_endpoint_auth_method: 'client_secret_basic',
      has_client_secret: true,
      scopes: ['openid', 'email', 'profile'],
      domains: ['acme.example'],
      // Named by the tenant's admin: not verified (it serves the tenant's own apps only).
      verified_domains: [],
      claim_mapping: {},
      sign_out_upstream: false,
      mfa_acr_values: [],
      redirect_uri: expect.any(String),
      created_at: expect.any(String),
      updated_at: expect.any(String),
    });
    const id = created.body.id as string;
    // Its own redirect URI, known once it exists: the one its sign-ins send to the provider.
    expect(created.body.redirect_uri).toBe(`${server.oauthUrl}/federation/callback/${id}`);
    expect((await server.auth.connections.get(id))?.redirectUri).toBe(created.body.redirect_uri);
    const listed = await call('');
    expect(listed.status).toBe(200);
    expect(ConnectionList.parse(listed.body)).toEqual({ connections: [created.body] });
    expect((await call(`/${id}`)).body).toEqual(created.body);

    const patched = await call(`/${id}`, { method: 'PATCH', body: { name: 'Acme SSO', client_secret: NEW_SECRET, claim_mapping: { email: 'upn' }, sign_out_upstream: true, scopes: ['email'] } });
    expect(patched.status).toBe(200);
    expect(ConnectionBody.parse(patched.body)).toMatchObject({ name: 'Acme SSO', claim_mapping: { email: 'upn' }, sign_out_upstream: true, scopes: ['openid', 'email'], has_client_secret: true, redirect_uri: created.body.redirect_uri });
    expect((await server.auth.connections.get(id))?.name).toBe('Acme SSO');

    const deleted = await call(`/${id}`, { method: 'DELETE' });
    expect(deleted.status).toBe(204);
    expect((await call(`/${id}`)).status).toBe(404);
    expect((await call(`/${id}`, { method: 'DELETE' })).status).toBe(404);
    expect((await call('')).body).toEqual({ connections: [] });

    for (const answer of [created, listed, patched]) {
      expect(answer.text).not.toContain(SECRET);
      expect(answer.text).not.toContain(NEW_SECRET);
      expect(answer.text).not.toMatch(/"client_secret"/);
    }
  });

  it('every connection has its own redirect URI (in the list, a read and a change), and the OpenAPI document says it is always there', async () => {
    const first = await create();
    const second = await create({ ...entra, name: 'Acme Okta', issuer: 'https://acme.okta.com', domains: ['acme-okta.example'] });
    expect(second.status).toBe(201);
    expect(second.body.redirect_uri).toBe(`${server.oauthUrl}/federation/callback/${second.body.id as string}`);
    expect(second.body.redirect_uri).not.toBe(first.body.redirect_uri);
    const listed = ConnectionList.parse((await call('')).body).connections;
    expect(listed.map((each) => [each.id, each.redirect_uri])).toEqual([[first.body.id, first.body.redirect_uri], [second.body.id, second.body.redirect_uri]]);
    const document = await (await fetch(`${server.baseUrl}/api/oauth2/openapi.json`)).json() as { components: { schemas: Record<string, { required?: string[]; properties: Record<string, { description?: string }> }> } };
    const schema = document.components.schemas.Connection!;
    expect(schema.required).toContain('redirect_uri');
    expect(schema.properties.redirect_uri!.description).toContain('/oauth2/federation/callback/{id}');
  });

  it('audits every change with the admin as actor and her address, never the secret', async () => {
    const { body } = await create();
    const id = body.id as string;
    await call(`/${id}`, { method: 'PATCH', body: { client_secret: NEW_SECRET } });
    await call(`/${id}`, { method: 'DELETE' });
    const target = { type: 'connection', id };
    const actor = { type: 'user', id: 'admin' };
    expect((await events('acme', 'connection.created'))[0]).toMatchObject({ actor, target, address: '127.0.0.1', details: { client_secret: true, domains: ['acme.example'] } });
    expect((await events('acme', 'connection.updated'))[0]).toMatchObject({ actor, target, details: { fields: ['clientSecret'] } });
    expect((await events('acme', 'connection.deleted'))[0]).toMatchObject({ actor, target });
    const trail = JSON.stringify((await server.auth.audit.list({ tenant: 'acme' })).events);
    expect(trail).not.toContain(SECRET);
    expect(trail).not.toContain(NEW_SECRET);
  });

  it("each tenant its own: another tenant's connection is a 404 like one that exists nowhere, recorded as a probe, and unchanged", async () => {
    const { body } = await create();
    const id = body.id as string;
    expect((await call('', { as: 'other-admin' })).body).toEqual({ connections: [] });
    const missing = '00000000-0000-4000-8000-000000000000';
    for (const method of ['GET', 'PATCH', 'DELETE']) {
      const theirs = await call(`/${id}`, { method, as: 'other-admin', ...(method === 'PATCH' ? { body: { name: 'Hijacked' } } : {}) });
      const nobody = await call(`/${missing}`, { method, as: 'other-admin', ...(method === 'PATCH' ? { body: { name: 'Hijacked' } } : {}) });
      expect(theirs.status).toBe(404);
      expect(nobody.status).toBe(404);
      expect(theirs.body.error).toBe('not_found');
      expect(theirs.body.error_description!.replace(id, 'X')).toBe(nobody.body.error_description!.replace(missing, 'X'));
    }
    expect(await server.auth.connections.get(id)).toMatchObject({ name: 'Acme Entra ID', tenant: 'acme' });
    const probes = await events('globex', 'management.denied');
    // Refusals are counted per who, route and window (AuditTrail.recordRefusal): at least one recorded.
    expect(probes.length).toBeGreaterThanOrEqual(1);
    expect(probes[0]).toMatchObject({ actor: { type: 'user', id: 'other-admin' }, target: { type: 'management_api', id: 'connection' }, details: { status: 404, error: 'not_found' } });
    // A domain another tenant's connection owns is refused, naming it.
    const taken = await create({ ...entra, domains: ['globex.example', 'acme.example'] }, 'other-admin');
    expect(taken.status).toBe(400);
    expect(taken.body).toMatchObject({ error: 'invalid_request', field: 'domains.1' });
    expect(await server.auth.connections.list('globex')).toEqual([]);
  });

  it("only the management API's callers: 401 without a token, 403 without the right; other methods 405", async () => {
    expect((await call('', { as: 'nobody' })).status).toBe(401);
    const refused = await call('', { as: 'plain' });
    expect(refused.status).toBe(403);
    expect(refused.headers.get('www-authenticate')).toContain('insufficient_scope');
    expect((await create(entra, 'plain')).status).toBe(403);
    expect((await call('', { method: 'PUT', body: entra })).status).toBe(405);
    expect((await call('/x', { method: 'POST', body: entra })).status).toBe(405);
    expect(await server.auth.connections.list('acme')).toEqual([]);
  });

  it.each<[string, object, string]>([
    ['a loopback http issuer (the operator\'s, not a tenant\'s)', { issuer: 'http://127.0.0.1:4455' }, 'issuer'],
    ['an issuer on another port', { issuer: 'https://login.acme.example:8443' }, 'issuer'],
    ['an issuer at an IP address', { issuer: 'https://203.0.113.9' }, 'issuer'],
    ['an issuer on a .internal name', { issuer: 'https://sso.corp.internal' }, 'issuer'],
    ["a mailbox provider's shared domain", { domains: ['gmail.com'] }, 'domains.0'],
    ['a private domain', { domains: ['acme.local'] }, 'domains.0'],
    ['a domain listed twice', { domains: ['acme.example', 'ACME.example'] }, 'domains.1'],
    ['no client ID', { client_id: undefined }, 'client_id'],
    ['a client ID with a space', { client_id: 'a b' }, 'client_id'],
    ['no domains', { domains: undefined }, 'domains'],
    ['a tenant of its own choosing', { tenant: 'globex' }, 'tenant'],
    ['the library\'s camelCase', { clientId: 'x' }, 'clientId'],
    ['a secret with private_key_jwt', { token_endpoint_auth_method: 'private_key_jwt' }, 'client_secret'],
    ['no secret with client_secret_post', { client_secret: undefined, token_endpoint_auth_method: 'client_secret_post' }, 'client_secret'],
    ['an unknown method', { token_endpoint_auth_method: 'none' }, 'token_endpoint_auth_method'],
    ['a claim mapping of an unknown claim', { claim_mapping: { groups: 'roles' } }, 'claim_mapping.groups'],
    ['a claim mapping to no claim name', { claim_mapping: { email: 'e mail' } }, 'claim_mapping.email'],
    ['sign_out_upstream not a boolean', { sign_out_upstream: 'yes' }, 'sign_out_upstream'],
    ['a scope with a space', { scopes: ['openid email'] }, 'scopes.0'],
  ])('refuses %s with 400 naming the wire field, and stores nothing', async (_name, change, field) => {
    const body = JSON.parse(JSON.stringify({ ...entra, ...change })) as object;
    const answer = await create(body);
    expect(answer.status).toBe(400);
    expect(answer.body).toMatchObject({ error: 'invalid_request', field });
    expect(answer.body.error_description).toMatch(new RegExp(`^${field.replace('.', '\\.')}: `));
    expect(answer.text).not.toContain(SECRET);
    expect(await server.auth.connections.list('acme')).toEqual([]);
    expect(await events('acme', 'connection.created')).toEqual(expect.not.arrayContaining([expect.objectContaining({ details: expect.objectContaining({ domains: (change as { domains?: unknown }).domains }) })]));
  });

  it('a patch is ruled alike: a bad field is 400 naming it, the tenant never changes, nothing is changed', async () => {
    const { body } = await create();
    const id = body.id as string;
    for (const [patch, field] of [
      [{ issuer: 'http://localhost:4455' }, 'issuer'],
      [{ domains: ['outlook.com'] }, 'domains.0'],
      [{ tenant: 'globex' }, 'tenant'],
      [{ client_secret: '' }, 'client_secret'],
      [{ token_endpoint_auth_method: 'private_key_jwt' }, 'client_secret'],
      [{ name: '' }, 'name'],
    ] as const) {
      const answer = await call(`/${id}`, { method: 'PATCH', body: patch });
      expect([answer.status, answer.body.field]).toEqual([400, field]);
    }
    expect((await call(`/${id}`)).body).toEqual(body);
    // Going to private_key_jwt and removing the secret together is a change.
    const changed = await call(`/${id}`, { method: 'PATCH', body: { token_endpoint_auth_method: 'private_key_jwt', client_secret: '' } });
    expect(changed.body).toMatchObject({ token_endpoint_auth_method: 'private_key_jwt', has_client_secret: false });
  });

  it('at most 20 per tenant: the 21st is 400 naming the tenant', async () => {
    for (let index = 0; index < 20; index += 1) await server.auth.connections.create({ tenant: 'acme', name: `IdP ${index}`, issuer: entra.issuer, clientId: 'c', clientSecret: 's', domains: [] });
    const answer = await create({ ...entra, domains: [] });
    expect(answer.status).toBe(400);
    expect(answer.body).toMatchObject({ error: 'invalid_request', field: 'tenant' });
    expect(answer.body.error_description).toMatch(/20 connections/);
  });

  it.each<[string, string, string, number]>([
    ['an array', '[]', 'application/json', 400],
    ['not JSON', '{"name":', 'application/json', 400],
    ['a form', 'name=x', 'application/x-www-form-urlencoded', 415],
    ['too large', JSON.stringify({ ...entra, pad: 'x'.repeat(2_000_000) }), 'application/json', 413],
  ])('refuses %s with a clear error, and stores nothing', async (_name, body, type, status) => {
    const answer = await call('', { method: 'POST', body, type });
    expect(answer.status).toBe(status);
    expect(answer.body.error).toEqual(expect.any(String));
    expect(await server.auth.connections.list('acme')).toEqual([]);
  });
});
