import { alice, testAccounts } from '../../support/accounts.js';
import { testJwks } from '../../support/keys.js';
import { startRedis, type RedisServer } from '../../support/redis.js';
import { basic, postToken, startServer, type RunningServer } from '../../support/server.js';
import { signInForCode } from '../../support/sign-in.js';
import { pkcePair } from '../../support/user-agent.js';

const WEB = 'https://app.example.com/cb';
const SIGNED_OUT = 'https://app.example.com/signed-out';

function authorizeUrl(server: RunningServer, clientId: string): string {
  return `${server.oauthUrl}/authorize?${new URLSearchParams({
    response_type: 'code', client_id: clientId, redirect_uri: WEB, scope: 'openid', state: 's',
    code_challenge: pkcePair().challenge, code_challenge_method: 'S256',
  })}`;
}

describe('sign-out across instances sharing Redis', () => {
  let redis: RedisServer;
  let a: RunningServer;
  let b: RunningServer;

  beforeAll(async () => {
    redis = await startRedis();
    const keys = await testJwks(['ES256', 'RS256']);
    const shared = { store: { type: 'redis' as const, url: redis.url }, keys, accounts: testAccounts([alice]), cookieKeys: ['a-shared-cookie-key-of-32-characters!'] };
    a = await startServer(shared);
    b = await startServer({ ...shared, baseUrl: a.baseUrl });
  });
  afterAll(async () => {
    await a.stop();
    await b.stop();
    await redis.stop();
  });

  it('a sign-out confirmed on one instance ends the session for the next request on the other', async () => {
    const app = await a.auth.appRegistrations.create({ name: 'Web', redirectUris: [WEB], postLogoutRedirectUris: [SIGNED_OUT], clientType: 'confidential' });
    const { code, verifier, agent } = await signInForCode(a, { clientId: app.clientId, redirectUri: WEB }, alice, 'openid');
    const tokens = await postToken(a.oauthUrl, { grant_type: 'authorization_code', code, redirect_uri: WEB, code_verifier: verifier }, { authorization: basic(app.clientId, app.clientSecret!) });
    // Signed in: B knows the session too (prompt=none gives a code).
    const silent = await agent.request(`${authorizeUrl(b, app.clientId)}&prompt=none`);
    expect(new URL(silent.location!).searchParams.has('code')).toBe(true);

    const page = await agent.request(`${b.oauthUrl}/session/end?${new URLSearchParams({ id_token_hint: tokens.body.id_token as string, post_logout_redirect_uri: SIGNED_OUT })}`);
    const xsrf = /name="xsrf" value="([^"]+)"/.exec(page.html)![1]!;
    const done = await agent.request(`${b.oauthUrl}/session/end/confirm`, { method: 'POST', body: new URLSearchParams({ xsrf, logout: 'yes' }).toString() });
    expect(done.location).toBe(SIGNED_OUT);

    const next = await agent.request(authorizeUrl(a, app.clientId));
    expect(next.html).toContain('name="password"');
  });
});

describe('session lifetime (sessionTtl)', () => {
  let server: RunningServer;
  beforeAll(async () => {
    server = await startServer({ accounts: testAccounts([alice]), sessionTtl: 600 });
  });
  afterAll(() => server.stop());

  it('the sign-in session cookie expires after sessionTtl seconds', async () => {
    const app = await server.auth.appRegistrations.create({ name: 'Web', redirectUris: [WEB], clientType: 'public' });
    const before = Date.now();
    const { agent } = await signInForCode(server, { clientId: app.clientId, redirectUri: WEB }, alice, 'openid');
    const sessionCookie = agent.setCookieHeaders.filter((header) => /^_session=[^;]+/.test(header)).at(-1);
    expect(sessionCookie).toBeDefined();
    const expires = Date.parse(/expires=([^;]+)/i.exec(sessionCookie!)![1]!);
    expect(expires - before).toBeGreaterThan(590_000);
    expect(expires - before).toBeLessThan(610_000);
  });

  it('is bounded: 300 s..30 days', async () => {
    await expect(startServer({ sessionTtl: 299 })).rejects.toThrow('sessionTtl');
    await expect(startServer({ sessionTtl: 30 * 86_400 + 1 })).rejects.toThrow('sessionTtl');
  });
});
