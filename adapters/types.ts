/**
 * The store contract shared by the memory and Redis stores: one adapter per oidc-provider model
 * (the engine's adapter interface) plus our own records (client configurations, app registrations).
 */
export interface EnginePayload {
  [claim: string]: unknown;
  grantId?: string;
  uid?: string;
  userCode?: string;
  consumed?: number;
}

/** What a store knows of a consumed entry (a code or refresh token). */
export interface Consumption {
  /** When it was consumed (epoch milliseconds). */
  consumedAt: number;
  /** Whether the request that consumed it completed (confirm()); codes only. */
  confirmed: boolean;
}

/** An entry written in the same step as another entry's consumption (EngineAdapter.consumeCompleting). */
export interface NextEntry {
  /** The engine model of the entry (RefreshToken). */
  model: string;
  id: string;
  payload: EnginePayload;
  expiresIn?: number | undefined;
}

/**
 * node-oidc-provider's adapter interface, as the engine calls it, plus what single use needs.
 *
 * No store keeps an index of a grant's entries: an entry bound to a grant (a code, a refresh token)
 * can be used only while the grant's own entry exists, which the engine checks at every use, so a
 * grant ends when its Grant entry is destroyed, whatever number of tokens it has had, and its
 * entries expire on their own. `revokeByGrantId` therefore walks nothing.
 */
export interface EngineAdapter {
  /** Creates or replaces an entry; a consumed mark it already has is kept (single use survives a re-save). */
  upsert(id: string, payload: EnginePayload, expiresIn?: number): Promise<void>;
  find(id: string): Promise<EnginePayload | undefined>;
  /**
   * The entry (a code, a refresh token) and the Grant entry its payload names, read together: one
   * step where the store can (`readsWithGrant`), else the entry alone (`grant` undefined; the
   * engine then reads the grant itself). The engine reads the grant right after either.
   */
  findWithGrant(id: string): Promise<{ entry: EnginePayload | undefined; grant: EnginePayload | undefined }>;
  /** Whether findWithGrant reads the grant with the entry (not on Redis Cluster: another slot). */
  readonly readsWithGrant: boolean;
  findByUid(uid: string): Promise<EnginePayload | undefined>;
  findByUserCode(userCode: string): Promise<EnginePayload | undefined>;
  /** Marks the entry consumed; throws AlreadyConsumed when it was consumed before or is gone (atomic). */
  consume(id: string): Promise<void>;
  /**
   * Consumes the entry and writes `next` (the refresh token its request issues: the first of a
   * code's exchange, a rotated token's successor) in the same step where the store can, so that no
   * other request ever sees the entry consumed without it; a code is also confirmed (its request
   * completed, as confirm()). Throws AlreadyConsumed as consume does, and then writes nothing.
   * Where one step cannot hold both (Redis Cluster: another slot), consume, write and confirm go
   * one after the other, and the answer is then whether a code was marked replayed
   * (markReplayed) in between, as confirm's; else false.
   */
  consumeCompleting(id: string, next?: NextEntry): Promise<boolean>;
  /**
   * Clears the consumed mark: undoes a consume whose request then failed before answering; not for
   * an entry marked replayed meanwhile (markReplayed), which stays used up.
   */
  unconsume(id: string): Promise<void>;
  /**
   * Records that the request that consumed the entry completed (its tokens went out), and answers
   * in the same step whether the entry was marked replayed (markReplayed) before: false when it is
   * gone.
   */
  confirm(id: string): Promise<boolean>;
  /**
   * Marks a consumed entry as presented again (a replay) for as long as it lives, for the request
   * that consumed it to see when it confirms; nothing when it is gone.
   */
  markReplayed(id: string): Promise<void>;
  /** The consumption of an entry: undefined when it is gone or was never consumed. */
  consumption(id: string): Promise<Consumption | undefined>;
  destroy(id: string): Promise<void>;
  /** Nothing to walk: a grant's entries end with its Grant entry (see above). */
  revokeByGrantId(grantId: string): Promise<void>;
}

/**
 * The least a consumed entry (a code, a refresh token) lives after its consumption, in seconds:
 * the request that consumed it confirms it when it answers, and a replay meanwhile marks it
 * (markReplayed); an entry that expired in between would lose that mark with it.
 */
export const CONSUMED_ENTRY_MIN_SECONDS = 30;

/** A record changed; `{ kind: undefined }` means changes may have been missed (forget everything). */
export type RecordChange = { kind: string; id: string } | { kind: undefined };

