import type { JWK } from 'jose';
import { z } from 'zod';
import type { RecordStore } from '../../adapters/types.js';
import { addKey, promoteKey, retireKey, type RotationOutcome, type RotationRefusal, type RotationWaits } from '../../policies/key-rotation.js';
import { Sealer } from '../records/sealed.js';
import { generateSigningKey, keyAlgorithm, type PrivateJwks, type SigningAlgorithm } from './keys.js';

/*
 * THE SIGNING KEYS KEPT IN THE STORE (`keys: { store: { keks } }`, docs/keys.md "Keys in the
 * store"): one record holds the key set in its rotation order (the first key of each algorithm
 * signs), each private key sealed (AES-256-GCM) under the key-encryption keys of the
 * configuration, bound to its kid, with the public half and the times of its rotation steps in
 * clear. Every instance reads it at start and again at every change of the record, so that the
 * CLI's `keys add`, `keys promote` and `keys retire` reach every running instance within seconds
 * (policies/key-rotation.ts says which steps are safe when). The store never holds a private key
 * in clear, and a dump of it signs nothing without the key-encryption key.
 */

/** The record's kind and id (one key set per store). */
export const KEY_SET_KIND = 'signing-keys';
const KEY_SET_ID = 'current';
const KEY_SET_GROUP = 'server';
/** The Sealer's label: the key-encryption keys derive a key of their own for this use. */
const SEALER_LABEL = 'talent-auth signing keys';
/** How often a step is tried again when another writer changed the key set meanwhile. */
const CHANGE_ATTEMPTS = 5;

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
  publishWaitSeconds: z.number().int().min(0),
  retireWaitSeconds: z.number().int().min(0),
  keys: z.array(storedKeySchema).min(1),
});

/** The stored key set: its keys in rotation order and the waits between the rotation steps. */
export type StoredKeySet = z.infer<typeof storedKeySetSchema>;

/** The key set's record is missing, unreadable, or sealed under keys this configuration lacks. */
export class StoredKeysError extends Error {
  override readonly name = 'StoredKeysError';
}

const purposeOf = (kid: string): string => `signing key ${kid}`;

/** The Sealer of the key-encryption keys (the first seals, every one opens). */
export function keySealer(keks: readonly string[]): Sealer {
  return new Sealer(keks, SEALER_LABEL);
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
export async function newStoredKey(alg: SigningAlgorithm, sealer: Sealer): Promise<StoredKey> {
  const jwk = await generateSigningKey(alg);
  return storedKeyOf(jwk, alg, sealer, 0);
}

/** A private JWK of ours, sealed, as a key of the stored set (`addedAt` set by the rotation step). */
export function storedKeyOf(jwk: JWK & { kid?: string }, alg: SigningAlgorithm, sealer: Sealer, addedAt: number): StoredKey {
  const kid = jwk.kid!;
  const { d: _d, p: _p, q: _q, dp: _dp, dq: _dq, qi: _qi, oth: _oth, ...publicHalf } = jwk as JWK & { oth?: unknown };
  return { kid, alg, public: { ...publicHalf, alg, use: 'sig', kid }, sealed: sealer.seal({ ...jwk, alg, use: 'sig', kid }, purposeOf(kid)), addedAt };
}

/**
 * The private key set of the stored one, in its order. Every key must open with the given keys and
 * be one of its algorithm; every needed algorithm must have a key: a set that does not is refused
 * whole (the server keeps what it had, or does not start), never used in part.
 */
export function openKeySet(set: StoredKeySet, sealer: Sealer, needed: readonly SigningAlgorithm[]): PrivateJwks {
  const keys = set.keys.map((key) => {
    const jwk = sealer.open<JWK>(key.sealed, purposeOf(key.kid));
    if (!jwk || jwk.kid !== key.kid) {
      throw new StoredKeysError(`stored signing key ${key.kid} does not open with keys.store.keks: give the key-encryption key it was sealed with`);
    }
    if (keyAlgorithm(jwk, 0, needed) !== key.alg) throw new StoredKeysError(`stored signing key ${key.kid} is not an ${key.alg} key`);
    return jwk;
  });
  const present = new Set(set.keys.map((key) => key.alg));
  const missing = needed.find((alg) => !present.has(alg));
  if (missing) throw new StoredKeysError(`the stored signing-key set has no ${missing} key (this server signs with ${[...new Set(needed)].join(', ')})`);
  return { keys };
}

/**
 * The stored key set, made when the store has none: a new sealed key for each needed algorithm.
 * Of two instances starting on an empty store at once, one writes and the other reads its set.
 */
export async function loadOrCreateKeySet(
  records: RecordStore,
  sealer: Sealer,
  needed: readonly SigningAlgorithm[],
  waits: RotationWaits,
  now: () => number = Date.now,
): Promise<{ set: StoredKeySet; created: boolean }> {
  for (let attempt = 0; attempt < CHANGE_ATTEMPTS; attempt++) {
    const found = await readKeySet(records);
    if (found) return { set: found.set, created: false };
    const at = now();
    const keys = await Promise.all([...new Set(needed)].map(async (alg) => ({ ...(await newStoredKey(alg, sealer)), addedAt: at, promotedAt: at })));
    const set: StoredKeySet = { version: 1, ...waits, keys };
    if (await records.create(KEY_SET_KIND, KEY_SET_ID, KEY_SET_GROUP, set)) return { set, created: true };
  }
  throw new StoredKeysError('the stored signing-key set kept changing while it was created');
}

/** Writes the key set again where the store has none (after the store was emptied). */
export async function restoreKeySet(records: RecordStore, set: StoredKeySet): Promise<void> {
  await records.create(KEY_SET_KIND, KEY_SET_ID, KEY_SET_GROUP, set);
}

/** A rotation step of the CLI: the step's outcome applied with compare-and-set, tried again on a concurrent change. */
export async function changeKeySet(
  records: RecordStore,
  step: (set: StoredKeySet) => RotationOutcome<StoredKey>,
): Promise<{ set: StoredKeySet } | RotationRefusal> {
  for (let attempt = 0; attempt < CHANGE_ATTEMPTS; attempt++) {
    const found = await readKeySet(records);
    if (!found) throw new StoredKeysError('the store holds no signing-key set: start a server with keys.store first');
    const outcome = step(found.set);
    if ('refused' in outcome) return outcome;
    const set = { ...found.set, keys: outcome.keys };
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
