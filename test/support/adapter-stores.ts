import { Redis } from 'ioredis';
import { createMemoryStore } from '../../adapters/memory.js';
import { createRedisStore, type RedisConnectionOptions, type RedisStoreOptions } from '../../adapters/redis/index.js';
import type { Store } from '../../adapters/types.js';
import { startRedisCluster, type RedisClusterProcess } from '../../devtools/redis-cluster.js';
import { startRedis, type RedisServer } from './redis.js';
import { STORE_KINDS } from './stores.js';

/**
 * The adapter tests also run on a real 3-node Redis Cluster; the HTTP tests keep STORE_KINDS.
 * Under `npm run mutate` (jest.mutate.config.js) they keep STORE_KINDS too: the mutated modules
 * behave alike on every store, and six more redis-servers per test file on a shared CPU make the
 * cluster's timing fail runs that are about the rules.
 */
export const ADAPTER_STORE_KINDS = [...STORE_KINDS, ...(process.env['TALENT_AUTH_MUTATION'] === '1' ? [] : ['redis-cluster' as const])] as const;
/** A Redis Cluster of 3 masters with a replica each: the store contract runs on it too. */
export const REPLICATED_CLUSTER = 'redis-cluster-replicas';
export type AdapterStoreKind = (typeof ADAPTER_STORE_KINDS)[number] | typeof REPLICATED_CLUSTER;

type StoreSettings = Omit<RedisStoreOptions, 'url' | 'cluster' | 'sentinel' | 'keyPrefix'>;

export interface AdapterStoreHandle {
  readonly kind: AdapterStoreKind;
  /** A store on a fresh key prefix, which tests apart. */
  create(settings?: StoreSettings): Promise<Store>;
  /** Another store on the same Redis and key prefix as the last create(), as a second process would. */
  another(settings?: StoreSettings): Promise<Store>;
  /** The key prefix of the last create() ('' for memory). */
  readonly prefix: string;
  /** Keys matching a pattern, on every node (once each: a replica holds its master's). */
  keys(pattern: string): Promise<string[]>;
  ttl(key: string): Promise<number>;
  /** The slot that Redis itself gives a key (CLUSTER KEYSLOT); undefined when not a cluster. */
  serverSlot(key: string): Promise<number | undefined>;
  /** Kills every pub/sub connection, as a network blip would. */
  killSubscribers(): Promise<void>;
  /** One plain client per node, for inspection; disconnected at afterAll. */
  nodeClients(): Redis[];
}

let prefixes = 0;

/** Registers beforeAll/afterAll hooks that start (and stop) a real redis-server or cluster. */
export function useAdapterStore(kind: AdapterStoreKind): AdapterStoreHandle {
  let redis: RedisServer | undefined;
  let cluster: RedisClusterProcess | undefined;
  let clients: Redis[] = [];
  let prefix = '';

  beforeAll(async () => {
    if (kind === 'redis') redis = await startRedis();
    if (kind === 'redis-cluster') cluster = await startRedisCluster();
    if (kind === REPLICATED_CLUSTER) cluster = await startRedisCluster(3, { replicas: 1 });
    const urls = redis ? [redis.url] : cluster?.urls ?? [];
    clients = urls.map((url) => new Redis(url));
  }, 60_000);
  afterAll(async () => {
    clients.forEach((client) => client.disconnect());
    await redis?.stop();
    await cluster?.stop();
  });

  const connection = (): RedisConnectionOptions => {
    if (redis) return { url: redis.url };
    if (cluster) return { cluster: { nodes: cluster.urls } };
    throw new Error(`${kind}: not started`);
  };
  const open = (settings: StoreSettings): Promise<Store> =>
    kind === 'memory'
      ? Promise.resolve(createMemoryStore())
      : createRedisStore({ ...connection(), ...settings, keyPrefix: prefix });

  return {
    kind,
    get prefix() {
      return prefix;
    },
    create(settings = {}) {
      prefixes += 1;
      prefix = kind === 'memory' ? '' : `t${prefixes}:`;
      return open(settings);
    },
    another(settings = {}) {
      if (kind === 'memory') throw new Error('a memory store is never shared');
      return open(settings);
    },
    async keys(pattern) {
      return [...new Set((await Promise.all(clients.map((client) => client.keys(pattern)))).flat())];
    },
    async ttl(key) {
      // Nodes that do not hold the key's slot answer MOVED.
      const ttls = await Promise.all(clients.map((client) => client.ttl(key).catch(() => -2)));
      return Math.max(...ttls);
    },
    async serverSlot(key) {
      if (!cluster) return undefined;
      return Number(await clients[0]!.cluster('KEYSLOT', key));
    },
    async killSubscribers() {
      await Promise.all(clients.map((client) => client.client('KILL', 'TYPE', 'pubsub')));
    },
    nodeClients: () => clients,
  };
}
