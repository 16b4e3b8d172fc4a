/**
 * The unauthenticated authorization endpoint, attacked as the red team did: oversized requests,
 * floods from one address, response modes we do not answer in, a forged Host header, framing.
 * Each refusal stores nothing (no interaction, no session) and says what was wrong.
 */
import { request } from 'node:http';
import { testAccounts, alice } from '../support/accounts.js';
import { startServer, type RunningServer } from '../support/server.js';
import { STORE_KINDS, useStore, type StoreOption } from '../support/stores.js';
import { UserAgent } from '../support/user-agent.js';
import { pkcePair, WEB } from './helpers.js';

interface Answer {
  status: number;
  location: string | null;
  headers: Headers;
  html: string;
}

/** A GET with exactly these headers (fetch would not send a Host of ours). */
function rawGet(url: string, headers: Record<string, string>): Promise<{ status: number; headers: Record<string, string | string[] | undefined>; body: string }> {
  return new Promise((resolve, reject) => {
    const req = request(url, { headers }, (res) => {
      let body = '';
      res.setEncoding('utf8').on('data', (chunk: string) => (body += chunk)).on('end', () => resolve({ status: res.statusCode!, headers: res.headers, body }));
    });
    req.on('error', reject).end();
  });
}

describe.each(STORE_KINDS)('adversarial: authorization requests (%s store)', (kind) => {
  const store = useStore(kind);
  let storeOption: StoreOption;
  let server: RunningServer;
  let app: string;
  let saved = 0;

  beforeAll(async () => {
    storeOption = store.option();
    server = await startServer({
      store: storeOption,
      accounts: testAccounts([alice]),
      rateLimits: { authorize: { max: 5, windowSeconds: 60 } },
      proxy: true,
    });
    server.auth.provider.on('interaction.saved', () => (saved += 1));
    server.auth.provider.on('session.saved', () => (saved += 1));
    app = (await server.auth.appRegistrations.create({ name: 'App', redirectUris: [WEB], clientType: 'public' })).clientId;
  });
  afterAll(() => server.stop());

  /** Interactions and sessions saved so far (engine events; on Redis, the keys there too). */
  async function storedSignIns(): Promise<number> {
    if (storeOption.type !== 'redis') return saved;
    const redis = store.redis!.client();
    const prefix = storeOption.keyPrefix ?? '';
    return saved + (await redis.keys(`${prefix}Interaction:*`)).length + (await redis.keys(`${prefix}Session:*`)).length;
  }

  let addresses = 0;
  /** GET /authorize from a fresh address (X-Forwarded-For, trusted: proxy is on), unless one is given. */
  async function authorize(params: Record<string, string>, headers: Record<string, string> = {}): Promise<Answer> {
    addresses += 1;
    const query = new URLSearchParams({
      response_type: 'code', client_id: app, redirect_uri: WEB, scope: 'openid', state: 'st',
      code_challenge: pkcePair().challenge, code_challenge_method: 'S256', ...params,
    });
    const response = await fetch(`${server.oauthUrl}/authorize?${query}`, {
      redirect: 'manual',
      headers: { accept: 'text/html', 'x-forwarded-for': `203.0.113.${addresses % 250}`, ...headers },
    });
    return { status: response.status, location: response.headers.get('location'), headers: response.headers, html: await response.text() };
  }

  describe('bounded requests: nothing is stored for a request over a limit', () => {
    it('a query over 4 KiB: an error page (400), no redirect', async () => {
      const before = await storedSignIns();
      const answer = await authorize({ foo: 'x'.repeat(4200) });
      expect({ status: answer.status, location: answer.location }).toEqual({ status: 400, location: null });
      expect(answer.html).toContain('<strong>invalid_request</strong>');
      expect(answer.html).toContain('larger than 4096 bytes');
      expect(await storedSignIns()).toBe(before);
    });

    it('a query of exactly 4 KiB is taken; the refusal of a larger one is in the browser\'s language, in our own words', async () => {
      const base = new URLSearchParams({
        response_type: 'code', client_id: app, redirect_uri: WEB, scope: 'openid', state: 'st', code_challenge: pkcePair().challenge, code_challenge_method: 'S256', pad: '',
      }).toString();
      const exact = await authorize({ pad: 'p'.repeat(4096 - base.length) });
      expect(exact.status).toBe(303);
      const german = await authorize({ pad: 'p'.repeat(4097 - base.length) }, { 'accept-language': 'de' });
      expect(german.status).toBe(400);
      expect(german.html).toContain('<html lang="de"');
      // Our own words, translated: not the engine's English wrapped as a quotation.
      expect(german.html).not.toContain('<span lang="en">');
    });

    it('a POST whose declared form body is over 4 KiB: the same error page (400), its body never read; one of exactly 4 KiB is read', async () => {
      const post = async (body: string) => {
        addresses += 1;
        const response = await fetch(`${server.oauthUrl}/authorize`, {
          method: 'POST', redirect: 'manual', body,
          headers: { accept: 'text/html', 'content-type': 'application/x-www-form-urlencoded', 'x-forwarded-for': `203.0.113.${addresses % 250}` },
        });
        return { status: response.status, html: await response.text() };
      };
      const base = new URLSearchParams({
        response_type: 'code', client_id: app, redirect_uri: WEB, scope: 'openid', state: 'st', code_challenge: pkcePair().challenge, code_challenge_method: 'S256', pad: '',
      }).toString();
      const before = await storedSignIns();
      const large = await post(`${base}${'p'.repeat(4097 - base.length)}`);
      expect(large.status).toBe(400);
      expect(large.html).toContain('larger than 4096 bytes');
      expect(await storedSignIns()).toBe(before);
      const exact = await post(`${base}${'p'.repeat(4096 - base.length)}`);
      expect(exact.html).not.toContain('larger than 4096 bytes');
    });

    it.each([
      ['state', { state: 's'.repeat(1025) }, 'state must be at most 1024 characters'],
      ['nonce', { nonce: 'n'.repeat(1025) }, 'nonce must be at most 1024 characters'],
    ])('a %s over 1 KiB: back to the app with invalid_request', async (_name, params, description) => {
      const before = await storedSignIns();
      const answer = await authorize(params);
      const back = new URL(answer.location!);
      expect(`${back.origin}${back.pathname}`).toBe(WEB);
      expect(back.searchParams.get('error')).toBe('invalid_request');
      expect(back.searchParams.get('error_description')).toBe(description);
      expect(await storedSignIns()).toBe(before);
    });

    (kind === 'redis' ? it : it.skip)('a typical pending sign-in costs under 2 KB in Redis', async () => {
      const redis = store.redis!.client();
      const prefix = (storeOption as { keyPrefix?: string }).keyPrefix ?? '';
      const before = new Set(await redis.keys(`${prefix}*`));
      const answer = await authorize({ scope: 'openid profile email scim.read', state: 'Vx7q2Lr9Kd3Np8Zt5Wm1Qa', nonce: 'Hs4Jd8Kw2Lp6Zq9Xc3Vb7N' });
      expect(answer.status).toBe(303);
      const created = (await redis.keys(`${prefix}*`)).filter((key) => !before.has(key) && !key.includes('rl:'));
      expect(created).toHaveLength(1);
      expect(created[0]).toContain('Interaction:');
      expect(Number(await redis.call('MEMORY', 'USAGE', created[0]!))).toBeLessThan(2048);
    });

    it('a state and a nonce of exactly 1 KiB start a sign-in', async () => {
      const before = await storedSignIns();
      const answer = await authorize({ state: 's'.repeat(1024), nonce: 'n'.repeat(1024) });
      expect(answer.status).toBe(303);
      expect(answer.location).toContain('/oauth2/interaction/');
      expect(await storedSignIns()).toBeGreaterThan(before);
    });
  });

  describe('a flood from one address', () => {
    it('past the limit: a 429 page with Retry-After, nothing stored; other addresses go on; the log has one line', async () => {
      const flooder = { 'x-forwarded-for': '198.51.100.7' };
      for (let i = 0; i < 5; i += 1) expect((await authorize({}, flooder)).status).toBe(303);
      const before = await storedSignIns();
      for (let i = 0; i < 3; i += 1) {
        const refused = await authorize({}, flooder);
        expect(refused.status).toBe(429);
        // Until the window of 60 s ends: it began a moment ago.
        expect(Number(refused.headers.get('retry-after'))).toBeGreaterThan(30);
        expect(refused.html).toContain('Too many sign-in attempts from your network');
      }
      expect(await storedSignIns()).toBe(before);
      expect((await authorize({})).status).toBe(303);
      expect(server.logLines.filter((line) => line.includes('authorization requests refused') && line.includes('198.51.100.7'))).toHaveLength(1);
    });

    it('a POST is not counted: it is answered with its GET, which is', async () => {
      const poster = { 'x-forwarded-for': '198.51.100.9' };
      const body = new URLSearchParams({ response_type: 'code', client_id: app, redirect_uri: WEB, scope: 'openid', state: 'st', code_challenge: pkcePair().challenge, code_challenge_method: 'S256' }).toString();
      for (let i = 0; i < 7; i += 1) {
        const response = await fetch(`${server.oauthUrl}/authorize`, { method: 'POST', redirect: 'manual', body, headers: { accept: 'text/html', 'content-type': 'application/x-www-form-urlencoded', ...poster } });
        expect(response.status).toBe(303);
        expect(response.headers.get('location')).toContain('/authorize?');
      }
    });

    it('the resumption of a sign-in (/authorize/{uid}) is not counted against it', async () => {
      const agent = new UserAgent(server.baseUrl);
      const resumer = { 'x-forwarded-for': '198.51.100.8' };
      const query = new URLSearchParams({
        response_type: 'code', client_id: app, redirect_uri: WEB, scope: 'openid', state: 'st',
        code_challenge: pkcePair().challenge, code_challenge_method: 'S256',
      });
      for (let i = 0; i < 4; i += 1) await fetch(`${server.oauthUrl}/authorize?${query}`, { redirect: 'manual', headers: resumer });
      const login = await agent.request(`${server.oauthUrl}/authorize?${query}`, { headers: resumer });
      // The fifth start, then the login and the resumption after it: all go through.
      const back = await agent.submit(login, { username: alice.sub, password: alice.password });
      expect(back.status).toBe(200);
      expect(back.html).toContain('value="allow"');
    });
  });

  describe('response modes: query only', () => {
    it.each(['fragment', 'form_post', 'query.jwt', 'web_message'])('response_mode=%s: invalid_request, in the query, no code', async (mode) => {
      const before = await storedSignIns();
      const answer = await authorize({ response_mode: mode });
      const back = new URL(answer.location!);
      expect(back.hash).toBe('');
      expect(back.searchParams.get('error')).toBe(mode === 'fragment' || mode === 'form_post' ? 'invalid_request' : 'unsupported_response_mode');
      expect(back.searchParams.get('code')).toBeNull();
      expect(await storedSignIns()).toBe(before);
    });

    it('response_mode=query works, and discovery lists only query', async () => {
      expect((await authorize({ response_mode: 'query' })).status).toBe(303);
      const discovery = (await (await fetch(`${server.oauthUrl}/.well-known/openid-configuration`)).json()) as { response_modes_supported: string[] };
      expect(discovery.response_modes_supported).toEqual(['query']);
    });
  });

  describe('a pinned public origin', () => {
    it.each([
      ['Host', { host: 'evil.example' }],
      ['X-Forwarded-Host (proxy: true)', { 'x-forwarded-host': 'evil.example', 'x-forwarded-proto': 'https' }],
    ])('a forged %s: discovery still names our URLs, and says how long it may be cached', async (_name, headers) => {
      for (const url of [`${server.oauthUrl}/.well-known/openid-configuration`, `${server.baseUrl}/.well-known/oauth-authorization-server/oauth2`]) {
        const response = await rawGet(url, headers);
        expect(response.status).toBe(200);
        const document = JSON.parse(response.body) as Record<string, unknown>;
        for (const endpoint of ['authorization_endpoint', 'token_endpoint', 'jwks_uri', 'issuer']) {
          expect(String(document[endpoint]).startsWith(server.auth.issuer)).toBe(true);
        }
        expect(response.body).not.toContain('evil.example');
        expect(response.headers['cache-control']).toBe('public, max-age=300');
      }
      const jwks = await rawGet(`${server.oauthUrl}/jwks`, headers);
      expect(jwks.headers['cache-control']).toBe('public, max-age=300');
    });

    it('a forged Host: the sign-in it starts will send the browser back to our own origin', async () => {
      const query = new URLSearchParams({
        response_type: 'code', client_id: app, redirect_uri: WEB, scope: 'openid', state: 'st',
        code_challenge: pkcePair().challenge, code_challenge_method: 'S256',
      });
      const start = await rawGet(`${server.oauthUrl}/authorize?${query}`, { host: 'evil.example', 'x-forwarded-for': '192.0.2.9' });
      expect(start.status).toBe(303);
      expect(String(start.headers.location)).not.toContain('evil.example');
      // Where the engine sends the browser once the user has signed in (an absolute URL it built).
      const uid = /interaction\/([^/?]+)/.exec(String(start.headers.location))![1]!;
      const interaction = await (server.auth.provider.Interaction as unknown as { find(id: string): Promise<{ returnTo: string }> }).find(uid);
      expect(interaction.returnTo.startsWith(`${server.auth.issuer}/authorize/`)).toBe(true);
    });
  });

  describe('framing', () => {
    it('every page says DENY for browsers without CSP frame-ancestors: login, the engine\'s error page, ours', async () => {
      const login = await new UserAgent(server.baseUrl).request(`${server.oauthUrl}/authorize?${new URLSearchParams({
        response_type: 'code', client_id: app, redirect_uri: WEB, scope: 'openid', state: 'st', code_challenge: pkcePair().challenge, code_challenge_method: 'S256',
      })}`);
      expect(login.html).toContain('name="password"');
      const pages = [
        await fetch(login.url),
        await fetch(`${server.oauthUrl}/authorize?client_id=nope`),
        await fetch(`${server.oauthUrl}/interaction/unknown-uid`),
        await fetch(`${server.oauthUrl}/authorize?x=${'y'.repeat(5000)}`),
      ];
      for (const page of pages) {
        expect(page.headers.get('content-type')).toContain('text/html');
        expect(page.headers.get('x-frame-options')).toBe('DENY');
        expect(page.headers.get('content-security-policy')).toContain("frame-ancestors 'none'");
      }
    });
  });
});
