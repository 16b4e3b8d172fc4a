import { randomBytes } from 'node:crypto';
import {
  AlreadyConsumed,
  CONSUMED_ENTRY_MIN_SECONDS,
  comparePositions,
  windowMillis,
  type AuditLog,
  type AuditLogName,
  type AuditLogQuery,
  type AuditPage,
  type AuditRetention,
  type Consumption,
  type Counters,
  type EngineAdapter,
  type EnginePayload,
  type NextEntry,
  type RecordChange,
  type RecordStore,
  type Store,
  type StoredAuditEvent,
  type WindowCount,
} from './types.js';

interface Entry {
  value: unknown;
  expiresAt: number;
}

/** A Map with per-entry expiry; expired entries vanish on read and on a periodic sweep. */
class ExpiringMap {
  private readonly map = new Map<string, Entry>();
  private readonly sweeper: NodeJS.Timeout;

  constructor(sweepMs = 60_000) {
    this.sweeper = setInterval(() => this.sweep(), sweepMs);
    this.sweeper.unref();
  }

  get<T>(key: string): T | undefined {
    const entry = this.map.get(key);
    if (!entry) return undefined;
    if (entry.expiresAt <= Date.now()) {
      this.map.delete(key);
      return undefined;
    }
    return entry.value as T;
  }

  set(key: string, value: unknown, ttlSeconds?: number): void {
    this.setUntil(key, value, ttlSeconds === undefined ? Infinity : Date.now() + ttlSeconds * 1000);
  }

  setUntil(key: string, value: unknown, expiresAt: number): void {
    this.map.set(key, { value, expiresAt });
  }

  expiresAt(key: string): number | undefined {
    return this.map.get(key)?.expiresAt;
  }

  delete(key: string): boolean {
    return this.map.delete(key);
  }

  /** Every key (expired ones included: a caller reads each with get). */
  keys(): string[] {
    return [...this.map.keys()];
  }

  sweep(): void {
    const now = Date.now();
    for (const [key, entry] of this.map) if (entry.expiresAt <= now) this.map.delete(key);
  }

  close(): void {
    clearInterval(this.sweeper);
    this.map.clear();
  }
}

/** Payloads are stored as JSON text so that callers never share (and mutate) stored objects. */
const freeze = (payload: unknown): string => JSON.stringify(payload);
const thaw = <T>(text: string | undefined): T | undefined =>
  text === undefined ? undefined : (JSON.parse(text) as T);

/** An engine entry as kept: the payload and, once consumed, when (epoch ms) and whether confirmed. */
interface StoredEntry {
  payload: EnginePayload;
  consumed?: number;
  confirmed?: boolean;
  /** Presented again after its consumption (markReplayed). */
  replayed?: boolean;
}

class MemoryEngineAdapter implements EngineAdapter {
  constructor(
    private readonly model: string,
    private readonly data: ExpiringMap,
  ) {}

  private key(id: string): string {
    return `${this.model}:${id}`;
  }

  private read(id: string): StoredEntry | undefined {
    return thaw<StoredEntry>(this.data.get<string>(this.key(id)));
  }

  /** Writes an entry back without moving its expiry. */
  private rewrite(id: string, entry: StoredEntry): void {
    const key = this.key(id);
    this.data.setUntil(key, freeze(entry), this.data.expiresAt(key) ?? Infinity);
  }

  async upsert(id: string, payload: EnginePayload, expiresIn?: number): Promise<void> {
    this.write(id, payload, expiresIn);
  }

  private write(id: string, payload: EnginePayload, expiresIn?: number): void {
    const { consumed: _consumed, ...rest } = payload;
    const existing = this.read(id);
    // A re-saved entry keeps its consumed mark, as on Redis.
    this.data.set(this.key(id), freeze({ ...existing, payload: rest }), expiresIn);
    if (this.model === 'Session' && payload.uid) this.data.set(`uid:${payload.uid}`, id, expiresIn);
    if (payload.userCode) this.data.set(`userCode:${payload.userCode}`, id, expiresIn);
  }

  async find(id: string): Promise<EnginePayload | undefined> {
    const entry = this.read(id);
    if (!entry) return undefined;
    return entry.consumed === undefined ? entry.payload : { ...entry.payload, consumed: Math.floor(entry.consumed / 1000) };
  }

  readonly readsWithGrant = true;

  async findWithGrant(id: string): Promise<{ entry: EnginePayload | undefined; grant: EnginePayload | undefined }> {
    const entry = await this.find(id);
    const grantId = entry?.grantId;
    const grant = typeof grantId === 'string' ? await new MemoryEngineAdapter('Grant', this.data).find(grantId) : undefined;
    return { entry, grant };
  }

  async findByUid(uid: string): Promise<EnginePayload | undefined> {
    const id = this.data.get<string>(`uid:${uid}`);
    return id === undefined ? undefined : this.find(id);
  }

  async findByUserCode(userCode: string): Promise<EnginePayload | undefined> {
    const id = this.data.get<string>(`userCode:${userCode}`);
    return id === undefined ? undefined : this.find(id);
  }

  async consume(id: string): Promise<void> {
    this.markConsumed(id, false);
  }

