import express from 'express';
import { createAuthServer } from '../../src/index.js';
import { portalClientId, portalClientSecret } from '../../src/portal/index.js';
import { PortalSessions } from '../../src/portal/sessions.js';
import { ForwardedAddress } from '../../src/portal/address.js';
import { createHash } from 'node:crypto';
import { createMemoryStore } from '../../adapters/memory.js';
import { startRedis, type RedisServer } from '../support/redis.js';
import { startServer, type RunningServer } from '../support/server.js';
import { startHost } from '../support/host.js';
import { testAccounts } from '../support/accounts.js';
import { demoApis } from '../support/fixtures.js';
import { UserAgent } from '../support/user-agent.js';

/**
 * The portal as an option of the library, over HTTP: off by default, its own path under the
 * prefix, its own app registered once per deployment, its sessions sealed, its refusals clear.
 * (What users do in it: test/e2e/portal.test.ts, in Chromium.)
 */

const COOKIE_KEY = 'a-cookie-key-of-the-portal-tests-0123456789';
const ada = { sub: 'ada', password: 'ada-password', tenant: 'acme', claims: { name: 'Ada' }, permissions: ['integration_setup'] };

async function signedIn(server: RunningServer, path = '/portal'): Promise<{ agent: UserAgent; csrf: string }> {
  const agent = new UserAgent(server.baseUrl);
  let step = await agent.request(`${path}/login`);
  step = await agent.submit(step, { username: 'ada', password: 'ada-password' });
  if (step.html.includes('value="allow"')) step = await agent.submit(step, { decision: 'allow' });
  expect(step.html).toContain('Signed in as Ada (ada)');
  return { agent, csrf: /name="csrf" value="([^"]+)"/.exec(step.html)![1]! };
}

