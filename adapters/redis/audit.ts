/*
 * The audit log on Redis: a stream per tenant (`audit:{audit:t:<tenant>}`) and one for events of
 * no tenant (`audit:{audit}`), each its own slot. An append adds the event and trims the stream in
 * one transaction: entries older than the retention go (XTRIM MINID), and the oldest beyond the cap
 * (MAXLEN, exact); the key expires with the retention once its tenant is quiet. Stream IDs are
 * `<epoch ms>-<sequence>`: a read is XREVRANGE between `until` and `since`, newest first, a page's
 * last ID being the cursor of the next (exclusive). A type filter reads in batches, at most a few
 * per call: a short page with a `next` means "more to look at".
 */
import type { AuditLog, AuditPage, AuditRetention, StoredAuditEvent } from '../types.js';
import type { Io } from './connection.js';

/** Entries read per batch, and batches per call, when filtering by type. */
const BATCH = 200;
const BATCHES_PER_CALL = 10;

/** The audit streams on Redis (see above). */
export class RedisAuditLog implements AuditLog {
  constructor(
    private readonly io: Io,
    private readonly prefix: string,
  ) {}

  private key(tenant: string | undefined): string {
    return tenant === undefined ? `${this.prefix}audit:{audit}` : `${this.prefix}audit:{audit:t:${encodeURIComponent(tenant)}}`;
  }

  async append(event: StoredAuditEvent, retention: AuditRetention, now: number): Promise<void> {
    const key = this.key(event.tenant);
    await this.io.run(async (redis) => {
      const answers = await redis
        .multi()
        .xadd(key, 'MAXLEN', String(retention.maxEvents), '*', 'e', JSON.stringify(event))
        .xtrim(key, 'MINID', String(Math.max(0, now - retention.maxAgeMs)))
        .pexpire(key, retention.maxAgeMs)
        .exec();
      const failed = answers?.find(([error]) => error);
      if (!answers || failed) throw failed?.[0] ?? new Error('the audit transaction was discarded');
    });
  }

  async list(query: { tenant: string | undefined; type?: string; since?: number; until?: number; limit: number; cursor?: string }): Promise<AuditPage> {
    const key = this.key(query.tenant);
    const start = query.since === undefined ? '-' : String(query.since);
    let end = query.cursor !== undefined ? `(${query.cursor}` : query.until === undefined ? '+' : String(query.until);
    const events: StoredAuditEvent[] = [];
    let last: string | undefined;
    const count = query.type === undefined ? query.limit + 1 : BATCH;
    for (let batch = 0; batch < BATCHES_PER_CALL; batch += 1) {
      const entries = await this.io.run((redis) => redis.xrevrange(key, end, start, 'COUNT', count));
      for (const [id, fields] of entries) {
        const event = JSON.parse(fields[1] ?? '{}') as StoredAuditEvent;
        if (query.type !== undefined && event.type !== query.type) {
          last = id;
          continue;
        }
        if (events.length === query.limit) return { events, next: last! };
        events.push(event);
        last = id;
      }
      if (entries.length < count) return { events };
      end = `(${entries[entries.length - 1]![0]}`;
    }
    // The scan budget is spent: what was looked at ends at `last`; the caller goes on from there.
    return last === undefined ? { events } : { events, next: last };
  }
}
