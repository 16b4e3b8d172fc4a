import type { Counters, WindowCount } from '../../adapters/types.js';
import type { Logger } from '../logger.js';
import { RefusalLog } from '../observability/refusal-log.js';

/** A fixed-window limit: `max` events per `windowSeconds`. */
export interface WindowLimit {
  max: number;
  windowSeconds: number;
}

/** A counter and its limit: what one limit watches (a client ID, an address, a username's hint). */
export interface Watched {
  /** The counter's key in the store (namespaced by the limit: `signin:addr:...`). */
  key: string;
  limit: WindowLimit;
}

/** A watched counter's count, and whether it has reached its limit. */
export interface WatchedCount extends Watched {
  count: WindowCount;
  /** The count has reached `max` (a peek: the next event would be one too many). */
  reached: boolean;
  /** The count is past `max` (an increment: this event was one too many). */
  over: boolean;
}

/**
 * THE SHAPE OF EVERY RATE LIMIT (failed client authentications, authorization and sign-out
 * requests, failed sign-ins): fixed windows counted in the store (src/adapters: every instance
 * shares them), read before the work (`peek`) or counted with it (`count`), and a refusal logged
 * at most once per key and window (RefusalLog) and told to the metrics (`onRefused`), so that an
 * attacker grows neither the logs nor the store faster than the limits let requests through.
 */
export class WindowLimits {
  readonly #refusals: RefusalLog;

  constructor(
    private readonly counters: Counters,
    logger: Logger,
    /** The refusals' log line. */
    message: string,
    /** Told of every refusal (the metrics count them all). */
    private readonly onRefused: () => void = () => {},
  ) {
    this.#refusals = new RefusalLog(logger, message);
  }

  /** The counts of `watched`, unchanged (one round trip). */
  async peek(watched: readonly Watched[]): Promise<WatchedCount[]> {
    const counts = await this.counters.peek(watched.map(({ key }) => key));
    return watched.map((each, index) => withCount(each, counts[index]!));
  }

  /** One more event on each of `watched`, each in its own window (atomic per counter). */
  async count(watched: readonly Watched[]): Promise<WatchedCount[]> {
    const counts = await Promise.all(watched.map(({ key, limit }) => this.counters.increment([key], limit.windowSeconds).then(([count]) => count!)));
    return watched.map((each, index) => withCount(each, counts[index]!));
  }

  /**
   * A refusal by `over` (the counts past or at their limits): the seconds to wait (the latest of
   * their windows, at least 1), logged once per `logKey` and window with `fields`.
   * @returns the wait, and whether this refusal wrote the window's log line.
   */
  refuse(over: readonly WatchedCount[], logKey: string, fields: Record<string, unknown>): { wait: number; firstInWindow: boolean } {
    const wait = Math.max(1, ...over.map(({ count }) => count.resetsIn));
    this.onRefused();
    return { wait, firstInWindow: this.#refusals.refused(logKey, wait, fields) };
  }
}

function withCount(watched: Watched, count: WindowCount): WatchedCount {
  // A literal, not a spread: this runs on every token request.
  const { key, limit } = watched;
  return { key, limit, count, reached: count.count >= limit.max, over: count.count > limit.max };
}