describe('the portal option', () => {
  it('is off by default: nothing is served at /portal and no app is registered for it', async () => {
    const server = await startServer({ accounts: testAccounts([ada]) });
    try {
      const response = await fetch(`${server.baseUrl}/portal`);
      expect(response.status).toBe(404);
      expect(await server.auth.appRegistrations.list()).toEqual([]);
    } finally {
      await server.stop();
    }
  });

  it.each([
    ['portal.path', { path: 'portal' }],
    ['portal.path', { path: '/Portal' }],
    ['portal.path', { path: '/portal/' }],
    ['portal.internalUrl', { internalUrl: 'ftp://127.0.0.1' }],
    ['portal.internalUrl', { internalUrl: 'http://auth.internal:3000' }],
    ['portal', { enabled: true, colour: 'red' }],
  ])('refuses a wrong %s', async (field, portal) => {
    await expect(createAuthServer({ baseUrl: 'http://127.0.0.1:1', apis: demoApis, portal } as never)).rejects.toThrow(new RegExp(field.replace('.', '\\.')));
  });

  it('speaks a language the host adds, in the host\'s words where it gave some, English underneath', async () => {
    const server = await startServer({
      accounts: testAccounts([ada]),
      portal: { enabled: true, messages: { en: { product: 'Integration hub', clients: { heading: 'Integrations' } }, nl: { product: 'Ontwikkelaarsportaal', signIn: 'Aanmelden' } } },
    });
    try {
      const page = async (language: string) => (await fetch(`${server.baseUrl}/portal`, { headers: { 'accept-language': language } })).text();
      const dutch = await page('nl-NL,nl;q=0.9');
      expect(dutch).toContain('<html lang="nl">');
      expect(dutch).toContain('<h1>Ontwikkelaarsportaal</h1>');
      expect(dutch).toContain('>Aanmelden</a>');
      expect(dutch).toContain('Manage your organisation&#39;s client configurations');
      expect(await page('en')).toContain('<h1>Integration hub</h1>');
      expect(await page('de')).toContain('<h1>Entwicklerportal</h1>');
    } finally {
      await server.stop();
    }
  });

  it.each([
    ['portal.messages.en.nope', { nope: 'x' }],
    ['portal.messages.en.clients.heading', { clients: { heading: 3 } }],
    ['portal.messages.en.clients', { clients: 'x' }],
    ['portal.messages.en.signedInAs', { signedInAs: 'x' }],
  ])('refuses portal texts that are not ours: %s', async (field, texts) => {
    await expect(createAuthServer({ baseUrl: 'http://127.0.0.1:1', apis: demoApis, portal: { enabled: true, messages: { en: texts } } } as never)).rejects.toThrow(field);
  });

  it('serves at {pathPrefix}{path}, with its cookie on that path, behind Express too', async () => {
    const host = await startHost((auth) => {
      const app = express();
      app.use(auth.middleware);
      app.use((_req, res) => res.status(418).end());
      return app;
    }, { accounts: testAccounts([ada]), portal: { enabled: true, path: '/admin' } });
    try {
      const server = { baseUrl: host.baseUrl } as RunningServer;
      const { agent } = await signedIn(server, '/auth2/admin');
      expect(agent.setCookieHeaders.some((cookie) => /^portal_session=.*path=\/auth2\/admin;.*httponly/i.test(cookie))).toBe(true);
      expect((await fetch(`${host.baseUrl}/portal`)).status).toBe(418);
    } finally {
      await host.stop();
    }
  });

  it('records the browser\'s address in the audit trail (signed by the portal; anyone else\'s claim is ignored)', async () => {
    const server = await startServer({ accounts: testAccounts([ada]), cookieKeys: [COOKIE_KEY], portal: { enabled: true }, proxy: true });
    try {
      const agent = new UserAgent(server.baseUrl, { 'x-forwarded-for': '203.0.113.7' });
      let step = await agent.request('/portal/login');
      step = await agent.submit(step, { username: 'ada', password: 'ada-password' });
      if (step.html.includes('value="allow"')) step = await agent.submit(step, { decision: 'allow' });
      const csrf = /name="csrf" value="([^"]+)"/.exec(step.html)![1]!;
      await agent.request('/portal/client-configurations', { method: 'POST', body: new URLSearchParams({ csrf, name: 'Addressed', category: 'c', scope: 'scim.read' }).toString() });
      const [created] = (await server.auth.audit.list({ tenant: 'acme', type: 'client_configuration.created' })).events;
      expect(created).toMatchObject({ actor: { type: 'user', id: 'ada' }, address: '203.0.113.7' });
      // A caller of the API who claims an address without the portal's signature: its own address counts.
      const forged = new ForwardedAddress('not-the-servers-cookie-key-0123456789').sign('198.51.100.9');
      expect(new ForwardedAddress(COOKIE_KEY).verify(forged)).toBeUndefined();
      expect(new ForwardedAddress(COOKIE_KEY).verify(new ForwardedAddress(COOKIE_KEY).sign('198.51.100.9', Date.now() - 120_000))).toBeUndefined();
      expect(new ForwardedAddress(COOKIE_KEY).verify(new ForwardedAddress(COOKIE_KEY).sign('198.51.100.9'))).toBe('198.51.100.9');
      await fetch(`${server.baseUrl}/api/oauth2/client-configurations`, { headers: { 'x-talent-auth-portal-address': forged } });
      const [denied] = (await server.auth.audit.list({ tenant: null, type: 'management.denied' })).events;
      expect(denied!.address).toBe('127.0.0.1');
    } finally {
      await server.stop();
    }
  });

  it('stores nothing for a stranger who starts sign-ins (they wait in a sealed cookie of the browser)', async () => {
    const redis: RedisServer = await startRedis();
    const server = await startServer({ store: { type: 'redis', url: redis.url }, accounts: testAccounts([ada]), cookieKeys: [COOKIE_KEY], portal: { enabled: true } });
    try {
      const before = (await redis.client().keys('*')).length;
      for (let n = 0; n < 20; n += 1) expect((await fetch(`${server.baseUrl}/portal/login`, { redirect: 'manual' })).status).toBe(302);
      expect((await redis.client().keys('*')).length).toBe(before);
      // The sign-in still works, bound to the browser that started it.
      await signedIn(server);
    } finally {
      await server.stop();
      await redis.stop();
    }
  });

  it('registers its app again when Redis comes back empty (restarted without persistence): one error line, a metric, sign-in works without a restart', async () => {
    // The Redis of the tests keeps nothing over a restart (no RDB snapshot, no AOF).
    const redis: RedisServer = await startRedis();
    const server = await startServer({
      store: { type: 'redis', url: redis.url }, accounts: testAccounts([ada]), cookieKeys: [COOKIE_KEY], portal: { enabled: true },
      observability: { metrics: true },
    });
    const portalApp = () => server.auth.appRegistrations.get(portalClientId(server.auth.issuer)).catch(() => undefined);
    const emptiedCount = async () => /^talent_auth_store_emptied_total (\d+)$/m.exec(await (await fetch(`${server.baseUrl}/metrics`)).text())?.[1];
    try {
      await signedIn(server);
      expect(await emptiedCount()).toBe('0');
      await redis.restart();
      const deadline = Date.now() + 5000;
      while (!(await portalApp())) {
        if (Date.now() > deadline) throw new Error('the portal app was not registered again within 5 s');
        await new Promise((resolve) => setTimeout(resolve, 50));
      }
      const said = server.logLines.map((line) => JSON.parse(line) as { level: string; message: string }).filter(({ message }) => message.includes('store was emptied'));
      expect(said).toEqual([expect.objectContaining({ level: 'error' })]);
      expect(await emptiedCount()).toBe('1');
      await signedIn(server);
    } finally {
      await server.stop();
      await redis.stop();
    }
  });

  it('registers its own first-party confidential app once, the same on every instance, and no tenant sees it', async () => {
    const redis: RedisServer = await startRedis();
    const events: string[] = [];
    const options = {
      store: { type: 'redis' as const, url: redis.url }, accounts: testAccounts([ada]), cookieKeys: [COOKIE_KEY], portal: { enabled: true },
      onAuditEvent: (event: { type: string }) => void events.push(event.type),
    };
    const first = await startServer(options);
    const second = await startServer({ ...options, baseUrl: first.baseUrl });
    try {
      const apps = await first.auth.appRegistrations.list();
      expect(apps).toHaveLength(1);
      expect(apps[0]).toMatchObject({
        clientId: portalClientId(first.auth.issuer), name: 'Developer portal', clientType: 'confidential', firstParty: true,
        redirectUris: [`${first.baseUrl}/portal/callback`], postLogoutRedirectUris: [`${first.baseUrl}/portal`],
      });
      expect(apps[0]!.tenant).toBeUndefined();
      // The second instance found it as it should be: nothing written, nothing recorded.
      expect(events.filter((type) => type.startsWith('app_registration.'))).toEqual(['app_registration.created']);
      // Its secret is derived from the cookie key: it authenticates at the token endpoint.
      const token = await fetch(`${first.oauthUrl}/token`, {
        method: 'POST',
        headers: { authorization: `Basic ${Buffer.from(`${apps[0]!.clientId}:${portalClientSecret(COOKIE_KEY)}`).toString('base64')}`, 'content-type': 'application/x-www-form-urlencoded' },
        body: 'grant_type=refresh_token&refresh_token=nope',
      });
      expect(((await token.json()) as { error: string }).error).toBe('invalid_grant');
      // A tenant's admin does not see it through the management API.
      const { agent } = await signedIn(first);
      expect((await agent.request('/portal')).html).toContain('No app registrations yet.');
    } finally {
      await second.stop();
      await first.stop();
      await redis.stop();
    }
  });

  describe('requests it refuses, with a page that says why', () => {
    let server: RunningServer;
    beforeAll(async () => {
      server = await startServer({ accounts: testAccounts([ada]), cookieKeys: [COOKIE_KEY], portal: { enabled: true } });
    });
    afterAll(() => server.stop());

    it.each([
      ['an unknown page', 'GET', '/portal/nothing-here', 404],
      ['an ID that is not one', 'GET', '/portal/client-configurations/..%2F..', 404],
      ['another method', 'PUT', '/portal', 405],
    ])('%s', async (_name, method, path, status) => {
      const { agent } = await signedIn(server);
      const step = await agent.request(path, { method });
      expect(step.status).toBe(status);
      expect(step.html).toContain('role="alert"');
    });

    it('a form larger than 64 KiB: 413, nothing sent on', async () => {
      const { agent, csrf } = await signedIn(server);
      const step = await agent.request('/portal/client-configurations', { method: 'POST', body: `csrf=${csrf}&name=${'x'.repeat(70_000)}` });
      expect(step.status).toBe(413);
      expect(await server.auth.clientConfigurations.list('acme')).toEqual([]);
    });

    it('a secret is taken by its page only: not by a HEAD, not by a prefetch, and once', async () => {
      const { agent, csrf } = await signedIn(server);
      const cookie = agent.setCookieHeaders.filter((header) => header.startsWith('portal_session=')).at(-1)!.split(';')[0]!;
      const headers = { cookie, origin: server.baseUrl, 'content-type': 'application/x-www-form-urlencoded' };
      const created = await fetch(`${server.baseUrl}/portal/client-configurations`, {
        method: 'POST', headers, redirect: 'manual', body: new URLSearchParams({ csrf, name: 'Once', category: 'c', scope: 'scim.read' }).toString(),
      });
      expect(created.status).toBe(303);
      expect(created.headers.get('location')).toBe('/portal/secret');
      const secretPage = (extra: Record<string, string> = {}, method = 'GET') => fetch(`${server.baseUrl}/portal/secret`, { method, headers: { cookie, ...extra }, redirect: 'manual' });
      expect((await secretPage({}, 'HEAD')).status).toBe(204);
      expect((await secretPage({ 'sec-purpose': 'prefetch' })).status).toBe(204);
      expect((await secretPage({ purpose: 'prefetch' })).status).toBe(204);
      const shown = await secretPage();
      expect(shown.status).toBe(200);
      expect(shown.headers.get('cache-control')).toBe('no-store');
      const secret = /id="secret" class="secret" value="([A-Za-z0-9_-]{43})"/.exec(await shown.text())![1]!;
      expect(secret).toBeDefined();
      expect((await secretPage()).status).toBe(303);
    });

    it('signed out: every page but the first leads to it, every POST is refused', async () => {
      const agent = new UserAgent(server.baseUrl);
      expect((await agent.request('/portal/client-configurations/new')).url).toBe(`${server.baseUrl}/portal`);
      expect((await agent.request('/portal/client-configurations', { method: 'POST', body: 'name=x' })).status).toBe(403);
    });

    it('a session whose grant ended (consent revoked elsewhere) is signed out at its next page', async () => {
      const { agent } = await signedIn(server);
      await server.auth.consents.revoke({ tenant: 'acme', sub: 'ada', clientId: portalClientId(server.auth.issuer) });
      // Its access token is no longer live at the APIs, its refresh token ends with the grant.
      const step = await agent.request('/portal');
      expect(step.status).toBe(401);
      expect(step.html).toContain('Your sign-in has ended. Please sign in again.');
      expect((await agent.request('/portal')).html).toContain('>Sign in</a>');
    });
  });
});

