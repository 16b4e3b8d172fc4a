/**
 * Redis dies between carrying out the command that consumes a code or refresh token and answering
 * it (a TCP proxy in front of a real redis-server carries the command and swallows its reply):
 * the server answers 503, the value is consumed in Redis, and no undo could be registered. The
 * retry that 503 asks for must not hurt the user:
 *  - a refresh token (consumed with its successor saved, in one step): the retry succeeds, with
 *    that successor;
 *  - a code (consumed and confirmed with its refresh token saved, in one step): the retry is
 *    refused with invalid_grant, what the lost step saved ends, and the user's grant lives on.
 */
import { createHash } from 'node:crypto';
import type { Redis } from 'ioredis';
import { SCRIPTS } from '../../adapters/redis/scripts.js';
import { alice, testAccounts } from '../support/accounts.js';
import { startRedis, type RedisServer } from '../support/redis.js';
import { startServer, type RunningServer } from '../support/server.js';
import { signInForCode } from '../support/sign-in.js';
import { startTcpProxy, type TcpProxy } from '../support/tcp-proxy.js';
import { UserAgent } from '../support/user-agent.js';
import { exchangeCode, expectNoTokens, expectOAuthError, expectTokens, grantExists, grantOfCode, refresh, WEB, type ConfidentialApp } from './helpers.js';

const PREFIX = 'lost:';
const sleep = (ms: number) => new Promise((resolve) => setTimeout(resolve, ms));

describe('adversarial: a consume whose reply is lost (Redis behind a TCP proxy)', () => {
  let redis: RedisServer;
  let proxy: TcpProxy;
  let server: RunningServer;
  let direct: Redis;
  let web: ConfidentialApp;

  beforeAll(async () => {
    redis = await startRedis();
    proxy = await startTcpProxy(redis.port);
    direct = redis.client();
    server = await startServer({
      store: { type: 'redis', url: `redis://127.0.0.1:${proxy.port}`, keyPrefix: PREFIX },
      accounts: testAccounts([alice]),
      cookieKeys: ['a-cookie-key-of-at-least-32-characters'],
    });
    const app = await server.auth.appRegistrations.create({ name: 'Portal', redirectUris: [WEB], clientType: 'confidential' });
    web = { clientId: app.clientId, redirectUri: WEB, secret: app.clientSecret! };
  }, 30_000);
  afterAll(async () => {
    await server?.stop();
    await proxy?.close();
    await redis?.stop();
  });

  /**
   * The call of script `lua` on `key`, as ioredis writes it: EVALSHA with the script's hash, or EVAL
   * with its text (the first call of a script on a connection), and the key.
   */
  const callOf = (lua: string) => {
    const sha = createHash('sha1').update(lua).digest('hex');
    return (key: string) => (chunk: Buffer) => (chunk.includes(sha) || chunk.includes(lua)) && chunk.includes(key);
  };
  /** The step that consumes a code or refresh token together with the refresh token its request issues. */
  const consumeOf = callOf(SCRIPTS.taConsumeCompleting.lua);

  /** Waits until the server's store is back (its readiness answers 200). */
  async function storeBack(): Promise<void> {
    const deadline = Date.now() + 10_000;
    while (Date.now() < deadline) {
      if ((await fetch(`${server.baseUrl}/readyz`)).status === 200) return;
      await sleep(50);
    }
    throw new Error('the store did not come back');
  }

  it('a refresh: 503, the token consumed in Redis; the retry gets the successor, and the chain goes on', async () => {
    const { code, verifier } = await signInForCode(server, web, alice);
    const grantId = await grantOfCode(server, code);
    const tokens = await exchangeCode(server, web, code, verifier);
    expectTokens(tokens);
    const refreshToken = tokens.body.refresh_token as string;
    const key = `${PREFIX}RefreshToken:{${refreshToken}}`;

    const dropped = proxy.dropReplyTo(consumeOf(key));
    const failed = await refresh(server, web, refreshToken);
    await dropped;
    expect(failed.status).toBe(503);
    expect(failed.body.error).toBe('temporarily_unavailable');
    expect(failed.headers.get('retry-after')).toBe('1');
    // Redis did carry the step out: without care, the retry would look like a reuse.
    expect(await direct.hget(key, 'c')).not.toBeNull();
    expect(await direct.keys(`${PREFIX}RefreshToken:{${refreshToken.slice(0, 16)}.*`)).toHaveLength(2);

    await storeBack();
    const retried = await refresh(server, web, refreshToken);
    expectTokens(retried);
    const next = await refresh(server, web, retried.body.refresh_token as string);
    expectTokens(next);
    expect(await grantExists(server, grantId)).toBe(true);
  });

  it('a code exchange: 503, the code consumed in Redis with its refresh token; the retry is refused, that token ends, and the user keeps her grant', async () => {
    // A sign-in before: the refresh token the user already has must survive what follows.
    const agent = new UserAgent(server.baseUrl);
    const earlier = await signInForCode(server, web, alice, 'openid scim.read', agent);
    const grantId = await grantOfCode(server, earlier.code);
    const first = await exchangeCode(server, web, earlier.code, earlier.verifier);
    expectTokens(first);

    const { code, verifier } = await signInForCode(server, web, alice, 'openid scim.read', agent);
    expect(await grantOfCode(server, code)).toBe(grantId);
    const key = `${PREFIX}AuthorizationCode:{${code}}`;
    const dropped = proxy.dropReplyTo(consumeOf(key));
    const failed = await exchangeCode(server, web, code, verifier);
    await dropped;
    expect(failed.status).toBe(503);
    expectNoTokens(failed);
    // Carried out whole: consumed, confirmed, and the exchange's first refresh token saved.
    expect(await direct.hget(key, 'c')).not.toBeNull();
    expect(await direct.hget(key, 'd')).not.toBeNull();
    const saved = await direct.keys(`${PREFIX}RefreshToken:*`);

    await storeBack();
    // The app waits as Retry-After says, and tries again.
    await sleep(1100);
    expectOAuthError(server, await exchangeCode(server, web, code, verifier), 400, 'invalid_grant');
    // The refresh token the lost step saved (the client never had it) is gone; the earlier one lives.
    const left = await direct.keys(`${PREFIX}RefreshToken:*`);
    expect(left.length).toBe(saved.length - 1);
    expect(await grantExists(server, grantId)).toBe(true);
    expectTokens(await refresh(server, web, first.body.refresh_token as string));
    // A new sign-in (no consent page: the consent stands) gets a code that works.
    const again = await signInForCode(server, web, alice, 'openid scim.read', agent);
    expectTokens(await exchangeCode(server, web, again.code, again.verifier));
  });

  it('a code exchange that completed is confirmed: the code again is a replay, and what it issued ends', async () => {
    const { code, verifier } = await signInForCode(server, web, alice);
    const grantId = await grantOfCode(server, code);
    const tokens = await exchangeCode(server, web, code, verifier);
    expectTokens(tokens);
    expect(await direct.hget(`${PREFIX}AuthorizationCode:{${code}}`, 'd')).not.toBeNull();
    await sleep(1100);
    expectOAuthError(server, await exchangeCode(server, web, code, verifier), 400, 'invalid_grant');
    expectOAuthError(server, await refresh(server, web, tokens.body.refresh_token as string), 400, 'invalid_grant');
    expect(await grantExists(server, grantId)).toBe(true);
  });
});
