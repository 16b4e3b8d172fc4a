import { REFUSAL_WINDOW_SECONDS } from '../../policies/lifetimes.js';
import { createHmac, randomUUID } from 'node:crypto';
import {
  comparePositions,
  type AuditLog,
  type AuditLogName,
  type AuditPage,
  type AuditRetention,
  type Counters,
  type StoredAuditEvent,
} from '../../adapters/types.js';
import { constantTimeEqual } from '../../policies/constant-time.js';
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
 * - Two logs per tenant: its changes (clients, apps, consents, keys, unlocks, factors) and its activity
 *   (sign-ins, sign-outs, refusals, refresh-token retries and reuse). Each keeps `maxEventsPerTenant`
 *   on its own, so that no amount of activity, a flood of refusals least of all, can push a change
 *   out of the trail. A listing merges both, newest first.
 * - A refusal (`management.denied`, a failed or throttled sign-in, a rate-limited client) is
 *   written once per who (the user, else the address), what (route or app) and window, and again
 *   at its 10th, 100th, 1000th... in that window, each time with that count: anyone can cause
 *   refusals, so they must not grow the trail faster than a few events per window.
 * - A page's cursor is sealed (HMAC under a secret shared through the store, so that every
 *   instance and the CLI accept each other's): a cursor this trail did not give is a 400.
 */

/** Every event type, by the action that causes it. */
export const AUDIT_EVENT_TYPES = [
  'client_configuration.created', 'client_configuration.updated', 'client_configuration.secret_rotated', 'client_configuration.deleted',
  'app_registration.created', 'app_registration.updated', 'app_registration.secret_rotated', 'app_registration.deleted',
  'consent.granted', 'consent.revoked',
  'sign_in.succeeded', 'sign_in.failed', 'sign_in.unlocked', 'session.ended',
  'refresh_token.retried', 'refresh_token.reuse_detected', 'client_auth.rate_limited', 'management.denied',
  'signing_key.added', 'signing_key.promoted', 'signing_key.retired',
  'factor.added', 'factor.removed', 'factor.reset', 'sign_in.second_factor_failed', 'recovery_code.used',
  'tenant_settings.updated',
  'connection.created', 'connection.updated', 'connection.deleted', 'sign_in.federation_failed',
  'user.signed_out',
] as const;

/** The type of an audit event. */
export type AuditEventType = (typeof AUDIT_EVENT_TYPES)[number];

/** The types that record a change of a tenant's setup (kept in the `changes` log); the others are activity. */
const CHANGE_TYPES: ReadonlySet<AuditEventType> = new Set<AuditEventType>([
  'client_configuration.created', 'client_configuration.updated', 'client_configuration.secret_rotated', 'client_configuration.deleted',
  'app_registration.created', 'app_registration.updated', 'app_registration.secret_rotated', 'app_registration.deleted',
  'consent.granted', 'consent.revoked',
  'sign_in.unlocked',
  'signing_key.added', 'signing_key.promoted', 'signing_key.retired',
  // A user's factors are her setup; a recovery code used is one fewer (and nobody without a code
  // can cause one, so it cannot flood the log).
  'factor.added', 'factor.removed', 'factor.reset', 'recovery_code.used',
  'tenant_settings.updated',
  'connection.created', 'connection.updated', 'connection.deleted',
  // The operator's word that a user left: rare, and nobody else can cause one.
  'user.signed_out',
]);

/** The log an event of `type` is kept in. */
export function auditLogOf(type: AuditEventType): AuditLogName {
  return CHANGE_TYPES.has(type) ? 'changes' : 'activity';
}


/** Who did it: a user (her `sub`), the operator (library, CLI), a client (its ID), or nobody known. */
export interface AuditActor {
  type: 'user' | 'operator' | 'client' | 'anonymous';
  id?: string;
}

