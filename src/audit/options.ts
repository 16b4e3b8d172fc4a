/*
 * The audit options, stated here beside the audit trail (src/options.ts composes them into the
 * option schema; docs/configuration.md's option reference is generated from them).
 */
import { z } from 'zod';
import { functionOf } from '../option-kinds.js';
import { DEFAULT_AUDIT_SETTINGS, type AuditHook } from './trail.js';

/** The `audit` option: how long the trail keeps events, and how many of one tenant. */
export const auditOptionSchema = z
  .object({
    retentionDays: z.number().int().min(1).max(3650).default(DEFAULT_AUDIT_SETTINGS.retentionDays),
    maxEventsPerTenant: z.number().int().min(100).max(10_000_000).default(DEFAULT_AUDIT_SETTINGS.maxEventsPerTenant),
  })
  .strict()
  .prefault({})
  .meta({
    description: "the [audit trail](operations.md#audit-trail)'s retention: events older than `retentionDays` go, and a "
      + 'tenant keeps at most `maxEventsPerTenant`, oldest first out',
  });

/** The `onAuditEvent` option: the host's hook, told of every event written. */
export const onAuditEventOptionSchema = functionOf<AuditHook>('a function of the event').optional().meta({
  description: '`(event) => void | Promise<void>`: called with every audit event written, for a SIEM or a webhook; what it '
    + 'throws or rejects is logged and never breaks the action',
});
