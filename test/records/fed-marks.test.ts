import { jest } from '@jest/globals';
import { createMemoryStore } from '../../adapters/memory.js';
import type { Store } from '../../adapters/types.js';
import { RevokedChains } from '../../src/engine/revoked-chains.js';
import { FedMarks } from '../../src/records/fed-marks.js';
import { ADAPTER_STORE_KINDS, useAdapterStore } from '../support/adapter-stores.js';
import { feedControlled } from '../support/feed-controlled.js';

// The 'wait' mode is RevokedChains' (test/engine/revoked-chains.test.ts); these are the 'serve'
// mode's rules, the held addresses' (src/limits/client-auth.ts): never wait on a hot path.
describe("marks known from memory, served while stale (src/records/fed-marks.ts, 'serve')", () => {
  let clock: number;
  const now = () => clock;
  beforeEach(() => {
    clock = Date.now();
  });
  const marks = (store: { records: Store['records'] }) => new FedMarks(store.records, 'held-address', 'address', 'serve', 10_000, now);

  it('answers at once, never a promise, even when the list is due: it is read again behind the answer', async () => {
    const store = createMemoryStore();
    const held = marks(store);
    const list = jest.spyOn(store.records, 'list');
    expect(held.until('198.51.100.1')).toBeUndefined();
    expect(list).toHaveBeenCalledTimes(1);
    for (let n = 0; n < 100; n += 1) expect(held.until(`198.51.100.${n}`)).toBeUndefined();
    expect(list).toHaveBeenCalledTimes(1);
    await new Promise((resolve) => setImmediate(resolve));
    clock += 10_001;
    expect(held.until('198.51.100.1')).toBeUndefined();
    expect(list).toHaveBeenCalledTimes(2);
    await store.close();
  });

  it('a mark holds until its time, and its record goes with the first read of the list after it', async () => {
    const store = createMemoryStore();
    const held = marks(store);
    await held.mark('203.0.113.7', clock + 60_000);
    expect(held.until('203.0.113.7')).toBe(clock + 60_000);
    expect(held.until('203.0.113.8')).toBeUndefined();
    clock += 60_001;
    expect(held.until('203.0.113.7')).toBeUndefined();
    await new Promise((resolve) => setImmediate(resolve));
    expect(await store.records.list('held-address', 'all')).toEqual([]);
    await store.close();
  });

  it("another process's mark is known through the feed, with its end read from the store", async () => {
    const store = createMemoryStore();
    const reader = marks(store);
    expect(reader.until('2001:db8::1')).toBeUndefined();
    await marks(store).mark('2001:db8::1', clock + 30_000);
    await new Promise((resolve) => setImmediate(resolve));
    expect(reader.until('2001:db8::1')).toBe(clock + 30_000);
    await store.close();
  });

  it('a feed that says nothing hides a mark for at most refreshMs (plus the read behind the answer)', async () => {
    const store = createMemoryStore();
    const feed = feedControlled(store.records);
    const reader = marks({ records: feed.store });
    expect(reader.until('203.0.113.9')).toBeUndefined();
    feed.cut();
    await marks(store).mark('203.0.113.9', clock + 30_000);
    expect(reader.until('203.0.113.9')).toBeUndefined();
    clock += 10_001;
    reader.until('203.0.113.9');
    await new Promise((resolve) => setImmediate(resolve));
    expect(reader.until('203.0.113.9')).toBe(clock - 10_001 + 30_000);
    await store.close();
  });

  it('while changes cannot be watched, each question goes to the store', async () => {
    const store = createMemoryStore();
    const feed = feedControlled(store.records);
    const reader = marks({ records: feed.store });
    expect(reader.until('203.0.113.10')).toBeUndefined();
    feed.cut();
    feed.down();
    await marks(store).mark('203.0.113.10', clock + 30_000);
    const asked = reader.until('203.0.113.10');
    expect(asked).toBeInstanceOf(Promise);
    expect(await asked).toBe(clock + 30_000);
    await store.close();
  });
});

describe.each(ADAPTER_STORE_KINDS.filter((kind) => kind !== 'memory'))('marks across instances (%s)', (kind) => {
  const handle = useAdapterStore(kind);
  let first: Store;
  let second: Store;
  beforeEach(async () => {
    first = await handle.create();
    second = await handle.another();
  });
  afterEach(async () => {
    await first.close();
    await second.close();
  });

  it('a mark made on one instance is known on the other within milliseconds, with its end', async () => {
    const here = new FedMarks(first.records, 'held-address', 'address', 'serve');
    const there = new FedMarks(second.records, 'held-address', 'address', 'serve');
    expect(there.until('2001:db8::7')).toBeUndefined();
    const until = Date.now() + 60_000;
    await here.mark('2001:db8::7', until);
    const deadline = Date.now() + 2000;
    while (there.until('2001:db8::7') !== until && Date.now() < deadline) await new Promise((resolve) => setTimeout(resolve, 5));
    expect(there.until('2001:db8::7')).toBe(until);
  });

  it('a chain revoked on one instance is revoked on the other at once, through the change feed', async () => {
    const here = new RevokedChains(first.records);
    const there = new RevokedChains(second.records);
    expect(await there.isRevoked('chain-x')).toBe(false);
    await here.revoke('chain-x', Date.now() + 60_000);
    // The feed tells the other instance before the write is visible to its readers.
    await new Promise((resolve) => setTimeout(resolve, 50));
    expect(await there.isRevoked('chain-x')).toBe(true);
  });
});
