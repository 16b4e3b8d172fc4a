import express from 'express';
import { createAuthServer } from '../../src/index.js';
import { portalClientId, portalClientSecret } from '../../src/portal/index.js';
import { PortalSessions } from '../../src/portal/sessions.js';
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
  it('keep what was saved, under a digest of the ID, sealed; another key or a changed byte reads nothing', async () => {
    const store = createMemoryStore();
    const adapter = store.engine('PortalSession');
    const sessions = new PortalSessions(adapter, COOKIE_KEY, 60);
    const id = PortalSessions.newId();
    await sessions.save(id, { csrf: 'c', accessToken: 'the-access-token', refreshToken: 'the-refresh-token', user: { sub: 'ada' } });
    expect(await sessions.get(id)).toMatchObject({ accessToken: 'the-access-token', user: { sub: 'ada' } });
    expect(await adapter.find(id)).toBeUndefined();
    expect(await new PortalSessions(adapter, 'another-cookie-key-of-32-characters-at-least', 60).get(id)).toBeUndefined();
    const stored = await adapter.find(createHash('sha256').update(id).digest('base64url'));
    expect(stored).toEqual({ sealed: expect.stringMatching(/^[A-Za-z0-9_-]+$/) as unknown });
    expect(Buffer.from(String(stored!.sealed), 'base64url').toString('latin1')).not.toContain('the-access-token');
    const tampered = Buffer.from(String(stored!.sealed), 'base64url');
    tampered[20] = tampered[20]! ^ 1;
    await adapter.upsert(createHash('sha256').update(id).digest('base64url'), { sealed: tampered.toString('base64url') }, 60);
    expect(await sessions.get(id)).toBeUndefined();
    await sessions.save(id, { csrf: 'c' });
    expect(await sessions.get('not-a-session-id')).toBeUndefined();
    expect(await sessions.get(undefined)).toBeUndefined();
    await sessions.delete(id);
    expect(await sessions.get(id)).toBeUndefined();
  });
});
