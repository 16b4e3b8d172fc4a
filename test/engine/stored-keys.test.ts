import type { JWK } from 'jose';
import type { Store } from '../../adapters/types.js';
import { publicJwks } from '../../src/engine/keys.js';
import { LiveKeys } from '../../src/engine/live-keys.js';
import {
  changeKeySet,
  keySealer,
  loadOrCreateKeySet,
  newStoredKey,
  openKeySet,
  readKeySet,
  storedSteps,
  StoredKeysError,
} from '../../src/engine/stored-keys.js';
import { ADAPTER_STORE_KINDS, useAdapterStore } from '../support/adapter-stores.js';
import { redisContents } from '../support/redis.js';

/*
 * The signing keys kept in the store (src/engine/stored-keys.ts) on memory, Redis and Redis
 * Cluster: made once on an empty store however many instances start at once, every private key
 * sealed (never in clear in the store), opened only with the key-encryption key it was sealed
 * under, refused whole when it lacks an algorithm, changed by the rotation steps with
 * compare-and-set.
 */

const KEK = 'key-encryption-key-of-the-stored-keys-test-0001';
const OTHER_KEK = 'another-key-encryption-key-nobody-sealed-with-02';
const NEEDED = ['ES256', 'RS256'] as const;
const WAITS = { publishWaitSeconds: 600, retireWaitSeconds: 3900 };

