import type { Store } from '../../adapters/types.js';
import { keyStates, resolveSigningKeys, type KeyPurposes, type PrivateJwks, type SigningAlgorithm } from '../engine/keys.js';
import { LiveKeys } from '../engine/live-keys.js';
import { KEY_SET_KIND, keySealer, loadOrCreateKeySet, openKeySet, readKeySet, restoreKeySet, type StoredKeySet } from '../engine/stored-keys.js';
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
    if (signers.length > 0) logger.info('external signers', { signing: Object.fromEntries(signers.map((signer) => [signer.alg, signer.kid])) });
    return { keys: new LiveKeys(signers, jwks, needed), close: () => undefined };
  }

  const sealer = keySealer(stored.keks);
  const waits = { publishWaitSeconds: stored.publishWaitSeconds, retireWaitSeconds: stored.retireWaitSeconds };
  const { set: first, created } = await loadOrCreateKeySet(store.records, sealer, needed, waits);
  // A set this configuration cannot open (another KEK) or that lacks an algorithm: no start.
  const keys = new LiveKeys([], openKeySet(first, sealer, needed), needed);
  let current: StoredKeySet = first;
  logger.info(created ? 'signing keys made and kept in the store' : 'signing keys read from the store', { signing: await signingSummary({ keys: openKeySet(first, sealer, needed).keys }, needed) });

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
          if (closed || !found || JSON.stringify(found.set) === JSON.stringify(current)) continue;
          // The whole set or nothing: a set that does not open keeps the keys the server has.
          const jwks = openKeySet(found.set, sealer, needed);
          current = found.set;
          keys.replace(jwks);
          logger.info('signing keys changed in the store', { signing: await signingSummary(jwks, needed), published: jwks.keys.length });
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
