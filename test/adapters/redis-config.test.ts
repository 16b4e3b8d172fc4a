import { createRedisStore } from '../../adapters/redis/index.js';
import { startRedis } from '../support/redis.js';

/** Redis settings that put stored data at risk are said at start (docs/operations.md, "Redis configuration"). */
describe('Redis eviction policy, read at start', () => {
  it.each([
    [['--maxmemory', '100mb', '--maxmemory-policy', 'allkeys-lru'], /maxmemory-policy is allkeys-lru .*client configurations, app registrations and consents can be deleted for good/],
    [['--maxmemory', '100mb', '--maxmemory-policy', 'volatile-lru'], /maxmemory-policy is volatile-lru .*users are signed out/],
    [['--maxmemory', '100mb', '--maxmemory-policy', 'noeviction'], undefined],
    [['--maxmemory', '0', '--maxmemory-policy', 'allkeys-lru'], undefined],
  ])('redis-server %j', async (args, expected) => {
    const redis = await startRedis(args);
    const warnings: string[] = [];
    try {
      const store = await createRedisStore({ url: redis.url, onWarning: (message) => warnings.push(message) });
      await store.close();
      if (expected) {
        expect(warnings).toHaveLength(1);
        expect(warnings[0]).toMatch(expected);
      } else {
        expect(warnings).toEqual([]);
      }
    } finally {
      await redis.stop();
    }
  });
});