describe.each(ADAPTER_STORE_KINDS)('signing keys kept in the store: %s', (kind) => {
  const handle = useAdapterStore(kind);
  let store: Store;

  beforeEach(async () => {
    store = await handle.create();
  });
  afterEach(async () => {
    await store.close();
  });

  it('is made once on an empty store, whoever starts first: every instance reads the same set', async () => {
    const others = kind === 'memory' ? [] : [await handle.another(), await handle.another()];
    try {
      const made = await Promise.all([store, ...others].map((one) => loadOrCreateKeySet(one.records, keySealer([KEK]), [...NEEDED], WAITS)));
      expect(made.filter((outcome) => outcome.created)).toHaveLength(1);
      const kids = made.map((outcome) => outcome.set.keys.map((key) => `${key.alg}:${key.kid}`));
      for (const set of kids) expect(set).toEqual(kids[0]);
      expect(made[0]!.set.keys.map((key) => key.alg)).toEqual(['ES256', 'RS256']);
      expect(made[0]!.set).toMatchObject(WAITS);
    } finally {
      await Promise.all(others.map((one) => one.close()));
    }
  });

  it('keeps no private key in clear: the store holds sealed keys and public halves only', async () => {
    const { set } = await loadOrCreateKeySet(store.records, keySealer([KEK]), [...NEEDED], WAITS);
    const { jwks } = openKeySet(set, keySealer([KEK]), [...NEEDED]);
    const stored = JSON.stringify((await readKeySet(store.records))!.set);
    for (const jwk of jwks.keys) {
      expect(jwk.d).toEqual(expect.any(String));
      expect(stored).not.toContain(jwk.d!);
      for (const member of ['p', 'q', 'dp', 'dq', 'qi'] as const) if (jwk[member]) expect(stored).not.toContain(jwk[member]!);
    }
    if (kind !== 'memory') {
      const everything = (await Promise.all(handle.nodeClients().map((client) => redisContents(client, `${handle.prefix}*`)))).join('\n');
      expect(everything).toContain(set.keys[0]!.sealed);
      for (const jwk of jwks.keys) expect(everything).not.toContain(jwk.d!);
    }
    // The public halves are the public key set the server publishes.
    expect(set.keys.map((key) => key.public)).toEqual(publicJwks(jwks).keys);
  });

  it('opens only with the key-encryption key it was sealed under; a second key opens it during a KEK rotation', async () => {
    const { set } = await loadOrCreateKeySet(store.records, keySealer([KEK]), [...NEEDED], WAITS);
    expect(() => openKeySet(set, keySealer([OTHER_KEK]), [...NEEDED])).toThrow(StoredKeysError);
    expect(() => openKeySet(set, keySealer([OTHER_KEK]), [...NEEDED])).toThrow(/is not authenticated by keys.store.keks/);
    expect(openKeySet(set, keySealer([OTHER_KEK, KEK]), [...NEEDED]).jwks.keys.map((jwk) => jwk.kid)).toEqual(set.keys.map((key) => key.kid));
  });

  it('refuses a set without a key for an algorithm the server signs with, and a key that is not of its algorithm', async () => {
    const { set } = await loadOrCreateKeySet(store.records, keySealer([KEK]), ['ES256'], WAITS);
    expect(() => openKeySet(set, keySealer([KEK]), [...NEEDED])).toThrow('the stored signing-key set has no RS256 key (this server signs with ES256, RS256)');
    const forged = keySealer([KEK]).authenticate({ ...set, keys: [{ ...set.keys[0]!, alg: 'RS256' as const }] });
    expect(() => openKeySet(forged, keySealer([KEK]), ['RS256'])).toThrow(/is not an RS256 key/);
  });

  it('refuses a record that is not a key set, naming what is wrong', async () => {
    await store.records.put('signing-keys', 'current', 'server', { version: 2, keys: [] });
    await expect(readKeySet(store.records)).rejects.toThrow(/the stored signing-key set is not readable/);
  });

  it('changes by the rotation steps with compare-and-set: two adds at once both land, a refused step writes nothing', async () => {
    await loadOrCreateKeySet(store.records, keySealer([KEK]), [...NEEDED], WAITS);
    const sealer = keySealer([KEK]);
    const [one, two] = await Promise.all([newStoredKey('ES256', sealer), newStoredKey('ES256', sealer)]);
    const now = Date.now();
    await Promise.all([changeKeySet(store.records, sealer, storedSteps.add(one!, now)), changeKeySet(store.records, sealer, storedSteps.add(two!, now))]);
    const after = (await readKeySet(store.records))!;
    expect(after.set.keys.map((key) => key.kid)).toEqual(expect.arrayContaining([one!.kid, two!.kid]));
    expect(after.set.keys).toHaveLength(4);
    const refused = await changeKeySet(store.records, sealer, storedSteps.promote(one!.kid, now, false));
    expect(refused).toEqual({ refused: expect.stringMatching(/published less than 600 s ago/), safeAt: now + 600_000 });
    expect((await readKeySet(store.records))!.revision).toBe(after.revision);
    const promoted = await changeKeySet(store.records, sealer, storedSteps.promote(one!.kid, now, true));
    expect('set' in promoted && promoted.set.keys[0]!.kid).toBe(one!.kid);
    // What the server then signs with: the promoted key first among the ES256 keys.
    const live = new LiveKeys([], openKeySet((await readKeySet(store.records))!.set, sealer, [...NEEDED]).jwks, [...NEEDED]);
    expect(live.signingKid('ES256')).toBe(one!.kid);
    expect(live.publicJwks.keys.map((jwk: JWK) => jwk.kid)).toHaveLength(4);
  });
  it('authenticates the whole record: without the key-encryption key, keys cannot be reordered, put back or their waits changed', async () => {
    const sealer = keySealer([KEK]);
    const { set } = await loadOrCreateKeySet(store.records, sealer, [...NEEDED], WAITS);
    expect(set).toMatchObject({ generation: 1, mac: expect.any(String) });
    const tampered = [
      { ...set, keys: [...set.keys].reverse() },
      { ...set, publishWaitSeconds: 0 },
      { ...set, keys: set.keys.map((key) => ({ ...key, addedAt: key.addedAt - 3_600_000 })) },
      { ...set, generation: 99 },
      { ...set, keys: [set.keys[0]!, set.keys[1]!, { ...set.keys[0]!, kid: 'copy' }] },
    ];
    for (const forged of tampered) expect(() => openKeySet(forged, sealer, [...NEEDED])).toThrow(/is not authenticated by keys.store.keks/);
    // A change by someone holding another key-encryption key is refused too, and writes nothing.
    await expect(changeKeySet(store.records, keySealer([OTHER_KEK]), (current) => ({ keys: current.keys }))).rejects.toThrow(/not authenticated by these key-encryption keys/);
    // A change by a holder raises the generation.
    const next = await changeKeySet(store.records, sealer, (current) => ({ keys: current.keys }));
    expect('set' in next && next.set.generation).toBe(2);
  });

  it('leaves out a published key that does not open (another key-encryption key), never a signing one', async () => {
    const sealer = keySealer([KEK]);
    await loadOrCreateKeySet(store.records, sealer, [...NEEDED], WAITS);
    const foreign = await newStoredKey('ES256', keySealer([OTHER_KEK]));
    await changeKeySet(store.records, sealer, storedSteps.add(foreign, Date.now()));
    const { set } = (await readKeySet(store.records))!;
    const opened = openKeySet(set, sealer, [...NEEDED]);
    expect(opened.unopened).toEqual([foreign.kid]);
    expect(opened.jwks.keys).toHaveLength(2);
    await changeKeySet(store.records, sealer, storedSteps.promote(foreign.kid, Date.now(), true));
    const promoted = (await readKeySet(store.records))!.set;
    expect(() => openKeySet(promoted, sealer, [...NEEDED])).toThrow(`stored signing key ${foreign.kid} does not open with keys.store.keks`);
  });
});
