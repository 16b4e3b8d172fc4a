import { nextSafeStep, rotationStates, type RotationOutcome, type RotationRefusal } from '../../policies/key-rotation.js';
import { signingKeyChanged } from '../audit/events.js';
import { OPERATOR, type AuditTrail } from '../audit/trail.js';
import { changeKeySet, keySealer, newStoredKey, readKeySet, storedSteps, StoredKeysError, type KeySetSealer, type StoredKey, type StoredKeySet } from '../engine/stored-keys.js';
import { parseAlgorithms } from './keys.js';
import { UsageError } from './errors.js';
import { safe, table, type CliIo } from './output.js';
import type { Store } from '../../adapters/types.js';

/*
 * `keys list|add|promote|retire --store`: the rotation steps on the key set kept in the store
 * (src/engine/stored-keys.ts), which every running server follows within seconds, in the safe
 * order of policies/key-rotation.ts: a step before its time is refused, saying when it is safe.
 * Every step needs the key-encryption keys (the set is authenticated with them, and `add` seals the
 * new key with them): from KEY_ENCRYPTION_KEYS, as the example server reads them, never from a
 * flag (a flag shows in the process list). `list` needs only the store.
 */

/** The environment variable with the key-encryption keys (comma-separated, the first seals). */
export const KEK_VARIABLE = 'KEY_ENCRYPTION_KEYS';

/** What a stored-keys command needs of the CLI. */
export interface StoredKeysContext {
  io: CliIo;
  json: boolean;
  store(): Promise<Store>;
  audit(): Promise<AuditTrail>;
  out(body: unknown, human: string): void;
}

interface KeyRow {
  kid: string;
  alg: string;
  state: 'signing' | 'published';
  added_at: string;
  next?: { step: 'promote' | 'retire'; safe_at: string; safe_now: boolean };
}

const iso = (at: number): string => new Date(at).toISOString();

function rows(set: StoredKeySet, now: number): KeyRow[] {
  const states = rotationStates(set.keys);
  return set.keys.map((key, index) => {
    const next = nextSafeStep(key, states[index]!, set);
    return {
      kid: key.kid,
      alg: key.alg,
      state: states[index]!,
      added_at: iso(key.addedAt),
      ...(next ? { next: { step: next.step, safe_at: iso(next.safeAt), safe_now: next.safeAt <= now } } : {}),
    };
  });
}

function rowsTable(keys: KeyRow[]): string {
  return table(['KID', 'ALG', 'STATE', 'NEXT STEP'], keys.map((key) => [
    safe(key.kid), key.alg, key.state,
    key.next ? `${key.next.step} ${key.next.safe_now ? 'now' : `after ${key.next.safe_at}`}` : '-',
  ]));
}

async function stored(context: StoredKeysContext): Promise<StoredKeySet> {
  const found = await readKeySet((await context.store()).records);
  if (!found) throw new UsageError('keys --store: the store holds no signing-key set; a server started with keys: { store } makes one', '--store');
  return found.set;
}

/**
 * The key-encryption keys of KEY_ENCRYPTION_KEYS, as the servers' keys.store.keks: every change
 * of the set is authenticated with the first, which must be the key the servers authenticate it
 * with now (else the servers would refuse the changed set, and a new instance would not start).
 */
async function sealerOf(context: StoredKeysContext, command: string): Promise<KeySetSealer> {
  const keks = context.io.env[KEK_VARIABLE]?.split(',').map((kek) => kek.trim()).filter(Boolean) ?? [];
  if (keks.length === 0) throw new UsageError(`${command} --store: set ${KEK_VARIABLE} to the servers' key-encryption keys (keys.store.keks): every change of the key set is authenticated with them`, '--store');
  if (keks.some((kek) => kek.length < 32)) throw new UsageError(`${command} --store: ${KEK_VARIABLE}: each key needs at least 32 characters`, '--store');
  const sealer = keySealer(keks);
  if (!sealer.verifies(await stored(context), true)) {
    throw new UsageError(`${command} --store: the first key of ${KEK_VARIABLE} does not authenticate the stored key set: give the servers' keys.store.keks, in their order`, '--store');
  }
  return sealer;
}

/** A refused step as a usage error that says when it becomes safe. */
function refusal(command: string, refused: RotationRefusal): UsageError {
  const when = refused.safeAt !== undefined
    ? `; safe after ${iso(refused.safeAt)} (in ${Math.ceil((refused.safeAt - Date.now()) / 60_000)} min), or now with --force for a compromised key`
    : '';
  return new UsageError(`${command}: refused: ${refused.refused}${when}`, '--kid');
}

