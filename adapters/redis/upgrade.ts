/*
 * Store format 1 to 2 (docs/versioning.md, "Store formats"). Format 1 kept every record and index
 * under the one `{records}` hash tag: on a cluster, one slot, so one master, took every record read
 * of the platform. Format 2 gives each record a key of its own tag and each group's index one of
 * its own. The upgrade runs at start, before anything is served, and can be cut at any point and
 * run again (by the same instance or another one at the same time): each record is copied to its
 * new key (unless there already), then indexed, and only then is its old key deleted, so nothing
 * is ever only in a key that is about to go.
 */
import type { Io } from './connection.js';
import { indexKey, newRecordToken, recordKey, scanKeys } from './records.js';

/** Moves every record of format 1 under `prefix` to its format-2 keys; old indexes go last. */
export async function upgradeRecordsFromFormat1(io: Io, prefix: string): Promise<void> {
  const oldRecords = `${prefix}rec:{records}:`;
  await scanKeys(io, oldRecords, async (keys) => {
    // A step's keys moved at once (each in its own order: copy, index, delete), so that the
    // upgrade costs round trips per step of the walk rather than per record.
    await Promise.all(keys.map(async (key) => {
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
    }));
  });
  // The old indexes name only records moved by now.
  await scanKeys(io, `${prefix}idx:{records}:`, async (keys) => {
    await Promise.all(keys.map((key) => io.run((redis) => redis.del(key))));
  });
}
