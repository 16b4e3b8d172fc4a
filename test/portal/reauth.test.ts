import { createRedisStore } from '../../adapters/redis/index.js';
import type { Store } from '../../adapters/types.js';
import { PORTAL_REAUTH_SECONDS, PORTAL_SESSION_SECONDS } from '../../policies/lifetimes.js';
import { totpCode, totpStep } from '../../src/factors/totp.js';
import type { PortalKit } from '../../src/portal/kit.js';
import { freshOrSignInAgain, keptAction, signedInRecently } from '../../src/portal/reauth.js';
import { PortalSessions } from '../../src/portal/sessions.js';
import { testAccounts } from '../support/accounts.js';
import { startRedis, type RedisServer } from '../support/redis.js';
import { startServer, type RunningServer } from '../support/server.js';
import { csrfOf, portalSignedIn, secondFactor, signedInAgo as agoIn, signInAgainFrom, signInAs } from '../support/portal.js';
import type { UserAgent } from '../support/user-agent.js';

/**
 * Signing in again before a destructive action (src/portal/reauth.ts), over HTTP on Redis: a
 * recent sign-in does it at once; a stale one (its `auth_time` older than PORTAL_REAUTH_SECONDS)
 * leads through a sign-in with `max_age=0` and the action is done once after it, by the same user
 * only; a replayed callback, another user's sign-in, a forged callback or a POST without the CSRF
 * token do nothing. A user with a second factor gives it again. (In Chromium:
 * test/e2e/portal-security.test.ts.)
 */

const COOKIE_KEY = 'a-cookie-key-of-the-reauth-tests-0123456789';
const admin = (sub: string) => ({ sub, password: `${sub}-password`, tenant: 'acme', claims: { name: sub.toUpperCase() }, permissions: ['integration_setup'] });
const USERS = [admin('ada'), admin('eve'), admin('kim')];

