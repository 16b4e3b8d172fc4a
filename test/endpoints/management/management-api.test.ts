import { request } from 'node:http';
import { testAccounts } from '../../support/accounts.js';
import { basic, postToken, startServer, type RunningServer } from '../../support/server.js';
import { signInForCode } from '../../support/sign-in.js';
import { STORE_KINDS, useStore } from '../../support/stores.js';
import { UserAgent } from '../../support/user-agent.js';

const PORTAL = 'https://portal.example/cb';

describe.each(STORE_KINDS)('management API (%s store)', (kind) => {
  const store = useStore(kind);
  let server: RunningServer;
  let portal: { clientId: string; redirectUri: string; secret: string };
  const admin = { sub: 'admin', password: 'admin-pw', tenant: 'acme', permissions: ['integration_setup'] };
  const other = { sub: 'other-admin', password: 'other-pw', tenant: 'globex', permissions: ['integration_setup'] };
  const plain = { sub: 'plain', password: 'plain-pw', tenant: 'acme' };
  const tokens = new Map<string, string>();

  beforeAll(async () => {
    server = await startServer({ store: store.option(), accounts: testAccounts([admin, other, plain]), pathPrefix: '/auth2' });
    const app = await server.auth.appRegistrations.create({ name: 'Portal', redirectUris: [PORTAL], clientType: 'confidential', firstParty: true });
    portal = { clientId: app.clientId, redirectUri: PORTAL, secret: app.clientSecret! };
    for (const user of [admin, other, plain]) {
      const { code, verifier } = await signInForCode(server, portal, user, 'openid manage.integrations', new UserAgent(server.baseUrl));
      const response = await postToken(server.oauthUrl, { grant_type: 'authorization_code', code, redirect_uri: PORTAL, code_verifier: verifier }, { authorization: basic(portal.clientId, portal.secret) });
      tokens.set(user.sub, response.body.access_token as string);
    }
  });
  afterAll(async () => {
    await server.stop();
  });

  const api = (path: string, init: { method?: string; body?: unknown; as?: string } = {}) =>
    fetch(`${server.baseUrl}/auth2/api/oauth2/${path}`, {
      method: init.method ?? 'GET',
      headers: {
        ...(init.as === 'nobody' ? {} : { authorization: `Bearer ${tokens.get(init.as ?? 'admin')}` }),
        ...(init.body !== undefined ? { 'content-type': 'application/json' } : {}),
      },
      ...(init.body !== undefined ? { body: JSON.stringify(init.body) } : {}),
    });

  const newClient = { name: 'Payroll sync', category: 'payroll', resources: { scim: { scopes: ['scim.read'], constraints: { group: ['eng'] } } } };

  it('client configurations: create (secret once), list, get, update, new secret, delete', async () => {
    const created = await api('client-configurations', { method: 'POST', body: newClient });
    expect(created.status).toBe(201);
    expect(created.headers.get('cache-control')).toBe('no-store');
    const client = (await created.json()) as Record<string, string>;
    expect(client).toMatchObject({ tenant: 'acme', name: 'Payroll sync', category: 'payroll' });
    expect(client.client_secret).toMatch(/^[A-Za-z0-9_-]{43}$/);
    const listed = JSON.stringify(await (await api('client-configurations')).json());
    expect(listed).toContain(client.client_id);
    expect(listed).not.toContain(client.client_secret);
    const one = (await (await api(`client-configurations/${client.client_id}`)).json()) as Record<string, unknown>;
    expect(one).not.toHaveProperty('client_secret');
    const patched = await api(`client-configurations/${client.client_id}`, { method: 'PATCH', body: { name: 'Renamed' } });
    expect(((await patched.json()) as { name: string }).name).toBe('Renamed');
    const rotated = (await (await api(`client-configurations/${client.client_id}/secret`, { method: 'POST' })).json()) as { client_secret: string };
    expect(rotated.client_secret).not.toBe(client.client_secret);
    const token = await postToken(server.oauthUrl, 'grant_type=client_credentials', { authorization: basic(client.client_id!, rotated.client_secret) });
    expect(token.status).toBe(200);
    expect((await api(`client-configurations/${client.client_id}`, { method: 'DELETE' })).status).toBe(204);
    expect((await api(`client-configurations/${client.client_id}`)).status).toBe(404);
  });

  it('validation errors are 400 with the field; the tenant cannot be chosen', async () => {
    const bad = await api('client-configurations', { method: 'POST', body: { ...newClient, resources: { scim: { scopes: ['nope'] } } } });
    expect(bad.status).toBe(400);
    expect(await bad.json()).toMatchObject({ error: 'invalid_request', field: 'resources.scim.scopes' });
    const tenant = await api('client-configurations', { method: 'POST', body: { ...newClient, tenant: 'globex' } });
    expect(((await tenant.json()) as { field: string }).field).toBe('tenant');
    const notJson = await fetch(`${server.baseUrl}/auth2/api/oauth2/client-configurations`, { method: 'POST', headers: { authorization: `Bearer ${tokens.get('admin')}`, 'content-type': 'text/plain' }, body: 'x' });
    expect(notJson.status).toBe(415);
    const uri = await api('app-registrations', { method: 'POST', body: { name: 'X', redirect_uris: ['https://ok.example/cb', 'http://evil.example/cb'], client_type: 'public' } });
    expect(uri.status).toBe(400);
    const body = (await uri.json()) as { field: string; error_description: string };
    expect(body.field).toBe('redirect_uris.1');
    expect(body.error_description).toContain('http://evil.example/cb');
    expect(body.error_description).toContain('plain http');
  });

  it.each([
    ['a client\'s name with a right-to-left override', 'client-configurations', 'POST', { name: 'Payroll\u202Egnp.exe' }, 'name', 'U+202E at position 8'],
    ['a client\'s category with a NUL', 'client-configurations', 'POST', { category: 'hr\u0000' }, 'category', 'U+0000 at position 3'],
    ['a client\'s description with a zero-width space', 'client-configurations', 'POST', { description: 'a\u200Bb' }, 'description', 'U+200B at position 2'],
    ['an app\'s name with a lone surrogate', 'app-registrations', 'POST', { name: 'App\uD800' }, 'name', 'U+D800 at position 4'],
    ['an app\'s description with a bidi isolate', 'app-registrations', 'POST', { description: 'line\n\u2066x' }, 'description', 'U+2066 at position 6'],
    ['an app\'s name with a line break', 'app-registrations', 'POST', { name: 'a\nb' }, 'name', 'U+000A at position 2'],
  ])('names and descriptions refuse control, format and bidi characters: %s', async (_what, collection, method, change, field, where) => {
    const base = collection === 'client-configurations' ? newClient : { name: 'App', redirect_uris: [PORTAL], client_type: 'public' };
    const refused = await api(collection, { method, body: { ...base, ...change } });
    expect(refused.status).toBe(400);
    const body = (await refused.json()) as { field: string; error_description: string };
    expect(body.field).toBe(field);
    expect(body.error_description).toContain(where);
    expect(body.error_description).toMatch(/^[\x20-\x7e]+$/);
  });

  it('a description keeps its line breaks (CRLF as LF); text of any script is fine', async () => {
    const created = await api('app-registrations', { method: 'POST', body: { name: 'Gehälter – 給与 💸', description: 'one\r\ntwo', redirect_uris: [PORTAL], client_type: 'public' } });
    expect(created.status).toBe(201);
    expect(await created.json()).toMatchObject({ name: 'Gehälter – 給与 💸', description: 'one\ntwo' });
    const id = ((await (await api('client-configurations', { method: 'POST', body: newClient })).json()) as { client_id: string }).client_id;
    const patched = await api(`client-configurations/${id}`, { method: 'PATCH', body: { name: 'x\u202E' } });
    expect(patched.status).toBe(400);
  });

  it('confines everything to the caller\'s tenant: another tenant\'s records are 404', async () => {
    const client = (await (await api('client-configurations', { method: 'POST', body: newClient })).json()) as { client_id: string };
    const app = (await (await api('app-registrations', { method: 'POST', body: { name: 'Acme app', redirect_uris: [PORTAL], client_type: 'confidential' } })).json()) as { client_id: string };
    for (const [method, path] of [['GET', `client-configurations/${client.client_id}`], ['PATCH', `client-configurations/${client.client_id}`], ['DELETE', `client-configurations/${client.client_id}`], ['POST', `client-configurations/${client.client_id}/secret`], ['GET', `app-registrations/${app.client_id}`], ['DELETE', `app-registrations/${app.client_id}`]] as const) {
      const response = await api(path, { method, as: 'other-admin', ...(method === 'PATCH' ? { body: { name: 'x' } } : {}) });
      expect(response.status).toBe(404);
    }
    expect(JSON.stringify(await (await api('client-configurations', { as: 'other-admin' })).json())).not.toContain(client.client_id);
    expect(JSON.stringify(await (await api('app-registrations', { as: 'other-admin' })).json())).not.toContain(app.client_id);
    expect((await api(`client-configurations/${client.client_id}`)).status).toBe(200);
    // Her own tenant lists them, each collection under its documented name.
    const listed = (await (await api('app-registrations')).json()) as Record<string, Array<{ client_id: string }>>;
    expect(Object.keys(listed)).toEqual(['app_registrations']);
    expect(listed.app_registrations!.map((registration) => registration.client_id)).toContain(app.client_id);
  });

  it('another tenant\'s record, user or connection is answered as missing, and each refusal is recorded (management.denied) with its route and method', async () => {
    const client = (await (await api('client-configurations', { method: 'POST', body: newClient })).json()) as { client_id: string };
    const app = (await (await api('app-registrations', { method: 'POST', body: { name: 'Acme app', redirect_uris: [PORTAL], client_type: 'confidential' } })).json()) as { client_id: string };
    const refusals: Array<[string, string, string, string | undefined]> = [
      ['GET', `client-configurations/${client.client_id}`, 'clientConfiguration', `client configuration ${client.client_id} not found`],
      ['POST', `client-configurations/${client.client_id}/secret`, 'clientConfigurationSecret', `client configuration ${client.client_id} not found`],
      ['DELETE', `app-registrations/${app.client_id}`, 'appRegistration', `app registration ${app.client_id} not found`],
      ['POST', `app-registrations/${app.client_id}/secret`, 'appRegistrationSecret', `app registration ${app.client_id} not found`],
      ['GET', 'users/admin/factors', 'userFactors', undefined],
      ['POST', 'users/admin/factors/reset-request', 'userFactorResetRequest', undefined],
      ['GET', 'connections/no-such-connection', 'connection', undefined],
    ];
    for (const [method, path, , description] of refusals) {
      const response = await api(path, { method, as: 'other-admin' });
      const body = (await response.json()) as { error: string; error_description: string };
      expect([path, response.status, body.error]).toEqual([path, 404, 'not_found']);
      if (description) expect(body.error_description).toBe(description);
    }
    // Two users of one tenant refused at one route: each is counted on her own (both recorded).
    expect((await api('platform-apps', { as: 'plain' })).status).toBe(403);
    admin.permissions = [];
    try {
      expect((await api('platform-apps')).status).toBe(403);
    } finally {
      admin.permissions = ['integration_setup'];
    }
    // The trail writes refusals after the answer.
    await new Promise((resolve) => setTimeout(resolve, 150));
    const denied = async (tenant: string) => (await server.auth.audit.list({ tenant, type: 'management.denied', limit: 200 })).events;
    const globex = await denied('globex');
    for (const [method, , route] of refusals) {
      expect(globex).toContainEqual(expect.objectContaining({ actor: { type: 'user', id: 'other-admin' }, target: { type: 'management_api', id: route }, details: expect.objectContaining({ method, status: 404, error: 'not_found' }) }));
    }
    const acme = (await denied('acme')).filter((event) => event.target?.id === 'platformApps');
    expect(acme.map((event) => event.actor.id).sort()).toEqual(['admin', 'plain']);
  });

  it('each route records the refusals it answers under its own name (management.denied)', async () => {
    const routes: Array<[string, string, string]> = [
      ['GET', 'client-configurations', 'clientConfigurations'],
      ['GET', 'client-configurations/x', 'clientConfiguration'],
      ['POST', 'client-configurations/x/secret', 'clientConfigurationSecret'],
      ['GET', 'app-registrations', 'appRegistrations'],
      ['GET', 'app-registrations/x', 'appRegistration'],
      ['POST', 'app-registrations/x/secret', 'appRegistrationSecret'],
      ['GET', 'audit-events', 'auditEvents'],
      ['GET', 'platform-apps', 'platformApps'],
      ['POST', 'sign-ins/unlock', 'signInUnlock'],
      ['GET', 'users/x/factors', 'userFactors'],
      ['POST', 'users/x/factors/reset-request', 'userFactorResetRequest'],
      ['GET', 'tenant-settings', 'tenantSettings'],
      ['GET', 'connections', 'connections'],
      ['GET', 'connections/x', 'connection'],
    ];
    const since = new Date().toISOString();
    for (const [method, path] of routes) expect([path, (await api(path, { method, as: 'nobody' })).status]).toEqual([path, 401]);
    await new Promise((resolve) => setTimeout(resolve, 150));
    const anonymous = (await server.auth.audit.list({ tenant: null, type: 'management.denied', since, limit: 200 })).events;
    const recorded = anonymous.map((event) => `${event.details?.['method'] as string} ${event.target?.id ?? ''}`).sort();
    expect(recorded).toEqual(routes.map(([method, , route]) => `${method} ${route}`).sort());
    // Refusals are counted per source address: two other addresses refused at one route are each recorded.
    const port = new URL(server.baseUrl).port;
    for (const from of ['127.0.0.2', '127.0.0.3']) {
      const status = await new Promise<number>((resolve, reject) => {
        request({ host: '127.0.0.1', port, path: '/auth2/api/oauth2/platform-apps', localAddress: from }, (response) => {
          response.resume();
          resolve(response.statusCode ?? 0);
        }).on('error', reject).end();
      });
      expect(status).toBe(401);
    }
    await new Promise((resolve) => setTimeout(resolve, 150));
    const byAddress = (await server.auth.audit.list({ tenant: null, type: 'management.denied', since, limit: 200 })).events.filter((event) => event.target?.id === 'platformApps');
    expect(byAddress.map((event) => event.address).sort()).toEqual(['127.0.0.1', '127.0.0.2', '127.0.0.3']);
    // And the unlock itself answers the tenant's admin (a username nobody holds: nothing to lift).
    const unlock = await api('sign-ins/unlock', { method: 'POST', body: { username: 'nobody-held' } });
    expect(unlock.status).toBe(200);
    expect(await unlock.json()).toEqual({ unlocked: false });
  });

  it('app registrations: create, change type (secret on → confidential) and PKCE, new secret, delete', async () => {
    const created = (await (await api('app-registrations', { method: 'POST', body: { name: 'SPA', redirect_uris: [PORTAL], client_type: 'public' } })).json()) as Record<string, unknown>;
    expect(created).toMatchObject({ client_type: 'public', pkce_enabled: true, first_party: false, require_pushed_authorization_requests: false });
    expect(created).not.toHaveProperty('client_secret');
    // A tenant's admin may require pushed authorization requests of her app (RFC 9126 §6's name).
    const pushOnly = (await (await api(`app-registrations/${created.client_id as string}`, { method: 'PATCH', body: { require_pushed_authorization_requests: true } })).json()) as Record<string, unknown>;
    expect(pushOnly).toMatchObject({ require_pushed_authorization_requests: true });
    const notBoolean = await api(`app-registrations/${created.client_id as string}`, { method: 'PATCH', body: { require_pushed_authorization_requests: 'yes' } });
    expect(notBoolean.status).toBe(400);
    expect(((await notBoolean.json()) as { field: string }).field).toBe('require_pushed_authorization_requests');
    const confidential = (await (await api(`app-registrations/${created.client_id as string}`, { method: 'PATCH', body: { client_type: 'confidential', pkce_enabled: false } })).json()) as Record<string, unknown>;
    expect(confidential).toMatchObject({ client_type: 'confidential', pkce_enabled: false });
    expect(typeof confidential.client_secret).toBe('string');
    const rotated = await api(`app-registrations/${created.client_id as string}/secret`, { method: 'POST' });
    expect(((await rotated.json()) as { client_secret: string }).client_secret).not.toBe(confidential.client_secret);
    const firstParty = await api('app-registrations', { method: 'POST', body: { name: 'Sneaky', redirect_uris: [PORTAL], client_type: 'public', first_party: true } });
    expect(((await firstParty.json()) as { field: string }).field).toBe('first_party');
    const openToAll = await api('app-registrations', { method: 'POST', body: { name: 'Sneaky', redirect_uris: [PORTAL], client_type: 'public', open_to_all_tenants: true } });
    expect(openToAll.status).toBe(400);
    expect(((await openToAll.json()) as { field: string }).field).toBe('open_to_all_tenants');
    // Keys are the body's own: an inherited name such as "constructor" is an unknown field too.
    for (const name of ['constructor', '__proto__', 'toString', 'hasOwnProperty']) {
      const inherited = await fetch(`${server.baseUrl}/auth2/api/oauth2/app-registrations`, {
        method: 'POST',
        headers: { authorization: `Bearer ${tokens.get('admin')}`, 'content-type': 'application/json' },
        body: `{"${name}":1,"name":"x","redirect_uris":["${PORTAL}"],"client_type":"public"}`,
      });
      expect(inherited.status).toBe(400);
      const answer = (await inherited.json()) as { field: string; error_description: string };
      expect(answer.error_description).not.toContain('native code');
      if (name !== '__proto__') expect(answer).toMatchObject({ field: name, error_description: `${name}: unknown field` });
    }
    // JSON travels as UTF-8 (RFC 8259 §8.1): a body declared in another charset is refused.
    const utf16 = await fetch(`${server.baseUrl}/auth2/api/oauth2/app-registrations`, {
      method: 'POST',
      headers: { authorization: `Bearer ${tokens.get('admin')}`, 'content-type': 'application/json; charset=utf-16' },
      body: JSON.stringify({ name: 'x', redirect_uris: [PORTAL], client_type: 'public' }),
    });
    expect(utf16.status).toBe(415);
    expect(((await utf16.json()) as { error_description: string }).error_description).toBe('the request body must be UTF-8 JSON');
    expect((await api(`app-registrations/${created.client_id as string}`, { method: 'DELETE' })).status).toBe(204);
  });

  it('401 without a valid token, 403 without the permission (withdrawn at once) or for a machine token', async () => {
    const none = await api('client-configurations', { as: 'nobody' });
    expect(none.status).toBe(401);
    expect(none.headers.get('www-authenticate')).toMatch(/^Bearer realm=/);
    expect((await api('client-configurations', { as: 'plain' })).status).toBe(403);
    admin.permissions = [];
    try {
      const withdrawn = await api('client-configurations');
      expect(withdrawn.status).toBe(403);
      expect(withdrawn.headers.get('www-authenticate')).toContain('insufficient_scope');
      expect(withdrawn.headers.get('www-authenticate')).toContain("error_description=\"the permission 'Create and update integration setup' is required\"");
    } finally {
      admin.permissions = ['integration_setup'];
    }
    const m2m = await server.auth.clientConfigurations.create({ tenant: 'acme', ...newClient });
    const machine = await postToken(server.oauthUrl, 'grant_type=client_credentials', { authorization: basic(m2m.clientId, m2m.clientSecret) });
    const response = await fetch(`${server.baseUrl}/auth2/api/oauth2/client-configurations`, { headers: { authorization: `Bearer ${machine.body.access_token as string}` } });
    expect(response.status).toBe(403);
    expect((await api('client-configurations', { method: 'PUT', body: {} })).status).toBe(405);
    const third = await server.auth.appRegistrations.create({ name: 'Third party', redirectUris: [PORTAL], clientType: 'confidential' });
    const { code, verifier } = await signInForCode(server, { clientId: third.clientId, redirectUri: PORTAL }, admin, 'openid', new UserAgent(server.baseUrl));
    const thirdToken = await postToken(server.oauthUrl, { grant_type: 'authorization_code', code, redirect_uri: PORTAL, code_verifier: verifier }, { authorization: basic(third.clientId, third.clientSecret!) });
    const refused = await fetch(`${server.baseUrl}/auth2/api/oauth2/client-configurations`, { headers: { authorization: `Bearer ${thirdToken.body.access_token as string}` } });
    expect(refused.status).toBe(403);
  });

  /** A first-party app's token for `scope`, of `user`. */
  async function portalToken(user: { sub: string; password: string }, scope: string) {
    const { code, verifier } = await signInForCode(server, portal, user, scope, new UserAgent(server.baseUrl));
    return postToken(server.oauthUrl, { grant_type: 'authorization_code', code, redirect_uri: PORTAL, code_verifier: verifier }, { authorization: basic(portal.clientId, portal.secret) });
  }

  it('the management right is a scope of its own: a first-party token without manage.integrations is refused', async () => {
    const ordinary = await portalToken(admin, 'openid scim.read');
    expect(ordinary.body.scope).toBe('openid scim.read');
    const refused = await fetch(`${server.baseUrl}/auth2/api/oauth2/client-configurations`, {
      method: 'POST',
      headers: { authorization: `Bearer ${ordinary.body.access_token as string}`, 'content-type': 'application/json' },
      body: JSON.stringify({ ...newClient, resources: { scim: { scopes: ['scim.read', 'scim.write'] } } }),
    });
    expect(refused.status).toBe(403);
    expect(await refused.json()).toMatchObject({ error: 'insufficient_scope' });
    expect(refused.headers.get('www-authenticate')).toContain('scope="manage.integrations"');
    expect(await server.auth.clientConfigurations.list('acme')).not.toContainEqual(expect.objectContaining({ name: 'Payroll sync', resources: { scim: { scopes: ['scim.read', 'scim.write'] } } }));
  });

  it('only a user holding the permission gets it, and only when asking for it; the token is short-lived', async () => {
    const withRight = await portalToken(admin, 'openid manage.integrations');
    expect(withRight.body.scope).toBe('openid manage.integrations');
    expect(withRight.body.expires_in).toBe(300);
    const without = await portalToken(plain, 'openid manage.integrations');
    expect(without.status).toBe(200);
    expect(without.body.scope).toBe('openid');
    const refused = await fetch(`${server.baseUrl}/auth2/api/oauth2/client-configurations`, { headers: { authorization: `Bearer ${without.body.access_token as string}` } });
    expect(refused.status).toBe(403);
  });

  it('a third-party app asking for the management right is refused at /authorize (invalid_scope)', async () => {
    const third = await server.auth.appRegistrations.create({ name: 'Third party', redirectUris: [PORTAL], clientType: 'confidential' });
    const agent = new UserAgent(server.baseUrl);
    const query = new URLSearchParams({
      response_type: 'code', client_id: third.clientId, redirect_uri: PORTAL, scope: 'openid manage.integrations', state: 's',
      code_challenge: 'E9Melhoa2OwvFrEMTJguCHaoeK1t8URWbuGJSstw-cM', code_challenge_method: 'S256',
    });
    const answer = await agent.request(`${server.oauthUrl}/authorize?${query}`);
    const back = new URL(answer.location!);
    expect(back.searchParams.get('error')).toBe('invalid_scope');
    expect(back.searchParams.get('state')).toBe('s');
  });

  it('an app first-party when its token was issued and third-party now is refused by the management API itself', async () => {
    const app = await server.auth.appRegistrations.create({ name: 'Was first-party', redirectUris: [PORTAL], clientType: 'confidential', firstParty: true });
    const { code, verifier } = await signInForCode(server, { clientId: app.clientId, redirectUri: PORTAL }, admin, 'openid manage.integrations', new UserAgent(server.baseUrl));
    const issued = await postToken(server.oauthUrl, { grant_type: 'authorization_code', code, redirect_uri: PORTAL, code_verifier: verifier }, { authorization: basic(app.clientId, app.clientSecret!) });
    expect(issued.body.scope).toBe('openid manage.integrations');
    const call = () => fetch(`${server.baseUrl}/auth2/api/oauth2/client-configurations`, { headers: { authorization: `Bearer ${issued.body.access_token as string}` } });
    expect((await call()).status).toBe(200);
    // Issuance checked first-party then; the API must check it again on every call.
    await server.auth.appRegistrations.update(app.clientId, { firstParty: false });
    const refused = await call();
    expect(refused.status).toBe(403);
    expect(await refused.json()).toEqual({ error: 'insufficient_scope', error_description: "only the platform's own apps may use the management API" });
    expect(refused.headers.get('www-authenticate')).toContain('insufficient_scope');
  });
});

