import { inspect } from 'node:util';
import { createRedisStore, StoreStartError, type RedisStoreOptions } from '../../adapters/redis/index.js';
import { startRedis, startTlsRedis, type RedisServer, type TlsRedisServer } from '../support/redis.js';

/** How the start failed, and how long it took. */
async function failedStart(options: RedisStoreOptions): Promise<{ error: unknown; ms: number }> {
  const started = performance.now();
  const error = await createRedisStore(options).then(
    async (store) => {
      await store.close();
      return undefined;
    },
    (rejection: unknown) => rejection,
  );
  return { error, ms: performance.now() - started };
}

/**
 * TLS set on one side only, or a certificate refused, is said as what it is, at once: never "no
 * answer within 10 s" (a TLS client facing a plain Redis gets no answer at all), never the password.
 */
describe('Redis store: a TLS handshake that fails is named as such', () => {
  let plain: RedisServer;
  let guarded: RedisServer;
  let tls: TlsRedisServer;

  beforeAll(async () => {
    [plain, guarded, tls] = await Promise.all([startRedis(), startRedis(['--requirepass', 'the-right-pw']), startTlsRedis()]);
  });
  afterAll(async () => {
    await Promise.all([plain?.stop(), guarded?.stop(), tls?.stop()]);
  });

  it.each<[string, () => RedisStoreOptions, () => number]>([
    ['rediss:// against a plain Redis', () => ({ url: `rediss://:s3cret-pw@127.0.0.1:${plain.port}` }), () => plain.port],
    ['tls: true against a plain Redis that wants a password', () => ({ url: `redis://127.0.0.1:${guarded.port}/2`, password: 's3cret-pw', tls: true }), () => guarded.port],
    ['a cluster node over TLS that is a plain Redis', () => ({ cluster: { nodes: [`rediss://:s3cret-pw@127.0.0.1:${plain.port}`] } }), () => plain.port],
  ])('%s: in about a second', async (_name, options, port) => {
    const { error, ms } = await failedStart(options());
    expect(error).toBeInstanceOf(StoreStartError);
    expect((error as Error).message).toBe(
      `TLS handshake failed at 127.0.0.1:${port()}: Redis there answers without TLS (connect with redis:// and no tls option, or turn TLS on in Redis)`,
    );
    expect(inspect(error)).not.toContain('s3cret-pw');
    expect(ms).toBeLessThan(3000);
  });

  it('redis:// against a TLS-only port: says the port wants TLS, at once', async () => {
    const { error, ms } = await failedStart({ url: `redis://:s3cret-pw@127.0.0.1:${tls.port}/1` });
    expect((error as Error).message).toBe(
      `cannot connect to Redis at 127.0.0.1:${tls.port}, database 1: 127.0.0.1:${tls.port} wants a TLS handshake and cut the plain connection (use a rediss:// URL or the tls option)`,
    );
    expect(inspect(error)).not.toContain('s3cret-pw');
    expect(ms).toBeLessThan(3000);
  });

  it('a certificate that is not trusted, or not for that name: the handshake and its reason', async () => {
    const untrusted = await failedStart({ url: `rediss://:s3cret-pw@127.0.0.1:${tls.port}` });
    // Node's own words follow the reason, and newer Node 24 releases add advice after it
    // ("; if the root CA is installed locally, try running Node.js with --use-system-ca").
    expect((untrusted.error as Error).message).toMatch(new RegExp(`^TLS handshake failed at 127\\.0\\.0\\.1:${tls.port}: self-signed certificate($|;)`));
    expect(inspect(untrusted.error)).not.toContain('s3cret-pw');
    expect(untrusted.ms).toBeLessThan(3000);
    const otherName = await failedStart({ url: `rediss://127.0.0.1:${tls.port}`, tls: { ca: tls.ca, servername: 'redis.example' } });
    expect((otherName.error as Error).message).toMatch(new RegExp(`^TLS handshake failed at 127\\.0\\.0\\.1:${tls.port}: Hostname/IP does not match certificate's altnames`));
  });

  it('the same TLS Redis with its certificate trusted: starts and serves', async () => {
    const store = await createRedisStore({ url: tls.url, tls: { ca: tls.ca } });
    try {
      await store.records.put('client', 'c1', 'acme', { id: 'c1' });
      expect(await store.records.get('client', 'c1')).toEqual({ id: 'c1' });
    } finally {
      await store.close();
    }
  });
});