describe('the portal asks for a sign-in again before a destructive action', () => {
  let redis: RedisServer;
  let server: RunningServer;
  let store: Store;
  let sessions: PortalSessions;

  beforeAll(async () => {
    redis = await startRedis();
    server = await startServer({
      store: { type: 'redis', url: redis.url },
      accounts: testAccounts(USERS),
      cookieKeys: [COOKIE_KEY],
      portal: { enabled: true },
      // Not about factors: ada and eve sign in with their password alone whatever the default rule is.
      tenantPolicy: (tenant) => (tenant === 'acme' ? { secondFactor: 'optional' } : undefined),
    });
    // The test's own view of the portal's sessions on the same Redis (to make a sign-in old).
    store = await createRedisStore({ url: redis.url });
    sessions = new PortalSessions(store.engine('PortalSession'), store.engine('PortalSecret'), [COOKIE_KEY], PORTAL_SESSION_SECONDS);
  }, 60_000);

  afterAll(async () => {
    await store?.close();
    await server?.stop();
    await redis?.stop();
  });

  const signedIn = (sub: string, code?: () => string) => portalSignedIn(server.baseUrl, sub, sub.toUpperCase(), code);
  const signedInAgo = (agent: UserAgent, seconds: number) => agoIn(sessions, agent, seconds);

  const newClient = () => server.auth.clientConfigurations.create({ tenant: 'acme', name: `Payroll ${Math.random().toString(36).slice(2, 8)}`, category: 'payroll', resources: { scim: { scopes: ['scim.read'] } } });
  const exists = async (clientId: string) => (await server.auth.clientConfigurations.list('acme')).some((client) => client.clientId === clientId);
  const deletions = async (clientId: string) => (await server.auth.audit.list({ tenant: 'acme', type: 'client_configuration.deleted' })).events.filter((event) => event.target?.id === clientId).length;

  it('a recent sign-in: the delete is done at once, no detour through the sign-in', async () => {
    const { clientId } = await newClient();
    const { agent, csrf } = await signedIn('ada');
    await signedInAgo(agent, PORTAL_REAUTH_SECONDS - 30);
    const before = agent.visited.length;
    const step = await agent.request(`/portal/client-configurations/${clientId}/delete`, { method: 'POST', body: new URLSearchParams({ csrf }).toString() });
    expect(agent.visited.slice(before).some((url) => url.includes('/oauth2/authorize'))).toBe(false);
    expect(step.html).toContain('deleted.');
    expect(await exists(clientId)).toBe(false);
  });

  it('a stale sign-in: the delete waits for a sign-in again (max_age=0, the password asked), then is done once; a replayed callback repeats nothing', async () => {
    const { clientId } = await newClient();
    const { agent, csrf } = await signedIn('ada');
    await signedInAgo(agent, PORTAL_REAUTH_SECONDS + 30);
    const before = agent.visited.length;
    const login = await signInAgainFrom(agent, await agent.request(`/portal/client-configurations/${clientId}/delete`, { method: 'POST', body: new URLSearchParams({ csrf }).toString() }));
    // Sent to the authorization endpoint with max_age=0: the password page, though the browser has a sign-in session.
    const authorize = new URL(agent.visited.slice(before).find((url) => url.includes('/oauth2/authorize'))!);
    expect(authorize.searchParams.get('max_age')).toBe('0');
    expect(login.html).toContain('name="password"');
    expect(await exists(clientId)).toBe(true);
    const afterLogin = agent.visited.length;
    const home = await signInAs(agent, login, 'ada');
    expect(home.html).toContain('deleted.');
    expect(await exists(clientId)).toBe(false);
    expect(await deletions(clientId)).toBe(1);
    // The callback again (its code used, its state gone from the browser, the action taken): nothing more.
    const callback = agent.visited.slice(afterLogin).find((url) => url.includes('/portal/callback'))!;
    const replay = await agent.request(callback);
    expect(replay.status).toBe(400);
    expect(await deletions(clientId)).toBe(1);
    // The new session's sign-in is recent: the next destructive action goes straight through.
    const other = await newClient();
    const page = await agent.request('/portal');
    const direct = await agent.request(`/portal/client-configurations/${other.clientId}/delete`, { method: 'POST', body: new URLSearchParams({ csrf: csrfOf(page) }).toString() });
    expect(direct.html).toContain('deleted.');
    expect(await exists(other.clientId)).toBe(false);
  });

  it("another user's sign-in does not complete it: nothing deleted, the page says so", async () => {
    const { clientId } = await newClient();
    const { agent, csrf } = await signedIn('ada');
    await signedInAgo(agent, PORTAL_REAUTH_SECONDS + 30);
    const login = await signInAgainFrom(agent, await agent.request(`/portal/client-configurations/${clientId}/delete`, { method: 'POST', body: new URLSearchParams({ csrf }).toString() }));
    const home = await signInAs(agent, login, 'eve');
    expect(home.html).toContain('Signed in as EVE (eve)');
    expect(home.html).toContain('Nothing was changed');
    expect(await exists(clientId)).toBe(true);
    expect(await deletions(clientId)).toBe(0);
  });

  it('a forged completion is refused: an unknown state, a POST without the CSRF token; a later sign-in of the same browser does nothing kept', async () => {
    const { clientId } = await newClient();
    const { agent, csrf } = await signedIn('ada');
    await signedInAgo(agent, PORTAL_REAUTH_SECONDS + 30);
    expect((await agent.request('/portal/callback?code=x&state=made-up')).status).toBe(400);
    const forged = await agent.request(`/portal/client-configurations/${clientId}/delete`, { method: 'POST', body: new URLSearchParams({ csrf: 'not-the-token' }).toString() });
    expect(forged.status).toBe(403);
    expect(agent.visited.some((url) => url.includes('max_age'))).toBe(false);
    // Signing in again in this browser (its sign-in session: no password asked): no action was kept, nothing is deleted.
    let home = await agent.request('/portal/login');
    if (home.html.includes('value="allow"')) home = await agent.submit(home, { decision: 'allow' });
    expect(home.html).toContain('Signed in as ADA (ada)');
    expect(await exists(clientId)).toBe(true);
    expect(csrf).not.toBe(csrfOf(home));
  });

  it("the action is bound to the browser's session: the same user signing in in another browser does not complete it; her own browser then does", async () => {
    const { clientId } = await newClient();
    const { agent, csrf } = await signedIn('ada');
    await signedInAgo(agent, PORTAL_REAUTH_SECONDS + 30);
    const login = await signInAgainFrom(agent, await agent.request(`/portal/client-configurations/${clientId}/delete`, { method: 'POST', body: new URLSearchParams({ csrf }).toString() }));
    await signedIn('ada');
    expect(await exists(clientId)).toBe(true);
    expect((await signInAs(agent, login, 'ada')).html).toContain('deleted.');
    expect(await exists(clientId)).toBe(false);
  });

  it('the kept action holds every field as posted, in order, empty ones too, but not the CSRF token; with the user and tenant who posted it', async () => {
    const app = await server.auth.appRegistrations.create({ tenant: 'acme', name: 'Rota', clientType: 'confidential', redirectUris: ['https://rota.example/cb'] });
    const { agent, csrf } = await signedIn('ada');
    await signedInAgo(agent, PORTAL_REAUTH_SECONDS + 30);
    const body = new URLSearchParams([['csrf', csrf], ['name', 'Rota'], ['redirect_uri', 'https://rota.example/cb'], ['redirect_uri', ''], ['client_type', 'public'], ['pkce_enabled', 'on']]);
    const asked = Date.now();
    const page = await agent.request(`/portal/app-registrations/${app.clientId}`, { method: 'POST', body: body.toString() });
    expect(page.html).toContain('action="/portal/reauth"');
    const kept = await sessions.takeAction(agent.cookie('portal_session')!);
    expect(kept).toEqual({
      route: 'updateApp', id: app.clientId, sub: 'ada', tenant: 'acme', createdAt: expect.any(Number),
      fields: [['name', 'Rota'], ['redirect_uri', 'https://rota.example/cb'], ['redirect_uri', ''], ['client_type', 'public'], ['pkce_enabled', 'on']],
    });
    expect(kept!.createdAt).toBeGreaterThanOrEqual(asked);
  });

  it('the kept action (src/portal/reauth.ts): taken once; done only for the same user and tenant, signed in after it was asked for', async () => {
    const kit = { setup: { sessions } } as unknown as PortalKit;
    const before = { id: PortalSessions.newId(), session: { csrf: 'c', user: { sub: 'ada', tenant: 'acme' } } };
    const asked = Date.now();
    const keep = () => sessions.putAction(before.id, { route: 'deleteClient', id: 'x', fields: [['a', '1']], sub: 'ada', tenant: 'acme', createdAt: asked });
    const now = Math.floor(asked / 1000);
    await keep();
    expect(await keptAction(kit, before, { sub: 'ada', tenant: 'acme' }, now)).toMatchObject({ run: true, route: 'deleteClient', call: { id: 'x' } });
    expect(await keptAction(kit, before, { sub: 'ada', tenant: 'acme' }, now)).toBeUndefined();
    for (const [user, authTime] of [
      [{ sub: 'eve', tenant: 'acme' }, now],
      [{ sub: 'ada', tenant: 'globex' }, now],
      [{ sub: 'ada', tenant: 'acme' }, now - 60],
      [{ sub: 'ada', tenant: 'acme' }, now - 6],
      [{ sub: 'ada', tenant: 'acme' }, undefined],
    ] as const) {
      await keep();
      expect(await keptAction(kit, before, user, authTime)).toEqual({ run: false });
    }
    // Five seconds of clock skew between the sign-in's auth_time and our clock, not more.
    await keep();
    expect(await keptAction(kit, before, { sub: 'ada', tenant: 'acme' }, now - 5)).toMatchObject({ run: true });
    expect(await keptAction(kit, undefined, { sub: 'ada', tenant: 'acme' }, now)).toBeUndefined();
  });

  it('the page before the sign-in again says why; its button is a POST of that page only (no link elsewhere leads on); left by Cancel, nothing is done', async () => {
    const { clientId } = await newClient();
    const { agent, csrf } = await signedIn('ada');
    await signedInAgo(agent, PORTAL_REAUTH_SECONDS + 30);
    const page = await agent.request(`/portal/client-configurations/${clientId}/delete`, { method: 'POST', body: new URLSearchParams({ csrf }).toString() });
    expect(page.status).toBe(200);
    expect(page.html).toContain('You signed in more than 5 minutes ago.');
    expect(page.html).toContain('<form method="post" action="/portal/reauth">');
    expect((await agent.request('/portal/reauth')).status).toBe(404);
    expect((await agent.request('/portal/reauth', { method: 'POST', body: 'csrf=forged' })).status).toBe(403);
    // Cancel (home), then an ordinary sign-in in this browser: the kept action is not done by it.
    await agent.request('/portal');
    let home = await agent.request('/portal/login');
    if (home.html.includes('value="allow"')) home = await agent.submit(home, { decision: 'allow' });
    expect(home.html).toContain('Signed in as ADA (ada)');
    expect(await exists(clientId)).toBe(true);
  });

  it('a sign-in given up (the sign-in page left with an error): still signed in, nothing done', async () => {
    const { clientId } = await newClient();
    const { agent, csrf } = await signedIn('ada');
    await signedInAgo(agent, PORTAL_REAUTH_SECONDS + 30);
    const before = agent.visited.length;
    await signInAgainFrom(agent, await agent.request(`/portal/client-configurations/${clientId}/delete`, { method: 'POST', body: new URLSearchParams({ csrf }).toString() }));
    const state = new URL(agent.visited.slice(before).find((url) => url.includes('/oauth2/authorize'))!).searchParams.get('state')!;
    const back = await agent.request(`/portal/callback?${new URLSearchParams({ error: 'access_denied', state })}`);
    expect(back.html).toContain('Nothing was changed');
    expect(back.html).toContain('Signed in as ADA (ada)');
    expect(await exists(clientId)).toBe(true);
  });

  it("an app's client type changed waits for a sign-in again; a save that keeps the type does not", async () => {
    const app = await server.auth.appRegistrations.create({ tenant: 'acme', name: 'Timesheets', clientType: 'confidential', redirectUris: ['https://timesheets.example/cb'] });
    const { agent, csrf } = await signedIn('ada');
    await signedInAgo(agent, PORTAL_REAUTH_SECONDS + 30);
    const form = (type: string) => new URLSearchParams({ csrf, name: 'Timesheets', redirect_uri: 'https://timesheets.example/cb', client_type: type, pkce_enabled: 'on' }).toString();
    const kept = await agent.request(`/portal/app-registrations/${app.clientId}`, { method: 'POST', body: form('confidential') });
    expect(agent.visited.some((url) => url.includes('max_age'))).toBe(false);
    expect(kept.html).toContain('saved.');
    const login = await signInAgainFrom(agent, await agent.request(`/portal/app-registrations/${app.clientId}`, { method: 'POST', body: form('public') }));
    expect(login.html).toContain('name="password"');
    expect((await server.auth.appRegistrations.get(app.clientId))?.clientType).toBe('confidential');
    const home = await signInAs(agent, login, 'ada');
    expect(home.html).toContain('saved.');
    expect((await server.auth.appRegistrations.get(app.clientId))?.clientType).toBe('public');
  });

  it('a stale sign-in before a secret is regenerated: after the sign-in again, the new secret is shown once', async () => {
    const app = await server.auth.appRegistrations.create({ tenant: 'acme', name: 'Payslips', clientType: 'confidential', redirectUris: ['https://payslips.example/cb'] });
    const { agent, csrf } = await signedIn('ada');
    await signedInAgo(agent, PORTAL_REAUTH_SECONDS + 30);
    const login = await signInAgainFrom(agent, await agent.request(`/portal/app-registrations/${app.clientId}/secret`, { method: 'POST', body: new URLSearchParams({ csrf }).toString() }));
    expect(login.html).toContain('name="password"');
    const shown = await signInAs(agent, login, 'ada');
    expect(shown.url).toMatch(/\/portal\/secret$/);
    expect(shown.html).toContain('This secret is shown once.');
  });

  it('a user with a second factor gives it again in the sign-in again', async () => {
    const { secret } = await server.auth.factors.enrollTotp({ tenant: 'acme', sub: 'kim' });
    const step = totpStep(Date.now());
    const { agent, csrf } = await signedIn('kim', () => totpCode(secret, step));
    await signedInAgo(agent, PORTAL_REAUTH_SECONDS + 30);
    const { clientId } = await newClient();
    const login = await signInAgainFrom(agent, await agent.request(`/portal/client-configurations/${clientId}/delete`, { method: 'POST', body: new URLSearchParams({ csrf }).toString() }));
    const second = await agent.submit(login, { username: 'kim', password: 'kim-password' });
    // Asked for the code after the password, as at any sign-in of hers (a code of the next step: the first one is used).
    expect(second.html).toContain('name="code"');
    expect(await exists(clientId)).toBe(true);
    let home = await secondFactor(agent, second, totpCode(secret, step + 1));
    if (home.html.includes('value="allow"')) home = await agent.submit(home, { decision: 'allow' });
    expect(home.html).toContain('deleted.');
    expect(await exists(clientId)).toBe(false);
  });
});

