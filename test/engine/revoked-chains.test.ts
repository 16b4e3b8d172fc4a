import { jest } from '@jest/globals';
import { createMemoryStore } from '../../adapters/memory.js';
import { RevokedChains } from '../../src/engine/revoked-chains.js';
import { feedControlled } from '../support/feed-controlled.js';

describe('revoked chains (src/engine/revoked-chains.ts)', () => {
  let clock: number;
  const now = () => clock;
  beforeEach(() => {
    clock = Date.now();
  });

  it('a revoked chain is revoked until its time, and then its record goes', async () => {
    const store = createMemoryStore();
    const chains = new RevokedChains(store.records, 10_000, now);
    expect(await chains.isRevoked('c1')).toBe(false);
    await chains.revoke('c1', clock + 3_600_000);
    expect(chains.isRevoked('c1')).toBe(true);
    expect(chains.isRevoked('c2')).toBe(false);
    clock += 3_600_001;
    expect(await chains.isRevoked('c1')).toBe(false);
    expect(await store.records.list('revoked-chain', 'all')).toEqual([]);
    await store.close();
  });

  it('asks no store while the list is fresh: an answer at once, not a promise', async () => {
    const store = createMemoryStore();
    const chains = new RevokedChains(store.records, 10_000, now);
    await chains.isRevoked('warm');
    const list = jest.spyOn(store.records, 'list');
    const get = jest.spyOn(store.records, 'get');
    for (let n = 0; n < 100; n += 1) expect(chains.isRevoked(`c${n}`)).toBe(false);
    expect(list).not.toHaveBeenCalled();
    expect(get).not.toHaveBeenCalled();
    await store.close();
  });

  it('a feed that says nothing hides a revocation for at most refreshMs', async () => {
    const store = createMemoryStore();
    const feed = feedControlled(store.records);
    const reader = new RevokedChains(feed.store, 10_000, now);
    expect(await reader.isRevoked('c1')).toBe(false);
    feed.cut();
    await new RevokedChains(store.records, 10_000, now).revoke('c1', clock + 3_600_000);
    expect(reader.isRevoked('c1')).toBe(false);
    clock += 10_001;
    expect(await reader.isRevoked('c1')).toBe(true);
    await store.close();
  });

  it('while changes cannot be watched, each question goes to the store', async () => {
    const store = createMemoryStore();
    const feed = feedControlled(store.records);
    const reader = new RevokedChains(feed.store, 10_000, now);
    expect(await reader.isRevoked('c1')).toBe(false);
    feed.cut();
    feed.down();
    await new RevokedChains(store.records, 10_000, now).revoke('c1', clock + 3_600_000);
    expect(await reader.isRevoked('c1')).toBe(true);
    await store.close();
  });
});
// Across instances, through the change feed: test/records/fed-marks.test.ts.
