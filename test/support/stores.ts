import { startRedis, type RedisServer } from './redis.js';

export const STORE_KINDS = ['memory', 'redis'] as const;
export type StoreKind = (typeof STORE_KINDS)[number];
export type StoreOption = { type: 'memory' } | { type: 'redis'; url: string; keyPrefix?: string };

export interface StoreHandle {
  readonly redis: RedisServer | undefined;
  /** The `store` option for createAuthServer; a fresh key prefix per call keeps tests apart. */
  option(): StoreOption;
}

let prefixes = 0;

/** Registers beforeAll/afterAll hooks that start (and stop) a real redis-server when needed. */
export function useStore(kind: StoreKind): StoreHandle {
  let redis: RedisServer | undefined;
  beforeAll(async () => {
    if (kind === 'redis') redis = await startRedis();
  });
  afterAll(async () => {
    await redis?.stop();
  });
  return {
    get redis() {
      return redis;
    },
    option() {
      if (kind === 'memory') return { type: 'memory' };
      if (!redis) throw new Error('redis-server not started');
      prefixes += 1;
      return { type: 'redis', url: redis.url, keyPrefix: `t${prefixes}:` };
    },
  };
}
