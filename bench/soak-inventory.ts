/**
 * What the soak reads of Redis: used_memory, and every key (SCAN, never KEYS) with its size
 * (MEMORY USAGE) and whether it expires, grouped by kind. A kind is the key without the prefix,
 * the hash tag and the id: `Grant`, `Session`, `rl:authz`, `rec:client`... Key names carry ids
 * (a refresh token's key carries its id): they are never printed, only their kind.
 */
import type { Redis } from 'ioredis';
import { DEFAULT_KEY_PREFIX } from '../adapters/redis/options.js';

/** The keys of one kind. */
export interface KindInventory {
  kind: string;
  count: number;
  bytes: number;
  largest: number;
  /** Keys of the kind without a TTL. */
  withoutTtl: number;
}

export interface Inventory {
  keys: number;
  kinds: KindInventory[];
  /** The largest key: its kind and MEMORY USAGE bytes. */
  largest: { kind: string; bytes: number } | undefined;
}

/** Kinds whose first segment is followed by a sub-kind worth telling apart. */
const TWO_PART = new Set(['rec', 'idx', 'rl', 'secret']);

/**
 * Kinds kept until deleted by design (docs/operations.md, "Redis key layout"): records and their
 * indexes, the shared secrets, the store's epoch, the audit streams (trimmed by retention).
 */
const KEPT_KINDS = /^(rec:|idx:|secret:|epoch$|audit)/;

/** The kind of a key: its segments before the id, without prefix and hash tag. */
export function kindOf(key: string): string {
  const bare = key.startsWith(DEFAULT_KEY_PREFIX) ? key.slice(DEFAULT_KEY_PREFIX.length) : key;
  const parts = bare.replace(/\{[^}]*\}/g, '').split(':').filter(Boolean);
  const [first = '(empty)', second] = parts;
  return TWO_PART.has(first) && second ? `${first}:${second}` : first;
}

/** Whether keys of this kind may live without a TTL: records, not anonymous or transient state. */
export function isKeptKind(kind: string): boolean {
  return KEPT_KINDS.test(kind);
}

export async function usedMemory(redis: Redis): Promise<number> {
  return Number(/used_memory:(\d+)/.exec(await redis.info('memory'))?.[1] ?? 0);
}

export async function inventory(redis: Redis): Promise<Inventory> {
  const kinds = new Map<string, KindInventory>();
  let largest: Inventory['largest'];
  let keys = 0;
  let cursor = '0';
  do {
    const [next, batch] = await redis.scan(cursor, 'COUNT', 1000);
    cursor = next;
    const pipeline = redis.pipeline();
    for (const key of batch) pipeline.call('MEMORY', 'USAGE', key).pttl(key);
    const answers = (await pipeline.exec()) ?? [];
    batch.forEach((key, index) => {
      const bytes = Number(answers[2 * index]?.[1] ?? 0);
      // -1: no TTL; -2: gone since SCAN saw it.
      const ttl = Number(answers[2 * index + 1]?.[1] ?? -2);
      if (ttl === -2) return;
      keys += 1;
      const kind = kindOf(key);
      const entry = kinds.get(kind) ?? { kind, count: 0, bytes: 0, largest: 0, withoutTtl: 0 };
      entry.count += 1;
      entry.bytes += bytes;
      entry.largest = Math.max(entry.largest, bytes);
      if (ttl === -1) entry.withoutTtl += 1;
      kinds.set(kind, entry);
      if (!largest || bytes > largest.bytes) largest = { kind, bytes };
    });
  } while (cursor !== '0');
  return { keys, kinds: [...kinds.values()].sort((a, b) => b.bytes - a.bytes), largest };
}
