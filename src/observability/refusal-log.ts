import type { Logger } from '../logger.js';

interface Window {
  /** When the window of the key's limit ends (ms). */
  until: number;
  /** Refusals of the key not logged since its last line. */
  unlogged: number;
}

/**
 * Refusals by a rate limit, logged at most once per key and window: the first refusal of a window
 * writes a line (with the counter's count and how many refusals went unlogged in the window
 * before), the others of that window only add to a count. So an attacker cannot grow the logs
 * faster than the limits let requests through; the metrics count every refusal.
 *
 * Per process: each instance writes at most one line per key and window. The keys remembered are
 * bounded (the oldest go first), so that an attacker with many addresses cannot grow this either.
 */
export class RefusalLog {
  private readonly windows = new Map<string, Window>();

  constructor(
    private readonly logger: Logger,
    private readonly message: string,
    private readonly maxKeys = 10_000,
  ) {}

  /** A refusal of `key`, whose window ends in `resetsIn` seconds; true when it wrote the window's line. */
  refused(key: string, resetsIn: number, fields: Record<string, unknown>): boolean {
    const now = Date.now();
    const window = this.windows.get(key);
    if (window && window.until > now) {
      window.unlogged += 1;
      return false;
    }
    const unloggedBefore = window?.unlogged ?? 0;
    this.windows.delete(key);
    if (this.windows.size >= this.maxKeys) this.windows.delete(this.windows.keys().next().value as string);
    this.windows.set(key, { until: now + Math.max(1, resetsIn) * 1000, unlogged: 0 });
    this.logger.warn(this.message, { ...fields, retry_after: resetsIn, ...(unloggedBefore ? { refused_unlogged_before: unloggedBefore } : {}) });
    return true;
  }
}
