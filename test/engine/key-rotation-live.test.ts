import { decodeProtectedHeader, type JWK } from 'jose';
import { main } from '../../src/cli/main.js';
import { changeKeySet, keySealer, openKeySet, readKeySet } from '../../src/engine/stored-keys.js';
import { createRedisStore } from '../../adapters/redis/index.js';
import { createTokenVerifier, type TokenVerifier } from '../../src/resource-server/verifier.js';
import { redisContents, startRedis, type RedisServer } from '../support/redis.js';
import { basic, postToken, startServer, type RunningServer } from '../support/server.js';
import { Redis } from 'ioredis';

/**
 * Signing keys kept in the store, rotated live (docs/keys.md, "Keys in the store"): two instances
 * on one Redis, client_credentials tokens issued at both all along and each verified at once by
 * resource servers using the kit with either instance's JWKS URL (cached 1 s); the CLI's
 * `keys add`, `keys promote` and `keys retire --store` change the key set, and both instances
 * follow each step within seconds, without a restart and without one failed token or
 * verification. Each step before its wait is refused, saying when it is safe. Waits are scaled
 * down: publish 2 s (more than the verifiers' cache), retire 3 s.
 */

const KEK = 'key-encryption-key-shared-by-both-instances-001';
const PREFIX = 'live-rotation:';
const COOKIE_KEYS = ['cookie-key-shared-by-every-instance-0001'];
const PUBLISH_WAIT_SECONDS = 2;
const RETIRE_WAIT_SECONDS = 3;
const SETTLE_MS = 5000;

const sleep = (ms: number) => new Promise((resolve) => setTimeout(resolve, ms));

