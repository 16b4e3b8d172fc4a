import { createHash, timingSafeEqual } from 'node:crypto';

const MAX_ENTRIES = 10_000;

/** Constant-time string comparison (hashing first makes the lengths equal). */
export function same(a: string, b: string): boolean {
  const digest = (value: string) => createHash('sha256').update(value).digest();
  return timingSafeEqual(digest(a), digest(b)) && a === b;
}

/** Puts an entry in a bounded map of expiring entries, dropping expired and then oldest ones. */
export function remember<V extends { expires: number }>(map: Map<string, V>, key: string, value: V): void {
  const now = Date.now();
  for (const [k, entry] of map) if (entry.expires < now) map.delete(k);
  map.delete(key);
  while (map.size >= MAX_ENTRIES) map.delete(map.keys().next().value!);
  map.set(key, value);
}

/** The entry under `key` if it has not expired (an expired one is dropped). */
export function live<V extends { expires: number }>(map: Map<string, V>, key: string | undefined): V | undefined {
  const entry = key ? map.get(key) : undefined;
  if (!key || !entry) return undefined;
  if (entry.expires < Date.now()) {
    map.delete(key);
    return undefined;
  }
  return entry;
}
