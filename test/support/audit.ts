import type { AuditEvent, AuditQuery } from '../../src/index.js';

/**
 * A tenant's events of a type, once at least one is there: refusals are written after the answer
 * (AuditTrail.recordLater, so that a refusal is not slowed down), so a test that reads right after
 * a refused request waits for the write, up to `waitMs`, instead of racing it on a loaded machine.
 */
export async function auditEventsOnceWritten(
  audit: { list(query: AuditQuery): Promise<{ events: AuditEvent[] }> },
  query: AuditQuery,
  waitMs = 3000,
): Promise<AuditEvent[]> {
  const until = Date.now() + waitMs;
  for (;;) {
    const { events } = await audit.list(query);
    if (events.length > 0 || Date.now() > until) return events;
    await new Promise((resolve) => setTimeout(resolve, 25));
  }
}
