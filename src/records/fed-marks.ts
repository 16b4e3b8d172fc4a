import type { RecordStore } from '../../adapters/types.js';

/** How long a read of the whole list stays fresh (ms): a feed broken without a word hides a mark no longer. */
export const FED_MARKS_REFRESH_MS = 10_000;

/** A mark as stored: its ID under `idField`, and until when it holds (epoch ms). */
type StoredMark<F extends string> = Record<F, string> & { until: number };

/** What a lookup does when the list in memory is older than its refresh. */
export type WhenStale =
  /** Waits for the list read again: the answer must include every mark (revocations). */
  | 'wait'
  /** Answers from memory and reads the list again behind it: a late mark costs nothing (limits). */
  | 'serve';

/**
 * MARKS WITH AN END, KNOWN TO EVERY INSTANCE AT NO COST PER QUESTION: a set of IDs (the chains of a
 * replayed code, the addresses past their failed-authentication limit) asked about on a hot path
 * and true almost never. The marks are records of one kind (they reach every instance through the
 * store's change feed, RecordStore.watch) kept here in memory, so asking costs no store round trip:
 * - a change marks its ID at once, until the list is read again ('wait': nothing may slip past),
 *   or once its record is read, a round trip later ('serve': its end is part of the answer);
 * - the whole list is read again every `refreshMs` and after the feed missed anything, so that a
 *   feed broken without a word cannot hide a mark for longer;
 * - while changes cannot be watched, each question goes to the store (one read);
 * - a mark's record is deleted by the first read of the list after it ended, so that the store
 *   keeps at most the marks of one refresh past their end.
 */
export class FedMarks<F extends string> {
  readonly #marks = new Map<string, number>();
  /** IDs told of by the feed while a read of the list was under way (it may not hold them). */
  #toldWhileReading = new Set<string>();
  #readAt = Number.NEGATIVE_INFINITY;
  #reading: Promise<void> | undefined;

  constructor(
    private readonly records: RecordStore,
    private readonly kind: string,
    /** The stored field that holds the ID (records of earlier versions keep theirs). */
    private readonly idField: F,
    private readonly whenStale: WhenStale,
    private readonly refreshMs = FED_MARKS_REFRESH_MS,
    private readonly now: () => number = Date.now,
  ) {
    records.watch((change) => {
      if (change.kind === undefined) {
        this.#readAt = Number.NEGATIVE_INFINITY;
        return;
      }
      if (change.kind !== kind) return;
      this.#toldWhileReading.add(change.id);
      // Served marks need their end (a Retry-After): the record is read. Awaited marks are held
      // until the list says for how long (a deletion is of an ended mark: harmless).
      if (whenStale === 'serve') void this.#readOne(change.id);
      else if (!this.#marks.has(change.id)) this.#marks.set(change.id, Number.POSITIVE_INFINITY);
    });
  }

  /** Marks `id` until `until` (epoch ms), on every instance. */
  async mark(id: string, until: number): Promise<void> {
    // Known here at once (a read of the list under way keeps it); elsewhere once stored.
    this.#marks.set(id, Math.max(until, this.#marks.get(id) ?? 0));
    this.#toldWhileReading.add(id);
    await this.records.put<StoredMark<F>>(this.kind, id, 'all', { [this.idField]: id, until } as StoredMark<F>);
  }

  /**
   * Until when `id` is marked (epoch ms), undefined when it is not: at once from memory, or a
   * promise (while changes cannot be watched; when the list is stale and `whenStale` is 'wait').
   */
  until(id: string): number | undefined | Promise<number | undefined> {
    if (!this.records.watching) return this.#fetch(id);
    if (this.now() - this.#readAt > this.refreshMs) {
      const read = this.#read();
      if (this.whenStale === 'wait') return read.then(() => this.#ownUntil(id));
      void read.catch(() => undefined);
    }
    return this.#ownUntil(id);
  }

  #ownUntil(id: string): number | undefined {
    const until = this.#marks.get(id);
    if (until === undefined) return undefined;
    if (until > this.now()) return until;
    this.#marks.delete(id);
    return undefined;
  }

  async #fetch(id: string): Promise<number | undefined> {
    const found = await this.records.get<StoredMark<F>>(this.kind, id);
    return found !== undefined && found.until > this.now() ? found.until : undefined;
  }

  async #readOne(id: string): Promise<void> {
    const until = await this.#fetch(id).catch(() => undefined);
    if (until !== undefined) this.#marks.set(id, Math.max(until, this.#marks.get(id) ?? 0));
  }

  #read(): Promise<void> {
    this.#reading ??= (async () => {
      this.#toldWhileReading = new Set();
      try {
        const listed = await this.records.list<StoredMark<F>>(this.kind, 'all');
        const now = this.now();
        const fresh = new Map<string, number>();
        for (const stored of listed) {
          const id = stored[this.idField];
          if (stored.until > now) fresh.set(id, stored.until);
          else void this.records.delete(this.kind, id).catch(() => undefined);
        }
        for (const id of this.#toldWhileReading) {
          const known = this.#marks.get(id) ?? (this.whenStale === 'wait' ? Number.POSITIVE_INFINITY : undefined);
          if (!fresh.has(id) && known !== undefined) fresh.set(id, known);
        }
        this.#marks.clear();
        for (const [id, until] of fresh) this.#marks.set(id, until);
        this.#readAt = now;
      } finally {
        this.#reading = undefined;
      }
    })();
    return this.#reading;
  }
}
