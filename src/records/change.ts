import { isDeepStrictEqual } from 'node:util';
import type { RecordStore } from '../../adapters/types.js';
import { Conflict, NotFound } from '../../policies/errors.js';

const ATTEMPTS = 5;

/**
 * Read, change, write: the write happens only if nobody changed (or deleted) the record since it
 * was read, else it starts over. So a secret rotation is never undone by a concurrent edit, and a
 * deleted record never comes back.
 */
export async function changeRecord<T>(
  records: RecordStore,
  kind: string,
  id: string,
  what: string,
  next: (current: T) => T | Promise<T>,
): Promise<T> {
  for (let attempt = 0; attempt < ATTEMPTS; attempt += 1) {
    const current = await records.getVersioned<T>(kind, id);
    if (!current) throw new NotFound(`${what} ${id}`);
    const value = await next(current.value);
    if (await records.replace(kind, id, value, current.revision)) return value;
  }
  throw new Conflict(`${what} ${id}`);
}

/** The fields of a change whose value differs between the record before and after it (for its audit event). */
export function changedFields(fields: readonly string[], before: object, after: object): string[] {
  return fields.filter((field) => !isDeepStrictEqual((before as Record<string, unknown>)[field], (after as Record<string, unknown>)[field]));
}