describe('signing keys in the store, rotated live on two instances under load', () => {
  let redis: RedisServer;
  const instances: RunningServer[] = [];
  let client: { clientId: string; clientSecret: string };
  let verifiers: TokenVerifier[];
  const load = { running: false, issued: 0, failures: [] as string[], kids: new Map<string, Set<string>>() };
  let loops: Promise<void>[] = [];

  /** The CLI in process, --json, with the store and the key-encryption keys in its environment. */
  async function cli(...args: string[]): Promise<{ code: number; body: any; stderr: string }> {
    return cliWith({ KEY_ENCRYPTION_KEYS: KEK }, ...args);
  }

  async function cliWith(env: Record<string, string>, ...args: string[]): Promise<{ code: number; body: any; stderr: string }> {
    let stdout = '';
    let stderr = '';
    const io = {
      stdout: (text: string) => void (stdout += text),
      stderr: (text: string) => void (stderr += text),
      env: { REDIS_URL: redis.url, ...env },
      cwd: process.cwd(),
    };
    const code = await main([...args, '--key-prefix', PREFIX, '--json'], io);
    return { code, body: stdout ? JSON.parse(stdout) : undefined, stderr };
  }

  const start = () => startServer({
    baseUrl: 'http://auth.rotation.test',
    store: { type: 'redis', url: redis.url, keyPrefix: PREFIX },
    keys: { store: { keks: [KEK], publishWaitSeconds: PUBLISH_WAIT_SECONDS, retireWaitSeconds: RETIRE_WAIT_SECONDS } },
    cookieKeys: COOKIE_KEYS,
  });

  /** One token at `instance`, verified by every resource server: its kid, or a failure recorded. */
  async function issueAndVerify(instance: RunningServer, name: string): Promise<string | undefined> {
    const answer = await postToken(instance.oauthUrl, 'grant_type=client_credentials', { authorization: basic(client.clientId, client.clientSecret) });
    if (answer.status !== 200) {
      load.failures.push(`${name}: token ${answer.status} ${JSON.stringify(answer.body)}`);
      return undefined;
    }
    const token = answer.body.access_token as string;
    const { kid } = decodeProtectedHeader(token);
    for (const [index, verifier] of verifiers.entries()) {
      await verifier.verify(token).catch((error: Error) => load.failures.push(`${name}: verifier ${index} refused kid ${kid}: ${error.message}`));
    }
    load.issued += 1;
    return kid;
  }

  const jwksKids = async (instance: RunningServer): Promise<string[]> =>
    ((await (await fetch(`${instance.oauthUrl}/jwks`)).json()) as { keys: JWK[] }).keys.map((key) => key.kid!).sort();

  /** Waits until `check` holds on every instance (what "within seconds" means here), answering how long it took. */
  async function everywhere(check: (instance: RunningServer) => Promise<boolean>): Promise<number> {
    const started = Date.now();
    while (!(await Promise.all(instances.map(check))).every(Boolean)) {
      if (Date.now() - started > SETTLE_MS) throw new Error('not followed by every instance within 5 s');
      await sleep(20);
    }
    return Date.now() - started;
  }

  beforeAll(async () => {
    redis = await startRedis();
    // Two instances starting on an empty store at once: one makes the key set, both use it.
    instances.push(...(await Promise.all([start(), start()])));
    client = await instances[0]!.auth.clientConfigurations.create({ tenant: 'acme', name: 'Payroll sync', category: 'payroll', resources: { scim: { scopes: ['scim.read'] } } });
    const { issuer, audience } = instances[0]!.auth;
    verifiers = instances.map((instance) => createTokenVerifier({
      issuer, audience, jwks: new URL(`${instance.oauthUrl}/jwks`), jwksCacheMaxAgeSeconds: 1, jwksCooldownSeconds: 1,
    }));
  }, 60_000);

  afterAll(async () => {
    load.running = false;
    await Promise.all(loops);
    for (const instance of instances) await instance.stop();
    await redis?.stop();
  });

  it('both instances sign with the key set made at the first start, and publish the same keys', async () => {
    const [a, b] = await Promise.all(instances.map(jwksKids));
    expect(a).toHaveLength(2);
    expect(b).toEqual(a);
    expect(instances.some((instance) => instance.logLines.some((line) => line.includes('signing keys made and kept in the store')))).toBe(true);
    const listed = await cli('keys', 'list', '--store');
    expect(listed.code).toBe(0);
    expect(listed.body.keys.map((key: { alg: string; state: string }) => [key.alg, key.state])).toEqual([['ES256', 'signing'], ['RS256', 'signing']]);
  });

  it('add, promote, retire under load: every instance follows within seconds, no token or verification fails', async () => {
    load.running = true;
    loops = [0, 1, 2, 3].map(async (worker) => {
      while (load.running) {
        const slot = worker % instances.length;
        const kid = await issueAndVerify(instances[slot]!, `instance ${slot}`);
        if (kid) load.kids.set(kid, (load.kids.get(kid) ?? new Set()).add(`instance ${slot}`));
      }
    });
    await sleep(300);
    const before = (await cli('keys', 'list', '--store')).body.keys as Array<{ kid: string; alg: string }>;
    const oldKid = before.find((key) => key.alg === 'ES256')!.kid;

    // 1. Publish: at every instance's /jwks within seconds.
    const added = await cli('keys', 'add', '--store', '--alg', 'ES256');
    expect(added.code).toBe(0);
    const newKid = added.body.added[0].kid as string;
    expect(added.body.added[0]).toMatchObject({ alg: 'ES256', state: 'published', next: { step: 'promote', safe_now: false } });
    const published = await everywhere(async (instance) => (await jwksKids(instance)).includes(newKid));

    // 2. Switch: refused before the publish wait ends, saying when it is safe; then every instance signs with it.
    const early = await cli('keys', 'promote', '--store', '--kid', newKid);
    expect(early.code).toBe(1);
    expect(early.stderr).toMatch(new RegExp(`refused: key ${newKid} was published less than ${PUBLISH_WAIT_SECONDS} s ago: verifiers may not know it yet; safe after \\d{4}-\\d\\d-\\d\\dT`));
    await sleep(PUBLISH_WAIT_SECONDS * 1000);
    const promotedAt = Date.now();
    expect((await cli('keys', 'promote', '--store', '--kid', newKid)).code).toBe(0);
    const signing = new Set<number>();
    const switched = await everywhere(async (instance) => {
      const slot = instances.indexOf(instance);
      if (!signing.has(slot) && (await issueAndVerify(instance, `probe ${slot}`)) === newKid) signing.add(slot);
      return signing.has(slot);
    });
    const promoteToEverywhere = Date.now() - promotedAt;

    // 3. Retire: refused until the retire wait ends; then gone from every instance's /jwks.
    const early3 = await cli('keys', 'retire', '--store', '--kid', oldKid);
    expect(early3.code).toBe(1);
    expect(early3.stderr).toMatch(/signed tokens less than 3 s ago that may still be valid; safe after/);
    expect((await cli('keys', 'retire', '--store', '--kid', newKid)).stderr).toMatch(`key ${newKid} signs ES256: promote another ES256 key first`);
    await sleep(RETIRE_WAIT_SECONDS * 1000);
    expect((await cli('keys', 'retire', '--store', '--kid', oldKid)).code).toBe(0);
    const retired = await everywhere(async (instance) => !(await jwksKids(instance)).includes(oldKid));
    await sleep(1500);
    load.running = false;
    await Promise.all(loops);

    // The figures of docs/keys.md.
    process.stdout.write(`live rotation: published everywhere in ${published} ms, signing everywhere ${switched} ms after the command (${promoteToEverywhere} ms after promote), retired everywhere in ${retired} ms; ${load.issued} tokens\n`);
    expect(load.failures).toEqual([]);
    expect(load.issued).toBeGreaterThan(50);
    expect([...(load.kids.get(newKid) ?? [])].sort()).toEqual(['instance 0', 'instance 1']);
    expect(promoteToEverywhere).toBeLessThan(SETTLE_MS);
    // Every change was followed without a complaint (no set refused, none written back).
    expect(instances.flatMap((instance) => instance.logLines).filter((line) => /could not be followed|is gone/.test(line))).toEqual([]);
    // The steps are in the audit trail, in order.
    const events = await instances[0]!.auth.audit.list({ tenant: null, type: 'signing_key.promoted' });
    expect(events.events.map((event) => event.target?.id)).toEqual([newKid]);
  }, 60_000);

  it('needs the servers\' key-encryption keys for every step, their first key first; listing needs none', async () => {
    const without = await cliWith({}, 'keys', 'retire', '--store', '--kid', 'any');
    expect(without.code).toBe(1);
    expect(without.stderr).toContain('set KEY_ENCRYPTION_KEYS to the servers\' key-encryption keys (keys.store.keks)');
    const wrongFirst = await cliWith({ KEY_ENCRYPTION_KEYS: `another-key-encryption-key-the-servers-lack-01,${KEK}` }, 'keys', 'add', '--store', '--alg', 'ES256');
    expect(wrongFirst.code).toBe(1);
    expect(wrongFirst.stderr).toContain('the first key of KEY_ENCRYPTION_KEYS does not authenticate the stored key set');
    expect((await cliWith({}, 'keys', 'list', '--store')).code).toBe(0);
  });

  it('keeps no private key in clear in the store', async () => {
    const store = await createRedisStore({ url: redis.url, keyPrefix: PREFIX });
    try {
      const { jwks } = openKeySet((await readKeySet(store.records))!.set, keySealer([KEK]), ['ES256', 'RS256']);
      const client = new Redis(redis.url);
      const everything = await redisContents(client, `${PREFIX}*`);
      client.disconnect();
      for (const jwk of jwks.keys) expect(everything).not.toContain(jwk.d!);
    } finally {
      await store.close();
    }
  });

  it('does not follow a set changed without the key-encryption key, nor an older one; a deleted set is written back', async () => {
    const store = await createRedisStore({ url: redis.url, keyPrefix: PREFIX });
    try {
      const signingNow = async () => decodeProtectedHeader((await postToken(instances[0]!.oauthUrl, 'grant_type=client_credentials', { authorization: basic(client.clientId, client.clientSecret) })).body.access_token as string).kid;
      const kid = await signingNow();
      const found = (await readKeySet(store.records))!;
      // Someone who can write the store, without the KEK: the keys reordered (an older key would sign).
      const es = found.set.keys.filter((key) => key.alg === 'ES256');
      expect(es.length).toBeGreaterThanOrEqual(1);
      await store.records.put('signing-keys', 'current', 'server', { ...found.set, keys: [...found.set.keys].reverse(), generation: found.set.generation + 5 });
      await sleep(300);
      expect(await signingNow()).toBe(kid);
      expect(instances[0]!.logLines.some((line) => line.includes('could not be followed') && line.includes('not authenticated by keys.store.keks'))).toBe(true);
      // The authentic set put back, then changed by a KEK holder (generation + 1, followed) ...
      await store.records.put('signing-keys', 'current', 'server', { ...found.set });
      const newer = await changeKeySet(store.records, keySealer([KEK]), (set) => ({ keys: set.keys }));
      expect('set' in newer && newer.set.generation).toBe(found.set.generation + 1);
      await sleep(300);
      // ... and the older authentic set written back (a restored dump): not followed.
      await store.records.put('signing-keys', 'current', 'server', { ...found.set });
      await sleep(300);
      expect(instances[0]!.logLines.some((line) => line.includes(`of generation ${found.set.generation}, not newer than the ${found.set.generation + 1}`))).toBe(true);
      // Deleted: every instance writes back the set it follows.
      await store.records.delete('signing-keys', 'current');
      await sleep(500);
      const back = (await readKeySet(store.records))!;
      expect(back.set.generation).toBe(found.set.generation + 1);
      expect(back.set.keys.map((key) => key.kid)).toEqual(found.set.keys.map((key) => key.kid));
      expect(await signingNow()).toBe(kid);
    } finally {
      await store.close();
    }
  });

  it('refuses to start with a key-encryption key that does not open the stored keys, saying so', async () => {
    await expect(startServer({
      baseUrl: 'http://auth.rotation.test',
      store: { type: 'redis', url: redis.url, keyPrefix: PREFIX },
      keys: { store: { keks: ['a-key-encryption-key-that-sealed-nothing-here'] } },
      cookieKeys: COOKIE_KEYS,
    })).rejects.toThrow(/is not authenticated by keys.store.keks/);
  });

  it('refuses keys.jwks and keys.store together, and a short key-encryption key', async () => {
    const store = { type: 'memory' as const };
    await expect(startServer({ store, keys: { store: { keks: [KEK] }, jwks: { keys: [{ kty: 'EC' }] } } })).rejects.toThrow(/give keys.jwks or keys.store, not both/);
    await expect(startServer({ store, keys: { store: { keks: ['short'] } } })).rejects.toThrow(/key-encryption keys need at least 32 characters/);
  });

  it('works on the memory store too (one instance): keys made at start, tokens verify', async () => {
    const server = await startServer({ keys: { store: { keks: [KEK] } }, cookieKeys: COOKIE_KEYS });
    try {
      const made = await server.auth.clientConfigurations.create({ tenant: 'acme', name: 'Memory', category: 'payroll', resources: { scim: { scopes: ['scim.read'] } } });
      const answer = await postToken(server.oauthUrl, 'grant_type=client_credentials', { authorization: basic(made.clientId, made.clientSecret) });
      expect(answer.status).toBe(200);
      const verifier = createTokenVerifier({ issuer: server.auth.issuer, audience: server.auth.audience, jwks: new URL(`${server.oauthUrl}/jwks`) });
      await expect(verifier.verify(answer.body.access_token as string)).resolves.toMatchObject({ clientId: made.clientId });
    } finally {
      await server.stop();
    }
  });
});
