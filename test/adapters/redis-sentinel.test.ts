import { Redis } from 'ioredis';
import { createRedisStore } from '../../adapters/redis/index.js';
import { AlreadyConsumed, StoreUnavailable, type RecordChange, type Store } from '../../adapters/types.js';
import { startRedisSentinel, type RedisSentinelProcess } from '../../devtools/redis-sentinel.js';

const sleep = (ms: number) => new Promise((resolve) => setTimeout(resolve, ms));

async function within(condition: () => boolean, ms: number): Promise<void> {
  const deadline = Date.now() + ms;
  while (!condition()) {
    if (Date.now() > deadline) throw new Error(`not within ${ms} ms`);
    await sleep(10);
  }
}

/** A store that finds its master through Redis Sentinel: the same contract, in brief. */
describe('Redis store through Sentinel', () => {
  let sentinel: RedisSentinelProcess;
  let store: Store;
  const open = () =>
    createRedisStore({ sentinel: { sentinels: sentinel.sentinels, name: sentinel.name }, keyPrefix: 'sentinel:' });

  beforeAll(async () => {
    sentinel = await startRedisSentinel({ replicas: 1 });
    store = await open();
  }, 30_000);
  afterAll(async () => {
    await store?.close();
    await sentinel?.stop();
  });

  it('writes, reads and consumes engine entries once', async () => {
    expect(store.available).toBe(true);
    const codes = store.engine('AuthorizationCode');
    await codes.upsert('grantScode', { grantId: 'grantS', scope: 'x' }, 60);
    expect(await codes.find('grantScode')).toEqual({ grantId: 'grantS', scope: 'x' });
    await codes.consume('grantScode');
    await expect(codes.consume('grantScode')).rejects.toBeInstanceOf(AlreadyConsumed);
    await codes.destroy('grantScode');
    expect(await codes.find('grantScode')).toBeUndefined();
  });

  it('keeps records and tells another store of their changes', async () => {
    const other = await open();
    try {
      const changes: RecordChange[] = [];
      other.records.watch((change) => changes.push(change));
      await store.records.put('client', 'c1', 'acme', { id: 'c1' });
      expect(await other.records.list('client', 'acme')).toEqual([{ id: 'c1' }]);
      await sleep(50);
      expect(changes).toEqual([{ kind: 'client', id: 'c1' }]);
    } finally {
      await other.close();
    }
  });

  it('counts', async () => {
    expect(await store.counters.increment(['k'], 60)).toEqual([{ count: 1, resetsIn: 60 }]);
    expect(await store.counters.increment(['k'], 60)).toEqual([{ count: 2, resetsIn: 60 }]);
    expect(await store.counters.peek(['k', 'other'])).toEqual([
      { count: 2, resetsIn: 60 },
      { count: 0, resetsIn: 0 },
    ]);
  });

  it('refuses at once while the master is down, and follows it back', async () => {
    await sentinel.master.kill();
    await within(() => !store.available, 1000);
    const started = Date.now();
    await expect(store.records.get('client', 'c1')).rejects.toBeInstanceOf(StoreUnavailable);
    expect(Date.now() - started).toBeLessThan(1000);
    await sentinel.master.restart();
    await within(() => store.available, 5000);
    await store.records.put('client', 'c2', 'acme', { id: 'c2' });
    expect(await store.records.get('client', 'c2')).toEqual({ id: 'c2' });
  });

  it('follows a failover to the replica, with what was replicated', async () => {
    await store.records.put('client', 'c3', 'acme', { id: 'c3' });
    // The replica (resyncing after the restart above, maybe) has the record before the master goes.
    const replica = new Redis(sentinel.replicas[0]!.url, { maxRetriesPerRequest: 0, disconnectTimeout: 100 });
    replica.on('error', () => {});
    try {
      const deadline = Date.now() + 10_000;
      while (!(await replica.exists('sentinel:rec:{client:c3}')) && Date.now() < deadline) await sleep(50);
      expect(await replica.exists('sentinel:rec:{client:c3}')).toBe(1);
    } finally {
      replica.disconnect();
    }
    await sentinel.master.kill();
    await within(() => !store.available, 1000);
    const started = Date.now();
    await expect(store.counters.increment(['f'], 60)).rejects.toBeInstanceOf(StoreUnavailable);
    expect(Date.now() - started).toBeLessThan(1000);
    // The sentinel waits 2 s (down-after-milliseconds) before it fails over.
    const failedOver = Date.now();
    await within(() => store.available, 20_000);
    if (process.env.STORE_TIMINGS) console.log(`master killed -> served by the new master in ${Date.now() - failedOver} ms`);
    expect(await store.records.get('client', 'c3')).toEqual({ id: 'c3' });
    await store.records.put('client', 'c4', 'acme', { id: 'c4' });
    expect(await store.records.list<{ id: string }>('client', 'acme')).toEqual(expect.arrayContaining([{ id: 'c3' }, { id: 'c4' }]));
  }, 30_000);
});
