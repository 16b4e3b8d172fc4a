import { jest } from '@jest/globals';
import { createMemoryStore } from '../../adapters/memory.js';
import { StoreUnavailable, type RecordChange, type RecordStore } from '../../adapters/types.js';
import { ClientLookups, type EngineClient } from '../../src/engine/client-cache.js';

const client = (id: string, redirectUris: string[] = []) => ({ clientId: id, redirectUris }) as unknown as EngineClient;

/** A record store whose change feed the test drives. */
function feed(watching = true): { records: RecordStore; change(change: RecordChange): void } {
  const listeners: Array<(change: RecordChange) => void> = [];
  const records = { ...createMemoryStore().records, watching, watch: (listener: (change: RecordChange) => void) => listeners.push(listener) };
  return { records: records as unknown as RecordStore, change: (change) => listeners.forEach((listener) => listener(change)) };
}

/** A finder that counts its reads. */
function counting(): { find: (id: string) => Promise<EngineClient>; reads: string[] } {
  const reads: string[] = [];
  return { reads, find: async (id) => (reads.push(id), client(id)) };
}

describe('the client cache (src/engine/client-cache.ts)', () => {
  it.each([
    ['a change of that client drops it', { kind: 'client', id: 'c1' }, 2],
    ['a change of an app with that ID drops it', { kind: 'app', id: 'c1' }, 2],
    ['a change of another client keeps it', { kind: 'client', id: 'c2' }, 1],
    ['a consent is not a client', { kind: 'consent', id: 'c1' }, 1],
    ['a lost feed drops everything', { kind: undefined }, 2],
  ] as const)('%s', async (_name, change, reads) => {
    const { records, change: emit } = feed();
    const counter = counting();
    const find = new ClientLookups(records).cached(counter.find);
    await find('c1');
    emit(change as RecordChange);
    await find('c1');
    expect(counter.reads).toHaveLength(reads);
  });

  it('caches nothing while changes cannot be watched', async () => {
    const counter = counting();
    const find = new ClientLookups(feed(false).records).cached(counter.find);
    await find('c1');
    await find('c1');
    expect(counter.reads).toHaveLength(2);
  });

  it('does not keep what it read while a change arrived', async () => {
    const { records, change } = feed();
    const lookups = new ClientLookups(records);
    let calls = 0;
    const find = lookups.cached(async (id) => {
      calls += 1;
      if (calls === 1) change({ kind: 'client', id });
      return client(id);
    });
    await find('c1');
    await find('c1');
    expect(calls).toBe(2);
  });

  it('ages entries out, and bounds how many it keeps', async () => {
    const aging = counting();
    const find = new ClientLookups(feed().records, 2, 0).cached(aging.find);
    await find('c1');
    await find('c1');
    expect(aging.reads).toHaveLength(2);
    const bounded = counting();
    const findBounded = new ClientLookups(feed().records, 2, 60_000).cached(bounded.find);
    for (const id of ['a', 'b', 'c', 'c', 'a']) await findBounded(id);
    expect(bounded.reads).toEqual(['a', 'b', 'c', 'a']);
  });

  it('remembers redirect URIs of clients it saw (for the store-down redirect), forgets them on a change', async () => {
    const { records, change } = feed();
    const lookups = new ClientLookups(records);
    const find = lookups.cached(async (id) => (id === 'gone' ? undefined : client(id, ['https://app.example/cb'])));
    await find('c1');
    await find('gone');
    expect(lookups.redirectUris('c1')).toEqual(['https://app.example/cb']);
    expect(lookups.redirectUris('gone')).toBeUndefined();
    change({ kind: 'app', id: 'c1' });
    expect(lookups.redirectUris('c1')).toBeUndefined();
  });

  describe('while the store cannot answer for a client (its shard failing over)', () => {
    const MAX_AGE_MS = 10_000;
    beforeEach(() => jest.useFakeTimers({ now: new Date('2026-11-26T12:00:00Z') }));
    afterEach(() => jest.useRealTimers());

    /** A finder that answers until `down` is set, then throws what `down` holds. */
    function failing(): { find: (id: string) => Promise<EngineClient>; reads: string[]; down: Error | undefined } {
      const state: { find: (id: string) => Promise<EngineClient>; reads: string[]; down: Error | undefined } = {
        reads: [],
        down: undefined,
        find: async (id) => {
          state.reads.push(id);
          if (state.down) throw state.down;
          return client(id);
        },
      };
      return state;
    }

    it.each([
      ['just after the entry expired: served as it was', MAX_AGE_MS + 1, 'served'],
      ['at the end of one more lifetime: served', 2 * MAX_AGE_MS - 1, 'served'],
      ['after one more lifetime: refused', 2 * MAX_AGE_MS, 'refused'],
    ] as const)('%s', async (_name, after, outcome) => {
      const finder = failing();
      const find = new ClientLookups(feed().records, 10, MAX_AGE_MS).cached(finder.find);
      const first = await find('c1');
      finder.down = new StoreUnavailable('cluster');
      jest.setSystemTime(Date.now() + after);
      if (outcome === 'served') expect(await find('c1')).toBe(first);
      else await expect(find('c1')).rejects.toBeInstanceOf(StoreUnavailable);
      // The store was asked first: a fresh answer always wins when there is one.
      expect(finder.reads).toEqual(['c1', 'c1']);
    });

    it.each([
      ['a change of that client', { kind: 'client', id: 'c1' }],
      ['a lost feed', { kind: undefined }],
    ] as const)('serves nothing stale after %s (revocation and rotation still take effect)', async (_name, change) => {
      const { records, change: emit } = feed();
      const finder = failing();
      const find = new ClientLookups(records, 10, MAX_AGE_MS).cached(finder.find);
      await find('c1');
      emit(change as RecordChange);
      finder.down = new StoreUnavailable('cluster');
      await expect(find('c1')).rejects.toBeInstanceOf(StoreUnavailable);
    });

    it('hides no other error, and serves no client it never read', async () => {
      const finder = failing();
      const find = new ClientLookups(feed().records, 10, MAX_AGE_MS).cached(finder.find);
      await find('c1');
      jest.setSystemTime(Date.now() + MAX_AGE_MS + 1);
      finder.down = new Error('a bug');
      await expect(find('c1')).rejects.toThrow('a bug');
      finder.down = new StoreUnavailable('cluster');
      await expect(find('c2')).rejects.toBeInstanceOf(StoreUnavailable);
    });

    it('serves the fresh read once the store answers again', async () => {
      const finder = failing();
      const find = new ClientLookups(feed().records, 10, MAX_AGE_MS).cached(finder.find);
      const first = await find('c1');
      jest.setSystemTime(Date.now() + MAX_AGE_MS + 1);
      finder.down = new StoreUnavailable('cluster');
      expect(await find('c1')).toBe(first);
      finder.down = undefined;
      const fresh = await find('c1');
      expect(fresh).not.toBe(first);
      expect(fresh).toEqual(first);
    });
  });
});
