import { createHmac, timingSafeEqual } from 'node:crypto';
import type { JWK } from 'jose';
import { z } from 'zod';
import type { RecordStore } from '../../adapters/types.js';
import { addKey, promoteKey, retireKey, rotationStates, type RotationOutcome, type RotationRefusal, type RotationWaits } from '../../policies/key-rotation.js';
import { Sealer } from '../records/sealed.js';
import { checkKeyPair, generateSigningKey, keyAlgorithm, type PrivateJwks, type SigningAlgorithm } from './keys.js';

/*
 * THE SIGNING KEYS KEPT IN THE STORE (`keys: { store: { keks } }`, docs/keys.md "Keys in the
 * store"): one record holds the key set in its rotation order (the first key of each algorithm
 * signs), each private key sealed (AES-256-GCM) under the key-encryption keys of the
 * configuration, bound to its kid, with the public half and the times of its rotation steps in
 * clear. Every instance reads it at start and again at every change of the record, so that the
 * CLI's `keys add`, `keys promote` and `keys retire` reach every running instance within seconds
 * (policies/key-rotation.ts says which steps are safe when). The store never holds a private key
 * in clear, and a dump of it signs nothing without the key-encryption key.
 *
 * The whole record is authenticated too (an HMAC under a key derived from the key-encryption keys,
 * over a canonical form of everything in it), and it carries a generation that every change
 * raises: someone who can write the store but holds no key-encryption key cannot reorder the
 * keys, put back a retired key's sealed entry, change the waits or the times, and a server never
 * follows a set older than the one it follows. Every writer therefore holds the key-encryption
 * keys: the servers, and the CLI for every rotation step.
 */

/** The record's kind and id (one key set per store). */
export const KEY_SET_KIND = 'signing-keys';
const KEY_SET_ID = 'current';
const KEY_SET_GROUP = 'server';
/** The Sealer's label: the key-encryption keys derive a key of their own for this use. */
const SEALER_LABEL = 'talent-auth signing keys';
/** The label of the key that authenticates the whole record. */
const MAC_LABEL = 'talent-auth signing-key set';
/** How often a step is tried again when another writer changed the key set meanwhile. */
const CHANGE_ATTEMPTS = 5;
/** The most keys a stored set holds (a rotation needs two per algorithm). */
const MAX_STORED_KEYS = 32;

/** The default waits between the rotation steps (docs/keys.md): the kit's JWKS cache, the longest token plus skew. */
export const DEFAULT_ROTATION_WAITS: RotationWaits = { publishWaitSeconds: 600, retireWaitSeconds: 3900 };

const ALGORITHMS = ['ES256', 'RS256', 'PS256', 'EdDSA'] as const satisfies readonly SigningAlgorithm[];

const storedKeySchema = z.object({
  kid: z.string().min(1),
  alg: z.enum(ALGORITHMS),
  /** The public half (what /jwks publishes). */
  public: z.record(z.string(), z.unknown()),
  /** The private JWK, sealed for `signing key <kid>`. */
  sealed: z.string().min(1),
  addedAt: z.number(),
  promotedAt: z.number().optional(),
  demotedAt: z.number().optional(),
});

/** One key of the stored key set. */
export type StoredKey = z.infer<typeof storedKeySchema>;

const storedKeySetSchema = z.object({
  version: z.literal(1),
  /** Raised by every change: a server never follows a set older than its own. */
  generation: z.number().int().min(1),
  publishWaitSeconds: z.number().int().min(0),
  retireWaitSeconds: z.number().int().min(0),
  keys: z.array(storedKeySchema).min(1).max(MAX_STORED_KEYS)
    .refine((keys) => new Set(keys.map((key) => key.kid)).size === keys.length, 'each kid once'),
  /** HMAC-SHA-256 (base64url) of everything above, under a key derived from the first key-encryption key. */
  mac: z.string().min(1),
});

/** The stored key set: its keys in rotation order and the waits between the rotation steps. */
export type StoredKeySet = z.infer<typeof storedKeySetSchema>;
/** The stored key set before it is authenticated. */
type UnsealedSet = Omit<StoredKeySet, 'mac'>;

/** The key set's record is missing, unreadable, or sealed under keys this configuration lacks. */
export class StoredKeysError extends Error {
  override readonly name = 'StoredKeysError';
}

const purposeOf = (kid: string): string => `signing key ${kid}`;

/** JSON with the members of every object in one order: what the MAC is computed over. */
function canonical(value: unknown): string {
  if (Array.isArray(value)) return `[${value.map(canonical).join(',')}]`;
  if (value !== null && typeof value === 'object') {
    return `{${Object.entries(value).filter(([, member]) => member !== undefined).sort(([a], [b]) => (a < b ? -1 : 1)).map(([name, member]) => `${JSON.stringify(name)}:${canonical(member)}`).join(',')}}`;
  }
  return JSON.stringify(value);
}

