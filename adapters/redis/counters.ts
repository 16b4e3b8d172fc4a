/*
 * The rate-limit counters on Redis: fixed windows, one expiring key per counter. One call
 * increments (or reads) several counters at once in a single script, which Redis Cluster allows
 * because all counters share one slot (`{rl}`, see the key layout in index.ts). Each answer is a
 * count and the whole seconds left of its window.
 */
import { windowMillis, type Counters, type WindowCount } from '../types.js';
import type { Io } from './connection.js';

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
  ) {}

  private key(key: string): string {
    return `${this.prefix}rl:{rl}:${key}`;
  }

  async increment(keys: readonly string[], windowSeconds: number): Promise<WindowCount[]> {
    const windowMs = windowMillis(windowSeconds);
    if (keys.length === 0) return [];
    const redisKeys = keys.map((key) => this.key(key));
    const answer = await this.io.run((redis) => redis.taIncrementCounters(redisKeys.length, ...redisKeys, windowMs));
    return windowCounts(answer, keys.length);
  }

  async peek(keys: readonly string[]): Promise<WindowCount[]> {
    if (keys.length === 0) return [];
    const redisKeys = keys.map((key) => this.key(key));
    const answer = await this.io.run((redis) => redis.taPeekCounters(redisKeys.length, ...redisKeys));
    return windowCounts(answer, keys.length);
  }

  async clear(keys: readonly string[]): Promise<void> {
    if (keys.length === 0) return;
    // One DEL: the keys share the `{rl}` slot, so a cluster takes it too.
    await this.io.run((redis) => redis.del(...keys.map((key) => this.key(key))));
  }
}
