import type { Store } from '../../adapters/types.js';
import { keyStates, resolveSigningKeys, type KeyPurposes, type PrivateJwks, type SigningAlgorithm } from '../engine/keys.js';
import { LiveKeys } from '../engine/live-keys.js';
import { HostSigningKey } from '../engine/signing-keys.js';
import { changeKeySet, KEY_SET_KIND, keySealer, loadOrCreateKeySet, openKeySet, readKeySet, restoreKeySet, sameKeySet, StoredKeysError, type StoredKeySet } from '../engine/stored-keys.js';
import type { Logger } from '../logger.js';
import type { ResolvedOptions } from '../options.js';
import type { OwnRecords } from './own-records.js';

/** The server's signing keys, and how to stop following the store's. */
export interface SigningKeys {
  keys: LiveKeys;
  /** Stops following the stored key set (the server is closing). */
  close(): void;
}

/** The kids that sign, by algorithm: what a rotation changes, said in the log (kids are public). */
async function signingSummary(jwks: PrivateJwks, needed: readonly SigningAlgorithm[]): Promise<Record<string, string>> {
  const states = await keyStates(jwks.keys, needed);
  return Object.fromEntries(states.filter((key) => key.state === 'signing').map((key) => [key.alg, key.kid]));
}

/**
 * The signing keys of the `keys` option: the host's external signers first, then `keys.jwks`
 * (or keys generated for this process), fixed for the process's life; or the key set kept in the
 * store (`keys.store`), made on an empty store, followed at every change of its record, and
 * written again should the store be emptied.
 */
export async function startSigningKeys(
  options: ResolvedOptions,
  store: Store,
  ownRecords: OwnRecords,
  needed: SigningAlgorithm[],
  purposes: KeyPurposes,
  logger: Logger,
): Promise<SigningKeys> {
  const stored = options.keys?.store;
  if (!stored) {
    const signers = options.keys?.signers ?? [];
    // What the external signers do not sign is signed by keys.jwks, or by keys made for this process.
    const left = needed.filter((alg) => !signers.some((signer) => signer.alg === alg));
    const jwks = options.keys?.jwks || left.length > 0 ? await resolveSigningKeys(options.keys?.jwks, left, logger, purposes) : { keys: [] };
    const keys = new LiveKeys(signers, jwks, needed);
    // Each signer signs once and its signature is verified, before the server takes a request.
    for (const key of keys.engineKeys) if (key instanceof HostSigningKey) await key.check();
    if (signers.length > 0) logger.info('external signers', { signing: Object.fromEntries(signers.map((signer) => [signer.alg, signer.kid])) });
    return { keys, close: () => undefined };
  }

  const sealer = keySealer(stored.keks);
  const waits = { publishWaitSeconds: stored.publishWaitSeconds, retireWaitSeconds: stored.retireWaitSeconds };
  const loaded = await loadOrCreateKeySet(store.records, sealer, needed, waits);
  let current: StoredKeySet = loaded.set;
  // A set this configuration cannot use (another KEK, a changed record, an algorithm without a
  // key): no start, with the reason.
  const opened = openKeySet(current, sealer, needed);
  const keys = new LiveKeys([], opened.jwks, needed);
  const summary = (jwks: PrivateJwks, unopened: string[]) => signingSummary(jwks, needed).then((signing) => ({ signing, generation: current.generation, ...(unopened.length ? { unopened } : {}) }));
  logger.info(loaded.created ? 'signing keys made and kept in the store' : 'signing keys read from the store', await summary(opened.jwks, opened.unopened));
  if (opened.unopened.length) logger.error('stored signing keys that do not open with keys.store.keks are not published by this server', { unopened: opened.unopened });
  // Longer waits in this server's options than in the set: the set takes them (never shorter ones:
  // the set's are what the CLI holds every operator to). A set authenticated by a key-encryption
  // key that is no longer the first (a KEK rotation) is authenticated again with the first, which
  // the CLI then needs.
  const reauthenticate = !sealer.verifies(current, true);
  if (reauthenticate || waits.publishWaitSeconds > current.publishWaitSeconds || waits.retireWaitSeconds > current.retireWaitSeconds) {
    const raised = await changeKeySet(store.records, sealer, (set) => ({
      keys: set.keys,
      waits: { publishWaitSeconds: Math.max(set.publishWaitSeconds, waits.publishWaitSeconds), retireWaitSeconds: Math.max(set.retireWaitSeconds, waits.retireWaitSeconds) },
    }));
    if ('set' in raised) current = raised.set;
  }

  let closed = false;
  let reading: Promise<void> | undefined;
  let again = false;
  /** Reads the stored set and follows it; one read at a time, one more if a change came meanwhile. */
  const follow = async (): Promise<void> => {
    if (reading) {
      again = true;
      return reading;
    }
    reading = (async () => {
      do {
        again = false;
        try {
          const found = await readKeySet(store.records);
          if (closed) return;
          if (!found) {
            // Deleted or evicted, without the store being emptied: the set this server follows
            // goes back, rather than a new set made by the next instance to start.
            logger.error('the stored signing-key set is gone; writing back the set this server follows');
            await restoreKeySet(store.records, current);
            continue;
          }
          if (sameKeySet(found.set, current)) continue;
          const next = openKeySet(found.set, sealer, needed);
          // A replayed older set (a restored dump, a copy written back) is not followed.
          if (found.set.generation <= current.generation) throw new StoredKeysError(`the stored signing-key set is of generation ${found.set.generation}, not newer than the ${current.generation} this server follows`);
          keys.replace(next.jwks);
          current = found.set;
          logger.info('signing keys changed in the store', await summary(next.jwks, next.unopened));
          if (next.unopened.length) logger.error('stored signing keys that do not open with keys.store.keks are not published by this server', { unopened: next.unopened });
        } catch (error) {
          logger.error('the stored signing keys could not be followed; the server keeps signing with the keys it has', {
            error: error instanceof Error ? error.message : 'unknown',
          });
        }
      } while (again && !closed);
    })().finally(() => {
      reading = undefined;
    });
    return reading;
  };
  store.records.watch((change) => {
    if (change.kind === KEY_SET_KIND || change.kind === undefined) void follow();
  });
  // Gone with an emptied store: the set the server follows is written again (a write where one
  // already is changes nothing).
  await ownRecords.add(() => restoreKeySet(store.records, current));
  return {
    keys,
    close: () => {
      closed = true;
    },
  };
}
