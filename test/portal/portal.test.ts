import express from 'express';
import { createAuthServer } from '../../src/index.js';
import { portalClientId, portalClientSecret } from '../../src/portal/index.js';
import { ForwardedAddress } from '../../src/portal/address.js';
import { startRedis, type RedisServer } from '../support/redis.js';
import { startServer, type RunningServer } from '../support/server.js';
import { startHost } from '../support/host.js';
import { testAccounts } from '../support/accounts.js';
import { demoApis } from '../support/fixtures.js';
import { passSecondFactor } from '../support/second-factor.js';
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
  step = await passSecondFactor(agent, step, server.baseUrl, 'ada');
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
      step = await passSecondFactor(agent, step, server.baseUrl, 'ada');
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

describe('a portal that fits the user', () => {
  const ben = { sub: 'ben', password: 'ben-password', tenant: 'acme', claims: { name: 'Ben Reader' }, scopes: ['scim.read'] as string[], permissions: [] as string[] };
  const gus = { sub: 'gus', password: 'gus-password', tenant: 'globex', claims: { name: 'Gus' } };
  const PERMISSION = 'You need the permission &#39;Create and update integration setup&#39;';
  let server: RunningServer;

  async function signInAs(user: { sub: string; password: string }, allowed: (html: string) => void = () => {}): Promise<{ agent: UserAgent; csrf: string; home: string }> {
    const agent = new UserAgent(server.baseUrl);
    let step = await agent.request('/portal/login');
    step = await agent.submit(step, { username: user.sub, password: user.password });
    step = await passSecondFactor(agent, step, server.baseUrl, user.sub);
    if (step.html.includes('value="allow"')) {
      allowed(step.html);
      step = await agent.submit(step, { decision: 'allow' });
    }
    expect(step.html).toContain('Signed in as');
    return { agent, csrf: /name="csrf" value="([^"]+)"/.exec(step.html)![1]!, home: step.html };
  }

  const denied = async () => [
    ...(await server.auth.audit.list({ tenant: 'acme', type: 'management.denied' })).events,
    ...(await server.auth.audit.list({ tenant: null, type: 'management.denied' })).events,
  ];

  describe('with an AccountStore that finds users by username', () => {
    beforeAll(async () => {
      server = await startServer({
        accounts: testAccounts([ada, ben, gus]), cookieKeys: [COOKIE_KEY], portal: { enabled: true },
        rateLimits: { authorize: false, failedSignIn: { perUsername: { max: 2, windowSeconds: 600 }, perAddress: { max: 100, windowSeconds: 600 } } },
      });
    });
    afterAll(() => server.stop());

    it('a user without the permission: her consent does not list it, her token lacks it, and her portal calls no management API (zero refusals recorded)', async () => {
      const existing = await server.auth.clientConfigurations.create({ tenant: 'acme', name: 'Existing', category: 'c', resources: { scim: { scopes: ['scim.read'] } } });
      const { agent, csrf, home } = await signInAs(ben, (consent) => {
        expect(consent).toContain('Know who you are');
        expect(consent).not.toMatch(/Integration setup|integrations/i);
      });
      expect(home).toContain(PERMISSION);
      expect(home).not.toContain('Create a client configuration');
      expect(home).not.toContain('Apps of the platform');
      const [consent] = await server.auth.consents.list({ tenant: 'acme', sub: 'ben' });
      expect(consent!.scopes.map((entry) => entry.scope)).toEqual(['openid', 'profile']);
      const forms = ['/client-configurations/new', '/app-registrations/new', `/client-configurations/${existing.clientId}`, `/client-configurations/${existing.clientId}/delete`,
        `/client-configurations/${existing.clientId}/secret`, `/app-registrations/${existing.clientId}`, '/sign-ins/unlock', '/activity', '/activity?type=consent.granted'];
      for (const path of forms) {
        const page = await agent.request(`/portal${path}`);
        expect([path, page.status, page.url]).toEqual([path, 403, `${server.baseUrl}/portal${path}`]);
        expect(page.html).toContain(PERMISSION);
        expect(page.html).toContain('If you were given the permission since you signed in, sign out and sign in again.');
        expect(page.html).not.toContain('name="name"');
      }
      const posts: Array<[string, Record<string, string>]> = [
        ['/client-configurations', { name: 'Sneaky', category: 'x', scope: 'scim.read' }],
        ['/app-registrations', { name: 'Sneaky', redirect_uri: 'https://sneaky.example/cb', client_type: 'public' }],
        [`/client-configurations/${existing.clientId}`, { name: 'Renamed', category: 'x', scope: 'scim.read' }],
        [`/client-configurations/${existing.clientId}/delete`, {}],
        [`/client-configurations/${existing.clientId}/secret`, {}],
        ['/sign-ins/unlock', { username: 'ada' }],
      ];
      for (const [path, fields] of posts) {
        const page = await agent.request(`/portal${path}`, { method: 'POST', body: new URLSearchParams({ csrf, ...fields }).toString() });
        expect([path, page.status, page.url]).toEqual([path, 403, `${server.baseUrl}/portal${path}`]);
        expect(page.html).toContain(PERMISSION);
      }
      expect((await agent.request('/portal')).html).toContain(PERMISSION);
      expect(await denied()).toEqual([]);
      expect(await server.auth.clientConfigurations.get(existing.clientId)).toMatchObject({ name: 'Existing' });
      expect((await server.auth.clientConfigurations.list('acme')).map((client) => client.name)).toEqual(['Existing']);
      expect((await server.auth.audit.list({ tenant: 'acme', type: 'sign_in.unlocked' })).events).toEqual([]);
      await server.auth.clientConfigurations.delete(existing.clientId);
    });

    it('a permission given later: the next sign-in asks for the management right, and the portal shows the setup', async () => {
      ben.permissions = ['integration_setup'];
      try {
        const { home } = await signInAs(ben, (consent) => expect(consent).toContain('Integration setup: Create and update your organization'));
        expect(home).toContain('Create a client configuration');
        expect(home).not.toContain(PERMISSION);
      } finally {
        ben.permissions = [];
        await server.auth.consents.revoke({ tenant: 'acme', sub: 'ben', clientId: portalClientId(server.auth.issuer) });
      }
    });

    it('a permission withdrawn while her token still carries the right: the API refuses, and the portal says so (403), never a silent return home', async () => {
      const { agent, csrf } = await signInAs(ada);
      ada.permissions = [];
      try {
        const page = await agent.request('/portal/client-configurations', { method: 'POST', body: new URLSearchParams({ csrf, name: 'Late', category: 'x', scope: 'scim.read' }).toString() });
        expect(page.status).toBe(403);
        expect(page.url).toBe(`${server.baseUrl}/portal/client-configurations`);
        expect(page.html).toContain(PERMISSION);
        expect(await server.auth.clientConfigurations.list('acme')).toEqual([]);
      } finally {
        ada.permissions = ['integration_setup'];
      }
    });

    it("an admin sees the platform's apps that serve her organisation, read-only, beside her own", async () => {
      const payroll = await server.auth.appRegistrations.create({ name: 'Payroll of the platform', description: 'Monthly pay', redirectUris: ['https://payroll.example/cb'], clientType: 'confidential' });
      const foreign = await server.auth.appRegistrations.create({ name: 'Globex tool', redirectUris: ['https://globex.example/cb'], clientType: 'public', tenant: 'globex' });
      try {
        const { home } = await signInAs(ada);
        const section = home.slice(home.indexOf('id="platform-apps-heading"'), home.indexOf('</section>', home.indexOf('id="platform-apps-heading"')));
        expect(section).toContain('Payroll of the platform');
        expect(section).toContain('Monthly pay');
        expect(section).toContain('Developer portal');
        expect(section).toContain(payroll.clientId);
        expect(section).not.toContain('Globex tool');
        expect(section).not.toMatch(/href=|<form|secret/i);
        expect(home).not.toContain(foreign.clientId);
      } finally {
        await server.auth.appRegistrations.delete(payroll.clientId);
        await server.auth.appRegistrations.delete(foreign.clientId);
      }
    });

    it('Activity in words: what happened, who (her name), to what (its name, or that it is gone, with its ID), the details; filtered by type and dates', async () => {
      const { agent, csrf } = await signInAs(ada);
      const post = (path: string, fields: Record<string, string>) => agent.request(`/portal${path}`, { method: 'POST', body: new URLSearchParams({ csrf, ...fields }).toString() });
      await post('/client-configurations', { name: 'Payroll sync', category: 'payroll', scope: 'scim.read' });
      await agent.request('/portal/secret');
      const [created] = await server.auth.clientConfigurations.list('acme');
      await post(`/client-configurations/${created!.clientId}`, { name: 'Payroll export', category: 'payroll', scope: 'scim.read' });
      const kept = await server.auth.clientConfigurations.create({ tenant: 'acme', name: 'Reporting', category: 'r', resources: { scim: { scopes: ['scim.read'] } } });
      await post(`/client-configurations/${created!.clientId}/delete`, {});
      const page = await agent.request('/portal/activity');
      expect(page.status).toBe(200);
      const rows = [...page.html.matchAll(/<tr><td>([^<]*)<\/td><td>([^<]*)<\/td><td>([^<]*)<\/td><td>([^<]*)<\/td><td>(.*?)<\/td><td>([^<]*)<\/td><\/tr>/g)].map((row) => row.slice(2, 6));
      const gone = `Client configuration Payroll export, which no longer exists (${created!.clientId})`;
      expect(rows.slice(0, 4)).toEqual([
        ['Client configuration deleted', 'Ada', gone, ''],
        ['Client configuration created', 'The platform operator', 'Client configuration Reporting', '<ul class="details"><li>Name: Reporting</li><li>Category: r</li><li>APIs: User provisioning</li></ul>'],
        ['Client configuration changed', 'Ada', gone, '<ul class="details"><li>Changed: name</li></ul>'],
        ['Client configuration created', 'Ada', gone, '<ul class="details"><li>Name: Payroll sync</li><li>Category: payroll</li><li>APIs: User provisioning</li></ul>'],
      ]);
      expect(rows.some(([what, who, , details]) => what === 'Access to an account allowed' && who === 'Ada' && details!.includes('Access: Know who you are'))).toBe(true);
      expect(page.html).not.toMatch(/<td>[a-z_]+\.[a-z_]+<\/td>/);
      // By type (the select offers the types in words), and by dates (UTC days).
      expect(page.html).toContain('<option value="client_configuration.deleted">Client configuration deleted</option>');
      const deleted = await agent.request('/portal/activity?type=client_configuration.deleted');
      const deletedRows = [...deleted.html.matchAll(/<tr><td>[^<]*<\/td><td>([^<]*)<\/td>/g)].map((row) => row[1]);
      expect(deletedRows.length).toBeGreaterThan(0);
      expect(new Set(deletedRows)).toEqual(new Set(['Client configuration deleted']));
      const today = new Date().toISOString().slice(0, 10);
      const yesterday = new Date(Date.now() - 86_400_000).toISOString().slice(0, 10);
      expect([...(await agent.request(`/portal/activity?since=${today}&until=${today}`)).html.matchAll(/<tr><td>/g)].length).toBeGreaterThan(4);
      const before = await agent.request(`/portal/activity?until=${yesterday}`);
      expect(before.html).toContain('Nothing recorded yet.');
      expect(before.html).toContain(`value="${yesterday}"`);
      for (const [query, field, message] of [
        ['since=2026-13-40', 'activity-since', 'From date (UTC): enter a valid date.'],
        ['until=yesterday', 'activity-until', 'To date (UTC): enter a valid date.'],
        [`since=${today}&until=${yesterday}`, 'activity-until', 'To date (UTC): the date must not be before the from date.'],
      ] as const) {
        const refused = await agent.request(`/portal/activity?${query}`);
        expect([query, refused.status]).toEqual([query, 400]);
        expect(refused.html).toContain(`<p class="field-error" id="${field}-error">${message}</p>`);
        expect(refused.html).toContain(`id="${field}" name="${field.slice(9)}" type="date"`);
        expect(refused.html).toContain('aria-invalid="true"');
      }
      await server.auth.clientConfigurations.delete(kept.clientId);
    });

    it('Activity pages: the link to older events carries the trail\'s cursor, and the next page goes on from there', async () => {
      const { agent } = await signInAs(ada);
      for (let n = 0; n < 30; n += 1) {
        const made = await server.auth.clientConfigurations.create({ tenant: 'acme', name: `Paged ${n}`, category: 'p', resources: { scim: { scopes: ['scim.read'] } } });
        await server.auth.clientConfigurations.delete(made.clientId);
      }
      const first = await agent.request('/portal/activity');
      const link = /<a href="[^"]*\/activity\?([^"]*cursor=[^"]*)">/.exec(first.html)?.[1]?.replace(/&amp;/g, '&');
      expect(link).toBeDefined();
      const cursor = new URLSearchParams(link!).get('cursor')!;
      expect(cursor).toMatch(/^[A-Za-z0-9_-]+\.[A-Za-z0-9_-]{22}$/);
      const second = await agent.request(`/portal/activity?${link}`);
      expect(second.status).toBe(200);
      const rowsOf = (html: string) => [...html.matchAll(/<tr><td>([^<]*)<\/td>/g)].map((row) => row[1]);
      expect(rowsOf(first.html)).toHaveLength(50);
      expect(rowsOf(second.html).length).toBeGreaterThan(0);
      // Newest first across the pages: the second page's first event is no newer than the first page's last.
      expect(rowsOf(second.html)[0]! <= rowsOf(first.html).at(-1)!).toBe(true);
      // A cursor that is not the trail's is not passed on: the first page again.
      expect(rowsOf((await agent.request('/portal/activity?cursor=0-0')).html)).toEqual(rowsOf(first.html));
    });

    it('an admin unlocks a user of her organisation held by sign-in throttling; another organisation\'s is answered alike', async () => {
      const attempt = async (user: { sub: string }, password: string) => {
        const agent = new UserAgent(server.baseUrl);
        const step = await agent.submit(await agent.request('/portal/login'), { username: user.sub, password });
        return step.status;
      };
      for (const user of [ben, gus]) {
        await attempt(user, 'wrong');
        await attempt(user, 'wrong');
        expect(await attempt(user, 'x')).toBe(429);
      }
      const { agent, csrf, home } = await signInAs(ada);
      expect(home).toContain('href="/portal/sign-ins/unlock"');
      const form = await agent.request('/portal/sign-ins/unlock');
      expect(form.html).toContain('<label for="unlock-username">Username</label>');
      const empty = await agent.request('/portal/sign-ins/unlock', { method: 'POST', body: new URLSearchParams({ csrf, username: ' ' }).toString() });
      expect(empty.status).toBe(400);
      expect(empty.html).toContain('<p class="field-error" id="unlock-username-error">Username: enter a username.</p>');
      const done = await agent.request('/portal/sign-ins/unlock', { method: 'POST', body: new URLSearchParams({ csrf, username: 'ben' }).toString() });
      expect(done.url).toBe(`${server.baseUrl}/portal`);
      expect(done.html).toContain('<p class="notice" role="status">ben can sign in again.</p>');
      expect(await attempt(ben, 'ben-password')).not.toBe(429);
      const other = await agent.request('/portal/sign-ins/unlock', { method: 'POST', body: new URLSearchParams({ csrf, username: 'gus' }).toString() });
      expect(other.html).toContain('Nothing to unlock: no failed sign-ins are counted for a user of your organisation named gus.');
      expect(await attempt(gus, 'gus-password')).toBe(429);
      const activity = await agent.request('/portal/activity?type=sign_in.unlocked');
      expect(activity.html).toContain('<td>Sign-in hold lifted</td><td>Ada</td><td>User Ben Reader</td><td><ul class="details"><li>2 failed sign-ins cleared</li></ul></td>');
      expect(activity.html).not.toContain('gus');
    });
  });

  it("names only her organisation's users: anyone else in its trail is shown by ID", async () => {
    const redis = await startRedis();
    server = await startServer({ store: { type: 'redis', url: redis.url }, accounts: testAccounts([ada, gus]), cookieKeys: [COOKIE_KEY], portal: { enabled: true } });
    const { createRedisStore } = await import('../../adapters/redis/index.js');
    const writer = await createRedisStore({ url: redis.url });
    try {
      const { agent } = await signInAs(ada);
      // An event of acme's trail naming a user of another tenant (written straight to the store).
      await writer.audit.append({ id: '00000000-0000-4000-8000-000000000001', time: new Date().toISOString(), type: 'consent.revoked', tenant: 'acme',
        actor: { type: 'user', id: 'gus' }, details: { user: 'ada', scopes: ['openid'] } }, { maxAgeMs: 86_400_000, maxEvents: 100 }, Date.now(), 'changes');
      await writer.audit.append({ id: '00000000-0000-4000-8000-000000000002', time: new Date().toISOString(), type: 'consent.revoked', tenant: 'acme',
        actor: { type: 'operator' }, details: { user: 'gus', scopes: ['openid'], reason: 'app_deleted' } }, { maxAgeMs: 86_400_000, maxEvents: 100 }, Date.now(), 'changes');
      const page = await agent.request('/portal/activity?type=consent.revoked');
      expect(page.html).toContain('<td>Access to an account revoked</td><td>User gus</td>');
      expect(page.html).toContain('<li>User: Ada</li>');
      expect(page.html).toContain('<td>Access to an account revoked</td><td>The platform operator</td>');
      expect(page.html).toContain('<li>Why: the app was deleted</li><li>User: User gus</li>');
      expect(page.html).not.toContain('Gus');
    } finally {
      await writer.close();
      await server.stop();
      await redis.stop();
    }
  });

  it('without findByUsername: no unlock action in the portal', async () => {
    const plain = testAccounts([ada]);
    const { findByUsername: _lookup, ...withoutLookup } = plain;
    server = await startServer({ accounts: withoutLookup, cookieKeys: [COOKIE_KEY], portal: { enabled: true } });
    try {
      const { agent, csrf, home } = await signInAs(ada);
      expect(home).not.toContain('Sign-in holds');
      expect((await agent.request('/portal/sign-ins/unlock')).status).toBe(404);
      expect((await agent.request('/portal/sign-ins/unlock', { method: 'POST', body: new URLSearchParams({ csrf, username: 'ada' }).toString() })).status).toBe(404);
    } finally {
      await server.stop();
    }
  });
});