/** Whether two stored sets are the same, member for member (whatever the order of their members). */
export function sameKeySet(one: StoredKeySet, other: StoredKeySet): boolean {
  return canonical(one) === canonical(other);
}

/**
 * What the key-encryption keys do for the stored set: seal each private key, and authenticate the
 * whole record. The first key seals and signs; every key opens and verifies (a KEK rotation).
 */
export class KeySetSealer {
  readonly #sealer: Sealer;
  readonly #macKeys: Buffer[];

  constructor(keks: readonly string[]) {
    const trimmed = keks.map((kek) => kek.trim()).filter(Boolean);
    this.#sealer = new Sealer(trimmed, SEALER_LABEL);
    this.#macKeys = trimmed.map((kek) => createHmac('sha256', kek).update(MAC_LABEL).digest());
  }

  /** A private JWK sealed for its kid. */
  seal(jwk: JWK & { kid: string }): string {
    return this.#sealer.seal(jwk, purposeOf(jwk.kid));
  }

  /** The private JWK sealed for `kid`, or undefined. */
  open(sealed: string, kid: string): JWK | undefined {
    return this.#sealer.open<JWK>(sealed, purposeOf(kid));
  }

  /** The set with its MAC. */
  authenticate(set: UnsealedSet): StoredKeySet {
    const { mac: _old, ...body } = set as StoredKeySet;
    return { ...body, mac: createHmac('sha256', this.#macKeys[0]!).update(canonical(body)).digest('base64url') };
  }

  /** Whether the set's MAC is one of ours (compared in constant time); `firstOnly`: made with the key that seals now. */
  verifies(set: StoredKeySet, firstOnly = false): boolean {
    const { mac, ...body } = set;
    const given = Buffer.from(mac, 'base64url');
    const text = canonical(body);
    return (firstOnly ? this.#macKeys.slice(0, 1) : this.#macKeys).some((key) => {
      const expected = createHmac('sha256', key).update(text).digest();
      return expected.length === given.length && timingSafeEqual(expected, given);
    });
  }
}

/** The sealer of the key-encryption keys (the first seals, every one opens). */
export function keySealer(keks: readonly string[]): KeySetSealer {
  return new KeySetSealer(keks);
}

/** The key set as stored (validated), with its revision, or undefined when there is none. */
export async function readKeySet(records: RecordStore): Promise<{ set: StoredKeySet; revision: number } | undefined> {
  const found = await records.getVersioned<unknown>(KEY_SET_KIND, KEY_SET_ID);
  if (!found) return undefined;
  const parsed = storedKeySetSchema.safeParse(found.value);
  if (!parsed.success) throw new StoredKeysError(`the stored signing-key set is not readable: ${parsed.error.issues[0]?.message ?? 'invalid'}`);
  return { set: parsed.data, revision: found.revision };
}

/** A new private key for `alg`, sealed: a key of the stored set. */
export async function newStoredKey(alg: SigningAlgorithm, sealer: KeySetSealer): Promise<StoredKey> {
  const jwk = await generateSigningKey(alg);
  return storedKeyOf(jwk, alg, sealer, 0);
}

/** A private JWK of ours, sealed, as a key of the stored set (`addedAt` set by the rotation step). */
export function storedKeyOf(jwk: JWK & { kid?: string }, alg: SigningAlgorithm, sealer: KeySetSealer, addedAt: number): StoredKey {
  const kid = jwk.kid!;
  const { d: _d, p: _p, q: _q, dp: _dp, dq: _dq, qi: _qi, oth: _oth, ...publicHalf } = jwk as JWK & { oth?: unknown };
  return { kid, alg, public: { ...publicHalf, alg, use: 'sig', kid }, sealed: sealer.seal({ ...jwk, alg, use: 'sig', kid }), addedAt };
}

/** The private key set of the stored one, and the published keys left out because they did not open. */
export interface OpenedKeySet {
  jwks: PrivateJwks;
  unopened: string[];
}

/**
 * The private key set of the stored one, in its order. The record must be ours (its MAC), every
 * signing key must open with the given keys, be one of its algorithm and match its public half;
 * every needed algorithm must have a key: else the set is refused whole (the server keeps what it
 * had, or does not start). A published key that does not open (sealed under a key-encryption key
 * this server lacks) is left out and named: it signs nothing, and refusing the whole set for it
 * would stop every start.
 */
export function openKeySet(set: StoredKeySet, sealer: KeySetSealer, needed: readonly SigningAlgorithm[]): OpenedKeySet {
  if (!sealer.verifies(set)) {
    throw new StoredKeysError('the stored signing-key set is not authenticated by keys.store.keks: it was changed without the key-encryption key, or sealed under another one');
  }
  const states = rotationStates(set.keys);
  const unopened: string[] = [];
  const keys: JWK[] = [];
  set.keys.forEach((key, index) => {
    const jwk = sealer.open(key.sealed, key.kid);
    if (!jwk || jwk.kid !== key.kid) {
      if (states[index] === 'published') {
        unopened.push(key.kid);
        return;
      }
      throw new StoredKeysError(`stored signing key ${key.kid} does not open with keys.store.keks: give the key-encryption key it was sealed with`);
    }
    if (keyAlgorithm(jwk, 0, needed) !== key.alg) throw new StoredKeysError(`stored signing key ${key.kid} is not an ${key.alg} key`);
    try {
      checkKeyPair(jwk, index);
    } catch {
      throw new StoredKeysError(`stored signing key ${key.kid} is not a usable ${key.alg} key pair`);
    }
    keys.push(jwk);
  });
  const present = new Set(set.keys.map((key) => key.alg));
  const missing = needed.find((alg) => !present.has(alg));
  if (missing) throw new StoredKeysError(`the stored signing-key set has no ${missing} key (this server signs with ${[...new Set(needed)].join(', ')})`);
  return { jwks: { keys }, unopened };
}

/**
 * The stored key set, made when the store has none: a new sealed key for each needed algorithm.
 * Of two instances starting on an empty store at once, one writes and the other reads its set.
 */
export async function loadOrCreateKeySet(
  records: RecordStore,
  sealer: KeySetSealer,
  needed: readonly SigningAlgorithm[],
  waits: RotationWaits,
  now: () => number = Date.now,
): Promise<{ set: StoredKeySet; created: boolean }> {
  for (let attempt = 0; attempt < CHANGE_ATTEMPTS; attempt++) {
    const found = await readKeySet(records);
    if (found) return { set: found.set, created: false };
    const at = now();
    const keys = await Promise.all([...new Set(needed)].map(async (alg) => ({ ...(await newStoredKey(alg, sealer)), addedAt: at, promotedAt: at })));
    const set = sealer.authenticate({ version: 1, generation: 1, ...waits, keys });
    if (await records.create(KEY_SET_KIND, KEY_SET_ID, KEY_SET_GROUP, set)) return { set, created: true };
  }
  throw new StoredKeysError('the stored signing-key set kept changing while it was created');
}

/** Writes the key set again where the store has none (after the store was emptied). */
export async function restoreKeySet(records: RecordStore, set: StoredKeySet): Promise<void> {
  await records.create(KEY_SET_KIND, KEY_SET_ID, KEY_SET_GROUP, set);
}

/**
 * A change of the stored set (a rotation step of the CLI, the waits raised by a server): the
 * step's outcome, authenticated, with the next generation, written with compare-and-set and tried
 * again on a concurrent change. A set that is not authenticated by these keys is not changed.
 */
export async function changeKeySet(
  records: RecordStore,
  sealer: KeySetSealer,
  step: (set: StoredKeySet) => RotationOutcome<StoredKey> & { waits?: RotationWaits },
): Promise<{ set: StoredKeySet } | RotationRefusal> {
  for (let attempt = 0; attempt < CHANGE_ATTEMPTS; attempt++) {
    const found = await readKeySet(records);
    if (!found) throw new StoredKeysError('the store holds no signing-key set: start a server with keys.store first');
    if (!sealer.verifies(found.set)) {
      throw new StoredKeysError('the stored signing-key set is not authenticated by these key-encryption keys: give the servers\' keys.store.keks');
    }
    const outcome = step(found.set);
    if ('refused' in outcome) return outcome;
    const { mac: _mac, ...current } = found.set;
    const set = sealer.authenticate({ ...current, ...(outcome.waits ?? {}), generation: found.set.generation + 1, keys: outcome.keys });
    if (await records.replace(KEY_SET_KIND, KEY_SET_ID, set, found.revision)) return { set };
  }
  throw new StoredKeysError('the stored signing-key set kept changing: try again');
}

/** The three steps as changes of the stored set (policies/key-rotation.ts). */
export const storedSteps = {
  add: (key: StoredKey, now: number) => (set: StoredKeySet) => addKey(set.keys, key, now),
  promote: (kid: string, now: number, force: boolean) => (set: StoredKeySet) => promoteKey(set.keys, kid, set, now, force),
  retire: (kid: string, now: number, force: boolean) => (set: StoredKeySet) => retireKey(set.keys, kid, set, now, force),
};