/** What it was done to (`user`: her `sub`, e.g. a user whose sign-in hold was lifted). */
export interface AuditTarget {
  type: 'client_configuration' | 'app_registration' | 'signing_key' | 'management_api' | 'user' | 'tenant' | 'connection';
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

/** The defaults of the `audit` option (its bounds: src/audit/options.ts). */
export const DEFAULT_AUDIT_SETTINGS: AuditSettings = { retentionDays: 400, maxEventsPerTenant: 1_000_000 };

/** The host's hook: called with each event written. */
export type AuditHook = (event: AuditEvent) => void | Promise<void>;

const DAY_MS = 86_400_000;
/** What a cursor of this trail looks like (its seal is checked by `list`): for a caller to pass on only what may be one. */
export const AUDIT_CURSOR_SHAPE = /^[A-Za-z0-9_-]{1,480}\.[A-Za-z0-9_-]{22}$/;
const LOGS: readonly AuditLogName[] = ['changes', 'activity'];

/** Where a listing goes on in each log: a position (strictly before it), `null` when the log is done. */
type CursorState = Partial<Record<AuditLogName, string | null>>;

/** The nth refusal of a window is written when n is 1, 10, 100, 1000... */
function reportedCount(n: number): boolean {
  return /^10*$/.test(String(n));
}

/** What a refusal is counted under: who (a user, else the address) and where (a route, an app). */
export interface RefusalKey {
  /** The user's ID or the client's, else the source address. */
  who: string;
  /** The route, the app or the limit refused. */
  where: string;
  /** Seconds the count lasts; default REFUSAL_WINDOW_SECONDS. */
  windowSeconds?: number;
}

/** What the trail stores in: the audit logs, the counters (refusal windows), the shared secret (cursors). */
export interface AuditStore {
  readonly audit: AuditLog;
  readonly counters: Counters;
  sharedSecret(name: string): Promise<Buffer>;
}

function instant(value: string | number | undefined, field: string): number | undefined {
  if (value === undefined) return undefined;
  const ms = typeof value === 'number' ? value : Date.parse(value);
  if (!Number.isFinite(ms)) throw new InvalidRequest(`${field} must be an ISO 8601 time`);
  return ms;
}

/** The audit trail of a server (and of the CLI). */
export class AuditTrail {
  readonly #retention: AuditRetention;
  readonly #log: AuditLog;

  constructor(
    private readonly store: AuditStore,
    settings: AuditSettings,
    private readonly logger: Logger,
    private readonly hook: AuditHook | undefined,
    /** The clock (epoch ms); tests move it to see retention at work. */
    private readonly now: () => number = Date.now,
  ) {
    this.#retention = { maxAgeMs: settings.retentionDays * DAY_MS, maxEvents: settings.maxEventsPerTenant };
    this.#log = store.audit;
  }

  /**
   * Records an event before the change it describes: throws (the store's StoreUnavailable: 503)
   * when it cannot be written, so that the change is not made.
   */
  async record(event: Omit<AuditEvent, 'id' | 'time'>): Promise<AuditEvent> {
    const now = this.now();
    const full: AuditEvent = { id: randomUUID(), time: new Date(now).toISOString(), ...event };
    await this.#log.append(full as unknown as StoredAuditEvent, this.#retention, now, auditLogOf(full.type));
    this.published(full);
    return full;
  }

  /** Records an event without waiting and without failing: for what is not a change (see above). */
  recordLater(event: Omit<AuditEvent, 'id' | 'time'>): void {
    this.record(event).catch((error: unknown) => this.notWritten(event.type, error));
  }

  /**
   * A refusal, recorded without waiting: the first of its key's window, then its 10th, 100th...,
   * each with `details.count` (how many of the window so far) and `details.window_seconds`.
   */
  recordRefusal(event: Omit<AuditEvent, 'id' | 'time'>, key: RefusalKey): void {
    const windowSeconds = key.windowSeconds ?? REFUSAL_WINDOW_SECONDS;
    const counterKey = `audit:${event.type}:${event.tenant ?? ''}:${key.where}:${key.who}`;
    this.store.counters
      .increment([counterKey], windowSeconds)
      .then(([counted]) => {
        if (!counted || !reportedCount(counted.count)) return;
        this.recordLater({ ...event, details: { ...event.details, count: counted.count, window_seconds: windowSeconds } });
      })
      .catch((error: unknown) => this.notWritten(event.type, error));
  }