/**
 * Our own records. A record belongs to one group (the tenant for a client configuration) fixed at
 * creation; `list` answers by group.
 */
export interface RecordStore {
  get<T>(kind: string, id: string): Promise<T | undefined>;
  /** The record with its revision, which changes at every write. */
  getVersioned<T>(kind: string, id: string): Promise<{ value: T; revision: number } | undefined>;
  /**
   * Creates a record only where none is: false when one exists (so that two first writes at once
   * cannot overwrite each other: the loser reads and decides again).
   */
  create<T>(kind: string, id: string, group: string, value: T): Promise<boolean>;
  /** Creates or overwrites a record. */
  put<T>(kind: string, id: string, group: string, value: T): Promise<void>;
  /**
   * Compare-and-set: overwrites the record only if it still exists at `revision`; false when it
   * changed or went meanwhile (so that concurrent changes never undo each other).
   */
  replace<T>(kind: string, id: string, value: T, revision: number): Promise<boolean>;
  delete(kind: string, id: string): Promise<boolean>;
  list<T>(kind: string, group: string): Promise<T[]>;
  /** The IDs of the records of `kind` in `group`, in no order (`list` gives their values only). */
  ids(kind: string, group: string): Promise<string[]>;
  /**
   * The groups of `kind` that hold at least one record, in no order (every tenant that has a
   * client configuration): what a backup's export needs to find every record without knowing the
   * tenants. Walks the whole store on Redis (SCAN, in steps): for the operator's tools, never for
   * a request.
   */
  groups(kind: string): Promise<string[]>;
  /**
   * Tells `listener` of every change to a record, made by this process or (Redis) by any process
   * sharing the store, before the change is visible to readers elsewhere: what read caches need.
   */
  watch(listener: (change: RecordChange) => void): void;
  /** False while watch() cannot promise to tell of every change (Redis: subscription down). */
  readonly watching: boolean;
}

/**
 * A fixed-window count and the whole seconds until its window ends, rounded up: at least 1 while
 * the window lasts, 0 when there is none (count 0).
 */
export interface WindowCount {
  count: number;
  resetsIn: number;
}

/**
 * Fixed-window counters shared by every process on the store (rate limits). A window starts at the
 * first increment of a key and lasts `windowSeconds`; later increments do not move it (their
 * `windowSeconds` is ignored); the key is gone when it ends. Counter keys are a namespace of their
 * own: they never meet engine entries or records.
 */
/** A counter window in milliseconds; anything but a positive number of seconds is a RangeError. */
export function windowMillis(windowSeconds: number): number {
  const windowMs = Math.round(windowSeconds * 1000);
  if (!Number.isFinite(windowSeconds) || windowMs < 1) throw new RangeError('windowSeconds must be a positive number');
  return windowMs;
}

export interface Counters {
  /**
   * Adds one to each key, each atomically (on Redis: concurrent calls from any number of
   * processes each see distinct counts of a key); answers the new counts, in order. The keys of
   * one call move in one step on a single Redis or under Sentinel; on a Redis Cluster each key is
   * a step of its own (they are in different slots). A key given twice counts twice. Rejects with
   * a RangeError unless `windowSeconds` is a positive number (fractions allowed).
   */
  increment(keys: readonly string[], windowSeconds: number): Promise<WindowCount[]>;
  /** The current counts, in order, without changing them (one round trip on Redis; on a cluster, one per key, in parallel). */
  peek(keys: readonly string[]): Promise<WindowCount[]>;
  /**
   * Ends the windows of the keys now (an operator lifting a hold): their next increment counts
   * from 1 in a new window. Keys without a window are ignored. Atomic on a single Redis or under
   * Sentinel; on a cluster, atomic per key.
   */
  clear(keys: readonly string[]): Promise<void>;
}

/** An audit event as stored: its own fields are the audit trail's (src/audit), the store keeps JSON. */
export interface StoredAuditEvent {
  id: string;
  /** ISO 8601. */
  time: string;
  type: string;
  /** Absent: an event of no tenant (the platform's). */
  tenant?: string;
  [field: string]: unknown;
}

/** Orders two audit log positions (`<epoch ms>-<sequence>`) as numbers: negative when `a` is older. */
export function comparePositions(a: string, b: string): number {
  const [aMs = 0, aSeq = 0] = a.split('-').map(Number);
  const [bMs = 0, bSeq = 0] = b.split('-').map(Number);
  return aMs - bMs || aSeq - bSeq;
}