  async consumeCompleting(id: string, next?: NextEntry): Promise<boolean> {
    // One step, as on Redis: nothing else runs between these lines (no replay can mark it).
    // Codes are confirmed when their exchange completes (single use tells a replay by it).
    this.markConsumed(id, this.model === 'AuthorizationCode');
    if (next) new MemoryEngineAdapter(next.model, this.data).write(next.id, next.payload, next.expiresIn);
    return false;
  }

  private markConsumed(id: string, confirmed: boolean): void {
    const entry = this.read(id);
    if (!entry || entry.consumed !== undefined) throw new AlreadyConsumed();
    this.rewrite(id, confirmed ? { ...entry, consumed: Date.now(), confirmed: true } : { ...entry, consumed: Date.now() });
    // As on Redis: its request's confirmation must still find it (CONSUMED_ENTRY_MIN_SECONDS).
    const key = this.key(id);
    const floor = Date.now() + CONSUMED_ENTRY_MIN_SECONDS * 1000;
    if ((this.data.expiresAt(key) ?? Infinity) < floor) this.data.setUntil(key, this.data.get(key), floor);
  }

  async unconsume(id: string): Promise<void> {
    const entry = this.read(id);
    // As on Redis: an entry marked replayed stays used up (the replay ended what it issued).
    if (entry?.consumed === undefined || entry.replayed === true) return;
    const { consumed: _consumed, confirmed: _confirmed, ...rest } = entry;
    this.rewrite(id, rest);
  }

  async confirm(id: string): Promise<boolean> {
    const entry = this.read(id);
    if (!entry) return false;
    this.rewrite(id, { ...entry, confirmed: true });
    return entry.replayed === true;
  }

  async markReplayed(id: string): Promise<void> {
    const entry = this.read(id);
    if (entry) this.rewrite(id, { ...entry, replayed: true });
  }

  async consumption(id: string): Promise<Consumption | undefined> {
    const entry = this.read(id);
    return entry?.consumed === undefined ? undefined : { consumedAt: entry.consumed, confirmed: entry.confirmed === true };
  }

  async destroy(id: string): Promise<void> {
    this.data.delete(this.key(id));
  }

  async revokeByGrantId(): Promise<void> {}
}

class MemoryRecords implements RecordStore {
  readonly watching = true;
  private readonly listeners: Array<(change: RecordChange) => void> = [];

  constructor(private readonly data: ExpiringMap) {}

  watch(listener: (change: RecordChange) => void): void {
    this.listeners.push(listener);
  }

  private changed(kind: string, id: string): void {
    for (const listener of this.listeners) listener({ kind, id });
  }

  async get<T>(kind: string, id: string): Promise<T | undefined> {
    return (await this.getVersioned<T>(kind, id))?.value;
  }

  async getVersioned<T>(kind: string, id: string): Promise<{ value: T; revision: number } | undefined> {
    const stored = thaw<{ value: T; revision: number }>(this.data.get<string>(`rec:${kind}:${id}`));
    return stored && { value: stored.value, revision: stored.revision };
  }

  async replace<T>(kind: string, id: string, value: T, revision: number): Promise<boolean> {
    const key = `rec:${kind}:${id}`;
    const stored = thaw<{ group: string; revision: number }>(this.data.get<string>(key));
    if (!stored || stored.revision !== revision) return false;
    this.data.set(key, freeze({ group: stored.group, value, revision: revision + 1 }));
    this.changed(kind, id);
    return true;
  }

  async create<T>(kind: string, id: string, group: string, value: T): Promise<boolean> {
    if (this.data.get<string>(`rec:${kind}:${id}`) !== undefined) return false;
    await this.put(kind, id, group, value);
    return true;
  }

  async put<T>(kind: string, id: string, group: string, value: T): Promise<void> {
    const key = `rec:${kind}:${id}`;
    const before = thaw<{ group: string; revision: number }>(this.data.get<string>(key));
    const revision = (before?.revision ?? 0) + 1;
    this.data.set(key, freeze({ group, value, revision }));
    // Moved to another group: listed there only.
    if (before && before.group !== group) this.data.get<Set<string>>(`recidx:${kind}:${before.group}`)?.delete(id);
    const indexKey = `recidx:${kind}:${group}`;
    const members = this.data.get<Set<string>>(indexKey) ?? new Set<string>();
    this.data.set(indexKey, members.add(id));
    this.changed(kind, id);
  }

  async delete(kind: string, id: string): Promise<boolean> {
    const key = `rec:${kind}:${id}`;
    const stored = thaw<{ group: string }>(this.data.get<string>(key));
    if (!stored) return false;
    this.data.delete(key);
    this.data.get<Set<string>>(`recidx:${kind}:${stored.group}`)?.delete(id);
    this.changed(kind, id);
    return true;
  }

  async ids(kind: string, group: string): Promise<string[]> {
    return [...(this.data.get<Set<string>>(`recidx:${kind}:${group}`) ?? [])].filter((id) => this.data.get(`rec:${kind}:${id}`) !== undefined);
  }