  private notWritten(type: AuditEventType, error: unknown): void {
    this.logger.warn('audit event not written', { type, error: (error as Error).name });
  }

  /** One tenant's events, newest first. @throws InvalidRequest for a malformed query or a cursor we did not give. */
  async list(query: AuditQuery): Promise<AuditEventPage> {
    const limit = query.limit ?? 50;
    if (!Number.isInteger(limit) || limit < 1 || limit > 200) throw new InvalidRequest('limit must be an integer between 1 and 200');
    if (query.type !== undefined && !(AUDIT_EVENT_TYPES as readonly string[]).includes(query.type)) {
      throw new InvalidRequest(`type must be one of ${AUDIT_EVENT_TYPES.join(', ')}`);
    }
    const since = instant(query.since, 'since');
    const until = instant(query.until, 'until');
    const tenant = query.tenant ?? undefined;
    const scope = { tenant: tenant ?? null, type: query.type ?? null };
    const state: CursorState = query.cursor !== undefined ? await this.#open(query.cursor, scope) : {};
    const logs = query.type !== undefined ? [auditLogOf(query.type)] : LOGS;
    const pages = await Promise.all(logs.map(async (log): Promise<AuditPage> => {
      const at = state[log];
      if (at === null) return { events: [], positions: [] };
      return this.#log.list({
        tenant,
        log,
        limit,
        ...(query.type !== undefined ? { type: query.type } : {}),
        ...(since !== undefined ? { since } : {}),
        ...(until !== undefined ? { until } : {}),
        ...(at !== undefined ? { cursor: at } : {}),
      });
    }));
    // Both logs, newest first, `limit` of them. Two logs' events can share a position (Redis: one
    // stream ID each within the same millisecond): then the later `time` first, then a change
    // before activity. Each log's cursor is its own, so a tie split across pages loses nothing.
    const merged = pages
      .flatMap((page, index) => page.events.map((event, at) => ({ log: logs[index]!, position: page.positions[at]!, event })))
      .sort((a, b) => comparePositions(b.position, a.position)
        || (b.event.time > a.event.time ? 1 : b.event.time < a.event.time ? -1 : 0)
        || LOGS.indexOf(a.log) - LOGS.indexOf(b.log))
      .slice(0, limit);
    const next: CursorState = {};
    let more = false;
    logs.forEach((log, index) => {
      const page = pages[index]!;
      const taken = merged.filter((entry) => entry.log === log);
      if (taken.length < page.events.length) {
        next[log] = taken.length ? taken[taken.length - 1]!.position : (state[log] ?? undefined);
        if (taken.length === 0 && state[log] === undefined) delete next[log];
        more = true;
      } else if (page.next !== undefined) {
        next[log] = page.next;
        more = true;
      } else {
        next[log] = null;
      }
    });
    return {
      events: merged.map((entry) => entry.event as unknown as AuditEvent),
      ...(more ? { next: await this.#seal(next, scope) } : {}),
    };
  }

  /** A cursor: where each log goes on, bound to the tenant and type it was given for, sealed. */
  async #seal(state: CursorState, scope: { tenant: string | null; type: string | null }): Promise<string> {
    const body = Buffer.from(JSON.stringify(state)).toString('base64url');
    return `${body}.${await this.#mac(body, scope)}`;
  }

  async #open(cursor: string, scope: { tenant: string | null; type: string | null }): Promise<CursorState> {
    const refused = new InvalidRequest('cursor is not one this server gave');
    if (!AUDIT_CURSOR_SHAPE.test(cursor)) throw refused;
    const [body, mac] = cursor.split('.') as [string, string];
    if (!constantTimeEqual(mac, await this.#mac(body, scope))) throw refused;
    return JSON.parse(Buffer.from(body, 'base64url').toString('utf8')) as CursorState;
  }

  async #mac(body: string, scope: { tenant: string | null; type: string | null }): Promise<string> {
    const key = await this.store.sharedSecret('audit-cursors');
    return createHmac('sha256', key).update(JSON.stringify([scope.tenant, scope.type, body])).digest('base64url').slice(0, 22);
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