/** How long an event log keeps events: by age, and at most so many per tenant (the oldest go first). */
export interface AuditRetention {
  maxAgeMs: number;
  maxEvents: number;
}

/** A page of events, newest first; `next` continues after the last one. */
export interface AuditPage {
  events: StoredAuditEvent[];
  /** The position of each event in its log (`<epoch ms>-<sequence>`), in the order of `events`. */
  positions: string[];
  next?: string;
}

/**
 * The two logs of a tenant: `changes` (what changed its setup: clients, apps, consents, keys) and
 * `activity` (sign-ins, sign-outs, refusals). Each is trimmed on its own, so that no flood of
 * activity can push a change out of the trail.
 */
export type AuditLogName = 'changes' | 'activity';

/**
 * The audit trail's storage: an append-only log per tenant (one more for events of no tenant),
 * kept by age and count. Reads are per tenant only: no read spans tenants.
 */
export interface AuditLog {
  /**
   * Appends an event to its tenant's log `log` (`now` in epoch ms), trimming what retention lets go
   * from that log only. Rejects when it could not be written.
   */
  append(event: StoredAuditEvent, retention: AuditRetention, now: number, log: AuditLogName): Promise<void>;
  /**
   * One log of one tenant (`tenant` undefined: the platform's), newest first, of `type` when given,
   * from `since` to `until` (epoch ms, inclusive), at most `limit`, strictly after `cursor` (a
   * page's `next`, or a position of a listed event).
   */
  list(query: AuditLogQuery): Promise<AuditPage>;
}

/** A read of one log of one tenant (see AuditLog.list). */
export interface AuditLogQuery {
  tenant: string | undefined;
  log: AuditLogName;
  type?: string;
  since?: number;
  until?: number;
  limit: number;
  cursor?: string;
}

export interface Store {
  readonly type: 'memory' | 'redis';
  engine(model: string): EngineAdapter;
  readonly records: RecordStore;
  readonly counters: Counters;
  readonly audit: AuditLog;
  /**
   * A random secret of 32 bytes shared by every process on the store under `name`: made by the
   * first that asks, the same for all afterwards (until the store is emptied). For values that
   * must be recognised as our own by any instance and the CLI (e.g. the audit trail's cursors).
   */
  sharedSecret(name: string): Promise<Buffer>;
  /**
   * False while the store cannot be relied on (Redis: connection or change subscription down, or
   * the store closed); answered from memory, without a round trip, so that a server can refuse
   * work at once. A Redis store turns it back to true by itself once Redis answers again.
   */
  readonly available: boolean;
  /**
   * Resolves when the store answers for all it holds; rejects otherwise (the readiness probe).
   * Redis Cluster: every slot has a master that answers, so it rejects while one fails over.
   */
  ping(): Promise<void>;
  /**
   * Tells `listener` when the store is found emptied while in use (Redis restarted without
   * persistence, flushed, or failed over to a replica that had nothing): what was stored before is
   * gone, so what a server writes for itself at start must be written again. The Redis store checks
   * after every reconnect and every few seconds; the memory store is never emptied while its process
   * runs, so it never calls.
   */
  onEmptied(listener: () => void): void;
  close(): Promise<void>;
}

/**
 * Thrown by a store operation that could not reach the store (connection down, no answer in time):
 * nothing may be assumed written (nor unwritten: a write that timed out may still be carried out
 * by Redis later, e.g. a consume once a frozen Redis runs again). It carries the shape of an
 * exposed oidc-provider error, so that the engine itself answers 503 `temporarily_unavailable` (or
 * redirects with it from /authorize, RFC 6749 §4.1.2.1) instead of a 500; `reason` is a short code,
 * never request data (the Redis store: 'connection', 'timeout', 'cluster', 'loading', 'busy',
 * 'read-only', 'refused' for OOM, MISCONF and NOREPLICAS).
 */
export class StoreUnavailable extends Error {
  readonly expose = true;
  readonly statusCode = 503;
  readonly error = 'temporarily_unavailable';
  readonly error_description = 'the service is temporarily unavailable, try again shortly';

  constructor(readonly reason: string) {
    super('temporarily_unavailable');
    this.name = 'StoreUnavailable';
  }
}

/** Thrown by `consume` when a code or refresh token was already used: a replay. */
export class AlreadyConsumed extends Error {
  constructor() {
    super('already consumed');
    this.name = 'AlreadyConsumed';
  }
}