  async groups(kind: string): Promise<string[]> {
    const prefix = `recidx:${kind}:`;
    return this.data.keys()
      .filter((key) => key.startsWith(prefix) && (this.data.get<Set<string>>(key)?.size ?? 0) > 0)
      .map((key) => key.slice(prefix.length));
  }

  async list<T>(kind: string, group: string): Promise<T[]> {
    const ids = [...(this.data.get<Set<string>>(`recidx:${kind}:${group}`) ?? [])];
    const found = await Promise.all(ids.map((id) => this.get<T>(kind, id)));
    return found.filter((value): value is Awaited<T> => value !== undefined) as T[];
  }
}

/** Fixed windows, as on Redis: the first increment of a key starts its window, later ones keep it. */
class MemoryCounters implements Counters {
  constructor(private readonly data: ExpiringMap) {}

  async increment(keys: readonly string[], windowSeconds: number): Promise<WindowCount[]> {
    const windowMs = windowMillis(windowSeconds);
    const now = Date.now();
    return keys.map((key) => {
      const count = (this.data.get<number>(`rl:${key}`) ?? 0) + 1;
      const expiresAt = count === 1 ? now + windowMs : this.data.expiresAt(`rl:${key}`)!;
      this.data.setUntil(`rl:${key}`, count, expiresAt);
      return { count, resetsIn: secondsLeft(expiresAt, now) };
    });
  }

  async peek(keys: readonly string[]): Promise<WindowCount[]> {
    const now = Date.now();
    return keys.map((key) => {
      const count = this.data.get<number>(`rl:${key}`);
      return count === undefined
        ? { count: 0, resetsIn: 0 }
        : { count, resetsIn: secondsLeft(this.data.expiresAt(`rl:${key}`)!, now) };
    });
  }

  async clear(keys: readonly string[]): Promise<void> {
    for (const key of keys) this.data.delete(`rl:${key}`);
  }
}

/** One tenant's events as the memory store keeps them: oldest first, each with its position. */
interface MemoryAuditEntry {
  /** Position in the log, `<epoch ms>-<sequence>` like a Redis stream ID. */
  position: string;
  at: number;
  event: StoredAuditEvent;
}

/** The audit log in memory: the contract of the Redis streams (per tenant and log, by age and count, newest first). */
class MemoryAuditLog implements AuditLog {
  private readonly logs = new Map<string, MemoryAuditEntry[]>();
  private sequence = 0;

  private static keyOf(tenant: string | undefined, log: AuditLogName): string {
    return `${log}:${tenant === undefined ? '' : `t:${tenant}`}`;
  }

  async append(event: StoredAuditEvent, retention: AuditRetention, now: number, logName: AuditLogName): Promise<void> {
    const key = MemoryAuditLog.keyOf(event.tenant, logName);
    const log = this.logs.get(key) ?? [];
    this.sequence += 1;
    log.push({ position: `${now}-${this.sequence}`, at: now, event: structuredClone(event) });
    const oldest = now - retention.maxAgeMs;
    let drop = 0;
    while (drop < log.length && (log[drop]!.at < oldest || log.length - drop > retention.maxEvents)) drop += 1;
    this.logs.set(key, log.slice(drop));
  }

  async list(query: AuditLogQuery): Promise<AuditPage> {
    const log = this.logs.get(MemoryAuditLog.keyOf(query.tenant, query.log)) ?? [];
    const events: StoredAuditEvent[] = [];
    const positions: string[] = [];
    for (let index = log.length - 1; index >= 0; index -= 1) {
      const entry = log[index]!;
      // A cursor is the position of the last event of the page before: start strictly after it.
      if (query.cursor !== undefined && comparePositions(entry.position, query.cursor) >= 0) continue;
      if (query.until !== undefined && entry.at > query.until) continue;
      if (query.since !== undefined && entry.at < query.since) break;
      if (query.type !== undefined && entry.event.type !== query.type) continue;
      if (events.length === query.limit) return { events, positions, next: positions[positions.length - 1]! };
      events.push(structuredClone(entry.event));
      positions.push(entry.position);
    }
    return { events, positions };
  }
}

const secondsLeft = (expiresAt: number, now: number): number => Math.max(1, Math.ceil((expiresAt - now) / 1000));

/** The zero-setup store: everything in this process, gone when it stops. */
export function createMemoryStore(): Store {
  const data = new ExpiringMap();
  const adapters = new Map<string, EngineAdapter>();
  const secrets = new Map<string, Buffer>();
  let closed = false;
  return {
    type: 'memory',
    engine(model) {
      let adapter = adapters.get(model);
      if (!adapter) adapters.set(model, (adapter = new MemoryEngineAdapter(model, data)));
      return adapter;
    },
    records: new MemoryRecords(data),
    counters: new MemoryCounters(data),
    audit: new MemoryAuditLog(),
    async sharedSecret(name) {
      let secret = secrets.get(name);
      if (!secret) secrets.set(name, (secret = randomBytes(32)));
      return Buffer.from(secret);
    },
    get available() {
      return !closed;
    },
    async ping() {},
    // Emptied only when the process ends, and the server with it.
    onEmptied() {},
    async close() {
      closed = true;
      data.close();
    },
  };
}
