/*
 * Store format 1 to 2 (docs/versioning.md, "Store formats"). Format 1 kept every record and index
 * under the one `{records}` hash tag: on a cluster, one slot, so one master, took every record read
 * of the platform. Format 2 gives each record a key of its own tag and each group's index one of
 * its own. The upgrade runs at start, before anything is served, and can be cut at any point and
 * run again (by the same instance or another one at the same time): each record is copied to its
 * new key (unless there already), then indexed, and only then is its old key deleted, so nothing
 * is ever only in a key that is about to go.
 */
import { StoreUnavailable } from '../types.js';
import { StoreStartError, unavailableWords, type Io } from './connection.js';
import { indexKey, newRecordToken, recordKey, scanKeys } from './records.js';

/**
 * Records moved at once. A step of the walk finds up to a thousand: moved all at once, each
 * command would wait behind thousands of others, and on a busy host the last ones passed their
 * timeout (the start failed after half a second, three instances upgrading together).
 */
export const MOVES_AT_ONCE = 32;

/**
 * The upgrade stopped part way (Redis went away, stopped answering, or refused): what moved is
 * kept, and the next start goes on from there. Its message says where and why, never credentials.
 */
export class StoreUpgradeStopped extends StoreStartError {
  constructor(where: string, cause: unknown, timeoutMs: number) {
    const why = cause instanceof StoreUnavailable ? unavailableWords(cause, timeoutMs) : cause instanceof Error ? cause.message : String(cause);
    super(`${where}: the upgrade of the store from format 1 to format 2 stopped (${why}); what moved is kept, and the next start goes on from there`);
    this.name = 'StoreUpgradeStopped';
  }
}

/**
 * Moves every record of format 1 under `prefix` to its format-2 keys; old indexes go last. Throws
 * StoreUpgradeStopped naming `where` when a command fails (`timeoutMs`: the command timeout).
 */
export async function upgradeRecordsFromFormat1(io: Io, prefix: string, where: string, timeoutMs: number): Promise<void> {
  try {
    await moveRecords(io, prefix);
  } catch (error) {
    throw new StoreUpgradeStopped(where, error, timeoutMs);
  }
}

async function moveRecords(io: Io, prefix: string): Promise<void> {
  const oldRecords = `${prefix}rec:{records}:`;
  const move = async (key: string) => {
    // <kind>:<id>: kinds hold no colon, IDs may.
    const rest = key.slice(oldRecords.length);
    const colon = rest.indexOf(':');
    if (colon <= 0) return;
    const kind = rest.slice(0, colon);
    const id = rest.slice(colon + 1);
    const [group, value, revision] = await io.run((redis) => redis.hmget(key, 'g', 'v', 'n'));
    // Gone meanwhile: moved by another instance upgrading at the same time.
    if (group === null || group === undefined || value === null || value === undefined) return;
    const token = await io.run((redis) => redis.taCopyRecord(recordKey(prefix, kind, id), group, value, revision ?? '1', newRecordToken()));
    await io.run((redis) => redis.hset(indexKey(prefix, kind, group), id, token));
    await io.run((redis) => redis.del(key));
  };
  // A few records moved at once (each in its own order: copy, index, delete), so that the upgrade
  // costs round trips per few records rather than per record.
  await scanKeys(io, oldRecords, (keys) => fewAtOnce(keys, move));
  // The old indexes name only records moved by now.
  await scanKeys(io, `${prefix}idx:{records}:`, (keys) => fewAtOnce(keys, (key) => io.run((redis) => redis.del(key))));
}

/** `each` of `keys`, MOVES_AT_ONCE at a time. */
async function fewAtOnce(keys: readonly string[], each: (key: string) => Promise<unknown>): Promise<void> {
  for (let at = 0; at < keys.length; at += MOVES_AT_ONCE) {
    await Promise.all(keys.slice(at, at + MOVES_AT_ONCE).map(each));
  }
}
