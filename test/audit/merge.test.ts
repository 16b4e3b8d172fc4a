import { comparePositions, type AuditLog, type AuditLogQuery, type AuditPage, type StoredAuditEvent } from '../../adapters/types.js';
import { AuditTrail, DEFAULT_AUDIT_SETTINGS, type AuditStore } from '../../src/audit/trail.js';
import { capturingLogger } from '../support/fixtures.js';

/**
 * The listing merges a tenant's two logs (changes, activity) newest first. On Redis, events of the
 * two streams written in the same millisecond share a position (each stream numbers its own
 * entries): their `time` decides, and a page split inside such a tie loses and repeats nothing.
 */
describe('the audit listing: two logs merged newest first (src/audit/trail.ts)', () => {
  const event = (id: string, type: string, time: string): StoredAuditEvent => ({ id, time, type, tenant: 'acme', actor: { type: 'user', id: 'ada' } } as StoredAuditEvent);
  // The same position in both logs (Redis: `<ms>-0` in each stream); the activity is the later event.
  const logs: Record<string, Array<{ position: string; event: StoredAuditEvent }>> = {
    changes: [
      { position: '1000-0', event: event('c1', 'consent.granted', '2026-01-01T00:00:00.524Z') },
      { position: '900-0', event: event('c0', 'factor.added', '2026-01-01T00:00:00.400Z') },
    ],
    activity: [
      { position: '1000-0', event: event('a1', 'sign_in.succeeded', '2026-01-01T00:00:00.525Z') },
    ],
  };
  const log: AuditLog = {
    async append() {},
    async list(query: AuditLogQuery): Promise<AuditPage> {
      const entries = logs[query.log]!.filter((entry) => query.cursor === undefined || comparePositions(entry.position, query.cursor) < 0);
      const page = entries.slice(0, query.limit);
      return { events: page.map((entry) => entry.event), positions: page.map((entry) => entry.position), ...(entries.length > query.limit ? { next: page.at(-1)!.position } : {}) };
    },
  };
  const secret = Buffer.alloc(32, 7);
  const trail = new AuditTrail({ audit: log, sharedSecret: async () => secret } as unknown as AuditStore, DEFAULT_AUDIT_SETTINGS, capturingLogger().logger, undefined);

  it('at one position, the later time first', async () => {
    const { events } = await trail.list({ tenant: 'acme' });
    expect(events.map((listed) => listed.id)).toEqual(['a1', 'c1', 'c0']);
    expect(events.map((listed) => listed.time)).toEqual(events.map((listed) => listed.time).sort().reverse());
  });

  it('page by page (one at a time) the same order, nothing lost or repeated', async () => {
    const ids: string[] = [];
    let cursor: string | undefined;
    do {
      const page = await trail.list({ tenant: 'acme', limit: 1, ...(cursor !== undefined ? { cursor } : {}) });
      ids.push(...page.events.map((listed) => listed.id));
      cursor = page.next;
    } while (cursor !== undefined);
    expect(ids).toEqual(['a1', 'c1', 'c0']);
  });
});
