import { randomUUID } from 'node:crypto';
import type { AuditLog, AuditRetention, StoredAuditEvent } from '../../adapters/types.js';
import { InvalidRequest } from '../../policies/errors.js';
import type { Logger } from '../logger.js';

/*
 * THE AUDIT TRAIL: one event per security-relevant action, kept per tenant in the store, listed
 * newest first, handed to the host's hook and written as a log line.
 *
 * - What an event says: who (`actor`), did what (`type`), to what (`target`), in which tenant,
 *   from where (`address`, when there is a request), and what changed (`details`: field names,
 *   scopes). Never a secret, token, code or password, nor the username typed into a failed
 *   sign-in form: events are built from fixed fields here, never from request bodies.
 * - A change (a client, an app, a consent) is recorded before it is made, and not made when its
 *   event cannot be written (`record` throws): there is no unaudited change. Should the change
 *   itself then fail, the event of the attempt stays.
 * - What is not a change (a sign-in, a refusal, a sign-out) is recorded without waiting for the
 *   store (`recordLater`): the page is not slowed down, and a store outage loses the event, not
 *   the sign-in (it is logged as a warning).
 * - The host's `onAuditEvent` gets every event written; whatever it throws is logged and ignored.
 */

/** Every event type, by the action that causes it. */
export const AUDIT_EVENT_TYPES = [
  'client_configuration.created', 'client_configuration.updated', 'client_configuration.secret_rotated', 'client_configuration.deleted',
  'app_registration.created', 'app_registration.updated', 'app_registration.secret_rotated', 'app_registration.deleted',
  'consent.granted', 'consent.revoked',
  'sign_in.succeeded', 'sign_in.failed', 'sign_in.unlocked', 'session.ended',
  'refresh_token.reuse_detected', 'client_auth.rate_limited', 'management.denied',
  'signing_key.added', 'signing_key.promoted', 'signing_key.retired',
] as const;

/** The type of an audit event. */
export type AuditEventType = (typeof AUDIT_EVENT_TYPES)[number];

/** Who did it: a user (her `sub`), the operator (library, CLI), a client (its ID), or nobody known. */
export interface AuditActor {
  type: 'user' | 'operator' | 'client' | 'anonymous';
  id?: string;
}

/** What it was done to (`user`: her `sub`, e.g. a user whose sign-in hold was lifted). */
export interface AuditTarget {
  type: 'client_configuration' | 'app_registration' | 'signing_key' | 'management_api' | 'user';
  id: string;
}

/** One audit event, as stored, listed and handed to `onAuditEvent`. */
export interface AuditEvent {
  id: string;
  /** ISO 8601, UTC. */
  time: string;
  type: AuditEventType;
  /** The tenant the action concerned; absent for the platform's own (an operator's app, a key). */
  tenant?: string;
  actor: AuditActor;
  target?: AuditTarget;
  /** The source address of the request, when there was one. */
  address?: string;
  /** What changed, in names and values that are never secret. */
  details?: Record<string, unknown>;
}

/** Who acts and from where, as a caller of the library, the API or the CLI hands it down. */
export interface AuditContext {
  actor: AuditActor;
  address?: string;
}

/** The operator: a call of the library or the CLI. */
export const OPERATOR: AuditContext = { actor: { type: 'operator' } };

/** A query of one tenant's events (`tenant: null`: the events of no tenant). */
export interface AuditQuery {
  tenant: string | null;
  type?: AuditEventType;
  /** ISO 8601 or epoch ms: events at or after it. */
  since?: string | number;
  /** ISO 8601 or epoch ms: events at or before it. */
  until?: string | number;
  /** 1..200; default 50. */
  limit?: number;
  /** A page's `next`. */
  cursor?: string;
}

/** A page of events, newest first; `next` asks for the following page. */
export interface AuditEventPage {
  events: AuditEvent[];
  next?: string;
}

/** How long events are kept, and how many per tenant. */
export interface AuditSettings {
  retentionDays: number;
  maxEventsPerTenant: number;
}

