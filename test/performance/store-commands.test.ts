/**
 * What a token costs the store, counted: the commands our process sends Redis per token request,
 * by grant, with the client known (cached). Each command is about 20 µs of our CPU and a round
 * trip, the biggest share of what a named-user token costs beyond the engine's own work
 * (docs/performance.md), so a change that adds one shows here, not only in `npm run bench`.
 * Counted with MONITOR; a script's inner commands (source "lua") are Redis's work, not ours.
 */
import type { Redis } from 'ioredis';
import { basic, postToken, startServer, type RunningServer } from '../support/server.js';
import { signInForCode } from '../support/sign-in.js';
import { testAccounts, alice } from '../support/accounts.js';
import { startRedis, type RedisServer } from '../support/redis.js';
import { UserAgent } from '../support/user-agent.js';
import { clientAssertion, clientKeyPair } from '../support/keys.js';
import { JWT_BEARER_ASSERTION } from '../../policies/client-authentication.js';

const REDIRECT = 'https://app.example/cb';

/**
 * The commands of a sign-in, counted by name (their order varies with the audit trail's writes,
 * which go alongside): docs/performance.md, "Redis commands per sign-in".
 */
const SIGN_IN_COMMANDS = {
  // The first sign-in of a user to an app: pending sign-in (interaction), password, session, the
  // consent and its index, the code, two audit events (signed in, consent given: MULTI + XADD +
  // XTRIM + PEXPIRE + EXEC each).
  first: { del: 3, evalsha: 11, exec: 2, get: 3, hget: 12, hmget: 13, hset: 2, multi: 2, pexpire: 2, set: 2, xadd: 2, xtrim: 2 },
  // Signed in and consented: the session and the consent read, the code written.
  again: { evalsha: 2, hget: 2, hmget: 3, set: 1 },
};

/** How many times each command was sent. */
function counted(commands: readonly string[]): Record<string, number> {
  const counts: Record<string, number> = {};
  for (const command of [...commands].sort()) counts[command] = (counts[command] ?? 0) + 1;
  return counts;
}

