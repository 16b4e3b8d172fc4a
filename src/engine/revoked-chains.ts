import type { RecordStore } from '../../adapters/types.js';

/** The record kind of a revoked chain, and its one group. */
const KIND = 'revoked-chain';
const GROUP = 'all';

interface RevokedChain {
  chain: string;
  /** Until when it matters (epoch ms): the longest an access token of the chain can live. */
  until: number;
}

/**
 * THE CHAINS OF A REPLAYED CODE (src/engine/single-use.ts): every token issued from one code, its
 * refreshes included, carries the chain's id; a replay of the code revokes the chain, and from then
 * on its access tokens are not live (src/engine/live-tokens.ts).
 *
 * Asked at every userinfo, introspection and own-API call, and true almost never (a replay is
 * rare): so the revoked chains are records (they reach every instance through the store's change
 * feed, RecordStore.watch) kept here in memory, and asking costs no store round trip. A change
 * marks its chain revoked at once; the whole list is read again every `refreshMs` (10 s) and after
 * the feed missed anything, so that a feed broken without a word cannot hide a revocation for
 * longer; while changes cannot be watched, each question goes to the store. A chain's record is
 * deleted once no access token of it can be live.
 */
export class RevokedChains {
  readonly #chains = new Map<string, number>();
  /** Chains told of by the feed while a read of the list was under way (it may not hold them). */
  #toldWhileReading = new Set<string>();
  #readAt = Number.NEGATIVE_INFINITY;
  #reading: Promise<void> | undefined;

  constructor(
    private readonly records: RecordStore,
    private readonly refreshMs = 10_000,
    private readonly now: () => number = Date.now,
  ) {
    records.watch((change) => {
      if (change.kind === undefined) {
        this.#readAt = Number.NEGATIVE_INFINITY;
        return;
      }
      if (change.kind !== KIND) return;
      // Revoked until the next read of the list says for how long (a deletion is of an expired
      // one: holding it revoked until then is harmless).
      if (!this.#chains.has(change.id)) this.#chains.set(change.id, Number.POSITIVE_INFINITY);
      this.#toldWhileReading.add(change.id);
    });
  }

  /** Revokes `chain` until `until` (epoch ms), on every instance. */
  async revoke(chain: string, until: number): Promise<void> {
    await this.records.put<RevokedChain>(KIND, chain, GROUP, { chain, until });
    this.#chains.set(chain, until);
  }

  /**
   * Whether `chain` is revoked: a boolean at once when the list is fresh, else a promise (the list
   * read again, or, while changes cannot be watched, the store asked).
   */
  isRevoked(chain: string): boolean | Promise<boolean> {
    if (!this.records.watching) return this.records.get<RevokedChain>(KIND, chain).then((found) => found !== undefined && found.until > this.now());
    if (this.now() - this.#readAt > this.refreshMs) return this.#read().then(() => this.#known(chain));
    return this.#known(chain);
  }

  #known(chain: string): boolean {
    const until = this.#chains.get(chain);
    return until !== undefined && until > this.now();
  }

  #read(): Promise<void> {
    this.#reading ??= (async () => {
      this.#toldWhileReading = new Set();
      try {
        const listed = await this.records.list<RevokedChain>(KIND, GROUP);
        const now = this.now();
        const fresh = new Map<string, number>();
        for (const { chain, until } of listed) {
          if (until > now) fresh.set(chain, until);
          else void this.records.delete(KIND, chain).catch(() => undefined);
        }
        for (const id of this.#toldWhileReading) if (!fresh.has(id)) fresh.set(id, this.#chains.get(id) ?? Number.POSITIVE_INFINITY);
        this.#chains.clear();
        for (const [id, until] of fresh) this.#chains.set(id, until);
        this.#readAt = now;
      } finally {
        this.#reading = undefined;
      }
    })();
    return this.#reading;
  }
}
