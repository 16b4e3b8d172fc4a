import { alice, testAccounts } from '../../support/accounts.js';
import { startServer, type RunningServer } from '../../support/server.js';
import { pkcePair, UserAgent } from '../../support/user-agent.js';

const SPA = 'http://127.0.0.1:5173/callback';
const WEB = 'https://app.example.com/cb';
const LEGACY = 'https://legacy.example.com/cb';

describe('GET /oauth2/authorize: errors and pages', () => {
  let server: RunningServer;
  let spa: string;
  let web: string;
  let legacy: string;

  beforeAll(async () => {
    server = await startServer({ accounts: testAccounts([alice]) });
    spa = (await server.auth.appRegistrations.create({ name: 'SPA', redirectUris: [SPA], clientType: 'public' })).clientId;
    web = (await server.auth.appRegistrations.create({ name: 'Web', redirectUris: [WEB], clientType: 'confidential' })).clientId;
    legacy = (await server.auth.appRegistrations.create({
      name: 'Legacy', redirectUris: [LEGACY], clientType: 'confidential', pkceEnabled: false,
    })).clientId;
  });
  afterAll(async () => {
    await server.stop();
  });

  const challenge = pkcePair().challenge;
  const base = () => ({
    response_type: 'code', client_id: spa, redirect_uri: SPA, scope: 'openid scim.read', state: 'the-state',
    code_challenge: challenge, code_challenge_method: 'S256',
  });
  const authorize = (params: Record<string, string | undefined>) => {
    const query = new URLSearchParams(Object.entries(params).filter((entry): entry is [string, string] => entry[1] !== undefined));
    return new UserAgent(server.baseUrl).request(`${server.oauthUrl}/authorize?${query}`);
  };

  describe('never redirect to an unverified place: an error page instead', () => {
    it.each([
      ['an unknown client', { client_id: '00000000-0000-4000-8000-000000000000' }],
      ['a missing client_id', { client_id: undefined }],
      ['an unregistered redirect URI', { redirect_uri: 'https://evil.example/cb' }],
      ['a trailing slash', { redirect_uri: `${SPA}/` }],
      ['another loopback port', { redirect_uri: 'http://127.0.0.1:5174/callback' }],
      ['localhost for 127.0.0.1', { redirect_uri: 'http://localhost:5173/callback' }],
      ['an added query', { redirect_uri: `${SPA}?x=1` }],
      ['a missing redirect_uri', { redirect_uri: undefined }],
    ])('%s', async (_name, change) => {
      const step = await authorize({ ...base(), ...change });
      expect(step.location).toBeUndefined();
      expect(step.status).toBe(400);
      expect(step.html).toContain('Sign-in cannot continue');
      expect(step.html).not.toContain('the-state');
    });
  });

  describe('other errors go back to the app with error and the unchanged state', () => {
    it.each([
      ['a missing scope', { scope: undefined }, 'invalid_request'],
      ['an unknown scope', { scope: 'openid payroll.read' }, 'invalid_scope'],
      ['a public app without code_challenge', { code_challenge: undefined, code_challenge_method: undefined }, 'invalid_request'],
      ['the plain method', { code_challenge_method: 'plain', code_challenge: 'x'.repeat(43) }, 'invalid_request'],
      ['response_type token', { response_type: 'token' }, 'unsupported_response_type'],
    ])('%s', async (_name, change, error) => {
      const step = await authorize({ ...base(), ...change });
      const back = new URL(step.location!);
      expect(back.origin + back.pathname).toBe(SPA);
      // response_type=token would answer in the fragment (its default response mode).
      const answer = back.search ? back.searchParams : new URLSearchParams(back.hash.slice(1));
      expect(answer.get('error')).toBe(error);
      expect(answer.get('state')).toBe('the-state');
      expect(answer.has('code')).toBe(false);
    });

    it.each([
      ['an unknown scope', { scope: 'openid address' }],
      ['a scope with a backslash and a quote', { scope: 'openid a\\b"c' }],
      ['a scope of non-ASCII and bidi characters', { scope: 'openid \u00e9\u202e' }],
      ['state twice', { state: ['a', 'b'] as unknown as string }],
    ])('every error_description sent back is in the RFC 6749 charset (no quote, no backslash): %s', async (_name, change) => {
      const query = new URLSearchParams();
      for (const [name, value] of Object.entries({ ...base(), ...change })) {
        for (const each of Array.isArray(value) ? value : [value]) query.append(name, each);
      }
      const step = await new UserAgent(server.baseUrl).request(`${server.oauthUrl}/authorize?${query}`);
      const description = new URL(step.location!).searchParams.get('error_description');
      expect(description).toMatch(/^[\x20\x21\x23-\x5b\x5d-\x7e]+$/);
    });

    it('a missing state: error without state', async () => {
      const step = await authorize({ ...base(), state: undefined });
      const back = new URL(step.location!);
      expect(back.searchParams.get('error')).toBe('invalid_request');
      expect(back.searchParams.get('error_description')).toMatch(/state/);
      expect(back.searchParams.has('state')).toBe(false);
    });

    it('a PKCE-enabled confidential app without code_challenge', async () => {
      const step = await authorize({ ...base(), client_id: web, redirect_uri: WEB, code_challenge: undefined, code_challenge_method: undefined });
      expect(new URL(step.location!).searchParams.get('error')).toBe('invalid_request');
    });
  });

  it('a legacy confidential app with PKCE off may omit code_challenge', async () => {
    const step = await authorize({ ...base(), client_id: legacy, redirect_uri: LEGACY, code_challenge: undefined, code_challenge_method: undefined });
    expect(step.location).toBeUndefined();
    expect(step.html).toContain('name="password"');
  });

  it('serves a login page with a CSP, no external assets, labelled fields and a CSRF token', async () => {
    const step = await authorize(base());
    expect(step.status).toBe(200);
    expect(step.html).toMatch(/<label for="username">/);
    expect(step.html).toMatch(/<label for="password">/);
    expect(step.html).toMatch(/name="csrf" value="[A-Za-z0-9_-]{20,}"/);
    expect(step.html).not.toMatch(/(src|href)="https?:/);
    const response = await fetch(step.url, { headers: { cookie: '' } });
    expect(response.status).toBe(400);
  });

  it('refuses a form without the CSRF token, or from another site', async () => {
    const agent = new UserAgent(server.baseUrl);
    const login = await agent.request(`${server.oauthUrl}/authorize?${new URLSearchParams(base())}`);
    const action = /action="([^"]+)"/.exec(login.html)![1]!;
    const noToken = await agent.request(action, { method: 'POST', body: 'username=alice&password=alice-password' });
    expect(noToken.status).toBe(403);
    const csrf = /name="csrf" value="([^"]+)"/.exec(login.html)![1]!;
    const crossSite = await agent.request(action, {
      method: 'POST',
      body: `csrf=${csrf}&username=alice&password=alice-password`,
      headers: { origin: 'https://evil.example' },
    });
    expect(crossSite.status).toBe(403);
    const hiddenOrigin = await agent.request(action, {
      method: 'POST',
      body: `csrf=${csrf}&username=alice&password=alice-password`,
      headers: { origin: 'null', 'sec-fetch-site': 'cross-site' },
    });
    expect(hiddenOrigin.status).toBe(403);
    const fine = await agent.submit(login, { username: 'alice', password: 'alice-password' });
    expect(fine.html).toContain('value="allow"');
  });

  it('a wrong password shows the login page again (401) without saying which part was wrong', async () => {
    const agent = new UserAgent(server.baseUrl);
    const login = await agent.request(`${server.oauthUrl}/authorize?${new URLSearchParams(base())}`);
    const wrong = await agent.submit(login, { username: 'alice', password: 'nope' });
    expect(wrong.status).toBe(401);
    expect(wrong.html).toContain('role="alert"');
    expect(wrong.html).toContain('Wrong username or password.');
    const unknown = await agent.submit(wrong, { username: 'mallory', password: 'nope' });
    expect(unknown.status).toBe(401);
    expect(unknown.html).toContain('Wrong username or password.');
    const consent = await agent.submit(unknown, { username: 'alice', password: 'alice-password' });
    expect(consent.html).toContain('value="allow"');
    expect(consent.html).toContain('User provisioning: Read users and groups');
  });

  it('shows the consent page in words, without scopes the user does not hold, and Deny says access_denied', async () => {
    const agent = new UserAgent(server.baseUrl);
    const login = await agent.request(`${server.oauthUrl}/authorize?${new URLSearchParams({ ...base(), scope: 'openid email scim.read scim.write' })}`);
    const consent = await agent.submit(login, { username: 'alice', password: 'alice-password' });
    expect(consent.html).toContain('SPA');
    expect(consent.html).toContain('See your email address');
    expect(consent.html).toContain('<li>User provisioning: Read users and groups</li>');
    expect(consent.html).not.toContain('Create and update users and groups');
    const denied = await agent.submit(consent, { decision: 'deny' });
    const back = new URL(denied.location!);
    expect(back.searchParams.get('error')).toBe('access_denied');
    expect(back.searchParams.get('state')).toBe('the-state');
  });

  it('asks only for what the user can give, records only that, and asks again for a scope she gains later', async () => {
    const sync = (await server.auth.appRegistrations.create({ name: 'Sync', redirectUris: [SPA], clientType: 'public' })).clientId;
    const agent = new UserAgent(server.baseUrl);
    const ask = () => agent.request(`${server.oauthUrl}/authorize?${new URLSearchParams({ ...base(), client_id: sync, scope: 'openid scim.read scim.write' })}`);
    const consent = await agent.submit(await ask(), { username: 'alice', password: 'alice-password' });
    expect(consent.html).not.toContain('Create and update users and groups');
    expect((await agent.submit(consent, { decision: 'allow' })).location).toContain('code=');
    const scopesOfSync = async () => (await server.auth.consents.list({ tenant: 'acme', sub: 'alice' })).find((entry) => entry.clientId === sync)?.scopes.map((entry) => entry.scope);
    expect(await scopesOfSync()).toEqual(['openid', 'scim.read']);
    // Nothing more she could give: no consent page.
    expect((await ask()).location).toContain('code=');
    alice.scopes.push('scim.write');
    try {
      const again = await ask();
      expect(again.location).toBeUndefined();
      expect(again.html).toContain('<li>User provisioning: Create and update users and groups</li>');
      expect((await agent.submit(again, { decision: 'allow' })).location).toContain('code=');
      expect(await scopesOfSync()).toEqual(['openid', 'scim.read', 'scim.write']);
    } finally {
      alice.scopes.pop();
    }
  });

  it('skips consent for the same or narrower scopes and asks again for wider ones', async () => {
    const agent = new UserAgent(server.baseUrl);
    const first = await agent.request(`${server.oauthUrl}/authorize?${new URLSearchParams({ ...base(), scope: 'openid scim.read user.read' })}`);
    const consent = await agent.submit(first, { username: 'alice', password: 'alice-password' });
    expect((await agent.submit(consent, { decision: 'allow' })).location).toContain('code=');
    const narrower = await agent.request(`${server.oauthUrl}/authorize?${new URLSearchParams({ ...base(), scope: 'openid scim.read' })}`);
    expect(narrower.location).toContain('code=');
    const wider = await agent.request(`${server.oauthUrl}/authorize?${new URLSearchParams({ ...base(), scope: 'openid email scim.read' })}`);
    expect(wider.location).toBeUndefined();
    expect(wider.html).toContain('value="allow"');
  });
});
