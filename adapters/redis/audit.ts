/*
 * The audit log on Redis: two streams per tenant, its changes (`audit:{audit:t:<tenant>}`) and its
 * activity (the same key with `:activity`), and two for events of no tenant (`audit:{audit}`, and
 * `audit:{audit}:activity`); a tenant's two share a slot (its hash tag). An append adds the event
 * to one stream and trims that stream only, in one transaction: entries older than the retention go (XTRIM MINID), and the oldest beyond the cap
 * (MAXLEN, exact); the key expires with the retention once its tenant is quiet. Stream IDs are
 * `<epoch ms>-<sequence>`: a read is XREVRANGE between `until` and `since`, newest first, a page's
 * last ID being the cursor of the next (exclusive). A type filter reads in batches, at most a few
 * per call: a short page with a `next` means "more to look at".
 */
import type { AuditLog, AuditLogName, AuditLogQuery, AuditPage, AuditRetention, StoredAuditEvent } from '../types.js';
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

  private key(tenant: string | undefined, log: AuditLogName): string {
    const stream = tenant === undefined ? `${this.prefix}audit:{audit}` : `${this.prefix}audit:{audit:t:${encodeURIComponent(tenant)}}`;
    return log === 'changes' ? stream : `${stream}:activity`;
  }

  async append(event: StoredAuditEvent, retention: AuditRetention, now: number, log: AuditLogName): Promise<void> {
    const key = this.key(event.tenant, log);
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

  async list(query: AuditLogQuery): Promise<AuditPage> {
    const key = this.key(query.tenant, query.log);
    const start = query.since === undefined ? '-' : String(query.since);
    let end = query.cursor !== undefined ? `(${query.cursor}` : query.until === undefined ? '+' : String(query.until);
    const events: StoredAuditEvent[] = [];
    const positions: string[] = [];
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
        if (events.length === query.limit) return { events, positions, next: last! };
        events.push(event);
        positions.push(id);
        last = id;
      }
      if (entries.length < count) return { events, positions };
      end = `(${entries[entries.length - 1]![0]}`;
    }
    // The scan budget is spent: what was looked at ends at `last`; the caller goes on from there.
    return last === undefined ? { events, positions } : { events, positions, next: last };
  }
}
