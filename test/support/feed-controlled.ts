import type { RecordChange, RecordStore } from '../../adapters/types.js';

/** A record store whose change feed can be cut (it tells nothing) or reported down (watching false). */
export function feedControlled(records: RecordStore) {
  const listeners: Array<(change: RecordChange) => void> = [];
  let feeding = true;
  let watching = true;
  records.watch((change) => {
    if (feeding) listeners.forEach((listener) => listener(change));
  });
  const store: RecordStore = Object.create(records, {
    watch: { value: (listener: (change: RecordChange) => void) => listeners.push(listener) },
    watching: { get: () => watching && records.watching },
  });
  return { store, cut: () => { feeding = false; }, down: () => { watching = false; } };
}
