/**
 * THE SAFE ORDER OF A SIGNING-KEY ROTATION, for the key set kept in the store (docs/keys.md,
 * "Keys in the store"). A rotation is three steps, each a change of the stored key set that every
 * running instance follows within seconds:
 *
 * 1. **add**: a new key is appended. It is published at `/jwks` at once and signs nothing yet.
 * 2. **promote**: the key moves before the other keys of its algorithm and signs from then on; the
 *    key that signed before stays published. Refused until the key has been published for
 *    `publishWaitSeconds`: a verifier that cached the key set before the key was added would
 *    refuse every token the new key signs until its cache ends.
 * 3. **retire**: the key leaves the set. Refused for a key that signs (promote another key of its
 *    algorithm first: a server must always have a key for each algorithm it signs with), and,
 *    until `retireWaitSeconds` after it stopped signing, for a key that signed: a token it signed
 *    just before is valid for the longest token lifetime, and would stop verifying once the key
 *    is gone from the key set.
 *
 * Which key signs is the KEY ROTATION RULE of src/engine/keys.ts: the first key of each algorithm
 * in the set's order. A refused step names the moment it becomes safe. `force` skips the waits (a
 * compromised key cannot wait out a token's lifetime) but never lets an algorithm lose its
 * signing key.
 *
 * The functions are pure: the time is given, and they answer the new set or a refusal.
 */

/** What a rotation step needs to know of a key: where it stands and when it changed. */
export interface RotatingKey {
  kid: string;
  /** The algorithm the key signs with (ES256, RS256, ...). */
  alg: string;
  /** When the key was added (published), in epoch milliseconds. */
  addedAt: number;
  /** When it last became the signing key of its algorithm. */
  promotedAt?: number;
  /** When it last stopped being the signing key of its algorithm (another key was promoted). */
  demotedAt?: number;
}

/** The waits between the steps, in seconds. */
export interface RotationWaits {
  /** From add to promote: the longest time a verifier caches the key set. */
  publishWaitSeconds: number;
  /** From the end of a key's signing to its retirement: the longest token lifetime plus clock skew. */
  retireWaitSeconds: number;
}

/** A step the rule refuses, why, and (for a wait) when it becomes safe (epoch milliseconds). */
export interface RotationRefusal {
  refused: string;
  safeAt?: number;
}

/** A step's outcome: the new key set, or a refusal. */
export type RotationOutcome<K extends RotatingKey> = { keys: K[] } | RotationRefusal;

/** Where a key stands under the rotation rule. */
export type RotationState = 'signing' | 'published';

/** The state of each key: the first key of each algorithm signs, the others are only published. */
export function rotationStates(keys: readonly RotatingKey[]): RotationState[] {
  const seen = new Set<string>();
  return keys.map((key) => {
    const signing = !seen.has(key.alg);
    seen.add(key.alg);
    return signing ? 'signing' : 'published';
  });
}

/** Appends a new key: published now, signing nothing (an algorithm's first key also signs at once). */
export function addKey<K extends RotatingKey>(keys: readonly K[], key: K, now: number): RotationOutcome<K> {
  if (keys.some((known) => known.kid === key.kid)) return { refused: `a key with kid ${key.kid} is already in the key set` };
  const first = !keys.some((known) => known.alg === key.alg);
  return { keys: [...keys, { ...key, addedAt: now, ...(first ? { promotedAt: now } : {}) }] };
}

/** The key named by `kid` and its place, or the refusal that names no such key. */
function located<K extends RotatingKey>(keys: readonly K[], kid: string): { index: number; key: K } | RotationRefusal {
  const index = keys.findIndex((key) => key.kid === kid);
  return index < 0 ? { refused: `no key with kid ${kid} in the key set` } : { index, key: keys[index]! };
}

/** Moves a published key before the other keys of its algorithm, once it has been published long enough. */
export function promoteKey<K extends RotatingKey>(
  keys: readonly K[],
  kid: string,
  waits: RotationWaits,
  now: number,
  force = false,
): RotationOutcome<K> {
  const found = located(keys, kid);
  if ('refused' in found) return found;
  const { index, key } = found;
  const states = rotationStates(keys);
  if (states[index] === 'signing') return { refused: `key ${kid} already signs ${key.alg}` };
  // Verifiers that fetched the key set before the key was added do not know it until their cache
  // ends; a token it signed before then would be refused by them.
  const safeAt = key.addedAt + waits.publishWaitSeconds * 1000;
  if (now < safeAt && !force) {
    return { refused: `key ${kid} was published less than ${waits.publishWaitSeconds} s ago: verifiers may not know it yet`, safeAt };
  }
  const signerIndex = keys.findIndex((other, position) => other.alg === key.alg && states[position] === 'signing');
  const rest = keys.filter((_, position) => position !== index);
  const at = rest.findIndex((other) => other.kid === keys[signerIndex]!.kid);
  rest.splice(at, 0, { ...key, promotedAt: now });
  return { keys: rest.map((other) => (other.kid === keys[signerIndex]!.kid ? { ...other, demotedAt: now } : other)) };
}

/** Removes a key that no longer signs, once every token it signed has expired. */
export function retireKey<K extends RotatingKey>(
  keys: readonly K[],
  kid: string,
  waits: RotationWaits,
  now: number,
  force = false,
): RotationOutcome<K> {
  const found = located(keys, kid);
  if ('refused' in found) return found;
  const { index, key } = found;
  // Never, not even forced: the server would be left without a key for the algorithm.
  if (rotationStates(keys)[index] === 'signing') {
    return { refused: `key ${kid} signs ${key.alg}: promote another ${key.alg} key first` };
  }
  // A key that signed: the tokens it signed just before it stopped are valid this long.
  if (key.demotedAt !== undefined) {
    const safeAt = key.demotedAt + waits.retireWaitSeconds * 1000;
    if (now < safeAt && !force) {
      return { refused: `key ${kid} signed tokens less than ${waits.retireWaitSeconds} s ago that may still be valid`, safeAt };
    }
  }
  return { keys: keys.filter((_, position) => position !== index) };
}

/** When each key's next step becomes safe: promote for a published key, retire for a former signer. */
export function nextSafeStep(key: RotatingKey, state: RotationState, waits: RotationWaits): { step: 'promote' | 'retire'; safeAt: number } | undefined {
  if (state === 'signing') return undefined;
  if (key.demotedAt !== undefined) return { step: 'retire', safeAt: key.demotedAt + waits.retireWaitSeconds * 1000 };
  return { step: 'promote', safeAt: key.addedAt + waits.publishWaitSeconds * 1000 };
}
