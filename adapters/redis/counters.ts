/*
 * The rate-limit counters on Redis: fixed windows, one expiring key per counter. Each counter's
 * key is its own hash tag (see the key layout in index.ts), so on a Redis Cluster the counters
 * spread over every slot and no one node is asked about every request. On a single node or under
 * Sentinel, one call still increments (or reads) several counters in a single script; a cluster
 * refuses a script over keys of several slots, so there each counter is its own call, all sent at
 * once. Each answer is a count and the whole seconds left of its window.
 */
import { windowMillis, type Counters, type WindowCount } from '../types.js';
import type { Io } from './connection.js';
import type { Client } from './scripts.js';

/** Whole seconds left of a window from Redis' PTTL (-2: no key, -1: no expiry). */
const secondsLeft = (pttl: number): number => (pttl > 0 ? Math.max(1, Math.ceil(pttl / 1000)) : 0);

function windowCounts(answer: readonly number[], length: number): WindowCount[] {
  return Array.from({ length }, (_, i) => ({ count: answer[2 * i] ?? 0, resetsIn: secondsLeft(answer[2 * i + 1] ?? -2) }));
}

/** The counters of the rate limits: increment opens a window on first use, peek only reads. */
export class RedisCounters implements Counters {
  constructor(
    private readonly io: Io,
    private readonly prefix: string,
    /** Several keys in one command (a single node, Sentinel); false on a cluster, where each key has its own slot. */
    private readonly together: boolean,
  ) {}

  private key(key: string): string {
    return `${this.prefix}rl:{${key}}`;
  }

  /**
   * `command` over `keys` (at least one): one call when several keys may go together, else one
   * call per key, all sent at once, their answers joined in the keys' order.
   */
  private each<T>(keys: readonly string[], command: (redis: Client, redisKeys: string[]) => Promise<T[]>): Promise<T[]> {
    const redisKeys = keys.map((key) => this.key(key));
    if (this.together || redisKeys.length === 1) return this.io.run((redis) => command(redis, redisKeys));
    return this.io.run(async (redis) => (await Promise.all(redisKeys.map((key) => command(redis, [key])))).flat());
  }

  async increment(keys: readonly string[], windowSeconds: number): Promise<WindowCount[]> {
    const windowMs = windowMillis(windowSeconds);
    if (keys.length === 0) return [];
    const answer = await this.each(keys, (redis, redisKeys) => redis.taIncrementCounters(redisKeys.length, ...redisKeys, windowMs));
    return windowCounts(answer, keys.length);
  }

  async peek(keys: readonly string[]): Promise<WindowCount[]> {
    if (keys.length === 0) return [];
    const answer = await this.each(keys, (redis, redisKeys) => redis.taPeekCounters(redisKeys.length, ...redisKeys));
    return windowCounts(answer, keys.length);
  }

  async clear(keys: readonly string[]): Promise<void> {
    if (keys.length === 0) return;
    await this.each(keys, async (redis, redisKeys) => [await redis.del(...redisKeys)]);
  }
}