/** The defaults of the `audit` option: 400 days, a million events per tenant. */
export const DEFAULT_AUDIT_SETTINGS: AuditSettings = { retentionDays: 400, maxEventsPerTenant: 1_000_000 };

/** The host's hook: called with each event written. */
export type AuditHook = (event: AuditEvent) => void | Promise<void>;

const CURSOR = /^\d{1,15}-\d{1,20}$/;
const DAY_MS = 86_400_000;

function instant(value: string | number | undefined, field: string): number | undefined {
  if (value === undefined) return undefined;
  const ms = typeof value === 'number' ? value : Date.parse(value);
  if (!Number.isFinite(ms)) throw new InvalidRequest(`${field} must be an ISO 8601 time`);
  return ms;
}

/** The audit trail of a server (and of the CLI). */
export class AuditTrail {
  readonly #retention: AuditRetention;

  constructor(
    private readonly log: AuditLog,
    settings: AuditSettings,
    private readonly logger: Logger,
    private readonly hook: AuditHook | undefined,
    /** The clock (epoch ms); tests move it to see retention at work. */
    private readonly now: () => number = Date.now,
  ) {
    this.#retention = { maxAgeMs: settings.retentionDays * DAY_MS, maxEvents: settings.maxEventsPerTenant };
  }

  /**
   * Records an event before the change it describes: throws (the store's StoreUnavailable: 503)
   * when it cannot be written, so that the change is not made.
   */
  async record(event: Omit<AuditEvent, 'id' | 'time'>): Promise<AuditEvent> {
    const now = this.now();
    const full: AuditEvent = { id: randomUUID(), time: new Date(now).toISOString(), ...event };
    await this.log.append(full as unknown as StoredAuditEvent, this.#retention, now);
    this.published(full);
    return full;
  }

  /** Records an event without waiting and without failing: for what is not a change (see above). */
  recordLater(event: Omit<AuditEvent, 'id' | 'time'>): void {
    this.record(event).catch((error: unknown) => {
      this.logger.warn('audit event not written', { type: event.type, error: (error as Error).name });
    });
  }

  /** One tenant's events, newest first. @throws InvalidRequest for a malformed query. */
  async list(query: AuditQuery): Promise<AuditEventPage> {
    const limit = query.limit ?? 50;
    if (!Number.isInteger(limit) || limit < 1 || limit > 200) throw new InvalidRequest('limit must be an integer between 1 and 200');
    if (query.type !== undefined && !(AUDIT_EVENT_TYPES as readonly string[]).includes(query.type)) {
      throw new InvalidRequest(`type must be one of ${AUDIT_EVENT_TYPES.join(', ')}`);
    }
    if (query.cursor !== undefined && !CURSOR.test(query.cursor)) throw new InvalidRequest('cursor is not one this server gave');
    const since = instant(query.since, 'since');
    const until = instant(query.until, 'until');
    const page = await this.log.list({
      tenant: query.tenant ?? undefined,
      limit,
      ...(query.type !== undefined ? { type: query.type } : {}),
      ...(since !== undefined ? { since } : {}),
      ...(until !== undefined ? { until } : {}),
      ...(query.cursor !== undefined ? { cursor: query.cursor } : {}),
    });
    return { events: page.events as unknown as AuditEvent[], ...(page.next ? { next: page.next } : {}) };
  }

  /** The log line and the host's hook; neither may break the action. */
  private published(event: AuditEvent): void {
    this.logger.info('audit', {
      audit_id: event.id,
      audit_type: event.type,
      tenant: event.tenant,
      actor: event.actor,
      target: event.target,
      address: event.address,
      details: event.details,
    });
    if (!this.hook) return;
    try {
      Promise.resolve(this.hook(structuredClone(event))).catch((error: unknown) => this.hookFailed(error));
    } catch (error) {
      this.hookFailed(error);
    }
  }

  private hookFailed(error: unknown): void {
    this.logger.warn('onAuditEvent failed', { error: error instanceof Error ? error.name : typeof error });
  }
}
