import { testAccounts } from '../support/accounts.js';
import { basic, postToken, startServer, type RunningServer } from '../support/server.js';
import { signInForCode } from '../support/sign-in.js';
import { STORE_KINDS, useStore } from '../support/stores.js';
import { UserAgent } from '../support/user-agent.js';
import type { AuditEvent } from '../../src/index.js';

const PORTAL = 'https://portal.example/cb';
const WEB = 'https://app.example/cb';

/**
 * The audit trail, on both stores: every event type from the action that causes it, with its actor
 * and target; reads confined to one tenant; nothing secret in any event, hook call or log line.
 */
describe.each(STORE_KINDS)('audit trail (%s store)', (kind) => {
  const store = useStore(kind);
  let server: RunningServer;
  let portal: { clientId: string; secret: string };
  const hooked: AuditEvent[] = [];
  /** Every secret, token, code, verifier and password of the run: none may be in an event or a log line. */
  const secrets: string[] = [];
  const admin = { sub: 'admin', password: 'admin-password-1', tenant: 'acme', permissions: ['integration_setup'], claims: { name: 'Admin' } };
  const globexAdmin = { sub: 'gadmin', password: 'gadmin-password-1', tenant: 'globex', permissions: ['integration_setup'] };
  const plain = { sub: 'plain', password: 'plain-password-1', tenant: 'acme' };
  const tokens = new Map<string, string>();

  beforeAll(async () => {
    secrets.push(admin.password, globexAdmin.password, plain.password);
    server = await startServer({
      store: store.option(),
      accounts: testAccounts([admin, globexAdmin, plain]),
      rateLimits: { authorize: false, failedClientAuth: { perClient: { max: 2, windowSeconds: 60 }, perAddress: { max: 1000, windowSeconds: 60 } } },
      onAuditEvent: (event) => {
        hooked.push(event);
      },
    });
    const app = await server.auth.appRegistrations.create({ name: 'Portal', redirectUris: [PORTAL], clientType: 'confidential', firstParty: true });
    portal = { clientId: app.clientId, secret: app.clientSecret! };
    secrets.push(portal.secret);
    for (const user of [admin, globexAdmin, plain]) await signInToPortal(user);
  });

  /** A fresh token of the portal app for the user (an earlier test may have ended her grant). */
  async function signInToPortal(user: { sub: string; password: string }): Promise<void> {
    const { code, verifier } = await signInForCode(server, { clientId: portal.clientId, redirectUri: PORTAL }, user, 'openid manage.integrations', new UserAgent(server.baseUrl));
    const response = await postToken(server.oauthUrl, { grant_type: 'authorization_code', code, redirect_uri: PORTAL, code_verifier: verifier }, { authorization: basic(portal.clientId, portal.secret) });
    secrets.push(code, verifier, response.body.access_token as string, response.body.refresh_token as string, response.body.id_token as string);
    tokens.set(user.sub, response.body.access_token as string);
  }
  afterAll(() => server.stop());

  const api = async (path: string, init: { method?: string; body?: unknown; as?: string } = {}) => {
    const response = await fetch(`${server.baseUrl}/api/oauth2/${path}`, {
      method: init.method ?? 'GET',
      headers: {
        ...(init.as === 'nobody' ? {} : { authorization: `Bearer ${tokens.get(init.as ?? 'admin')}` }),
        ...(init.body !== undefined ? { 'content-type': 'application/json' } : {}),
      },
      ...(init.body !== undefined ? { body: JSON.stringify(init.body) } : {}),
    });
    const text = await response.text();
    return { status: response.status, body: (text ? JSON.parse(text) : undefined) as Record<string, unknown> };
  };

  /** The newest events of a tenant (null: the platform's) of one type. */
  const events = async (tenant: string | null, type: AuditEvent['type']) => (await server.auth.audit.list({ tenant, type, limit: 200 })).events;

  it('client configurations: created, updated, secret rotated, deleted, by the user of the API with her address', async () => {
    const created = await api('client-configurations', { method: 'POST', body: { name: 'Payroll', category: 'payroll', resources: { scim: { scopes: ['scim.read'] } } } });
    expect(created.status).toBe(201);
    const id = created.body.client_id as string;
    secrets.push(created.body.client_secret as string);
    expect((await api(`client-configurations/${id}`, { method: 'PATCH', body: { name: 'Payroll 2', description: 'x' } })).status).toBe(200);
    const rotated = await api(`client-configurations/${id}/secret`, { method: 'POST' });
    secrets.push(rotated.body.client_secret as string);
    expect((await api(`client-configurations/${id}`, { method: 'DELETE' })).status).toBe(204);
    const by = { actor: { type: 'user', id: 'admin' }, address: '127.0.0.1', tenant: 'acme', target: { type: 'client_configuration', id } };
    expect((await events('acme', 'client_configuration.created'))[0]).toMatchObject({ ...by, details: { name: 'Payroll', category: 'payroll', apis: ['scim'] } });
    expect((await events('acme', 'client_configuration.updated'))[0]).toMatchObject({ ...by, details: { fields: ['name', 'description'] } });
    expect((await events('acme', 'client_configuration.secret_rotated'))[0]).toMatchObject(by);
    expect((await events('acme', 'client_configuration.deleted'))[0]).toMatchObject({ ...by, details: { name: 'Payroll 2' } });
  });

  it('the library and the host are the operator; an operator app is an event of no tenant', async () => {
    const client = await server.auth.clientConfigurations.create({ tenant: 'globex', name: 'Sync', category: 'hr', resources: { scim: { scopes: ['scim.read'] } } });
    secrets.push(client.clientSecret);
    expect((await events('globex', 'client_configuration.created'))[0]).toMatchObject({ actor: { type: 'operator' }, target: { id: client.clientId } });
    expect((await events('globex', 'client_configuration.created'))[0]).not.toHaveProperty('address');
    expect((await events(null, 'app_registration.created')).map((event) => event.target?.id)).toContain(portal.clientId);
  });

  it('app registrations: created, updated, secret rotated, deleted (and its consents revoked with it)', async () => {
    const created = await api('app-registrations', { method: 'POST', body: { name: 'HR reports', redirect_uris: [WEB], client_type: 'confidential' } });
    const id = created.body.client_id as string;
    secrets.push(created.body.client_secret as string);
    const { code, verifier } = await signInForCode(server, { clientId: id, redirectUri: WEB }, admin, 'openid scim.read', new UserAgent(server.baseUrl));
    secrets.push(code, verifier);
    expect((await api(`app-registrations/${id}`, { method: 'PATCH', body: { name: 'Reports' } })).status).toBe(200);
    secrets.push((await api(`app-registrations/${id}/secret`, { method: 'POST' })).body.client_secret as string);
    expect((await api(`app-registrations/${id}`, { method: 'DELETE' })).status).toBe(204);
    const by = { actor: { type: 'user', id: 'admin' }, tenant: 'acme', target: { type: 'app_registration', id } };
    expect((await events('acme', 'app_registration.created'))[0]).toMatchObject({ ...by, details: { name: 'HR reports', client_type: 'confidential', redirect_uris: [WEB] } });
    expect((await events('acme', 'app_registration.updated'))[0]).toMatchObject({ ...by, details: { fields: ['name'] } });
    expect((await events('acme', 'app_registration.secret_rotated'))[0]).toMatchObject(by);
    expect((await events('acme', 'app_registration.deleted'))[0]).toMatchObject(by);
    const granted = (await events('acme', 'consent.granted')).find((event) => event.target?.id === id);
    expect(granted).toMatchObject({ actor: { type: 'user', id: 'admin' }, address: '127.0.0.1', details: { user: 'admin', scopes: ['openid', 'scim.read'] } });
    const revoked = (await events('acme', 'consent.revoked')).find((event) => event.target?.id === id);
    expect(revoked).toMatchObject({ actor: { type: 'user', id: 'admin' }, details: { user: 'admin', reason: 'app_deleted' } });
  });

  it('consents: revoked through the consent API by the user, through the library by the operator', async () => {
    const app = await server.auth.appRegistrations.create({ name: 'Consent app', redirectUris: [WEB], clientType: 'public', tenant: 'acme' });
    for (const revoke of ['api', 'library'] as const) {
      const { code, verifier } = await signInForCode(server, { clientId: app.clientId, redirectUri: WEB }, admin, 'openid', new UserAgent(server.baseUrl));
      secrets.push(code, verifier);
      if (revoke === 'api') expect((await api(`consents/${app.clientId}`, { method: 'DELETE' })).status).toBe(204);
      else expect(await server.auth.consents.revoke({ tenant: 'acme', sub: 'admin', clientId: app.clientId })).toBe(true);
      expect((await events('acme', 'consent.revoked'))[0]).toMatchObject({
        actor: revoke === 'api' ? { type: 'user', id: 'admin' } : { type: 'operator' },
        target: { type: 'app_registration', id: app.clientId },
        details: { user: 'admin', scopes: ['openid'] },
      });
    }
  });

  it('sign-ins: succeeded with the user and tenant; failed, anonymous, never with the username typed', async () => {
    const agent = new UserAgent(server.baseUrl);
    const query = new URLSearchParams({ response_type: 'code', client_id: portal.clientId, redirect_uri: PORTAL, scope: 'openid', state: 's', code_challenge: 'E9Melhoa2OwvFrEMTJguCHaoeK1t8URWbuGJSstw-cM', code_challenge_method: 'S256' });
    const login = await agent.request(`${server.oauthUrl}/authorize?${query}`);
    const typed = 'nobody-typed-this-name';
    await agent.submit(login, { username: typed, password: 'a-password-guess-1' });
    secrets.push('a-password-guess-1', typed);
    await new Promise((resolve) => setTimeout(resolve, 100)); // written without waiting
    const failed = (await events(null, 'sign_in.failed'))[0];
    expect(failed).toMatchObject({ actor: { type: 'anonymous' }, address: '127.0.0.1', target: { type: 'app_registration', id: portal.clientId }, details: { reason: 'wrong_credentials' } });
    expect(failed).not.toHaveProperty('tenant');
    expect((await events('acme', 'sign_in.succeeded')).some((event) => event.actor.id === 'admin' && event.target?.id === portal.clientId)).toBe(true);
  });

  it('sign-out: session.ended with the user', async () => {
    const { code, verifier, agent } = await signInForCode(server, { clientId: portal.clientId, redirectUri: PORTAL }, plain, 'openid', new UserAgent(server.baseUrl));
    const answer = await postToken(server.oauthUrl, { grant_type: 'authorization_code', code, redirect_uri: PORTAL, code_verifier: verifier }, { authorization: basic(portal.clientId, portal.secret) });
    secrets.push(code, verifier, answer.body.id_token as string, answer.body.access_token as string, answer.body.refresh_token as string);
    const page = await agent.request(`${server.oauthUrl}/session/end?${new URLSearchParams({ id_token_hint: answer.body.id_token as string })}`);
    await agent.submit(page, {});
    await new Promise((resolve) => setTimeout(resolve, 100));
    expect((await events('acme', 'session.ended'))[0]).toMatchObject({ actor: { type: 'user', id: 'plain' }, target: { type: 'app_registration', id: portal.clientId } });
  });

  it('a reused refresh token: refresh_token.reuse_detected for the client and its user', async () => {
    const { code, verifier } = await signInForCode(server, { clientId: portal.clientId, redirectUri: PORTAL }, admin, 'openid manage.integrations', new UserAgent(server.baseUrl));
    const first = await postToken(server.oauthUrl, { grant_type: 'authorization_code', code, redirect_uri: PORTAL, code_verifier: verifier }, { authorization: basic(portal.clientId, portal.secret) });
    const refresh = (token: string) => postToken(server.oauthUrl, { grant_type: 'refresh_token', refresh_token: token }, { authorization: basic(portal.clientId, portal.secret) });
    const second = await refresh(first.body.refresh_token as string);
    await refresh(second.body.refresh_token as string);
    secrets.push(code, verifier, first.body.refresh_token as string, second.body.refresh_token as string, first.body.access_token as string, second.body.access_token as string);
    expect((await refresh(first.body.refresh_token as string)).status).toBe(400);
    await new Promise((resolve) => setTimeout(resolve, 100));
    expect((await events('acme', 'refresh_token.reuse_detected'))[0]).toMatchObject({
      actor: { type: 'client', id: portal.clientId }, target: { type: 'app_registration', id: portal.clientId }, details: { user: 'admin', grant_ended: true },
    });
  });

  it('a retried refresh token: refresh_token.retried, and the second retry is a reuse', async () => {
    const { code, verifier } = await signInForCode(server, { clientId: portal.clientId, redirectUri: PORTAL }, admin, 'openid manage.integrations', new UserAgent(server.baseUrl));
    const first = await postToken(server.oauthUrl, { grant_type: 'authorization_code', code, redirect_uri: PORTAL, code_verifier: verifier }, { authorization: basic(portal.clientId, portal.secret) });
    const refresh = (token: string) => postToken(server.oauthUrl, { grant_type: 'refresh_token', refresh_token: token }, { authorization: basic(portal.clientId, portal.secret) });
    const rt1 = first.body.refresh_token as string;
    const rotated = await refresh(rt1);
    const retried = await refresh(rt1);
    secrets.push(code, verifier, rt1, first.body.access_token as string, rotated.body.access_token as string, rotated.body.refresh_token as string, retried.body.access_token as string);
    expect(retried.status).toBe(200);
    await new Promise((resolve) => setTimeout(resolve, 100));
    const events = (await server.auth.audit.list({ tenant: 'acme', type: 'refresh_token.retried', limit: 10 })).events;
    expect(events).toHaveLength(1);
    expect(events[0]).toMatchObject({ actor: { type: 'client', id: portal.clientId }, target: { type: 'app_registration', id: portal.clientId }, address: '127.0.0.1', details: { user: 'admin', retry: 1 } });
    const reusesBefore = (await server.auth.audit.list({ tenant: 'acme', type: 'refresh_token.reuse_detected', limit: 10 })).events.length;
    expect((await refresh(rt1)).status).toBe(400);
    await new Promise((resolve) => setTimeout(resolve, 100));
    expect((await server.auth.audit.list({ tenant: 'acme', type: 'refresh_token.reuse_detected', limit: 10 })).events).toHaveLength(reusesBefore + 1);
  });

  it('failed client authentications past the limit: client_auth.rate_limited in the client\'s tenant', async () => {
    const client = await server.auth.clientConfigurations.create({ tenant: 'acme', name: 'Guessed', category: 'hr', resources: { scim: { scopes: ['scim.read'] } } });
    secrets.push(client.clientSecret);
    for (let attempt = 0; attempt < 20; attempt += 1) {
      await postToken(server.oauthUrl, 'grant_type=client_credentials', { authorization: basic(client.clientId, `wrong-secret-${attempt}`) });
      secrets.push(`wrong-secret-${attempt}`);
    }
    await new Promise((resolve) => setTimeout(resolve, 100));
    const limited = (await events('acme', 'client_auth.rate_limited')).filter((event) => event.target?.id === client.clientId);
    expect(limited[0]).toMatchObject({
      actor: { type: 'client', id: client.clientId }, target: { type: 'client_configuration', id: client.clientId }, address: '127.0.0.1',
    });
    // One event per refused key (client ID, address) and window, however many guesses were refused.
    expect(limited.length).toBeLessThanOrEqual(2);
  });

  it('management API refusals: management.denied, anonymous without a token, the user with hers', async () => {
    expect((await api('client-configurations', { as: 'nobody' })).status).toBe(401);
    expect((await api('client-configurations', { as: 'plain' })).status).toBe(403);
    await new Promise((resolve) => setTimeout(resolve, 100));
    expect((await events(null, 'management.denied'))[0]).toMatchObject({
      actor: { type: 'anonymous' }, target: { type: 'management_api', id: 'clientConfigurations' }, details: { method: 'GET', status: 401, error: 'invalid_token' },
    });
    expect((await events('acme', 'management.denied'))[0]).toMatchObject({ actor: { type: 'user', id: 'plain' }, details: { status: 403, error: 'insufficient_scope' } });
  });

  it('the Activity API lists the caller\'s tenant only, newest first, a page at a time', async () => {
    await signInToPortal(admin);
    const page = await api('audit-events?limit=3');
    expect(page.status).toBe(200);
    const listed = page.body.events as AuditEvent[];
    expect(listed).toHaveLength(3);
    expect(listed.every((event) => event.tenant === 'acme')).toBe(true);
    expect(listed.map((event) => event.time)).toEqual([...listed.map((event) => event.time)].sort().reverse());
    const next = await api(`audit-events?limit=3&cursor=${page.body.next as string}`);
    expect((next.body.events as AuditEvent[]).map((event) => event.id)).not.toContain(listed[0]!.id);
    const globex = await api('audit-events?limit=200', { as: 'gadmin' });
    expect((globex.body.events as AuditEvent[]).every((event) => event.tenant === 'globex')).toBe(true);
    expect((globex.body.events as AuditEvent[]).length).toBeGreaterThan(0);
    const typed = await api('audit-events?type=consent.revoked');
    expect((typed.body.events as AuditEvent[]).every((event) => event.type === 'consent.revoked')).toBe(true);
    for (const query of ['tenant=globex', 'limit=0', 'limit=500', 'type=nope', 'since=yesterday', 'cursor=abc', 'limit=1&limit=2']) {
      const refused = await api(`audit-events?${query}`);
      expect([query, refused.status, refused.body.error]).toEqual([query, 400, 'invalid_request']);
    }
    // Each parameter the API names is taken (an empty one as absent), and does what it says.
    for (const query of ['type=consent.revoked', 'since=2020-01-01T00:00:00Z', 'until=2999-01-01T00:00:00Z', 'type=&since=&until=&limit=&cursor=']) {
      const taken = await api(`audit-events?${query}`);
      expect([query, taken.status, (taken.body.events as AuditEvent[]).length > 0 || query.startsWith('type=consent')]).toEqual([query, 200, true]);
    }
    expect((await api('audit-events?until=2020-01-01T00:00:00Z')).body.events).toEqual([]);
    expect((await api('audit-events?since=2999-01-01T00:00:00Z')).body.events).toEqual([]);
    expect((await api('audit-events?limit=1&limit=2')).body.error_description).toBe("parameter 'limit' must be sent once");
    expect((await api('audit-events?tenant=globex')).body.error_description).toBe("unknown parameter 'tenant'");
    for (const query of ['limit=abc', 'limit=-1', 'limit=1.5', 'limit=12345', 'limit=%201', 'limit=0', 'limit=201', 'limit=12abc', 'limit=1e2', 'limit=0x10']) {
      const refused = await api(`audit-events?${query}`);
      expect([query, refused.status, refused.body.error_description]).toEqual([query, 400, 'limit must be an integer between 1 and 200']);
    }
    expect((await api('audit-events', { as: 'plain' })).status).toBe(403);
    expect((await api('audit-events', { as: 'nobody' })).status).toBe(401);
  });

  it('hands each event to onAuditEvent, writes each as a log line, and nothing secret anywhere', async () => {
    // Events written without waiting (refusals, sign-ins) may still be on their way: until none comes.
    for (let seen = -1; seen !== hooked.length;) {
      seen = hooked.length;
      await new Promise((resolve) => setTimeout(resolve, 200));
    }
    const all = [
      ...(await server.auth.audit.list({ tenant: 'acme', limit: 200 })).events,
      ...(await server.auth.audit.list({ tenant: 'globex', limit: 200 })).events,
      ...(await server.auth.audit.list({ tenant: null, limit: 200 })).events,
    ];
    expect(hooked.map((event) => event.id).sort()).toEqual(all.map((event) => event.id).sort());
    const lines = server.logLines.filter((line) => line.includes('"audit"'));
    expect(lines.length).toBe(all.length);
    const written = JSON.stringify(all) + JSON.stringify(hooked) + server.logLines.join('\n');
    for (const secret of secrets.filter(Boolean)) expect(written).not.toContain(secret);
  });
});
