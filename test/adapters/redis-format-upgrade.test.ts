import type { Redis } from 'ioredis';
import { createRedisStore } from '../../adapters/redis/index.js';
import type { Store } from '../../adapters/types.js';
import { startRedis, type RedisServer } from '../support/redis.js';

/**
 * Store format 1 to 2, at start: every record kept under the one `{records}` tag (format 1, 0.1.0
 * without a format key) moves to a key of its own tag, with its group's index, its value and its
 * revision; nothing is lost, nothing is left under the old keys, and an upgrade cut short, or run by
 * several instances at once, ends the same.
 */
describe('Redis store: a store of format 1 is upgraded at start', () => {
  let redis: RedisServer;
  let inspect: Redis;
  const opened: Store[] = [];
  let prefixes = 0;
  const prefix = () => `u${(prefixes += 1)}:`;
  const open = async (keyPrefix: string, commandTimeoutMs?: number) => {
    const store = await createRedisStore({ url: redis.url, keyPrefix, commandTimeoutMs });
    opened.push(store);
    return store;
  };

  /** What format 1 kept: [kind, id, group, value, revision]. IDs may hold colons and braces. */
  const RECORDS: Array<[string, string, string, unknown, number]> = [
    ['client', 'c1', 'acme', { id: 'c1', scopes: ['read'] }, 3],
    ['client', 'c2', 'acme', { id: 'c2' }, 1],
    ['client', 'c3', 'globex', { id: 'c3' }, 7],
    ['app', 'a1', 'acme', { id: 'a1' }, 2],
    ['consent', 'acct:1:app:{a1}', 'acct:1', { granted: ['openid'] }, 1],
  ];

  /** Writes RECORDS as format 1 did (records and index sets under `{records}`), plus an epoch. */
  async function writeFormat1(keyPrefix: string, format: '1' | undefined, records = RECORDS): Promise<void> {
    for (const [kind, id, group, value, revision] of records) {
      await inspect.hset(`${keyPrefix}rec:{records}:${kind}:${id}`, 'g', group, 'v', JSON.stringify(value), 'n', String(revision));
      await inspect.sadd(`${keyPrefix}idx:{records}:${kind}:${group}`, id);
    }
    await inspect.set(`${keyPrefix}epoch:{records}`, 'epoch-of-format-1');
    if (format) await inspect.set(`${keyPrefix}format:{records}`, format);
  }

  /** Every record of RECORDS read back through the store: value, revision, listing, IDs, groups. */
  async function expectAllThere(store: Store): Promise<void> {
    for (const [kind, id, , value, revision] of RECORDS) {
      expect(await store.records.getVersioned(kind, id)).toEqual({ value, revision });
    }
    expect(await store.records.list('client', 'acme')).toEqual(expect.arrayContaining([{ id: 'c1', scopes: ['read'] }, { id: 'c2' }]));
    expect(await store.records.list('client', 'acme')).toHaveLength(2);
    expect((await store.records.ids('client', 'acme')).sort()).toEqual(['c1', 'c2']);
    expect(await store.records.list('client', 'globex')).toEqual([{ id: 'c3' }]);
    expect(await store.records.list('consent', 'acct:1')).toEqual([{ granted: ['openid'] }]);
    expect(await store.records.groups('client')).toEqual(expect.arrayContaining(['acme', 'globex']));
  }

  async function expectNothingOld(keyPrefix: string): Promise<void> {
    expect(await inspect.keys(`${keyPrefix}rec:{records}:*`)).toEqual([]);
    expect(await inspect.keys(`${keyPrefix}idx:{records}:*`)).toEqual([]);
    expect(await inspect.get(`${keyPrefix}format:{records}`)).toBe('2');
    // The epoch stays: the store was not emptied, and no instance must think so.
    expect(await inspect.get(`${keyPrefix}epoch:{records}`)).toBe('epoch-of-format-1');
  }

  beforeAll(async () => {
    redis = await startRedis();
    inspect = redis.client();
  });
  afterEach(async () => {
    await Promise.all(opened.splice(0).map((store) => store.close()));
  });
  afterAll(async () => {
    await redis?.stop();
  });

  it.each([
    ['a store of 0.1.0 (no format key)', undefined],
    ['a store whose format key says 1', '1'],
  ] as const)('%s: every record moves to its own key, nothing is lost or left behind', async (_name, format) => {
    const keyPrefix = prefix();
    await writeFormat1(keyPrefix, format);
    const store = await open(keyPrefix);
    let emptied = 0;
    store.onEmptied(() => (emptied += 1));
    await expectAllThere(store);
    expect((await store.records.groups('client')).sort()).toEqual(['acme', 'globex']);
    await expectNothingOld(keyPrefix);
    // Each record under a key of its own tag, each group's index apart.
    expect(await inspect.hget(`${keyPrefix}rec:{client:c1}`, 'g')).toBe('acme');
    expect(await inspect.hkeys(`${keyPrefix}idx:{client:acme}`)).toEqual(expect.arrayContaining(['c1', 'c2']));
    // And it goes on working: a change after the upgrade is a compare-and-set on the kept revision.
    expect(await store.records.replace('client', 'c1', { id: 'c1', scopes: [] }, 3)).toBe(true);
    expect(await store.records.getVersioned('client', 'c1')).toEqual({ value: { id: 'c1', scopes: [] }, revision: 4 });
    expect(emptied).toBe(0);
  });

  it('an upgrade cut short is finished by the next start: what moved already is kept as it is now', async () => {
    const keyPrefix = prefix();
    await writeFormat1(keyPrefix, '1');
    // Cut after c1 moved (and was changed since) and c2 was copied but not yet indexed nor deleted.
    await inspect.hset(`${keyPrefix}rec:{client:c1}`, 'g', 'acme', 'v', JSON.stringify({ id: 'c1', scopes: ['read'] }), 'n', '3', 't', 'tok1');
    await inspect.hset(`${keyPrefix}idx:{client:acme}`, 'c1', 'tok1');
    await inspect.del(`${keyPrefix}rec:{records}:client:c1`);
    await inspect.hset(`${keyPrefix}rec:{client:c2}`, 'g', 'acme', 'v', JSON.stringify({ id: 'c2' }), 'n', '1', 't', 'tok2');
    const store = await open(keyPrefix);
    await expectAllThere(store);
    await expectNothingOld(keyPrefix);
    // The index entry of c2 holds the token of the copy that was there: a delete removes it.
    expect(await inspect.hget(`${keyPrefix}idx:{client:acme}`, 'c2')).toBe('tok2');
    expect(await store.records.delete('client', 'c2')).toBe(true);
    expect(await inspect.hexists(`${keyPrefix}idx:{client:acme}`, 'c2')).toBe(0);
  });

  it('instances starting together on a store of format 1 move each record once, and all agree', async () => {
    const keyPrefix = prefix();
    const many: Array<[string, string, string, unknown, number]> = Array.from({ length: 300 }, (_, at) => ['client', `m${at}`, `t${at % 7}`, { id: `m${at}` }, 1]);
    await writeFormat1(keyPrefix, undefined, [...RECORDS, ...many]);
    // Every start settled before anything is asserted: one that failed must not leave the others
    // open. What this tests is agreement, not speed: a generous command timeout, so that a moment
    // the test machine stalls (CI runs every suite at once) is not taken for a Redis that is gone
    // (redis-start-failures.test.ts tells what a start says when a command does time out).
    const opening = () => open(keyPrefix, 5000);
    const started = await Promise.allSettled([opening(), opening(), opening()]);
    const stores = started.map((start) => {
      if (start.status === 'rejected') throw start.reason;
      return start.value;
    });
    for (const store of stores) await expectAllThere(store);
    await expectNothingOld(keyPrefix);
    expect((await stores[0]!.records.groups('client')).sort()).toEqual(['acme', 'globex', 't0', 't1', 't2', 't3', 't4', 't5', 't6']);
    let listed = 0;
    for (let group = 0; group < 7; group += 1) listed += (await stores[1]!.records.list('client', `t${group}`)).length;
    expect(listed).toBe(300);
  });
});
