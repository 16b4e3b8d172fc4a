import { mkdtempSync, rmSync, writeFileSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { RedisSettingsError, redisSettingsFromEnv, redisSettingsFromFile, redisStoreFromEnv, resolveRedisStore } from '../../adapters/redis/settings.js';

/** The store option the example server and the CLI read from the environment (no Redis needed). */
describe('Redis store settings from the environment', () => {
  let dir: string;
  beforeAll(() => {
    dir = mkdtempSync(join(tmpdir(), 'talent-auth-redis-settings-'));
  });
  afterAll(() => {
    rmSync(dir, { recursive: true, force: true });
  });

  /** The error `run` throws, checked to be a RedisSettingsError. */
  function refusal(run: () => unknown): RedisSettingsError {
    try {
      run();
    } catch (error) {
      expect(error).toBeInstanceOf(RedisSettingsError);
      return error as RedisSettingsError;
    }
    throw new Error('not refused');
  }

  it('names no store when no variable names where Redis is (empty variables count as unset)', () => {
    expect(redisStoreFromEnv({})).toBeUndefined();
    expect(redisStoreFromEnv({ REDIS_URL: '', REDIS_PASSWORD: 'pw', REDIS_TLS: '1' })).toBeUndefined();
  });

  it('a URL with an ACL user, a password and TLS with the system CAs', () => {
    expect(redisStoreFromEnv({ REDIS_URL: 'rediss://redis.example:6380/2', REDIS_USERNAME: 'ops', REDIS_PASSWORD: 'pw', REDIS_TLS: 'true', REDIS_KEY_PREFIX: 'p:' }))
      .toEqual({ type: 'redis', url: 'rediss://redis.example:6380/2', username: 'ops', password: 'pw', tls: true, keyPrefix: 'p:' });
  });

  it('cluster nodes, comma-separated, blanks dropped', () => {
    expect(redisStoreFromEnv({ REDIS_CLUSTER_NODES: 'redis://a:7000, redis://b:7001,' }))
      .toEqual({ type: 'redis', cluster: { nodes: ['redis://a:7000', 'redis://b:7001'] } });
  });

  it('sentinels as host:port (26379 by default, IPv6 in brackets), the name (mymaster by default) and their own credentials', () => {
    expect(redisStoreFromEnv({ REDIS_SENTINELS: 's1:26380,s2,[::1]:26381', REDIS_SENTINEL_USERNAME: 'sen', REDIS_SENTINEL_PASSWORD: 'spw' })).toEqual({
      type: 'redis',
      sentinel: {
        sentinels: [{ host: 's1', port: 26380 }, { host: 's2', port: 26379 }, { host: '::1', port: 26381 }],
        name: 'mymaster',
        username: 'sen',
        password: 'spw',
      },
    });
    expect(redisStoreFromEnv({ REDIS_SENTINELS: 's1', REDIS_SENTINEL_NAME: 'main' })?.sentinel?.name).toBe('main');
  });

  it('TLS certificates from PEM files (TLS on without REDIS_TLS)', () => {
    const ca = join(dir, 'ca.pem');
    const cert = join(dir, 'cert.pem');
    const key = join(dir, 'key.pem');
    writeFileSync(ca, 'CA PEM');
    writeFileSync(cert, 'CERT PEM');
    writeFileSync(key, 'KEY PEM');
    expect(redisStoreFromEnv({ REDIS_URL: 'redis://h:1', REDIS_TLS_CA_FILE: ca, REDIS_TLS_CERT_FILE: cert, REDIS_TLS_KEY_FILE: key })?.tls)
      .toEqual({ ca: 'CA PEM', cert: 'CERT PEM', key: 'KEY PEM' });
    expect(refusal(() => redisStoreFromEnv({ REDIS_URL: 'redis://h:1', REDIS_TLS_KEY_FILE: join(dir, 'none.pem') })))
      .toMatchObject({ field: 'REDIS_TLS_KEY_FILE', message: `REDIS_TLS_KEY_FILE: cannot read ${join(dir, 'none.pem')} (ENOENT)` });
  });

  it('refuses two places at once, a malformed variable, and never quotes a value', () => {
    expect(refusal(() => redisStoreFromEnv({ REDIS_URL: 'redis://:pw-1@h:1', REDIS_SENTINELS: 's1' })).message)
      .toBe('REDIS_URL and REDIS_SENTINELS both say where Redis is: give only one (a URL, cluster nodes or sentinels)');
    expect(refusal(() => redisStoreFromEnv({ REDIS_SENTINELS: 's1:port' }))).toMatchObject({ field: 'REDIS_SENTINELS', message: 'REDIS_SENTINELS: entry 1 is not host:port' });
    expect(refusal(() => redisStoreFromEnv({ REDIS_SENTINELS: 's1:70000' })).field).toBe('REDIS_SENTINELS');
    expect(refusal(() => redisStoreFromEnv({ REDIS_URL: 'redis://h:1', REDIS_TLS: 'on' })).field).toBe('REDIS_TLS');
    const badNode = refusal(() => redisStoreFromEnv({ REDIS_CLUSTER_NODES: 'redis://a:1,http://:pw-2@b:2' }));
    expect(badNode).toMatchObject({ field: 'REDIS_CLUSTER_NODES', message: 'REDIS_CLUSTER_NODES: must be a redis:// or rediss:// URL' });
    const badUrl = refusal(() => redisStoreFromEnv({ REDIS_URL: 'redis://:pw-3@h:1/x' }));
    expect(badUrl.message).toBe('REDIS_URL: the database (the path after host:port) must be a non-negative integer, like /0');
  });

  it('merges sources: where Redis is from the first that names it, every other field from the first that has it', () => {
    const env = redisSettingsFromEnv({ REDIS_CLUSTER_NODES: 'redis://a:1', REDIS_PASSWORD: 'env-pw', REDIS_KEY_PREFIX: 'env:' });
    const file = { settings: { url: 'redis://file:1', keyPrefix: 'file:' }, nameOf: (path: readonly PropertyKey[]) => path.join('.'), label: 'f.json' };
    expect(resolveRedisStore([file, env], 'none')).toEqual({ type: 'redis', url: 'redis://file:1', keyPrefix: 'file:', password: 'env-pw' });
    expect(refusal(() => resolveRedisStore([redisSettingsFromEnv({ REDIS_PASSWORD: 'pw' })], 'no store'))).toMatchObject({ message: 'no store' });
  });

  it('refuses a "__proto__" member of a settings file instead of letting it become the prototype of the settings', () => {
    const path = join(dir, 'proto.json');
    writeFileSync(path, '{"url": "redis://file:1", "__proto__": {"password": "inherited"}}');
    const file = redisSettingsFromFile(path, 'proto.json');
    expect(refusal(() => resolveRedisStore([file], 'none'))).toMatchObject({ message: 'proto.json: __proto__ is not a store setting', field: '__proto__' });
  });
});
