/*
 * The node-oidc-provider adapter on Redis, one per engine model (Session, Grant,
 * AuthorizationCode, RefreshToken, ...). An entry is a hash at `<prefix><Model>:{<id>}` holding
 * the payload and the consumed, confirmed and replayed marks that make codes and refresh tokens
 * single use: consuming sets the mark only if none is there, in one script, so two requests racing
 * with the same code cannot both win. Sessions are also found by uid and device flows by user code, through
 * a key that holds the entry's id. Grants need no index of their tokens (see the key layout in
 * index.ts), so revokeByGrantId has nothing to do.
 */
import { AlreadyConsumed, CONSUMED_ENTRY_MIN_SECONDS, type Consumption, type EngineAdapter, type EnginePayload, type NextEntry } from '../types.js';
import { StoreError, type Io } from './connection.js';
import type { Client } from './scripts.js';

/** The hash tag of an id: the whole id, so that each entry picks its own slot. */
function tagged(id: string): string {
  return `{${id}}`;
}

/** An entry's payload as the engine reads it, from its stored fields. */
function parsed(payload: string | null | undefined, consumed: string | null | undefined): EnginePayload | undefined {
  if (!payload) return undefined;
  const value = JSON.parse(payload) as EnginePayload;
  // The engine's `consumed` is in epoch seconds; we keep milliseconds (races and retries are told apart by them).
  if (consumed) value.consumed = Math.floor(Number(consumed) / 1000);
  return value;
}

/** What Redis answers a script whose keys are not all in one slot (CROSSSLOT; ERR from a proxy). */
const REFUSED_ACROSS_SLOTS = new Set(['CROSSSLOT', 'ERR']);

/** An entry's payload as stored: the consumed mark is a field of its own. */
function storedPayload(payload: EnginePayload): string {
  const { consumed: _consumed, ...stored } = payload;
  return JSON.stringify(stored);
}

/** A time to live in whole seconds; 0 for none. */
function ttlOf(expiresIn: number | undefined): number {
  return expiresIn && expiresIn > 0 ? Math.ceil(expiresIn) : 0;
}

/** The engine adapter of one model: its entries, single-use marks, lookups by uid and user code. */
export class RedisEngineAdapter implements EngineAdapter {
  constructor(
    private readonly model: string,
    private readonly io: Io,
    private readonly prefix: string,
    /** False on Redis Cluster: an entry's grant is in another slot, so no script reads both. */
    private readsBoth = true,
  ) {}

  get readsWithGrant(): boolean {
    return this.readsBoth;
  }

  private key(id: string, model = this.model): string {
    return `${this.prefix}${model}:${tagged(id)}`;
  }

  upsert(id: string, payload: EnginePayload, expiresIn?: number): Promise<void> {
    return this.io.run(async (redis) => {
      const ttl = ttlOf(expiresIn);
      const writes: Promise<unknown>[] = [redis.taUpsert(this.key(id), storedPayload(payload), ttl)];
      if (this.model === 'Session' && payload.uid) writes.push(this.index(redis, 'uid', payload.uid, id, ttl));
      if (payload.userCode) writes.push(this.index(redis, 'userCode', payload.userCode, id, ttl));
      await Promise.all(writes);
    });
  }

  private index(redis: Client, kind: string, value: string, id: string, ttl: number): Promise<unknown> {
    const key = `${this.prefix}${kind}:${tagged(value)}`;
    return ttl > 0 ? redis.set(key, id, 'EX', ttl) : redis.set(key, id);
  }

  private async read(redis: Client, id: string): Promise<EnginePayload | undefined> {
    const [payload, consumed] = await redis.hmget(this.key(id), 'p', 'c');
    return parsed(payload, consumed);
  }

  find(id: string): Promise<EnginePayload | undefined> {
    return this.io.run((redis) => this.read(redis, id));
  }

  findWithGrant(id: string): Promise<{ entry: EnginePayload | undefined; grant: EnginePayload | undefined }> {
    const alone = () => this.find(id).then((entry) => ({ entry, grant: undefined }));
    if (!this.readsBoth) return alone();
    return this.io.run(async (redis) => {
      const [payload, consumed, grantPayload, grantConsumed] = await redis.taReadWithGrant(this.key(id), `${this.prefix}Grant:`);
      const entry = parsed(payload, consumed);
      const grant = parsed(grantPayload, grantConsumed);
      // The grant the script matched must be the one the payload names (else the engine reads it).
      return { entry, grant: entry && grant && typeof entry.grantId === 'string' && grant.jti === entry.grantId ? grant : undefined };
    }).catch((error: unknown) => {
      // A Redis that refuses a script reading a key it does not declare (a sharded database behind
      // one address, say): read one key at a time from now on, as on a cluster.
      if (!(error instanceof StoreError)) throw error;
      this.readsBoth = false;
      return alone();
    });
  }

