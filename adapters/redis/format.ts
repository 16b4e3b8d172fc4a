/*
 * The store format: which layout of keys and records a Redis store holds, as one whole number under
 * one key (`<prefix>format:{records}`, in the records' slot like the epoch). A release reads the
 * formats it knows; it never writes into a store of a format it does not know, because an older
 * release would misread what a newer one wrote (a record whose shape it does not know, a key it
 * does not look at) and could overwrite or lose it. So a store of a newer or unknown format makes
 * the start fail, before anything is written or subscribed, and says what to do.
 *
 * A store without the key is empty, or was written by a release from before the key existed
 * (0.1.0), whose layout is format 1: either way it is upgraded from format 1 (nothing to move in an
 * empty store) and gets the current format written. A store of format 1 is upgraded at start, before
 * anything is served (upgrade.ts). docs/versioning.md, "Upgrading", lists the formats and what each
 * upgrade needs.
 */
import type { Io } from './connection.js';
import { StoreStartError } from './connection.js';

/** The format this release writes and reads. */
export const STORE_FORMAT = 2;

/** The older formats this release upgrades at start. */
const UPGRADABLE = 1;

/** Where an operator reads what to do about a format (docs/versioning.md). */
const UPGRADE_NOTES = 'docs/versioning.md, "Upgrading"';

/** The longest part of an unreadable value a message repeats. */
const SHOWN_CHARACTERS = 40;

/**
 * The store holds a format this release cannot read: written by a newer release, or not a format
 * at all (another application's key under the same prefix). Its message says which format was
 * found, which this release reads, and what to do; retrying does not help.
 */
export class StoreFormatError extends StoreStartError {
  /** What the store's format key holds, as found (at most 40 characters of it). */
  readonly found: string;
  /** The store format this release reads and writes. */
  readonly supported: number;

  constructor(message: string, found: string) {
    super(message);
    this.name = 'StoreFormatError';
    this.found = found;
    this.supported = STORE_FORMAT;
  }
}

/** The refusal of a format key that holds no format (`holds`: what it holds, in words). */
function noFormat(where: string, key: string, holds: string, found: string): StoreFormatError {
  return new StoreFormatError(
    `${where}: the store format key ${key} holds ${holds}, which is no store format (a whole number); `
      + `this release of talent-auth reads store format ${STORE_FORMAT}. Another application may use the same key prefix: `
      + `give each its own (store.keyPrefix), and see ${UPGRADE_NOTES}`,
    found,
  );
}

/**
 * The format a store's key holds, checked: the current format passes; a newer one, or a value that
 * is no format, throws StoreFormatError naming `where` (the store, never credentials) and `key`.
 */
export function checkStoreFormat(found: string, where: string, key: string): number {
  const format = /^[1-9][0-9]{0,8}$/.test(found) ? Number(found) : undefined;
  if (format === STORE_FORMAT) return format;
  const shown = found.length > SHOWN_CHARACTERS ? `${found.slice(0, SHOWN_CHARACTERS)}...` : found;
  if (format === undefined) throw noFormat(where, key, JSON.stringify(shown), shown);
  const written = format > STORE_FORMAT ? 'written by a newer release of talent-auth' : 'which this release cannot upgrade';
  throw new StoreFormatError(
    `${where}: the store format key ${key} says format ${format} (${written}), and this release of talent-auth reads store format ${STORE_FORMAT} only. `
      + `Nothing was written. Run a release that reads format ${format}, or restore the store from a backup taken before the upgrade: ${UPGRADE_NOTES}`,
    shown,
  );
}

/**
 * The store's format, read at start and upgraded to the current one where it is older (`upgrade`
 * moves what format 1 kept; it can be cut and run again), so that two instances starting together
 * agree. Throws StoreFormatError for a format this release cannot read.
 */
export async function openStoreFormat(io: Io, key: string, where: string, upgrade: () => Promise<void>): Promise<number> {
  let found: string | null;
  try {
    found = await io.run((redis) => redis.get(key));
  } catch (error) {
    // A hash, a list, ... under the name: Redis refuses GET on it.
    if (error instanceof Error && error.message.includes('WRONGTYPE')) throw noFormat(where, key, 'a value that is not a string', '');
    throw error;
  }
  if (found === null || found === String(UPGRADABLE)) {
    // None: an empty store, or one of 0.1.0 (format 1 without the key). Nothing is served before
    // the records are moved; the format is written last, so a start cut short upgrades again.
    await upgrade();
    if (found === null) found = await io.run((redis) => redis.taGetOrSet(key, String(STORE_FORMAT)));
    else {
      await io.run((redis) => redis.taSetIf(key, String(UPGRADABLE), String(STORE_FORMAT)));
      found = (await io.run((redis) => redis.get(key))) ?? '';
    }
  }
  return checkStoreFormat(found, where, key);
}

/**
 * Writes the current format again into a store found emptied while running (nothing of the old
 * data is left, and what this instance writes next is in its format). Best effort: a store that
 * cannot be reached now gets it at the next start.
 */
export function stampStoreFormat(io: Io, key: string): void {
  void io.run((redis) => redis.taGetOrSet(key, String(STORE_FORMAT))).catch(() => undefined);
}