describe('Redis commands per token request (warm: the client cached)', () => {
  let redis: RedisServer;
  let server: RunningServer;
  let monitor: Redis;
  let seen: string[] = [];
  beforeAll(async () => {
    redis = await startRedis();
    server = await startServer({
      store: { type: 'redis', url: redis.url },
      accounts: testAccounts([alice]),
      cookieKeys: ['a-cookie-key-of-at-least-32-characters!'],
    });
    // monitor() opens a connection of its own; the client it came from is closed by redis.stop().
    monitor = await redis.client().monitor();
    monitor.on('monitor', (_time: string, args: string[], source: string) => {
      // The change feed's heartbeat and the epoch's check go on their own schedule: not a token's.
      const ownSchedule = (args[0]?.toLowerCase() === 'publish' && args[1]?.includes('heartbeat')) || args.some((arg) => arg.endsWith('epoch:{records}'));
      if (source !== 'lua' && !ownSchedule) seen.push(args[0]!.toLowerCase());
    });
  });
  afterAll(async () => {
    monitor.disconnect();
    await server.stop();
    await redis.stop();
  });

  /** The commands sent while `call` runs (and the replies' settling: 100 ms). */
  async function commandsOf(call: () => Promise<unknown>): Promise<string[]> {
    await new Promise((resolve) => setTimeout(resolve, 100));
    seen = [];
    await call();
    await new Promise((resolve) => setTimeout(resolve, 100));
    return seen;
  }

  /**
   * The commands of `call` once its client is cached. A client just created comes back to this
   * instance through the change feed (told at once, then again by the echo), and a read that a
   * change overtakes is not kept (src/engine/client-cache.ts): until the echo has come, a request
   * reads the client (HGET). Under load the echo can be slower than a request, so a few rounds.
   */
  async function warmCommandsOf(call: () => Promise<unknown>): Promise<string[]> {
    await call();
    let commands = await commandsOf(call);
    for (let round = 0; round < 5 && commands.includes('hget'); round += 1) commands = await commandsOf(call);
    return commands;
  }

  it('client_credentials: none (the client, its app and tenant settings are cached; the address limit is known from memory)', async () => {
    const client = await server.auth.clientConfigurations.create({ tenant: 'acme', name: 'n', category: 'c', resources: { scim: { scopes: ['scim.read'] } } });
    const token = () => postToken(server.oauthUrl, 'grant_type=client_credentials', { authorization: basic(client.clientId, client.clientSecret) }).then((answer) => expect(answer.status).toBe(200));
    expect(await warmCommandsOf(token)).toEqual([]);
  });

  it('code exchange: read the code with its grant, then consume and confirm the code with its refresh token saved; refresh: read, then consume with the successor saved', async () => {
    const app = await server.auth.appRegistrations.create({ name: 'App', redirectUris: [REDIRECT], clientType: 'confidential' });
    const exchange = async () => {
      const { code, verifier } = await signInForCode(server, { clientId: app.clientId, redirectUri: REDIRECT }, alice, 'openid offline_access scim.read');
      let answer: Awaited<ReturnType<typeof postToken>> | undefined;
      const commands = await commandsOf(async () => {
        answer = await postToken(server.oauthUrl, new URLSearchParams({ grant_type: 'authorization_code', code, code_verifier: verifier, redirect_uri: REDIRECT }).toString(), { authorization: basic(app.clientId, app.clientSecret!) });
      });
      expect(answer!.status).toBe(200);
      return { commands, refreshToken: answer!.body.refresh_token as string };
    };
    await exchange();
    const { commands, refreshToken } = await exchange();
    expect(commands).toEqual(['evalsha', 'evalsha']);
    expect(typeof refreshToken).toBe('string');

    const rotate = async (token: string) => {
      const answer = await postToken(server.oauthUrl, new URLSearchParams({ grant_type: 'refresh_token', refresh_token: token }).toString(), { authorization: basic(app.clientId, app.clientSecret!) });
      expect(answer.status).toBe(200);
      return answer.body.refresh_token as string;
    };
    // Warm: the first refresh sends its scripts in full once (EVAL); later ones by hash.
    const warm = await rotate(refreshToken);
    let next = '';
    const refresh = await commandsOf(async () => {
      next = await rotate(warm);
    });
    // Refresh: read the token with its grant, then consume it with its successor saved.
    expect(refresh).toEqual(['evalsha', 'evalsha']);
    expect(next).not.toBe(warm);
  });

  it('client_credentials with private_key_jwt: two (the assertion\'s ID written, then consumed: single use, atomic)', async () => {
    const key = await clientKeyPair('k1');
    const client = await server.auth.clientConfigurations.create({
      tenant: 'acme', name: 'Keys', category: 'c', resources: { scim: { scopes: ['scim.read'] } }, tokenEndpointAuthMethod: 'private_key_jwt', jwks: { keys: [key.jwk] },
    });
    const token = async () => {
      const answer = await postToken(server.oauthUrl, {
        grant_type: 'client_credentials', client_assertion_type: JWT_BEARER_ASSERTION, client_assertion: await clientAssertion(client.clientId, key, server.auth.issuer),
      });
      expect(answer.status).toBe(200);
    };
    expect(await warmCommandsOf(token)).toEqual(['evalsha', 'evalsha']);
  });

  it('a sign-in: authorize, password, consent and the code back to the app; then the same user again, signed in and consented', async () => {
    const app = await server.auth.appRegistrations.create({ name: 'Sign-in', redirectUris: [REDIRECT], clientType: 'confidential' });
    const agent = new UserAgent(server.baseUrl);
    const first = await commandsOf(() => signInForCode(server, { clientId: app.clientId, redirectUri: REDIRECT }, alice, 'openid scim.read', agent));
    const again = await commandsOf(() => signInForCode(server, { clientId: app.clientId, redirectUri: REDIRECT }, alice, 'openid scim.read', agent));
    if (process.env.STORE_COMMANDS) console.log(JSON.stringify({ first, again }));
    expect(counted(first)).toEqual(SIGN_IN_COMMANDS.first);
    expect(counted(again)).toEqual(SIGN_IN_COMMANDS.again);
  });
});
