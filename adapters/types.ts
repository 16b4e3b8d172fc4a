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

/** node-oidc-provider's adapter interface, as the engine calls it. */
export interface EngineAdapter {
  upsert(id: string, payload: EnginePayload, expiresIn?: number): Promise<void>;
  find(id: string): Promise<EnginePayload | undefined>;
  findByUid(uid: string): Promise<EnginePayload | undefined>;
  findByUserCode(userCode: string): Promise<EnginePayload | undefined>;
  /** Marks the entry consumed; throws AlreadyConsumed when it was consumed before or is gone (atomic). */
  consume(id: string): Promise<void>;
  destroy(id: string): Promise<void>;
  revokeByGrantId(grantId: string): Promise<void>;
}

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
  /** Creates or overwrites a record. */
  put<T>(kind: string, id: string, group: string, value: T): Promise<void>;
  /**
   * Compare-and-set: overwrites the record only if it still exists at `revision`; false when it
   * changed or went meanwhile (so that concurrent changes never undo each other).
   */
  replace<T>(kind: string, id: string, value: T, revision: number): Promise<boolean>;
  delete(kind: string, id: string): Promise<boolean>;
  list<T>(kind: string, group: string): Promise<T[]>;
  /**
   * Tells `listener` of every change to a record, made by this process or (Redis) by any process
   * sharing the store, before the change is visible to readers elsewhere: what read caches need.
   */
  watch(listener: (change: RecordChange) => void): void;
  /** False while watch() cannot promise to tell of every change (Redis: subscription down). */
  readonly watching: boolean;
}

export interface Store {
  readonly type: 'memory' | 'redis';
  engine(model: string): EngineAdapter;
  readonly records: RecordStore;
  /** Resolves when the store answers; rejects otherwise. */
  ping(): Promise<void>;
  close(): Promise<void>;
}

/** Thrown by `consume` when a code or refresh token was already used: a replay. */
export class AlreadyConsumed extends Error {
  constructor() {
    super('already consumed');
    this.name = 'AlreadyConsumed';
  }
}

/** Models whose entries belong to a grant and go when the grant is revoked. */
export const GRANT_BOUND_MODELS: ReadonlySet<string> = new Set([
  'AccessToken',
  'AuthorizationCode',
  'RefreshToken',
  'DeviceCode',
  'BackchannelAuthenticationRequest',
]);

/**
 * Length of the grant id prefix that grant-bound token ids start with (see provider/token-ids.ts).
 * The Redis store hash-tags grant-bound keys and the grant index with it, so that every multi-key
 * operation on one grant stays in one Redis Cluster slot.
 */
export const GRANT_SLOT_LENGTH = 6;
