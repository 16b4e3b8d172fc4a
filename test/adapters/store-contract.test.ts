import { AlreadyConsumed, comparePositions, type Store } from '../../adapters/types.js';
import { ADAPTER_STORE_KINDS, REPLICATED_CLUSTER, useAdapterStore } from '../support/adapter-stores.js';
import { keySlot } from '../support/slots.js';

const sleep = (ms: number) => new Promise((resolve) => setTimeout(resolve, ms));

describe.each([...ADAPTER_STORE_KINDS, REPLICATED_CLUSTER] as const)('store contract: %s', (kind) => {
  const onCluster = kind === 'redis-cluster' || kind === REPLICATED_CLUSTER;
  const handle = useAdapterStore(kind);
  let store: Store;

  beforeEach(async () => {
    store = await handle.create();
  });
  afterEach(async () => {
    await store.close();
  });

  it('is available once created, and no longer once closed', async () => {
    expect(store.available).toBe(true);
    await store.ping();
    const other = kind === 'memory' ? await handle.create() : await handle.another();
    await other.close();
    expect(other.available).toBe(false);
  });

  describe('shared secrets', () => {
    it('are 32 random bytes, one per name, the same for every process on the store', async () => {
      const first = await store.sharedSecret('cursors');
      expect(first).toHaveLength(32);
      expect((await store.sharedSecret('cursors')).equals(first)).toBe(true);
      expect((await store.sharedSecret('other')).equals(first)).toBe(false);
      if (kind === 'memory') return;
      const other = await handle.another();
      try {
        expect((await other.sharedSecret('cursors')).equals(first)).toBe(true);
      } finally {
        await other.close();
      }
    });

    it('are made once even when processes ask at the same time', async () => {
      if (kind === 'memory') return;
      const others = await Promise.all([handle.another(), handle.another()]);
      try {
        const secrets = await Promise.all([store, ...others].map((each) => each.sharedSecret('raced')));
        expect(new Set(secrets.map((secret) => secret.toString('hex'))).size).toBe(1);
      } finally {
        await Promise.all(others.map((other) => other.close()));
      }
    });
  });

  describe('engine models', () => {
    it('stores, finds and destroys a payload without sharing the stored object', async () => {
      const sessions = store.engine('Session');
      const payload = { uid: 'u1', accountId: 'alice', kind: 'Session' };
      await sessions.upsert('s1', payload, 60);
      payload.accountId = 'mallory';
      expect(await sessions.find('s1')).toEqual({ uid: 'u1', accountId: 'alice', kind: 'Session' });
      expect(await sessions.findByUid('u1')).toEqual({ uid: 'u1', accountId: 'alice', kind: 'Session' });
      await sessions.destroy('s1');
      expect(await sessions.find('s1')).toBeUndefined();
    });

    it('keeps models apart', async () => {
      await store.engine('Session').upsert('same', { a: 1 }, 60);
      expect(await store.engine('Interaction').find('same')).toBeUndefined();
    });

    it('replaces a payload on upsert', async () => {
      const grants = store.engine('Grant');
      await grants.upsert('g', { scope: 'a' }, 60);
      await grants.upsert('g', { scope: 'b' }, 60);
      expect(await grants.find('g')).toEqual({ scope: 'b' });
    });

    it('expires entries after their TTL', async () => {
      const interactions = store.engine('Interaction');
      await interactions.upsert('short', { x: 1 }, 1);
      await interactions.upsert('long', { x: 2 }, 60);
      await sleep(1200);
      expect(await interactions.find('short')).toBeUndefined();
      expect(await interactions.find('long')).toEqual({ x: 2 });
    });

    it('finds by user code', async () => {
      await store.engine('DeviceCode').upsert('d1', { userCode: 'ABCD-EFGH', grantId: 'grant-x' }, 60);
      expect(await store.engine('DeviceCode').findByUserCode('ABCD-EFGH')).toMatchObject({ userCode: 'ABCD-EFGH' });
      expect(await store.engine('DeviceCode').findByUserCode('NOPE')).toBeUndefined();
    });

    it('consumes once: the second consume is refused and the mark stays', async () => {
      const codes = store.engine('AuthorizationCode');
      await codes.upsert('code1', { grantId: 'grant', scope: 'x' }, 60);
      expect(await codes.consumption('code1')).toBeUndefined();
      const before = Date.now();
      await codes.consume('code1');
      const consumed = await codes.find('code1');
      expect(typeof consumed?.consumed).toBe('number');
      expect(consumed!.consumed).toBe(Math.floor((await codes.consumption('code1'))!.consumedAt / 1000));
      await expect(codes.consume('code1')).rejects.toBeInstanceOf(AlreadyConsumed);
      expect(await codes.find('code1')).toEqual(consumed);
      const consumption = await codes.consumption('code1');
      expect(consumption!.consumedAt).toBeGreaterThanOrEqual(before);
      expect(consumption!.consumedAt).toBeLessThanOrEqual(Date.now());
      expect(consumption!.confirmed).toBe(false);
    });

    it('refuses to consume what is gone', async () => {
      await expect(store.engine('RefreshToken').consume('never-stored')).rejects.toBeInstanceOf(AlreadyConsumed);
    });

    it('confirms a consumption; an undo clears both marks', async () => {
      const codes = store.engine('AuthorizationCode');
      await codes.upsert('code2', { grantId: 'grant' }, 60);
      await codes.consume('code2');
      await codes.confirm('code2');
      expect((await codes.consumption('code2'))!.confirmed).toBe(true);
      await codes.unconsume('code2');
      expect(await codes.consumption('code2')).toBeUndefined();
      expect((await codes.find('code2'))!.consumed).toBeUndefined();
      await codes.consume('code2');
      expect((await codes.consumption('code2'))!.confirmed).toBe(false);
      // Confirming what is gone does not bring it back.
      await codes.destroy('code2');
      await codes.confirm('code2');
      expect(await codes.find('code2')).toBeUndefined();
    });

    it('keeps a replay mark on the entry: the confirmation answers it, in the same step', async () => {
      const codes = store.engine('AuthorizationCode');
      await codes.upsert('code3', { grantId: 'grant' }, 60);
      await codes.consume('code3');
      expect(await codes.confirm('code3')).toBe(false);
      await codes.markReplayed('code3');
      expect(await codes.confirm('code3')).toBe(true);
      // The mark is the entry's own: another code is not marked, and a gone entry is not brought back.
      await codes.upsert('code4', { grantId: 'grant' }, 60);
      await codes.consume('code4');
      expect(await codes.confirm('code4')).toBe(false);
      await codes.destroy('code3');
      await codes.markReplayed('code3');
      expect(await codes.find('code3')).toBeUndefined();
      expect(await codes.confirm('code3')).toBe(false);
    });

    it('keeps a consumed entry long enough for its confirmation, with any replay mark (not one that was never consumed)', async () => {
      const codes = store.engine('AuthorizationCode');
      await codes.upsert('code-short', { grantId: 'grant' }, 1);
      await codes.upsert('code-unused', { grantId: 'grant' }, 1);
      await codes.consume('code-short');
      await codes.markReplayed('code-short');
      await sleep(1300);
      expect(await codes.find('code-unused')).toBeUndefined();
      expect(await codes.find('code-short')).toMatchObject({ grantId: 'grant', consumed: expect.any(Number) });
      expect(await codes.confirm('code-short')).toBe(true);
    });

    it('reads a code or refresh token with the grant it names, in one step where it can; the entry alone otherwise', async () => {
      const grants = store.engine('Grant');
      await grants.upsert('grant-a', { jti: 'grant-a', kind: 'Grant', accountId: 'ada' }, 60);
      for (const model of ['AuthorizationCode', 'RefreshToken']) {
        const entries = store.engine(model);
        await entries.upsert(`${model}-1`, { jti: `${model}-1`, grantId: 'grant-a', v: 1 }, 60);
        await entries.consume(`${model}-1`);
        const read = await entries.findWithGrant(`${model}-1`);
        // The entry exactly as find() reads it, consumed mark included.
        expect(read.entry).toEqual(await entries.find(`${model}-1`));
        expect(read.entry).toMatchObject({ v: 1, consumed: expect.any(Number) });
        if (entries.readsWithGrant) expect(read.grant).toEqual(await grants.find('grant-a'));
        else expect(read.grant).toBeUndefined();
        // A grant that is gone, an entry that names none, an entry that is gone.
        await entries.upsert(`${model}-2`, { jti: `${model}-2`, grantId: 'grant-gone' }, 60);
        expect(await entries.findWithGrant(`${model}-2`)).toEqual({ entry: { jti: `${model}-2`, grantId: 'grant-gone' }, grant: undefined });
        await entries.upsert(`${model}-3`, { jti: `${model}-3` }, 60);
        expect(await entries.findWithGrant(`${model}-3`)).toEqual({ entry: { jti: `${model}-3` }, grant: undefined });
        expect(await entries.findWithGrant(`${model}-gone`)).toEqual({ entry: undefined, grant: undefined });
      }
      // Redis Cluster keeps a grant in another slot than its entries: no one step reads both there.
      expect(store.engine('AuthorizationCode').readsWithGrant).toBe(!onCluster);
    });

    it('consumes a code, confirms it and writes the next entry in one step; consumed before or gone: AlreadyConsumed, nothing written', async () => {
      const codes = store.engine('AuthorizationCode');
      const tokens = store.engine('RefreshToken');
      await codes.upsert('code-c', { grantId: 'grant' }, 60);
      const next = { model: 'RefreshToken', id: 'rt-of-code-c', payload: { grantId: 'grant', v: 1, consumed: 5 }, expiresIn: 60 };
      expect(await codes.consumeCompleting('code-c', next)).toBe(false);
      expect(await codes.consumption('code-c')).toEqual({ consumedAt: expect.any(Number), confirmed: true });
      // Written as upsert writes it: the payload's consumed mark is not the stored entry's.
      expect(await tokens.find('rt-of-code-c')).toEqual({ grantId: 'grant', v: 1 });
      // A second exchange of the code: refused, and its token never written.
      await expect(codes.consumeCompleting('code-c', { ...next, id: 'rt-of-code-c-again' })).rejects.toBeInstanceOf(AlreadyConsumed);
      expect(await tokens.find('rt-of-code-c-again')).toBeUndefined();
      await expect(codes.consume('code-c')).rejects.toBeInstanceOf(AlreadyConsumed);
      // Consumed by consume() before (a refused exchange): refused too; a code that is gone as well.
      await codes.upsert('code-d', { grantId: 'grant' }, 60);
      await codes.consume('code-d');
      await expect(codes.consumeCompleting('code-d', { ...next, id: 'rt-of-code-d' })).rejects.toBeInstanceOf(AlreadyConsumed);
      expect(await tokens.find('rt-of-code-d')).toBeUndefined();
      await expect(codes.consumeCompleting('code-gone', { ...next, id: 'rt-of-code-gone' })).rejects.toBeInstanceOf(AlreadyConsumed);
      expect(await tokens.find('rt-of-code-gone')).toBeUndefined();
      // Without a next entry (no refresh token): consumed and confirmed alone.
      await codes.upsert('code-e', { grantId: 'grant' }, 60);
      expect(await codes.consumeCompleting('code-e')).toBe(false);
      expect(await codes.consumption('code-e')).toEqual({ consumedAt: expect.any(Number), confirmed: true });
      // Of parallel exchanges of one code, exactly one wins, and only its token is written.
      await codes.upsert('code-f', { grantId: 'grant' }, 60);
      const results = await Promise.allSettled(Array.from({ length: 10 }, (_, i) => codes.consumeCompleting('code-f', { ...next, id: `rt-of-code-f-${i}` })));
      expect(results.filter((result) => result.status === 'fulfilled')).toHaveLength(1);
      const written = await Promise.all(Array.from({ length: 10 }, (_, i) => tokens.find(`rt-of-code-f-${i}`)));
      expect(written.filter(Boolean)).toHaveLength(1);
    });

    it('consumes a refresh token and writes its successor in one step, unconfirmed (confirmation is for codes); a second time: AlreadyConsumed, nothing written', async () => {
      const tokens = store.engine('RefreshToken');
      await tokens.upsert('rt-parent', { grantId: 'grant' }, 60);
      expect(await tokens.consumeCompleting('rt-parent', { model: 'RefreshToken', id: 'rt-child', payload: { grantId: 'grant', rotations: 1 }, expiresIn: 60 })).toBe(false);
      expect(await tokens.consumption('rt-parent')).toEqual({ consumedAt: expect.any(Number), confirmed: false });
      expect(await tokens.find('rt-child')).toEqual({ grantId: 'grant', rotations: 1 });
      expect(await tokens.consumption('rt-child')).toBeUndefined();
      await expect(tokens.consumeCompleting('rt-parent', { model: 'RefreshToken', id: 'rt-child-2', payload: { grantId: 'grant' }, expiresIn: 60 })).rejects.toBeInstanceOf(AlreadyConsumed);
      expect(await tokens.find('rt-child-2')).toBeUndefined();
    });

    it('undoes a consumption, but not of an entry marked replayed meanwhile (it stays used up)', async () => {
      const codes = store.engine('AuthorizationCode');
      await codes.upsert('code-undo', { grantId: 'grant' }, 60);
      await codes.consumeCompleting('code-undo');
      await codes.unconsume('code-undo');
      expect(await codes.consumption('code-undo')).toBeUndefined();
      await codes.consumeCompleting('code-undo');
      await codes.markReplayed('code-undo');
      await codes.unconsume('code-undo');
      expect(await codes.consumption('code-undo')).toEqual({ consumedAt: expect.any(Number), confirmed: true });
      await expect(codes.consumeCompleting('code-undo')).rejects.toBeInstanceOf(AlreadyConsumed);
    });

    it('keeps a code consumed in one step long enough for a replay to find it, and its token for its own lifetime', async () => {
      const codes = store.engine('AuthorizationCode');
      await codes.upsert('code-brief', { grantId: 'grant' }, 1);
      await codes.consumeCompleting('code-brief', { model: 'RefreshToken', id: 'rt-of-brief', payload: { grantId: 'grant' }, expiresIn: 1 });
      await sleep(1300);
      expect(await codes.consumption('code-brief')).toEqual({ consumedAt: expect.any(Number), confirmed: true });
      expect(await store.engine('RefreshToken').find('rt-of-brief')).toBeUndefined();
    });

    it('keeps a consumed mark when an entry is saved again (single use survives a re-save)', async () => {
      const tokens = store.engine('RefreshToken');
      await tokens.upsert('rt-resaved', { grantId: 'grant', v: 1 }, 60);
      await tokens.consume('rt-resaved');
      await tokens.upsert('rt-resaved', { grantId: 'grant', v: 2 }, 60);
      expect(await tokens.find('rt-resaved')).toMatchObject({ v: 2, consumed: expect.any(Number) });
      await expect(tokens.consume('rt-resaved')).rejects.toBeInstanceOf(AlreadyConsumed);
    });

    it('gives exactly one success to parallel consumes', async () => {
      const tokens = store.engine('RefreshToken');
      await tokens.upsert('rt-parallel', { grantId: 'grant' }, 60);
      const results = await Promise.allSettled(Array.from({ length: 20 }, () => tokens.consume('rt-parallel')));
      expect(results.filter((result) => result.status === 'fulfilled')).toHaveLength(1);
    });

    it('keeps no index of a grant: revokeByGrantId walks nothing, entries expire on their own', async () => {
      const tokens = store.engine('RefreshToken');
      for (let i = 0; i < 50; i += 1) await tokens.upsert(`rt-of-g-${i}`, { grantId: 'one-grant' }, 1);
      await tokens.revokeByGrantId('one-grant');
      expect(await tokens.find('rt-of-g-49')).toEqual({ grantId: 'one-grant' });
      if (kind !== 'memory') {
        const keys = await handle.keys(`${handle.prefix}*`);
        expect(keys.filter((key) => /grant:/i.test(key) && !key.includes('Grant:'))).toEqual([]);
        expect(keys.filter((key) => key.includes('RefreshToken:'))).toHaveLength(50);
      }
      await sleep(1200);
      expect(await tokens.find('rt-of-g-0')).toBeUndefined();
      if (kind !== 'memory') expect((await handle.keys(`${handle.prefix}RefreshToken:*`)).length).toBe(0);
    });
  });

  describe('records', () => {
    it('puts, gets, lists by group and deletes', async () => {
      await store.records.put('client', 'c1', 'acme', { id: 'c1', n: 1 });
      await store.records.put('client', 'c2', 'acme', { id: 'c2', n: 2 });
      await store.records.put('client', 'c3', 'globex', { id: 'c3', n: 3 });
      expect(await store.records.get('client', 'c1')).toEqual({ id: 'c1', n: 1 });
      expect(await store.records.get('app', 'c1')).toBeUndefined();
      const acme = await store.records.list<{ id: string }>('client', 'acme');
      expect(acme.map((record) => record.id).sort()).toEqual(['c1', 'c2']);
      expect(await store.records.delete('client', 'c1')).toBe(true);
      expect(await store.records.delete('client', 'c1')).toBe(false);
      expect(await store.records.get('client', 'c1')).toBeUndefined();
      expect((await store.records.list<{ id: string }>('client', 'acme')).map((r) => r.id)).toEqual(['c2']);
      expect(await store.records.list('client', 'nobody')).toEqual([]);
    });

    it('replaces only at the revision read: concurrent changes never undo each other', async () => {
      await store.records.put('client', 'cas', 'acme', { v: 1 });
      const first = await store.records.getVersioned<{ v: number }>('client', 'cas');
      expect(first?.value).toEqual({ v: 1 });
      expect(await store.records.replace('client', 'cas', { v: 2 }, first!.revision)).toBe(true);
      expect(await store.records.replace('client', 'cas', { v: 3 }, first!.revision)).toBe(false);
      expect(await store.records.get('client', 'cas')).toEqual({ v: 2 });
      const second = await store.records.getVersioned<{ v: number }>('client', 'cas');
      expect(second!.revision).not.toBe(first!.revision);
      expect((await store.records.list<{ v: number }>('client', 'acme')).map((r) => r.v)).toContain(2);
      await store.records.delete('client', 'cas');
      expect(await store.records.replace('client', 'cas', { v: 4 }, second!.revision)).toBe(false);
      expect(await store.records.get('client', 'cas')).toBeUndefined();
    });

    it('creates only where no record is: the second of two creates at once is refused, nothing overwritten', async () => {
      const outcomes = await Promise.all([1, 2, 3].map((v) => store.records.create('client', 'first', 'acme', { v })));
      expect(outcomes.filter(Boolean)).toHaveLength(1);
      const winner = outcomes.indexOf(true) + 1;
      expect(await store.records.get('client', 'first')).toEqual({ v: winner });
      expect(await store.records.create('client', 'first', 'acme', { v: 9 })).toBe(false);
      expect(await store.records.get('client', 'first')).toEqual({ v: winner });
      expect((await store.records.list<{ v: number }>('client', 'acme')).filter((record) => record.v === winner)).toHaveLength(1);
      const created = await store.records.getVersioned('client', 'first');
      expect(await store.records.replace('client', 'first', { v: 10 }, created!.revision)).toBe(true);
      await store.records.delete('client', 'first');
      expect(await store.records.create('client', 'first', 'acme', { v: 11 })).toBe(true);
    });

    it('names the groups of a kind that hold a record, and no longer one emptied', async () => {
      await store.records.put('client', 'g1', 'acme', { id: 'g1' });
      await store.records.put('client', 'g2', 'acme', { id: 'g2' });
      await store.records.put('client', 'g3', 'glob*[ex]', { id: 'g3' });
      await store.records.put('app', 'g4', 'initech', { id: 'g4' });
      expect((await store.records.groups('client')).sort()).toEqual(['acme', 'glob*[ex]']);
      expect(await store.records.groups('app')).toEqual(['initech']);
      await store.records.delete('client', 'g3');
      expect(await store.records.groups('client')).toEqual(['acme']);
      expect(await store.records.groups('nothing')).toEqual([]);
      expect(await store.records.ids('client', 'acme').then((ids) => ids.sort())).toEqual(['g1', 'g2']);
      expect(await store.records.ids('client', 'glob*[ex]')).toEqual([]);
    });

    it('lists a record moved to another group there only, and keeps it listed through a refused create', async () => {
      await store.records.put('client', 'mover', 'acme', { v: 1 });
      await store.records.put('client', 'mover', 'globex', { v: 2 });
      expect(await store.records.list('client', 'acme')).toEqual([]);
      expect(await store.records.ids('client', 'acme')).toEqual([]);
      expect(await store.records.list('client', 'globex')).toEqual([{ v: 2 }]);
      expect(await store.records.groups('client')).toEqual(['globex']);
      // A create of an ID that is taken, in its group or another: refused, and the record stays listed.
      expect(await store.records.create('client', 'mover', 'globex', { v: 3 })).toBe(false);
      expect(await store.records.create('client', 'mover', 'initech', { v: 4 })).toBe(false);
      expect(await store.records.list('client', 'globex')).toEqual([{ v: 2 }]);
      expect(await store.records.list('client', 'initech')).toEqual([]);
      expect(await store.records.groups('client')).toEqual(['globex']);
      // Deleted and created again: listed once, with its new value.
      expect(await store.records.delete('client', 'mover')).toBe(true);
      expect(await store.records.create('client', 'mover', 'globex', { v: 5 })).toBe(true);
      expect(await store.records.list('client', 'globex')).toEqual([{ v: 5 }]);
      expect(await store.records.delete('client', 'mover')).toBe(true);
      expect(await store.records.groups('client')).toEqual([]);
    });

    it('keeps a record listed when it is deleted and created again at the same moment, many times', async () => {
      for (let round = 0; round < 30; round += 1) {
        await store.records.put('client', 'churn', 'acme', { round });
        const [, created] = await Promise.all([store.records.delete('client', 'churn'), store.records.create('client', 'churn', 'acme', { round, again: true })]);
        const there = await store.records.get('client', 'churn');
        const listed = await store.records.list('client', 'acme');
        // Whichever came last decides; the listing always agrees with the record.
        expect(listed).toEqual(there === undefined ? [] : [there]);
        if (created) expect(there).toEqual({ round, again: true });
      }
    });

    it('returns copies, not the stored object', async () => {
      const value = { id: 'c9', tags: ['a'] };
      await store.records.put('client', 'c9', 'acme', value);
      value.tags.push('b');
      const read = await store.records.get<{ tags: string[] }>('client', 'c9');
      read?.tags.push('c');
      expect(await store.records.get('client', 'c9')).toEqual({ id: 'c9', tags: ['a'] });
    });
  });

  describe('audit log', () => {
    const retention = { maxAgeMs: 86_400_000, maxEvents: 1000 };
    const event = (n: number, tenant: string | undefined, type = 'consent.granted') => ({
      id: `e${n}`, time: new Date().toISOString(), type, ...(tenant !== undefined ? { tenant } : {}), actor: { type: 'operator' },
    });

    it('keeps events per tenant, newest first; no read spans tenants', async () => {
      const now = Date.now();
      for (let n = 1; n <= 3; n += 1) await store.audit.append(event(n, 'acme'), retention, now, 'changes');
      await store.audit.append(event(4, 'globex'), retention, now, 'changes');
      await store.audit.append(event(5, undefined), retention, now, 'changes');
      expect((await store.audit.list({ log: 'changes', tenant: 'acme', limit: 10 })).events.map((e) => e.id)).toEqual(['e3', 'e2', 'e1']);
      expect((await store.audit.list({ log: 'changes', tenant: 'globex', limit: 10 })).events.map((e) => e.id)).toEqual(['e4']);
      expect((await store.audit.list({ log: 'changes', tenant: undefined, limit: 10 })).events.map((e) => e.id)).toEqual(['e5']);
      expect((await store.audit.list({ log: 'changes', tenant: 'nobody', limit: 10 })).events).toEqual([]);
    });

    it('pages with a cursor, filters by type and by time', async () => {
      const now = Date.now();
      for (let n = 1; n <= 7; n += 1) await store.audit.append(event(n, 'acme', n % 2 ? 'consent.granted' : 'consent.revoked'), retention, now, 'changes');
      const first = await store.audit.list({ log: 'changes', tenant: 'acme', limit: 3 });
      expect(first.events.map((e) => e.id)).toEqual(['e7', 'e6', 'e5']);
      const second = await store.audit.list({ log: 'changes', tenant: 'acme', limit: 3, cursor: first.next! });
      expect(second.events.map((e) => e.id)).toEqual(['e4', 'e3', 'e2']);
      const third = await store.audit.list({ log: 'changes', tenant: 'acme', limit: 3, cursor: second.next! });
      expect(third).toEqual({ events: [expect.objectContaining({ id: 'e1' })], positions: [expect.stringMatching(/^\d+-\d+$/)] });
      const revoked = await store.audit.list({ log: 'changes', tenant: 'acme', limit: 2, type: 'consent.revoked' });
      expect(revoked.events.map((e) => e.id)).toEqual(['e6', 'e4']);
      expect((await store.audit.list({ log: 'changes', tenant: 'acme', limit: 5, type: 'consent.revoked', cursor: revoked.next! })).events.map((e) => e.id)).toEqual(['e2']);
      expect((await store.audit.list({ log: 'changes', tenant: 'acme', limit: 10, since: Date.now() + 60_000 })).events).toEqual([]);
      expect((await store.audit.list({ log: 'changes', tenant: 'acme', limit: 10, until: Date.now() - 60_000 })).events).toEqual([]);
      expect((await store.audit.list({ log: 'changes', tenant: 'acme', limit: 10, since: now - 60_000, until: Date.now() + 60_000 })).events).toHaveLength(7);
    });

    it('keeps at most maxEvents per tenant, the newest', async () => {
      for (let n = 1; n <= 5; n += 1) await store.audit.append(event(n, 'acme'), { ...retention, maxEvents: 3 }, Date.now(), 'changes');
      await store.audit.append(event(9, 'globex'), { ...retention, maxEvents: 3 }, Date.now(), 'changes');
      expect((await store.audit.list({ log: 'changes', tenant: 'acme', limit: 10 })).events.map((e) => e.id)).toEqual(['e5', 'e4', 'e3']);
      expect((await store.audit.list({ log: 'changes', tenant: 'globex', limit: 10 })).events.map((e) => e.id)).toEqual(['e9']);
    });

    it('lets events older than maxAge go at the next write', async () => {
      await store.audit.append(event(1, 'acme'), retention, Date.now(), 'changes');
      await sleep(20);
      // A write whose clock is a retention later: the first event is past its age.
      await store.audit.append(event(2, 'acme'), { ...retention, maxAgeMs: 10 }, Date.now(), 'changes');
      expect((await store.audit.list({ log: 'changes', tenant: 'acme', limit: 10 })).events.map((e) => e.id)).toEqual(['e2']);
    });

    it('keeps a tenant\'s two logs apart: each trimmed on its own, each listed on its own', async () => {
      const small = { ...retention, maxEvents: 3 };
      await store.audit.append(event(1, 'acme'), small, Date.now(), 'changes');
      await store.audit.append(event(2, 'acme'), small, Date.now(), 'changes');
      for (let n = 10; n < 30; n += 1) await store.audit.append(event(n, 'acme', 'management.denied'), small, Date.now(), 'activity');
      expect((await store.audit.list({ log: 'changes', tenant: 'acme', limit: 10 })).events.map((e) => e.id)).toEqual(['e2', 'e1']);
      expect((await store.audit.list({ log: 'activity', tenant: 'acme', limit: 10 })).events.map((e) => e.id)).toEqual(['e29', 'e28', 'e27']);
      expect((await store.audit.list({ log: 'activity', tenant: undefined, limit: 10 })).events).toEqual([]);
    });

    it('gives each listed event its position, newer positions first, comparable across logs', async () => {
      await store.audit.append(event(1, 'acme'), retention, Date.now(), 'changes');
      await sleep(5);
      await store.audit.append(event(2, 'acme', 'sign_in.failed'), retention, Date.now(), 'activity');
      const changes = await store.audit.list({ log: 'changes', tenant: 'acme', limit: 10 });
      const activity = await store.audit.list({ log: 'activity', tenant: 'acme', limit: 10 });
      expect(changes.positions).toHaveLength(1);
      expect(comparePositions(activity.positions[0]!, changes.positions[0]!)).toBeGreaterThan(0);
      // A position is a cursor: strictly after it.
      expect((await store.audit.list({ log: 'changes', tenant: 'acme', limit: 10, cursor: changes.positions[0]! })).events).toEqual([]);
    });

    it('returns copies, not the stored events', async () => {
      await store.audit.append(event(1, 'acme'), retention, Date.now(), 'changes');
      const [first] = (await store.audit.list({ log: 'changes', tenant: 'acme', limit: 1 })).events;
      (first as { type: string }).type = 'changed';
      expect((await store.audit.list({ log: 'changes', tenant: 'acme', limit: 1 })).events[0]!.type).toBe('consent.granted');
    });
  });

  describe('record changes', () => {
    it('are told to watchers: puts, creates, replaces and deletes, with kind and id; a delete of nothing is no change', async () => {
      const changes: unknown[] = [];
      store.records.watch((change) => changes.push(change));
      expect(store.records.watching).toBe(true);
      await store.records.put('client', 'w1', 'acme', { v: 1 });
      await store.records.delete('client', 'w1');
      await sleep(50);
      // At least once each (this store's own writes are told at once and, on Redis, again by the feed).
      expect(new Set(changes.map((change) => JSON.stringify(change)))).toEqual(new Set([JSON.stringify({ kind: 'client', id: 'w1' })]));
      changes.length = 0;
      await store.records.delete('client', 'w1');
      expect(await store.records.replace('client', 'w1', { v: 2 }, 1)).toBe(false);
      await sleep(50);
      expect(changes).toEqual([]);
    });

    it("tells this store's own watchers of its writes before the write answers (its next read of a cache must not be stale)", async () => {
      const told: string[] = [];
      store.records.watch((change) => {
        if (change.kind === 'client') told.push(change.id);
      });
      // Repeated: on Redis the feed's echo may come first now and then; the rule must hold every time.
      for (let i = 0; i < 10; i += 1) {
        const id = `own-${i}`;
        await store.records.create('client', id, 'acme', { v: 1 });
        expect(told.splice(0)).toContain(id);
        await store.records.replace('client', id, { v: 2 }, 1);
        expect(told.splice(0)).toContain(id);
        await store.records.put('client', id, 'acme', { v: 3 });
        expect(told.splice(0)).toContain(id);
        await store.records.delete('client', id);
        expect(told.splice(0)).toContain(id);
      }
    });
  });

  describe('counters', () => {
    it('count each key in a window that starts at its first increment', async () => {
      expect(await store.counters.increment(['a', 'b'], 60)).toEqual([
        { count: 1, resetsIn: 60 },
        { count: 1, resetsIn: 60 },
      ]);
      expect(await store.counters.increment(['a'], 60)).toEqual([{ count: 2, resetsIn: 60 }]);
      expect(await store.counters.increment(['b', 'a'], 5)).toEqual([
        { count: 2, resetsIn: 60 },
        { count: 3, resetsIn: 60 },
      ]);
      expect(await store.counters.increment([], 60)).toEqual([]);
    });

    it('are read without changing them', async () => {
      await store.counters.increment(['seen'], 30);
      await store.counters.increment(['seen'], 30);
      expect(await store.counters.peek(['seen', 'unseen'])).toEqual([
        { count: 2, resetsIn: 30 },
        { count: 0, resetsIn: 0 },
      ]);
      expect(await store.counters.peek(['seen'])).toEqual([{ count: 2, resetsIn: 30 }]);
      expect(await store.counters.peek([])).toEqual([]);
    });

    it('end their window windowSeconds after the first increment, and count from 1 again', async () => {
      await store.counters.increment(['w'], 2);
      await sleep(1100);
      // The second increment does not move the window: less than a second is left.
      expect(await store.counters.increment(['w'], 2)).toEqual([{ count: 2, resetsIn: 1 }]);
      await sleep(1000);
      expect(await store.counters.peek(['w'])).toEqual([{ count: 0, resetsIn: 0 }]);
      expect(await store.counters.increment(['w'], 2)).toEqual([{ count: 1, resetsIn: 2 }]);
    });

    it('keep keys apart, and apart from the other data', async () => {
      await store.engine('Session').upsert('k', { a: 1 }, 60);
      await store.records.put('client', 'k', 'acme', { a: 1 });
      await store.counters.increment(['k', 'client:k'], 60);
      await store.counters.increment(['k'], 60);
      expect((await store.counters.peek(['k', 'client:k', 'K'])).map((window) => window.count)).toEqual([2, 1, 0]);
      expect(await store.engine('Session').find('k')).toEqual({ a: 1 });
      expect(await store.records.get('client', 'k')).toEqual({ a: 1 });
    });

    it('count exactly under parallel increments (two stores on one Redis: two processes)', async () => {
      const other = kind === 'memory' ? store : await handle.another();
      try {
        const results = await Promise.all(
          Array.from({ length: 50 }, (_, i) => (i % 2 ? other : store).counters.increment(['p', 'q'], 60)),
        );
        for (const key of [0, 1]) {
          const counts = results.map((counted) => counted[key]!.count).sort((x, y) => x - y);
          expect(counts).toEqual(Array.from({ length: 50 }, (_, i) => i + 1));
        }
        // Both keys of a call move in one step, but on a cluster, where they are in different slots.
        if (!onCluster) for (const [p, q] of results) expect(q!.count).toBe(p!.count);
      } finally {
        if (other !== store) await other.close();
      }
    });

    it('are cleared on demand: the window ends now, the next increment counts from 1; other keys keep theirs', async () => {
      await store.counters.increment(['held', 'held', 'kept'], 60);
      await store.counters.increment(['held'], 60);
      expect((await store.counters.peek(['held', 'kept'])).map((window) => window.count)).toEqual([3, 1]);
      await store.counters.clear(['held', 'never-counted']);
      expect(await store.counters.peek(['held', 'never-counted', 'kept'])).toEqual([
        { count: 0, resetsIn: 0 }, { count: 0, resetsIn: 0 }, { count: 1, resetsIn: 60 },
      ]);
      expect(await store.counters.increment(['held'], 30)).toEqual([{ count: 1, resetsIn: 30 }]);
      await store.counters.clear([]);
      expect((await store.counters.peek(['held'])).map((window) => window.count)).toEqual([1]);
    });

    it('refuse a window that is not a positive number of seconds', async () => {
      await expect(store.counters.increment(['x'], 0)).rejects.toBeInstanceOf(RangeError);
      await expect(store.counters.increment(['x'], Number.NaN)).rejects.toBeInstanceOf(RangeError);
      expect(await store.counters.peek(['x'])).toEqual([{ count: 0, resetsIn: 0 }]);
    });
  });

  if (kind !== 'memory') {
    it('tells every store sharing the Redis of a change', async () => {
      const other = await handle.another();
      try {
        const changes: unknown[] = [];
        other.records.watch((change) => changes.push(change));
        await store.records.put('app', 'shared', '', { v: 1 });
        await sleep(50);
        expect(changes).toEqual([{ kind: 'app', id: 'shared' }]);
      } finally {
        await other.close();
      }
    });

    it('stops promising while its subscription is down, and says so when it is back', async () => {
      const changes: unknown[] = [];
      store.records.watch((change) => changes.push(change));
      await handle.killSubscribers();
      const deadline = Date.now() + 5000;
      while (!changes.length && Date.now() < deadline) await sleep(10);
      expect(changes[0]).toEqual({ kind: undefined });
      while (!store.records.watching && Date.now() < deadline) await sleep(20);
      expect(store.records.watching).toBe(true);
      expect(changes.at(-1)).toEqual({ kind: undefined });
      await store.records.put('client', 'after', 'acme', {});
      await sleep(50);
      expect(changes.at(-1)).toEqual({ kind: 'client', id: 'after' });
    });

    it('reads several counters in one script on one node, and in one script per counter on a cluster', async () => {
      const scriptCalls = async () => {
        const stats = await Promise.all(handle.nodeClients().map((client) => client.info('commandstats')));
        return stats.reduce((sum, text) => sum + Number(/cmdstat_evalsha:calls=(\d+)/.exec(text)?.[1] ?? 0), 0);
      };
      // Each node has the script once this has run (ioredis sends it in full the first time).
      await store.counters.peek(['together:a', 'together:b']);
      const before = await scriptCalls();
      for (let i = 0; i < 10; i += 1) {
        expect(await store.counters.peek(['together:a', 'together:b'])).toEqual([{ count: 0, resetsIn: 0 }, { count: 0, resetsIn: 0 }]);
      }
      const calls = (await scriptCalls()) - before;
      // Give or take the store's periodic check of its epoch (a script too).
      if (kind === 'redis') expect(calls).toBeLessThan(13);
      else expect(calls).toBeGreaterThanOrEqual(20);
      expect(calls).toBeGreaterThanOrEqual(10);
    });

    it('lays keys out so that each record, each group\'s index and each counter has a slot of its own', async () => {
      await store.records.put('client', 'slot-client', 'slot-tenant', { id: 'x' });
      await store.records.put('app', 'slot-app', 'slot-tenant', { id: 'y' });
      await store.counters.increment(['ip:203.0.113.9', 'client:slot-client'], 60);
      const keys = await handle.keys(`${handle.prefix}*`);
      // Only the store's epoch and its format keep the tag of format 1; no request reads them.
      expect(keys.filter((key) => key.includes('{records}')).sort()).toEqual([`${handle.prefix}epoch:{records}`, `${handle.prefix}format:{records}`]);
      // A record's tag is its own kind and ID; a group's index has one of its own.
      const records = keys.filter((key) => key.startsWith(`${handle.prefix}rec:`) || key.startsWith(`${handle.prefix}idx:`)).sort();
      expect(records).toEqual([
        `${handle.prefix}idx:{app:slot-tenant}`,
        `${handle.prefix}idx:{client:slot-tenant}`,
        `${handle.prefix}rec:{app:slot-app}`,
        `${handle.prefix}rec:{client:slot-client}`,
      ]);
      expect(new Set(records.map(keySlot)).size).toBe(4);
      // A counter's tag is what it counts: counters spread over the slots, none shared by all.
      const counters = keys.filter((key) => key.startsWith(`${handle.prefix}rl:`)).sort();
      expect(counters).toEqual([`${handle.prefix}rl:{client:slot-client}`, `${handle.prefix}rl:{ip:203.0.113.9}`]);
      expect(new Set(counters.map(keySlot)).size).toBe(2);
      // On a cluster, Redis itself agrees.
      if (onCluster) {
        for (const group of [records, counters]) {
          expect(await Promise.all(group.map((key) => handle.serverSlot(key)))).toEqual(group.map(keySlot));
        }
      }
    });
  }
});
