/**
 * The soak (BENCH_MODE=soak, and the end of BENCH_MODE=all), in two parts.
 *
 * One grant: what Redis holds after many named-user flows on one grant. A grant is reused per
 * (tenant, user, app): an app used every day never gets a new one, so nothing kept per grant may
 * grow with the tokens it has had. Runs BENCH_SOAK_FLOWS flows (default 2000): each exchanges a
 * code of the one grant and refreshes the refresh token it got, through a real server on a real
 * redis-server; then prints Redis memory, the number of keys and the largest key, and what one
 * grant, one live refresh token and one pending sign-in cost.
 *
 * Timed (bench/soak-traffic.ts): BENCH_SOAK_SECONDS (default 600) of sign-ins, code exchanges,
 * refreshes and revocations of many users on two server processes sharing a redis-server, with
 * Redis memory, the keys by kind, the largest key and the latency tail at the end.
 */
import { createServer } from 'node:http';
import type { AddressInfo } from 'node:net';
import { createHash, randomBytes } from 'node:crypto';
import { Redis } from 'ioredis';
import type Provider from 'oidc-provider';
import { startRedis } from '../devtools/redis-server.js';
import { createAuthServer } from '../src/index.js';
import { NAMED_USER_RESOURCE_SCOPE, NAMED_USER_SCOPE } from './mint-codes.js';
import type { Settings } from './settings.js';
import { runTimedSoak } from './soak-traffic.js';

const PREFIX = 'soak:';
const REDIRECT = 'https://soak.example/cb';

interface Footprint {
  usedMemory: number;
  keys: number;
  largest: { key: string; bytes: number } | undefined;
}

async function footprint(redis: Redis): Promise<Footprint> {
  const info = await redis.info('memory');
  const usedMemory = Number(/used_memory:(\d+)/.exec(info)?.[1] ?? 0);
  let largest: Footprint['largest'];
  let keys = 0;
  let cursor = '0';
  do {
    const [next, batch] = await redis.scan(cursor, 'MATCH', `${PREFIX}*`, 'COUNT', 500);
    cursor = next;
    for (const key of batch) {
      keys += 1;
      const bytes = Number(await redis.call('MEMORY', 'USAGE', key));
      if (!largest || bytes > largest.bytes) largest = { key, bytes };
    }
  } while (cursor !== '0');
  return { usedMemory, keys, largest };
}

/** The Redis bytes of the keys matching `pattern` (MEMORY USAGE), on average. */
async function bytesPer(redis: Redis, pattern: string): Promise<number> {
  const keys = await redis.keys(`${PREFIX}${pattern}`);
  if (keys.length === 0) return 0;
  const sizes = await Promise.all(keys.map(async (key) => Number(await redis.call('MEMORY', 'USAGE', key))));
  return Math.round(sizes.reduce((sum, size) => sum + size, 0) / sizes.length);
}

const basic = (id: string, secret: string) => `Basic ${Buffer.from(`${id}:${secret}`).toString('base64')}`;

async function post(url: string, body: Record<string, string>, authorization: string): Promise<Record<string, unknown>> {
  const response = await fetch(url, {
    method: 'POST',
    headers: { authorization, 'content-type': 'application/x-www-form-urlencoded' },
    body: new URLSearchParams(body),
  });
  const answer = (await response.json()) as Record<string, unknown>;
  if (response.status !== 200) throw new Error(`${body.grant_type}: ${response.status} ${JSON.stringify(answer)}`);
  return answer;
}

/** Both parts of the soak; false when the timed soak saw an error or transient state without TTL. */
export async function runSoak(settings: Pick<Settings, 'soakFlows' | 'soakSeconds'>): Promise<boolean> {
  await runOneGrantSoak(settings.soakFlows);
  console.log('');
  const { ok } = await runTimedSoak(settings.soakSeconds);
  return ok;
}