describe('portal sessions (sealed in the store)', () => {
  const digest = (id: string) => createHash('sha256').update(id).digest('base64url');
  const OTHER_KEY = 'another-cookie-key-of-32-characters-at-least';

  it('keep what was saved, under a digest of the ID, sealed; another key, another ID or a changed byte reads nothing', async () => {
    const store = createMemoryStore();
    const adapter = store.engine('PortalSession');
    const sessions = new PortalSessions(adapter, store.engine('PortalSecret'), [COOKIE_KEY], 60);
    const id = PortalSessions.newId();
    await sessions.save(id, { csrf: 'c', accessToken: 'the-access-token', refreshToken: 'the-refresh-token', user: { sub: 'ada' } });
    expect(await sessions.get(id)).toMatchObject({ accessToken: 'the-access-token', user: { sub: 'ada' } });
    expect(await adapter.find(id)).toBeUndefined();
    expect(await new PortalSessions(adapter, store.engine('PortalSecret'), [OTHER_KEY], 60).get(id)).toBeUndefined();
    const stored = await adapter.find(digest(id));
    expect(stored).toEqual({ sealed: expect.stringMatching(/^[A-Za-z0-9_-]+$/) as unknown });
    expect(Buffer.from(String(stored!.sealed), 'base64url').toString('latin1')).not.toContain('the-access-token');
    // Copied under another session's key (someone who can write to the store): it does not open there.
    const attacker = PortalSessions.newId();
    await adapter.upsert(digest(attacker), stored!, 60);
    expect(await sessions.get(attacker)).toBeUndefined();
    const tampered = Buffer.from(String(stored!.sealed), 'base64url');
    tampered[20] = tampered[20]! ^ 1;
    await adapter.upsert(digest(id), { sealed: tampered.toString('base64url') }, 60);
    expect(await sessions.get(id)).toBeUndefined();
    expect(await sessions.get('not-a-session-id')).toBeUndefined();
    expect(await sessions.get(undefined)).toBeUndefined();
    await sessions.save(id, { csrf: 'c' });
    await sessions.delete(id);
    expect(await sessions.get(id)).toBeUndefined();
  });

  it('open with every cookie key (rotation) and seal with the first', async () => {
    const store = createMemoryStore();
    const old = new PortalSessions(store.engine('PortalSession'), store.engine('PortalSecret'), [COOKIE_KEY], 60);
    const rotated = new PortalSessions(store.engine('PortalSession'), store.engine('PortalSecret'), [OTHER_KEY, COOKIE_KEY], 60);
    const id = PortalSessions.newId();
    await old.save(id, { csrf: 'kept' });
    expect(await rotated.get(id)).toEqual({ csrf: 'kept' });
    expect(old.open(rotated.seal({ a: 1 }, 'sign-in'), 'sign-in')).toBeUndefined();
    expect(rotated.open(rotated.seal({ a: 1 }, 'sign-in'), 'sign-in')).toEqual({ a: 1 });
    // A seal opens for its own purpose only (a session is not a sign-in cookie).
    expect(rotated.open(rotated.seal({ a: 1 }, 'sign-in'), 'session x')).toBeUndefined();
  });

  it('give a secret once, to one of two requests that ask at the same time', async () => {
    const redis = await startRedis();
    const { createRedisStore } = await import('../../adapters/redis/index.js');
    const store = await createRedisStore({ url: redis.url });
    try {
      const sessions = new PortalSessions(store.engine('PortalSession'), store.engine('PortalSecret'), [COOKIE_KEY], 60);
      const id = PortalSessions.newId();
      const secret = { what: 'client_configuration' as const, name: 'n', clientId: 'c', clientSecret: 'the-secret-value', regenerated: false };
      await sessions.putSecret(id, secret);
      const raw = await redis.client().keys('*PortalSecret*');
      expect(raw).toHaveLength(1);
      expect(JSON.stringify(await redis.client().hgetall(raw[0]!))).not.toContain('the-secret-value');
      const taken = await Promise.all([sessions.takeSecret(id), sessions.takeSecret(id), sessions.takeSecret(id)]);
      expect(taken.filter(Boolean)).toEqual([secret]);
      expect(await sessions.takeSecret(id)).toBeUndefined();
    } finally {
      await store.close();
      await redis.stop();
    }
  });
});
