/*
 * What a server writes for itself at start (the portal's app registration) lives in the store, and
 * a store can be emptied under a running server (Redis restarted without persistence, flushed,
 * failed over to a replica that had nothing). Then the server says so once, in the error log and a
 * metric, and writes its own records again, so that what depends on them (portal sign-in) works
 * again without a restart. What others stored (client configurations, app registrations, consents,
 * sessions, tokens) is gone for good: only a backup or persistence brings it back.
 */
import type { Store } from '../../adapters/types.js';
import type { Logger } from '../logger.js';

/** How long to wait before writing again after a write that failed (the store down again). */
const RETRY_MS = 1000;

/** The records a server writes for itself, written again each time the store is found emptied. */
export class OwnRecords {
  private readonly writers: Array<() => Promise<unknown>> = [];
  private closed = false;
  private rewriting = false;
  private pending = false;

  constructor(
    store: Store,
    private readonly logger: Logger,
    emptied: () => void,
  ) {
    store.onEmptied(() => {
      emptied();
      logger.error(
        'the store was emptied (Redis restarted without persistence, flushed, or failed over to an empty replica): '
          + 'client configurations, app registrations, consents, sessions and tokens stored before are gone; '
          + 'the server writes its own records again (docs/operations.md, "Persistence")',
      );
      void this.rewrite();
    });
  }

  /** Writes a record of the server's own now (rejecting as `write` does) and again after every emptying. */
  async add<T>(write: () => Promise<T>): Promise<T> {
    this.writers.push(write);
    return write();
  }

  /** Stops writing again (the server is closing). */
  close(): void {
    this.closed = true;
  }

  /** Every writer once more, until all succeed; an emptying meanwhile runs them all again. */
  private async rewrite(): Promise<void> {
    if (this.rewriting) {
      this.pending = true;
      return;
    }
    this.rewriting = true;
    let warned = false;
    try {
      do {
        this.pending = false;
        try {
          for (const write of this.writers) {
            if (this.closed) return;
            await write();
          }
        } catch (error) {
          if (!warned) this.logger.warn('the server\'s own records could not be written again yet; retrying every second', { error: error instanceof Error ? error.name : 'unknown' });
          warned = true;
          this.pending = true;
          await new Promise((resolve) => setTimeout(resolve, RETRY_MS).unref());
        }
      } while (this.pending && !this.closed);
    } finally {
      this.rewriting = false;
    }
  }
}
