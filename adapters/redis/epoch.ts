/*
 * Noticing a store that was emptied under a running server: Redis restarted without persistence,
 * flushed, or a failover to a replica that had nothing. Nothing in Redis says so, and every
 * instance would go on as if its own writes of the start (the portal's app registration) were
 * still there. So the store keeps an epoch: a random value written once, when there is none, and
 * never changed. Each instance remembers the epoch it saw; when it reads another one (or finds
 * none and writes a new one), everything stored before is gone. Every instance notices on its own,
 * whichever of them wrote the new epoch. The epoch shares the `{records}` slot, so on a cluster it
 * goes with the records when their node is emptied.
 */
import { randomUUID } from 'node:crypto';
import type { Io } from './connection.js';

/** The store's epoch, read at start, after every reconnect and on a timer. */
export class StoreEpoch {
  private epoch: string | undefined;
  private checking = false;
  private again = false;
  private timer: NodeJS.Timeout | undefined;
  private readonly listeners: Array<() => void> = [];

  constructor(
    private readonly io: Io,
    private readonly key: string,
  ) {}

  /** Reads (or writes) the epoch at start, then checks it every `everyMs`. */
  async start(everyMs: number): Promise<void> {
    this.epoch = await this.read();
    this.timer = setInterval(() => this.check(), everyMs);
    this.timer.unref();
  }

  /** Tells `listener` each time the store is found emptied. */
  onEmptied(listener: () => void): void {
    this.listeners.push(listener);
  }

  /**
   * Reads the epoch again (a check already running runs once more after it, so a reconnect is never
   * missed). A store that cannot be read now is checked at the next turn.
   */
  check(): void {
    if (this.epoch === undefined) return;
    if (this.checking) {
      this.again = true;
      return;
    }
    this.checking = true;
    this.read().then(
      (epoch) => {
        if (this.epoch === undefined || epoch === this.epoch) return;
        this.epoch = epoch;
        for (const listener of this.listeners) listener();
      },
      () => {},
    ).finally(() => {
      this.checking = false;
      if (this.again) {
        this.again = false;
        this.check();
      }
    });
  }

  stop(): void {
    clearInterval(this.timer);
    this.epoch = undefined;
  }

  private read(): Promise<string> {
    return this.io.run((redis) => redis.taGetOrSet(this.key, randomUUID()));
  }
}