describe('the management right: configuration', () => {
  it('no API of the catalog may define manage.integrations (or an OpenID Connect scope)', async () => {
    await expect(startServer({ apis: [{ id: 'x', name: 'X', scopes: { 'manage.integrations': 'sneaky' } }] })).rejects.toThrow(/scope "manage.integrations" is reserved/);
    await expect(startServer({ apis: [{ id: 'x', name: 'X', scopes: { openid: 'sneaky' } }] })).rejects.toThrow(/scope "openid" is reserved/);
  });

  it('a tenant lifetime of an hour does not lengthen a management token (managementAccessTokenTtl)', async () => {
    const admin = { sub: 'admin', password: 'admin-pw', tenant: 'acme', permissions: ['integration_setup'] };
    const server = await startServer({ accounts: testAccounts([admin]), namedUserAccessTokenTtl: 3600, tenantPolicy: () => ({ accessTokenTtl: 3600 }) });
    try {
      const app = await server.auth.appRegistrations.create({ name: 'Portal', redirectUris: [PORTAL], clientType: 'confidential', firstParty: true });
      const token = async (scope: string) => {
        const { code, verifier } = await signInForCode(server, { clientId: app.clientId, redirectUri: PORTAL }, admin, scope, new UserAgent(server.baseUrl));
        return (await postToken(server.oauthUrl, { grant_type: 'authorization_code', code, redirect_uri: PORTAL, code_verifier: verifier }, { authorization: basic(app.clientId, app.clientSecret!) })).body;
      };
      expect((await token('openid scim.read')).expires_in).toBe(3600);
      const management = await token('openid manage.integrations');
      expect(management.expires_in).toBe(300);
      const refreshed = await postToken(server.oauthUrl, { grant_type: 'refresh_token', refresh_token: management.refresh_token as string }, { authorization: basic(app.clientId, app.clientSecret!) });
      expect(refreshed.body).toMatchObject({ expires_in: 300, scope: 'openid manage.integrations' });
    } finally {
      await server.stop();
    }
  });
});
