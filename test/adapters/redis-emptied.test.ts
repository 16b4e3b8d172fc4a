import { createRedisStore, type RedisStoreOptions } from '../../adapters/redis/index.js';
import type { RecordChange, Store } from '../../adapters/types.js';
import { startRedis, type RedisServer } from '../support/redis.js';

const sleep = (ms: number) => new Promise((resolve) => setTimeout(resolve, ms));

async function within(condition: () => boolean, ms: number): Promise<number> {
  const started = performance.now();
  while (!condition()) {
    if (performance.now() - started > ms) throw new Error(`not within ${ms} ms`);
    await sleep(10);
  }
  return performance.now() - started;
}

/**
 * A store emptied under a running store (Redis restarted without persistence, flushed) is noticed:
 * after the reconnect, or by the periodic check when no reconnect happens. A restart that kept the
 * data, or a mere reconnect, is not an emptying.
 */
describe('Redis store: an emptied store is noticed', () => {
  const opened: Store[] = [];
  let prefixes = 0;
  const open = async (redis: RedisServer, settings: Partial<RedisStoreOptions> = {}) => {
    const store = await createRedisStore({ url: redis.url, keyPrefix: `e${(prefixes += 1)}:`, ...settings } as RedisStoreOptions);
    opened.push(store);
    return store;
  };
  afterEach(async () => {
    await Promise.all(opened.splice(0).map((store) => store.close()));
  });

  it('Redis restarted without persistence: told once, after the reconnect (not by the timer)', async () => {
    // The Redis of the tests keeps nothing: no RDB snapshot, no AOF (devtools/redis-server.ts).
    const redis = await startRedis();
    try {
      // No timer within the test's time: only the reconnect can tell.
      const store = await open(redis, { heartbeatMs: 60_000 });
      let emptied = 0;
      store.onEmptied(() => (emptied += 1));
      await store.records.put('client', 'c1', 'acme', { id: 'c1' });
      await redis.restart();
      const noticed = await within(() => emptied === 1, 3000);
      if (process.env.STORE_TIMINGS) console.log(`emptied store noticed ${Math.round(noticed)} ms after the restart`);
      expect(await store.records.get('client', 'c1')).toBeUndefined();
      await sleep(300);
      expect(emptied).toBe(1);
    } finally {
      await redis.stop();
    }
  });

  it('Redis restarted with persistence (appendonly): nothing is said', async () => {
    const redis = await startRedis(['--appendonly', 'yes', '--appendfsync', 'always']);
    try {
      const store = await open(redis, { heartbeatMs: 100 });
      let emptied = 0;
      store.onEmptied(() => (emptied += 1));
      await store.records.put('client', 'c1', 'acme', { id: 'c1' });
      await redis.restart();
      await within(() => store.available, 3000);
      await sleep(500);
      expect(await store.records.get('client', 'c1')).toEqual({ id: 'c1' });
      expect(emptied).toBe(0);
    } finally {
      await redis.stop();
    }
  });

  it('flushed while connected: every instance on the store notices by its timer, once each, and its watchers forget', async () => {
    const redis = await startRedis();
    try {
      const first = await open(redis, { heartbeatMs: 100 });
      const second = await createRedisStore({ url: redis.url, keyPrefix: `e${prefixes}:`, heartbeatMs: 100 });
      opened.push(second);
      const told: [number, number] = [0, 0];
      first.onEmptied(() => (told[0] += 1));
      second.onEmptied(() => (told[1] += 1));
      const changes: RecordChange[] = [];
      first.records.watch((change) => changes.push(change));
      await sleep(300);
      expect(told).toEqual([0, 0]);
      expect(changes).toEqual([]);
      await redis.client().flushall();
      await within(() => told[0] === 1 && told[1] === 1, 2000);
      await sleep(300);
      expect(told).toEqual([1, 1]);
      // No reconnect happened: only the emptying tells the cache to forget what it holds.
      expect(changes).toEqual([{ kind: undefined }]);
      // The one that came first wrote a new epoch; the other adopted it.
      expect(await redis.client().exists(`e${prefixes}:epoch:{records}`)).toBe(1);
    } finally {
      await redis.stop();
    }
  });
});