/**
 * A step checked on the set as it is, recorded in the audit trail, then applied (compare-and-set:
 * a change by someone else meanwhile is judged again): no change the trail does not hold.
 */
async function recordedStep(
  context: StoredKeysContext,
  command: string,
  sealer: KeySetSealer,
  step: (set: StoredKeySet) => RotationOutcome<StoredKey>,
  event: () => Promise<void>,
): Promise<StoredKeySet> {
  const checked = step(await stored(context));
  if ('refused' in checked) throw refusal(command, checked);
  await event();
  const outcome = await changeKeySet((await context.store()).records, sealer, step);
  if ('refused' in outcome) throw refusal(command, outcome);
  return outcome.set;
}

/** `keys list --store`: each key, its state and when its next step is safe. */
export async function listStored(context: StoredKeysContext): Promise<void> {
  const set = await stored(context);
  const keys = rows(set, Date.now());
  context.out({ keys, publish_wait_seconds: set.publishWaitSeconds, retire_wait_seconds: set.retireWaitSeconds }, rowsTable(keys));
}

/** `keys add --store --alg A`: new sealed keys appended (published, signing nothing yet). */
export async function addStored(context: StoredKeysContext, algValues: readonly string[] | undefined): Promise<void> {
  const sealer = await sealerOf(context, 'keys add');
  const added: StoredKey[] = [];
  for (const alg of parseAlgorithms(algValues)) {
    const key = await newStoredKey(alg, sealer);
    await recordedStep(context, 'keys add', sealer, storedSteps.add(key, Date.now()), async () => {
      await (await context.audit()).record(signingKeyChanged('signing_key.added', OPERATOR, key.kid, alg));
    });
    added.push(key);
  }
  const set = await stored(context);
  const keys = rows(set, Date.now());
  const fresh = keys.filter((key) => added.some((one) => one.kid === key.kid));
  context.out(
    { added: fresh, keys },
    `Added to the store's key set: every running server publishes ${added.length === 1 ? 'it' : 'them'} within seconds.\n`
      + fresh.map((key) => `  ${key.alg.padEnd(6)} kid ${safe(key.kid)}  ${key.state}\n`).join('')
      + fresh.filter((key) => key.next).map((key) => `Promote it after ${key.next!.safe_at} (verifiers' caches of the key set have ended by then):\n  talent-auth keys promote --store --kid ${safe(key.kid)}\n`).join(''),
  );
}

/** `keys promote --store --kid K [--force]`: the key signs its algorithm on every server within seconds. */
export async function promoteStored(context: StoredKeysContext, kid: string, force: boolean): Promise<void> {
  const sealer = await sealerOf(context, 'keys promote');
  const before = await stored(context);
  const alg = before.keys.find((key) => key.kid === kid)?.alg;
  const previous = before.keys.find((key) => key.alg === alg);
  const set = await recordedStep(context, 'keys promote', sealer, storedSteps.promote(kid, Date.now(), force), async () => {
    await (await context.audit()).record(signingKeyChanged('signing_key.promoted', OPERATOR, kid, alg));
  });
  if (!alg || !previous) throw new UsageError(`keys promote: no key with kid ${kid} in the key set`, '--kid');
  const keys = rows(set, Date.now());
  const retire = keys.find((key) => key.kid === previous.kid)!;
  context.out(
    { kid, alg, previous_kid: previous.kid, keys },
    `Key ${safe(kid)} now signs ${alg}: every running server signs with it within seconds. The previous key\n`
      + `${safe(previous.kid)} stays published. Retire it after ${retire.next!.safe_at} (the tokens it signed have expired by then):\n`
      + `  talent-auth keys retire --store --kid ${safe(previous.kid)}\n`,
  );
}

/** `keys retire --store --kid K [--force]`: the key leaves the key set on every server within seconds. */
export async function retireStored(context: StoredKeysContext, kid: string, force: boolean): Promise<void> {
  const sealer = await sealerOf(context, 'keys retire');
  const before = await stored(context);
  const alg = before.keys.find((key) => key.kid === kid)?.alg;
  const set = await recordedStep(context, 'keys retire', sealer, storedSteps.retire(kid, Date.now(), force), async () => {
    await (await context.audit()).record(signingKeyChanged('signing_key.retired', OPERATOR, kid, alg));
  });
  context.out(
    { kid, alg, retired: true, keys: rows(set, Date.now()) },
    `Removed key ${safe(kid)} (${alg}) from the store's key set: every running server stops publishing it within seconds.\n`,
  );
}

export { StoredKeysError };
