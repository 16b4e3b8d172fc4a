import type { Redis } from 'ioredis';
import { alice, testAccounts } from '../support/accounts.js';
import { startRedis, type RedisServer } from '../support/redis.js';
import { basic, postToken, startServer, type RunningServer } from '../support/server.js';
import { signInForCode } from '../support/sign-in.js';
import { UserAgent } from '../support/user-agent.js';

const WEB = 'https://app.example.com/cb';
const SIGNED_OUT = 'https://app.example.com/signed-out?from=idp';

/** Every key of the server's store but the rate-limit counters, with the bytes Redis uses for each. */
async function storedKeys(redis: Redis, prefix: string): Promise<Map<string, number>> {
  const keys = (await redis.keys(`${prefix}*`)).filter((key) => !key.startsWith(`${prefix}rl:`));
  const sizes = await Promise.all(keys.map((key) => redis.memory('USAGE', key)));
  return new Map(keys.map((key, index) => [key, Number(sizes[index] ?? 0)]));
}

/**
 * The end-session endpoint against anonymous floods (the third outside review): anyone can call
 * it, so it has the authorization endpoint's guard, and a browser that is not signed in gets its
 * answer without anything stored. A POST's ID token never goes into a URL.
 */
describe('sign-out requests from anyone (Redis)', () => {
  let redis: RedisServer;
  let inspect: Redis;
  let server: RunningServer;
  let app: { clientId: string; clientSecret?: string };
  const prefix = 'signout:';

  beforeAll(async () => {
    redis = await startRedis();
    inspect = redis.client();
    server = await startServer({
      store: { type: 'redis', url: redis.url, keyPrefix: prefix },
      accounts: testAccounts([alice]),
      cookieKeys: ['a-cookie-key-of-at-least-32-characters'],
    });
    app = await server.auth.appRegistrations.create({ name: 'Web', redirectUris: [WEB], postLogoutRedirectUris: [SIGNED_OUT], clientType: 'confidential' });
  });
  afterAll(async () => {
    await server.stop();
    await redis.stop();
  });

  /** A browser signed in to the app, and its ID token. */
  async function signedIn(): Promise<{ agent: UserAgent; idToken: string }> {
    const { code, verifier, agent } = await signInForCode(server, { clientId: app.clientId, redirectUri: WEB }, alice, 'openid');
    const tokens = await postToken(server.oauthUrl, { grant_type: 'authorization_code', code, redirect_uri: WEB, code_verifier: verifier }, { authorization: basic(app.clientId, app.clientSecret!) });
    return { agent, idToken: tokens.body.id_token as string };
  }

  it('a browser that is not signed in: the page, and nothing stored (0 bytes per request)', async () => {
    const before = await storedKeys(inspect, prefix);
    const { idToken } = await signedIn();
    const afterSignIn = await storedKeys(inspect, prefix);
    const requests: Array<Record<string, string>> = [
      { client_id: app.clientId, post_logout_redirect_uri: SIGNED_OUT, state: 'x'.repeat(1024) },
      { id_token_hint: idToken, post_logout_redirect_uri: SIGNED_OUT, state: 'bye' },
      { client_id: app.clientId },
      {},
    ];
    for (const params of requests) {
      for (let n = 0; n < 10; n += 1) {
        const page = await new UserAgent(server.baseUrl).request(`${server.oauthUrl}/session/end?${new URLSearchParams(params)}`);
        expect(page.status).toBe(200);
        expect(page.html).toContain('You are not signed in');
      }
    }
    const after = await storedKeys(inspect, prefix);
    expect([...after.keys()].sort()).toEqual([...afterSignIn.keys()].sort());
    expect([...after.keys()].filter((key) => !before.has(key)).some((key) => key.includes('Session'))).toBe(true);
    // No cookie either: the answer sets nothing a later request would bring back.
    const agent = new UserAgent(server.baseUrl);
    await agent.request(`${server.oauthUrl}/session/end?client_id=${app.clientId}`);
    expect(agent.setCookieHeaders).toEqual([]);
  });

  it('the page\'s button goes back to the registered URI with its own query and state, as the engine would', async () => {
    const agent = new UserAgent(server.baseUrl);
    const page = await agent.request(`${server.oauthUrl}/session/end?${new URLSearchParams({ client_id: app.clientId, post_logout_redirect_uri: SIGNED_OUT, state: 'a&b="c"' })}`);
    expect(page.html).not.toContain('<script');
    expect(page.html).toContain('method="get"');
    const done = await agent.submit(page, {});
    expect(done.location).toBe(`https://app.example.com/signed-out?from=idp&state=${encodeURIComponent('a&b="c"').replace(/%20/g, '+')}`);
    const plain = await agent.request(`${server.oauthUrl}/session/end?${new URLSearchParams({ client_id: app.clientId, post_logout_redirect_uri: SIGNED_OUT })}`);
    expect((await agent.submit(plain, {})).location).toBe(SIGNED_OUT);
  });

  it('what the engine refuses is refused for anonymous browsers too, with nothing stored', async () => {
    const { idToken } = await signedIn();
    const before = await storedKeys(inspect, prefix);
    const [header, payload, signature] = idToken.split('.');
    const modified = [header, Buffer.from(JSON.stringify({ ...JSON.parse(Buffer.from(payload!, 'base64url').toString()), sub: 'mallory' })).toString('base64url'), signature].join('.');
    const cases: Array<[Record<string, string>, string]> = [
      [{ client_id: app.clientId, post_logout_redirect_uri: 'https://evil.example/' }, 'post_logout_redirect_uri not registered'],
      [{ client_id: 'no-such-client' }, 'invalid_client'],
      [{ id_token_hint: 'not-a-jwt' }, 'could not decode id_token_hint'],
      [{ id_token_hint: modified }, 'could not validate id_token_hint'],
      [{ id_token_hint: idToken, client_id: 'other' }, 'client_id does not match'],
      [{ client_id: app.clientId, state: 'x'.repeat(1025) }, 'state must be at most 1024 characters'],
    ];
    for (const [params, words] of cases) {
      const page = await new UserAgent(server.baseUrl).request(`${server.oauthUrl}/session/end?${new URLSearchParams(params)}`);
      expect([JSON.stringify(params).slice(0, 60), page.status, page.html.includes(words.replace(/"/g, '&quot;'))]).toEqual([JSON.stringify(params).slice(0, 60), 400, true]);
      expect(page.location).toBeUndefined();
    }
    const twice = await new UserAgent(server.baseUrl).request(`${server.oauthUrl}/session/end?client_id=${app.clientId}&state=a&state=b`);
    expect(twice.status).toBe(400);
    expect([...(await storedKeys(inspect, prefix)).keys()].sort()).toEqual([...before.keys()].sort());
  });

  it('a request over the size limit (state included) is a 400 page before anything is read', async () => {
    const page = await new UserAgent(server.baseUrl).request(`${server.oauthUrl}/session/end?client_id=${app.clientId}&state=${'x'.repeat(14 * 1024)}`);
    expect(page.status).toBe(400);
    expect(page.html).toContain('larger than 4096 bytes');
  });

  it('a signed-in browser\'s sign-out stores only what its session holds until it confirms (a state of 1 KiB at most)', async () => {
    const { agent, idToken } = await signedIn();
    const before = await storedKeys(inspect, prefix);
    const page = await agent.request(`${server.oauthUrl}/session/end?${new URLSearchParams({ id_token_hint: idToken, post_logout_redirect_uri: SIGNED_OUT, state: 'y'.repeat(1024) })}`);
    expect(page.html).toContain('name="xsrf"');
    const during = await storedKeys(inspect, prefix);
    expect([...during.keys()].filter((key) => !before.has(key))).toEqual([]);
    const grown = [...during].reduce((sum, [key, size]) => sum + size - (before.get(key) ?? 0), 0);
    expect(grown).toBeLessThan(2048);
    const done = await agent.submit(page, {});
    expect(done.location).toBe(`${SIGNED_OUT}&state=${'y'.repeat(1024)}`);
  });

  it('POST: the ID token goes in a sealed cookie of 60 s, never in a URL; the sign-out works as with GET', async () => {
    const { agent, idToken } = await signedIn();
    const answer = await fetch(`${server.oauthUrl}/session/end`, {
      method: 'POST',
      redirect: 'manual',
      headers: { 'content-type': 'application/x-www-form-urlencoded' },
      body: new URLSearchParams({ id_token_hint: idToken, post_logout_redirect_uri: SIGNED_OUT, state: 'posted' }).toString(),
    });
    expect(answer.status).toBe(303);
    const location = answer.headers.get('location')!;
    expect(new URL(location, server.baseUrl).search).toBe('');
    const cookie = answer.headers.getSetCookie().find((header) => header.startsWith('talent_auth_sign_out='))!;
    expect(cookie).toMatch(/httponly/i);
    expect(cookie).toMatch(/samesite=lax/i);
    expect(cookie).toMatch(/max-age=60|expires=/i);
    expect(cookie).not.toContain(idToken.split('.')[1]!);
    expect(cookie).not.toContain('posted');

    // Through a browser: the page, the confirmation, back with state; the URLs never held the token.
    const page = await agent.request(`${server.oauthUrl}/session/end`, {
      method: 'POST', body: new URLSearchParams({ id_token_hint: idToken, post_logout_redirect_uri: SIGNED_OUT, state: 'posted' }).toString(),
    });
    expect(page.url).toBe(`${server.oauthUrl}/session/end`);
    expect(page.html).toContain('name="xsrf"');
    // The carried request is taken once: the cookie is cleared.
    expect(agent.setCookieHeaders.filter((header) => header.startsWith('talent_auth_sign_out=')).at(-1)).toMatch(/expires=Thu, 01 Jan 1970/i);
    expect((await agent.submit(page, {})).location).toBe(`${SIGNED_OUT}&state=posted`);
  });

  it('a carried cookie changed by a byte, or with a query beside it, carries nothing', async () => {
    const seal = async () => {
      const answer = await fetch(`${server.oauthUrl}/session/end`, {
        method: 'POST', redirect: 'manual', headers: { 'content-type': 'application/x-www-form-urlencoded' },
        body: new URLSearchParams({ client_id: app.clientId, post_logout_redirect_uri: SIGNED_OUT, state: 'carried' }).toString(),
      });
      return /^talent_auth_sign_out=([^;]+)/.exec(answer.headers.getSetCookie().join('\n'))![1]!;
    };
    const sealed = await seal();
    const changed = `${sealed.slice(0, 10)}${sealed[10] === 'A' ? 'B' : 'A'}${sealed.slice(11)}`;
    const tampered = await fetch(`${server.oauthUrl}/session/end`, { headers: { cookie: `talent_auth_sign_out=${changed}` } });
    expect(await tampered.text()).toContain('There is no session to end.');
    const beside = await fetch(`${server.oauthUrl}/session/end?client_id=${app.clientId}`, { headers: { cookie: `talent_auth_sign_out=${await seal()}` } });
    expect(await beside.text()).not.toContain('carried');
    const carried = await fetch(`${server.oauthUrl}/session/end`, { headers: { cookie: `talent_auth_sign_out=${await seal()}` } });
    expect(await carried.text()).toContain('value="carried"');
  });

  it('is rate-limited per address like /authorize: 429 with Retry-After past the limit, nothing stored', async () => {
    const limited = await startServer({
      store: { type: 'redis', url: redis.url, keyPrefix: 'limited:' },
      accounts: testAccounts([alice]),
      rateLimits: { authorize: { max: 20, windowSeconds: 60 } },
    });
    try {
      const web = await limited.auth.appRegistrations.create({ name: 'Web', redirectUris: [WEB], postLogoutRedirectUris: [SIGNED_OUT], clientType: 'public' });
      const before = await storedKeys(inspect, 'limited:');
      const statuses: number[] = [];
      for (let n = 0; n < 30; n += 1) {
        const answer = await fetch(`${limited.oauthUrl}/session/end?client_id=${web.clientId}`);
        statuses.push(answer.status);
        if (answer.status === 429) expect(Number(answer.headers.get('retry-after'))).toBeGreaterThan(0);
        await answer.arrayBuffer();
      }
      expect(statuses).toEqual([...Array(20).fill(200), ...Array(10).fill(429)]);
      expect([...(await storedKeys(inspect, 'limited:')).keys()].sort()).toEqual([...before.keys()].sort());
      expect(limited.logLines.filter((line) => line.includes('sign-out requests refused')).length).toBe(1);
      // The authorization endpoint has a count of its own.
      const authorize = await fetch(`${limited.oauthUrl}/authorize?client_id=${web.clientId}`, { redirect: 'manual' });
      expect(authorize.status).not.toBe(429);
    } finally {
      await limited.stop();
    }
  });
});