/** freshOrSignInAgain on its own: the guard against a route that forgot to name itself. */
describe('freshOrSignInAgain (src/portal/reauth.ts)', () => {
  const call = (authTime: number, route: string | undefined) => ({
    ctx: {}, id: 'session-1', form: new Map(), route,
    now: { session: { user: { sub: 'ben', tenant: 'acme' }, authTime } },
  }) as unknown as Parameters<typeof freshOrSignInAgain>[1];
  const kit = {} as PortalKit;
  const now = () => Math.floor(Date.now() / 1000);

  it('a recent sign-in: go on, whatever the route', async () => {
    await expect(freshOrSignInAgain(kit, call(now() - 10, undefined))).resolves.toBe(true);
    await expect(freshOrSignInAgain(kit, call(now() - PORTAL_REAUTH_SECONDS + 5, 'deleteClient'))).resolves.toBe(true);
  });

  it('recent means up to PORTAL_REAUTH_SECONDS after the sign-in, to the millisecond; a session without a sign-in time never is', () => {
    const signedIn = 1_800_000_000;
    expect(signedInRecently({ csrf: 'c', authTime: signedIn }, (signedIn + PORTAL_REAUTH_SECONDS) * 1000)).toBe(true);
    expect(signedInRecently({ csrf: 'c', authTime: signedIn }, (signedIn + PORTAL_REAUTH_SECONDS) * 1000 + 1)).toBe(false);
    expect(signedInRecently({ csrf: 'c' }, signedIn * 1000)).toBe(false);
  });

  it('a stale sign-in on a route that names no row: a programming error, thrown before anything is kept or sent', async () => {
    await expect(freshOrSignInAgain(kit, call(now() - PORTAL_REAUTH_SECONDS - 5, undefined))).rejects.toThrow('a destructive action must name its row');
  });
});
