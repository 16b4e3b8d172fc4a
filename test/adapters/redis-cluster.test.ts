import { Redis } from 'ioredis';
import { createRedisStore, StoreFormatError } from '../../adapters/redis/index.js';
import { StoreUnavailable, type RecordChange, type Store } from '../../adapters/types.js';
import { startRedisCluster, type RedisClusterProcess } from '../../devtools/redis-cluster.js';

const sleep = (ms: number) => new Promise((resolve) => setTimeout(resolve, ms));

async function within(condition: () => boolean, ms: number): Promise<number> {
  const started = Date.now();
  while (!condition()) {
    if (Date.now() - started > ms) throw new Error(`not within ${ms} ms`);
    await sleep(10);
  }
  return Date.now() - started;
}

/** What only a cluster can show: the change feed across nodes, and a node going for good. */
describe('Redis store on a Redis Cluster', () => {
  let cluster: RedisClusterProcess;
  let clients: Redis[];
  let store: Store;
  let changes: RecordChange[];

  beforeAll(async () => {
    cluster = await startRedisCluster();
    // One of them dies with its node: close it without ioredis' 2 s wait for a goodbye.
    clients = cluster.urls.map((url) => new Redis(url, { maxRetriesPerRequest: 0, disconnectTimeout: 100 }));
    clients.forEach((client) => client.on('error', () => {}));
  }, 60_000);
  afterAll(async () => {
    clients?.forEach((client) => client.disconnect());
    await cluster?.stop();
  });
  beforeEach(async () => {
    store = await createRedisStore({ cluster: { nodes: cluster.urls.slice(0, 1) }, keyPrefix: 'cl:' });
    changes = [];
    store.records.watch((change) => changes.push(change));
  });
  afterEach(async () => {
    await store.close();
  });

  it('hears changes published on any node (given one node, it finds the others)', async () => {
    await Promise.all(clients.map((client, i) => client.publish('cl:rec-changes', `client\nfrom-node-${i}`)));
    await sleep(100);
    expect(changes).toEqual(expect.arrayContaining(clients.map((_, i) => ({ kind: 'client', id: `from-node-${i}` }))));
    expect(changes).toHaveLength(clients.length);
  });

  it('serves a burst of parallel operations while it opens its node connections (none refused)', async () => {
    const fresh = await createRedisStore({ cluster: { nodes: cluster.urls.slice(0, 1) }, keyPrefix: 'burst:' });
    try {
      // Keys in every slot range: each node's connection is opened by the first of these.
      const answers = await Promise.allSettled(Array.from({ length: 60 }, (_, i) => fresh.engine('Session').find(`burst-${i}`)));
      expect(answers.filter((answer) => answer.status === 'rejected')).toEqual([]);
    } finally {
      await fresh.close();
    }
  });

  it('refuses keys with braces in the prefix (they would become the hash tag)', async () => {
    await expect(createRedisStore({ cluster: { nodes: cluster.urls }, keyPrefix: 'a{b}:' })).rejects.toThrow(/braces/);
  });

  it('notices any master emptied (no reconnect on a cluster: the periodic check), once each time', async () => {
    const watched = await createRedisStore({ cluster: { nodes: cluster.urls.slice(0, 1) }, keyPrefix: 'emptied:', heartbeatMs: 100 });
    try {
      let emptied = 0;
      watched.onEmptied(() => (emptied += 1));
      // Records live on every master (store format 2): each keeps a marker of the epoch.
      const markers = await Promise.all(clients.map((client) => client.keys('emptied:epoch:{epoch-*}')));
      expect(markers.map((keys) => keys.length)).toEqual([1, 1, 1]);
      await sleep(300);
      expect(emptied).toBe(0);
      // The epoch's own node last: a new epoch and the markers' loss are one emptying.
      const epochNode = (await Promise.all(clients.map((client) => client.exists('emptied:epoch:{records}').catch(() => 0)))).indexOf(1);
      const order = [...clients.keys()].sort((a, b) => Number(a === epochNode) - Number(b === epochNode));
      for (const [turn, index] of order.entries()) {
        await clients[index]!.flushall();
        await within(() => emptied === turn + 1, 2000);
        await sleep(300);
        expect(emptied).toBe(turn + 1);
      }
      // Every marker written again.
      expect((await Promise.all(clients.map((client) => client.keys('emptied:epoch:{epoch-*}')))).map((keys) => keys.length)).toEqual([1, 1, 1]);
    } finally {
      await watched.close();
    }
  });

  it('writes its store format in the records\' slot, and refuses a store of a newer format', async () => {
    const owns = await Promise.all(clients.map((client) => client.exists('cl:format:{records}').then((found) => found === 1, () => false)));
    expect(owns.filter(Boolean)).toHaveLength(1);
    const node = clients[owns.indexOf(true)]!;
    expect(await node.exists('cl:epoch:{records}')).toBe(1);
    await node.set('cl:format:{records}', '3');
    try {
      const refused = createRedisStore({ cluster: { nodes: cluster.urls.slice(0, 1) }, keyPrefix: 'cl:' });
      await expect(refused).rejects.toThrow(StoreFormatError);
      await expect(refused).rejects.toThrow(/^the Redis Cluster of 127\.0\.0\.1:\d+: the store format key cl:format:\{records\} says format 3 \(written by a newer release/);
    } finally {
      await node.set('cl:format:{records}', '2');
    }
  });

  it('upgrades a store of format 1 (every record in one slot): the records spread over the masters, none lost', async () => {
    // Format 1 kept every record and index under the `{records}` tag: one slot, one node.
    const oldNode = clients[(await Promise.all(clients.map((client) => client.exists('cl:format:{records}').catch(() => 0)))).indexOf(1)]!;
    const ids = Array.from({ length: 24 }, (_, i) => `old-${i}`);
    for (const id of ids) {
      await oldNode.hset(`up:rec:{records}:client:${id}`, 'g', 'acme', 'v', JSON.stringify({ id }), 'n', '2');
      await oldNode.sadd('up:idx:{records}:client:acme', id);
    }
    await oldNode.set('up:format:{records}', '1');
    const upgraded = await createRedisStore({ cluster: { nodes: cluster.urls.slice(0, 1) }, keyPrefix: 'up:' });
    try {
      expect((await upgraded.records.ids('client', 'acme')).sort()).toEqual([...ids].sort());
      expect(await upgraded.records.getVersioned('client', 'old-3')).toEqual({ value: { id: 'old-3' }, revision: 2 });
      expect(await oldNode.get('up:format:{records}')).toBe('2');
      expect(await oldNode.keys('up:rec:{records}:*')).toEqual([]);
      expect(await oldNode.keys('up:idx:{records}:*')).toEqual([]);
      // Each record on the master of its own slot: all three masters hold some.
      const held = await Promise.all(clients.map((client) => client.keys('up:rec:{client:*').then((keys) => keys.length)));
      expect(held.reduce((a, b) => a + b, 0)).toBe(ids.length);
      expect(held.filter((count) => count > 0)).toHaveLength(3);
    } finally {
      await upgraded.close();
    }
  });

  it('moves its subscription to another node when its node goes, telling watchers to forget', async () => {
    const holders = await Promise.all(
      clients.map(async (client) => ((await client.call('CLIENT', 'LIST', 'TYPE', 'pubsub')) as string).trim() !== ''),
    );
    const index = holders.indexOf(true);
    expect(holders.filter(Boolean)).toHaveLength(1);
    await store.ping();
    await cluster.nodes[index]!.kill();
    await within(() => !store.records.watching, 1000);
    expect(changes).toEqual([{ kind: undefined }]);
    const moved = await within(() => store.records.watching, 5000);
    if (process.env.STORE_TIMINGS) console.log(`cluster subscription moved to another node in ${moved} ms`);
    expect(changes).toEqual([{ kind: undefined }, { kind: undefined }]);
    const survivor = clients.find((_, i) => i !== index)!;
    await survivor.publish('cl:rec-changes', 'client\nafter');
    await sleep(100);
    expect(changes.at(-1)).toEqual({ kind: 'client', id: 'after' });

    // A third of the slots has no master: not ready, and said at once (a live node would answer a PING).
    const probed = Date.now();
    await expect(store.ping()).rejects.toMatchObject({ name: 'StoreUnavailable', reason: 'cluster' });
    expect(Date.now() - probed).toBeLessThan(200);

    // A third of the slots is gone with the node: every operation answers or is refused at once.
    const refusals: number[] = [];
    const operations: Array<() => Promise<unknown>> = [
      () => store.records.get('client', 'x'),
      () => store.records.put('client', 'x', 'acme', {}),
      () => store.counters.increment(['a', 'b'], 60),
      ...Array.from({ length: 12 }, (_, i) => () => store.engine('Session').find(`session-${i}`)),
      ...Array.from({ length: 12 }, (_, i) => () => store.engine('Session').upsert(`session-${i}`, {}, 60)),
    ];
    for (const operation of operations) {
      const started = Date.now();
      const error = await operation().then(() => undefined, (rejection: unknown) => rejection);
      expect(Date.now() - started).toBeLessThan(1000);
      if (error !== undefined) {
        expect(error).toBeInstanceOf(StoreUnavailable);
        refusals.push(Date.now() - started);
      }
    }
    // Not after the command timeout (500 ms): ioredis does not retry the node that is gone.
    expect(refusals.length).toBeGreaterThan(0);
    expect(refusals.sort((a, b) => a - b)[Math.floor(refusals.length / 2)]).toBeLessThan(50);
  }, 30_000);
});
