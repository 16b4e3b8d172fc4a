import { alice, testAccounts } from '../support/accounts.js';
import { testJwks } from '../support/keys.js';
import { startRedis, type RedisServer } from '../support/redis.js';
import { basic, postToken, startServer, type RunningServer, type TokenCall } from '../support/server.js';
import { signInForCode } from '../support/sign-in.js';

const WEB = 'https://app.example.com/oauth/callback';
const COOKIE_KEYS = ['a-cookie-key-of-at-least-32-characters!'];

async function timed<T>(work: () => Promise<T>): Promise<{ value: T; ms: number }> {
  const started = performance.now();
  const value = await work();
  return { value, ms: performance.now() - started };
}

async function eventually<T>(attempt: () => Promise<T>, done: (value: T) => boolean, withinMs: number): Promise<T> {
  const deadline = Date.now() + withinMs;
  for (;;) {
    const value = await attempt();
    if (done(value) || Date.now() > deadline) return value;
    await new Promise((resolve) => setTimeout(resolve, 100));
  }
}

function expectUnavailable(call: TokenCall): void {
  expect(call.status).toBe(503);
  expect(call.body.error).toBe('temporarily_unavailable');
  expect(call.body.access_token).toBeUndefined();
  expect(Number(call.headers.get('retry-after'))).toBeGreaterThan(0);
}

/**
 * A real redis-server with persistence (AOF, fsync always) is killed and restarted under a running
 * server; then the server itself is restarted. Nothing recorded may be lost, nothing unrecorded
 * issued.
 */
