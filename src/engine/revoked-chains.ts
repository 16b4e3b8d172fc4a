import type { RecordStore } from '../../adapters/types.js';
import { FED_MARKS_REFRESH_MS, FedMarks } from '../records/fed-marks.js';

/**
 * THE CHAINS OF A REPLAYED CODE (src/engine/single-use.ts): every token issued from one code, its
 * refreshes included, carries the chain's id; a replay of the code revokes the chain, and from then
 * on its access tokens are not live (src/engine/live-tokens.ts).
 *
 * Asked at every userinfo, introspection and own-API call, and true almost never (a replay is
 * rare): so the revoked chains are marks known to every instance from memory (FedMarks: records of
 * kind `revoked-chain`, stored as `{ chain, until }`). A revocation must never be missed, so a
 * question waits when the list is due to be read again, and goes to the store while changes cannot
 * be watched. A chain's record is deleted once no access token of it can be live.
 */
export class RevokedChains {
  readonly #marks: FedMarks<'chain'>;

  constructor(records: RecordStore, refreshMs = FED_MARKS_REFRESH_MS, now: () => number = Date.now) {
    this.#marks = new FedMarks(records, 'revoked-chain', 'chain', 'wait', refreshMs, now);
  }

  /** Revokes `chain` until `until` (epoch ms), on every instance. */
  revoke(chain: string, until: number): Promise<void> {
    return this.#marks.mark(chain, until);
  }

  /**
   * Whether `chain` is revoked: a boolean at once when the list is fresh, else a promise (the list
   * read again, or, while changes cannot be watched, the store asked).
   */
  isRevoked(chain: string): boolean | Promise<boolean> {
    const until = this.#marks.until(chain);
    return until instanceof Promise ? until.then((found) => found !== undefined) : until !== undefined;
  }
}