  private findVia(kind: string, value: string): Promise<EnginePayload | undefined> {
    return this.io.run(async (redis) => {
      const id = await redis.get(`${this.prefix}${kind}:${tagged(value)}`);
      return id ? this.read(redis, id) : undefined;
    });
  }

  findByUid(uid: string): Promise<EnginePayload | undefined> {
    return this.findVia('uid', uid);
  }

  findByUserCode(userCode: string): Promise<EnginePayload | undefined> {
    return this.findVia('userCode', userCode);
  }

  consume(id: string): Promise<void> {
    return this.io.run(async (redis) => {
      const set = await redis.taConsume(this.key(id), Date.now(), CONSUMED_ENTRY_MIN_SECONDS * 1000);
      if (set === 0) throw new AlreadyConsumed();
    });
  }

  consumeCompleting(id: string, next?: NextEntry): Promise<boolean> {
    if (!this.readsBoth && next) return this.consumeThenComplete(id, next);
    return this.io.run(async (redis) => {
      const now = Date.now();
      const floor = CONSUMED_ENTRY_MIN_SECONDS * 1000;
      const confirming = this.confirms ? '1' : '0';
      const set = next
        ? await redis.taConsumeCompleting(2, this.key(id), this.key(next.id, next.model), now, floor, confirming, storedPayload(next.payload), ttlOf(next.expiresIn))
        : await redis.taConsumeCompleting(1, this.key(id), now, floor, confirming);
      if (set === 0) throw new AlreadyConsumed();
      // Consumed (and a code confirmed) in one step: no replay could mark it in between.
      return false;
    }).catch((error: unknown) => {
      // A Redis that refuses a script on two keys of different slots (a sharded database behind
      // one address): one key at a time from now on, as on a cluster. Refused before it ran, the
      // script wrote nothing; any other error goes to the caller.
      if (!(error instanceof StoreError) || !REFUSED_ACROSS_SLOTS.has(error.code) || !next) throw error;
      this.readsBoth = false;
      return this.consumeThenComplete(id, next);
    });
  }

  /**
   * consumeCompleting in three steps (Redis Cluster): the token is in another slot than the entry.
   * Once the consume answered, it is known to be this request's: a failure of the next steps undoes
   * it (best effort), so that the retry our 503 asks for is not taken for a replay.
   */
  private async consumeThenComplete(id: string, next: NextEntry): Promise<boolean> {
    await this.consume(id);
    try {
      await this.io.run((redis) => redis.taUpsert(this.key(next.id, next.model), storedPayload(next.payload), ttlOf(next.expiresIn)));
      return this.confirms ? await this.confirm(id) : false;
    } catch (error) {
      await this.unconsume(id).catch(() => undefined);
      throw error;
    }
  }

  /** Codes are confirmed when their exchange completes (single use tells a replay by it). */
  private get confirms(): boolean {
    return this.model === 'AuthorizationCode';
  }

  unconsume(id: string): Promise<void> {
    return this.io.run(async (redis) => {
      await redis.taUnconsume(this.key(id));
    });
  }

  confirm(id: string): Promise<boolean> {
    return this.io.run(async (redis) => (await redis.taConfirm(this.key(id), Date.now())) === 1);
  }

  markReplayed(id: string): Promise<void> {
    return this.io.run(async (redis) => {
      await redis.taMarkReplayed(this.key(id), Date.now());
    });
  }

  consumption(id: string): Promise<Consumption | undefined> {
    return this.io.run(async (redis) => {
      const [consumed, confirmed] = await redis.hmget(this.key(id), 'c', 'd');
      return consumed ? { consumedAt: Number(consumed), confirmed: confirmed !== null && confirmed !== undefined } : undefined;
    });
  }

  destroy(id: string): Promise<void> {
    return this.io.run(async (redis) => {
      await redis.del(this.key(id));
    });
  }

  async revokeByGrantId(): Promise<void> {}
}