describe('Redis faults', () => {
  let redis: RedisServer;
  let server: RunningServer;
  let options: Parameters<typeof startServer>[0];
  let client: { clientId: string; clientSecret: string };
  let web: { clientId: string; clientSecret: string };
  let refreshToken: string;
  let pendingCode: { code: string; verifier: string };

  const clientCredentials = () =>
    postToken(server.oauthUrl, 'grant_type=client_credentials', { authorization: basic(client.clientId, client.clientSecret) });
  const refresh = (token: string) =>
    postToken(server.oauthUrl, { grant_type: 'refresh_token', refresh_token: token }, { authorization: basic(web.clientId, web.clientSecret) });
  const exchange = ({ code, verifier }: { code: string; verifier: string }) =>
    postToken(
      server.oauthUrl,
      { grant_type: 'authorization_code', code, redirect_uri: WEB, code_verifier: verifier },
      { authorization: basic(web.clientId, web.clientSecret) },
    );
  const ready = () => fetch(`${server.baseUrl}/readyz`).then((response) => response.status);

  beforeAll(async () => {
    redis = await startRedis(['--appendonly', 'yes', '--appendfsync', 'always']);
    options = {
      store: { type: 'redis', url: redis.url, keyPrefix: 'faults:' },
      accounts: testAccounts([alice]),
      keys: await testJwks(),
      cookieKeys: COOKIE_KEYS,
    };
    server = await startServer(options);
    client = await server.auth.clientConfigurations.create({
      tenant: 'acme', name: 'Sync', category: 'c', resources: { scim: { scopes: ['scim.read'] } },
    });
    const app = await server.auth.appRegistrations.create({ name: 'HR Portal', redirectUris: [WEB], clientType: 'confidential' });
    web = { clientId: app.clientId, clientSecret: app.clientSecret! };
    const first = await signInForCode(server, { clientId: web.clientId, redirectUri: WEB }, alice, 'openid user.read');
    const exchanged = await exchange(first);
    expect(exchanged.status).toBe(200);
    refreshToken = exchanged.body.refresh_token as string;
    pendingCode = await signInForCode(server, { clientId: web.clientId, redirectUri: WEB }, alice, 'openid user.read', first.agent);
  });
  afterAll(async () => {
    await server?.stop();
    await redis?.stop();
  });

  it('answers 503 temporarily_unavailable within 1 s while Redis is down, and issues nothing', async () => {
    expect((await clientCredentials()).status).toBe(200);
    await redis.kill();
    for (const call of [clientCredentials, () => refresh(refreshToken), () => exchange(pendingCode)]) {
      const { value, ms } = await timed(call);
      expectUnavailable(value);
      expect(ms).toBeLessThan(1000);
    }
    const readiness = await timed(() => fetch(`${server.baseUrl}/readyz`));
    expect(readiness.value.status).toBe(503);
    expect(await readiness.value.json()).toEqual({ status: 'unavailable', store: 'down' });
    expect(readiness.ms).toBeLessThan(1000);
    expect((await fetch(`${server.baseUrl}/healthz`)).status).toBe(200);
    // What needs no store still answers: resource servers keep verifying tokens.
    expect((await fetch(`${server.oauthUrl}/jwks`)).status).toBe(200);
    await expectAuthorizeWhileDown();
  });

  /**
   * A browser at /authorize while the store is away: back to the app with temporarily_unavailable
   * when the client and its redirect URI are known (RFC 6749 §4.1.2.1), an error page otherwise;
   * never JSON.
   */
  async function expectAuthorizeWhileDown(): Promise<void> {
    const query = (params: Record<string, string>) => new URLSearchParams({
      response_type: 'code', scope: 'openid', code_challenge: 'E9Melhoa2OwvFrEMTJguCHaoeK1t8URWbuGJSstw-cM', code_challenge_method: 'S256', ...params,
    });
    const known = await timed(() => fetch(`${server.oauthUrl}/authorize?${query({ client_id: web.clientId, redirect_uri: WEB, state: 'st-1' })}`, { redirect: 'manual' }));
    expect(known.ms).toBeLessThan(1000);
    expect(known.value.status).toBe(303);
    const back = new URL(known.value.headers.get('location')!);
    expect(`${back.origin}${back.pathname}`).toBe(WEB);
    expect(Object.fromEntries(back.searchParams)).toMatchObject({ error: 'temporarily_unavailable', state: 'st-1', iss: server.auth.issuer });
    for (const params of [
      { client_id: web.clientId, redirect_uri: 'https://evil.example/cb', state: 'x' },
      { client_id: '00000000-0000-4000-8000-000000000000', redirect_uri: WEB, state: 'x' },
    ]) {
      const page = await fetch(`${server.oauthUrl}/authorize?${query(params)}`, { redirect: 'manual' });
      expect(page.status).toBe(503);
      expect(page.headers.get('location')).toBeNull();
      expect(page.headers.get('content-type')).toContain('text/html');
      expect(page.headers.get('retry-after')).toBe('1');
      expect(await page.text()).toContain('temporarily_unavailable');
    }
  }

  it('serves again without a restart once Redis is back, with nothing lost (AOF)', async () => {
    await redis.restart();
    expect(await eventually(ready, (status) => status === 200, 10_000)).toBe(200);
    expect((await clientCredentials()).status).toBe(200);
    // The code not redeemed during the outage still works.
    const late = await exchange(pendingCode);
    expect(late.status).toBe(200);
    const rotated = await refresh(late.body.refresh_token as string);
    expect(rotated.status).toBe(200);
    refreshToken = rotated.body.refresh_token as string;
  });

  it('answers 503 within 1 s when Redis accepts connections but does not answer', async () => {
    process.kill(redis.pid, 'SIGSTOP');
    try {
      const refreshed = await timed(() => refresh(refreshToken));
      expectUnavailable(refreshed.value);
      expect(refreshed.ms).toBeLessThan(1000);
      // A client_credentials token of a cached client asks the store nothing: until the store is
      // known to be down it is issued from the cache (nothing it depends on can change while the
      // store is frozen), and either way the answer comes at once.
      const cached = await timed(clientCredentials);
      expect([200, 503]).toContain(cached.value.status);
      expect(cached.ms).toBeLessThan(1000);
      // The connection on which nothing answers is dropped (about 2 s): from then on the store is
      // known to be down, and /readyz says so at once, without waiting for a PING.
      const known = await eventually(() => timed(ready), ({ value, ms }) => value === 503 && ms < 100, 10_000);
      expect([known.value, known.ms < 100]).toEqual([503, true]);
      // Known down: every token request is refused at once, the cached client's too.
      const refused = await timed(clientCredentials);
      expectUnavailable(refused.value);
      expect(refused.ms).toBeLessThan(100);
      await expectAuthorizeWhileDown();
    } finally {
      process.kill(redis.pid, 'SIGCONT');
    }
    expect(await eventually(ready, (status) => status === 200, 10_000)).toBe(200);
    const after = await eventually(() => refresh(refreshToken), (call) => call.status !== 503, 10_000);
    expect(after.status).toBe(200);
    refreshToken = after.body.refresh_token as string;
  });

  it('a restart of the server and of Redis loses no client, consent or refresh token', async () => {
    const { baseUrl } = server;
    await server.stop();
    await redis.restart();
    // Same public address (issuer, audience), new process and port.
    server = await startServer({ ...options, baseUrl });
    expect(await eventually(ready, (status) => status === 200, 10_000)).toBe(200);
    expect((await clientCredentials()).status).toBe(200);
    expect(await server.auth.consents.list({ tenant: 'acme', sub: 'alice' })).toEqual([
      expect.objectContaining({ clientId: web.clientId }),
    ]);
    const renewed = await refresh(refreshToken);
    expect([renewed.status, renewed.body]).toEqual([200, expect.objectContaining({ token_type: 'Bearer' })]);
    expect(server.logLines.join('\n')).not.toContain(client.clientSecret);
  });
});