async function runOneGrantSoak(flows: number): Promise<void> {
  const redisProcess = await startRedis();
  const http = createServer();
  await new Promise<void>((resolve) => http.listen(0, '127.0.0.1', resolve));
  const baseUrl = `http://127.0.0.1:${(http.address() as AddressInfo).port}`;
  const auth = await createAuthServer({
    baseUrl,
    store: { type: 'redis', url: redisProcess.url, keyPrefix: PREFIX },
    apis: [{ id: 'scim', name: 'User provisioning', scopes: { 'scim.read': 'Read users' } }],
    accounts: {
      authenticate: async () => undefined,
      findAccount: async (sub) => ({ sub, tenant: 'soak' }),
    },
    cookieKeys: ['soak-cookie-key-of-at-least-32-characters'],
    rateLimits: { authorize: false },
    logger: { info() {}, warn() {}, error() {} },
  });
  http.on('request', auth.app.callback());
  const redis = new Redis(redisProcess.url);
  try {
    const app = await auth.appRegistrations.create({ name: 'Soak', redirectUris: [REDIRECT], clientType: 'confidential' });
    const authorization = basic(app.clientId, app.clientSecret!);
    const provider = auth.provider as Provider;
    const client = await provider.Client.find(app.clientId);
    // The one grant of (tenant, user, app), as the consent page makes it.
    const grant = new provider.Grant({ accountId: 'soak-user', clientId: app.clientId });
    grant.addOIDCScope(NAMED_USER_SCOPE);
    grant.addResourceScope(auth.audience, NAMED_USER_RESOURCE_SCOPE);
    const grantId = await grant.save();
    const before = await footprint(redis);
    const started = Date.now();
    let refreshToken = '';
    for (let flow = 0; flow < flows; flow += 1) {
      const verifier = randomBytes(32).toString('base64url');
      const code = await new provider.AuthorizationCode({
        accountId: 'soak-user', authTime: Math.floor(Date.now() / 1000), client, grantId, redirectUri: REDIRECT,
        codeChallenge: createHash('sha256').update(verifier).digest('base64url'), codeChallengeMethod: 'S256',
        resource: auth.audience, scope: NAMED_USER_SCOPE, sessionUid: randomBytes(16).toString('base64url'),
      } as ConstructorParameters<Provider['AuthorizationCode']>[0]).save();
      const exchanged = await post(`${auth.issuer}/token`, { grant_type: 'authorization_code', code, redirect_uri: REDIRECT, code_verifier: verifier }, authorization);
      const refreshed = await post(`${auth.issuer}/token`, { grant_type: 'refresh_token', refresh_token: exchanged.refresh_token as string }, authorization);
      refreshToken = refreshed.refresh_token as string;
    }
    const seconds = (Date.now() - started) / 1000;
    const after = await footprint(redis);
    const pending = await fetch(`${auth.issuer}/authorize?${new URLSearchParams({
      response_type: 'code', client_id: app.clientId, redirect_uri: REDIRECT, scope: 'openid profile email scim.read',
      state: randomBytes(16).toString('base64url'), nonce: randomBytes(16).toString('base64url'),
      code_challenge: createHash('sha256').update('x'.repeat(43)).digest('base64url'), code_challenge_method: 'S256',
    })}`, { redirect: 'manual' });
    if (pending.status !== 303) throw new Error(`authorize: ${pending.status}`);
    const kib = (bytes: number) => `${(bytes / 1024).toFixed(1)} KiB`;
    console.log(`soak: ${flows} named-user flows (code exchange + refresh) on one grant in ${seconds.toFixed(1)} s`);
    console.log(`  Redis used_memory: ${kib(before.usedMemory)} before, ${kib(after.usedMemory)} after`);
    console.log(`  keys under the prefix: ${before.keys} before, ${after.keys} after (codes and refresh tokens live out their TTLs: 5 and 60 minutes)`);
    console.log(`  largest key: ${after.largest ? `${after.largest.key.replace(/\{[^}]*\}/, '{…}')}, ${after.largest.bytes} bytes` : 'none'}`);
    console.log(`  bytes per active grant: ${await bytesPer(redis, 'Grant:*')}`);
    console.log(`  bytes per live refresh token: ${await bytesPer(redis, `RefreshToken:{${refreshToken}}`)}`);
    console.log(`  bytes per pending sign-in: ${await bytesPer(redis, 'Interaction:*')}`);
  } finally {
    redis.disconnect();
    http.closeAllConnections();
    http.close();
    await auth.close();
    await redisProcess.stop();
  }
}
