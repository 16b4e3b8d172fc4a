import { Redis, type RedisOptions } from 'ioredis';
import {
  AlreadyConsumed,
  GRANT_BOUND_MODELS,
  GRANT_SLOT_LENGTH,
  type EngineAdapter,
  type EnginePayload,
  type RecordChange,
  type RecordStore,
  type Store,
} from './types.js';

/*
 * Key layout (prefix `p`, default `talent-auth:`). The part in braces is the Redis Cluster hash tag:
 *   engine entry, grant-bound  p{Model}:{<first 6 chars of id>}<rest>   HASH p=payload c=consumed
 *   grant index                p grant:{<first 6 chars of grantId>}<rest>   SET of entry keys
 *   engine entry, other        p{Model}:{<id>}                              HASH p=payload c=consumed
 *   session uid / user code    p uid:{<uid>} / p userCode:{<code>}          STRING id
 *   records                    p rec:{records}:<kind>:<id>                  HASH g=group v=value n=revision
 *   record index               p idx:{records}:<kind>:<group>               SET of ids
 *   record changes             channel p rec-changes, message "<kind>\n<id>", published in the
 *                              same MULTI/script as the write
 * Grant-bound token ids start with their grant id's first 6 characters (provider/token-ids.ts), so a
 * grant's index and its tokens share one slot; records share one slot so an index changes with its
 * record atomically.
 */

const UPSERT = `
redis.call('DEL', KEYS[1])
redis.call('HSET', KEYS[1], 'p', ARGV[1])
local ttl = tonumber(ARGV[2])
if ttl > 0 then redis.call('EXPIRE', KEYS[1], ttl) end
if KEYS[2] then
  local existed = redis.call('EXISTS', KEYS[2])
  redis.call('SADD', KEYS[2], KEYS[1])
  if ttl <= 0 then
    redis.call('PERSIST', KEYS[2])
  elseif existed == 0 then
    redis.call('EXPIRE', KEYS[2], ttl)
  else
    local current = redis.call('TTL', KEYS[2])
    if current >= 0 and current < ttl then redis.call('EXPIRE', KEYS[2], ttl) end
  end
end
return 1`;

/* Single use: HSETNX sets the consumed mark only if none is there, in one step; gone = used up. */
const CONSUME = `
if redis.call('EXISTS', KEYS[1]) == 0 then return 0 end
return redis.call('HSETNX', KEYS[1], 'c', ARGV[1])`;

const REVOKE_GRANT = `
local members = redis.call('SMEMBERS', KEYS[1])
for _, key in ipairs(members) do redis.call('DEL', key) end
redis.call('DEL', KEYS[1])
return #members`;

const HEARTBEAT_MS = 5000;
const HEARTBEAT_TIMEOUT_MS = 2000;

/* Compare-and-set: write only if the record is still at the revision the caller read. */
const REPLACE_RECORD = `
local revision = redis.call('HGET', KEYS[1], 'n')
if not revision or revision ~= ARGV[1] then return 0 end
redis.call('HSET', KEYS[1], 'v', ARGV[2], 'n', tonumber(revision) + 1)
redis.call('PUBLISH', ARGV[3], ARGV[4])
return 1`;

const DELETE_RECORD = `
local group = redis.call('HGET', KEYS[1], 'g')
if not group then return 0 end
redis.call('DEL', KEYS[1])
redis.call('SREM', ARGV[1] .. group, ARGV[2])
redis.call('PUBLISH', ARGV[3], ARGV[4])
return 1`;

interface Scripts {
  /** taUpsert(numberOfKeys, key, [grantIndexKey], payload, ttl) */
  taUpsert(numberOfKeys: number, ...args: (string | number)[]): Promise<number>;
  taConsume(key: string, now: number): Promise<number>;
  taRevokeGrant(indexKey: string): Promise<number>;
  taDeleteRecord(key: string, indexPrefix: string, id: string, channel: string, change: string): Promise<number>;
  taReplaceRecord(key: string, revision: string, value: string, channel: string, change: string): Promise<number>;
}

type ScriptedRedis = Redis & Scripts;

function tagged(id: string, slotLength?: number): string {
  if (slotLength === undefined) return `{${id}}`;
  return `{${id.slice(0, slotLength)}}${id.slice(slotLength)}`;
}

class RedisEngineAdapter implements EngineAdapter {
  private readonly grantBound: boolean;

  constructor(
    private readonly model: string,
    private readonly redis: ScriptedRedis,
    private readonly prefix: string,
  ) {
    this.grantBound = GRANT_BOUND_MODELS.has(model);
  }

  private key(id: string): string {
    return `${this.prefix}${this.model}:${tagged(id, this.grantBound ? GRANT_SLOT_LENGTH : undefined)}`;
  }

  private grantKey(grantId: string): string {
    return `${this.prefix}grant:${tagged(grantId, GRANT_SLOT_LENGTH)}`;
  }

  async upsert(id: string, payload: EnginePayload, expiresIn?: number): Promise<void> {
    const ttl = expiresIn && expiresIn > 0 ? Math.ceil(expiresIn) : 0;
    const key = this.key(id);
    const indexKey = this.grantBound && payload.grantId ? this.grantKey(payload.grantId) : undefined;
    const keys = indexKey === undefined ? [key] : [key, indexKey];
    const writes: Promise<unknown>[] = [
      this.redis.taUpsert(keys.length, ...keys, JSON.stringify(payload), ttl),
    ];
    if (this.model === 'Session' && payload.uid) writes.push(this.index('uid', payload.uid, id, ttl));
    if (payload.userCode) writes.push(this.index('userCode', payload.userCode, id, ttl));
    await Promise.all(writes);
  }

  private index(kind: string, value: string, id: string, ttl: number): Promise<unknown> {
    const key = `${this.prefix}${kind}:${tagged(value)}`;
    return ttl > 0 ? this.redis.set(key, id, 'EX', ttl) : this.redis.set(key, id);
  }

  async find(id: string): Promise<EnginePayload | undefined> {
    const [payload, consumed] = await this.redis.hmget(this.key(id), 'p', 'c');
    if (!payload) return undefined;
    const parsed = JSON.parse(payload) as EnginePayload;
    if (consumed) parsed.consumed = Number(consumed);
    return parsed;
  }

  private async findVia(kind: string, value: string): Promise<EnginePayload | undefined> {
    const id = await this.redis.get(`${this.prefix}${kind}:${tagged(value)}`);
    return id ? this.find(id) : undefined;
  }

  findByUid(uid: string): Promise<EnginePayload | undefined> {
    return this.findVia('uid', uid);
  }

  findByUserCode(userCode: string): Promise<EnginePayload | undefined> {
    return this.findVia('userCode', userCode);
  }

  async consume(id: string): Promise<void> {
    const set = await this.redis.taConsume(this.key(id), Math.floor(Date.now() / 1000));
    if (set === 0) throw new AlreadyConsumed();
  }

  async destroy(id: string): Promise<void> {
    await this.redis.del(this.key(id));
  }

  async revokeByGrantId(grantId: string): Promise<void> {
    await this.redis.taRevokeGrant(this.grantKey(grantId));
  }
}

class RedisRecords implements RecordStore {
  private readonly listeners: Array<(change: RecordChange) => void> = [];
  private subscribed = false;
  private heartbeat: NodeJS.Timeout | undefined;
  readonly channel: string;

  constructor(
    private readonly redis: ScriptedRedis,
    private readonly prefix: string,
  ) {
    this.channel = `${prefix}rec-changes`;
  }

  get watching(): boolean {
    return this.subscribed;
  }

  watch(listener: (change: RecordChange) => void): void {
    this.listeners.push(listener);
  }

  private tell(change: RecordChange): void {
    for (const listener of this.listeners) listener(change);
  }

  /** Follows the change channel on a connection of its own; while it is down, nothing is promised. */
  async follow(subscriber: Redis): Promise<void> {
    subscriber.on('message', (channel: string, message: string) => {
      if (channel !== this.channel) return;
      const newline = message.indexOf('\n');
      this.tell({ kind: message.slice(0, newline), id: message.slice(newline + 1) });
    });
    subscriber.on('close', () => {
      this.subscribed = false;
      this.tell({ kind: undefined });
    });
    let firstSubscription: () => void = () => {};
    const subscribedOnce = new Promise<void>((resolve) => (firstSubscription = resolve));
    subscriber.on('ready', () => {
      subscriber.subscribe(this.channel).then(
        () => {
          // Subscribed again after a reconnect: what changed meanwhile is unknown.
          this.tell({ kind: undefined });
          this.subscribed = true;
          firstSubscription();
        },
        () => subscriber.disconnect(true),
      );
    });
    await subscriber.connect();
    await subscribedOnce;
    // A connection can die without a word (a NAT dropping idle flows): ping it, and reconnect
    // (which tells watchers to forget everything) when it does not answer.
    this.heartbeat = setInterval(() => {
      if (subscriber.status !== 'ready') return;
      const timeout = setTimeout(() => subscriber.disconnect(true), HEARTBEAT_TIMEOUT_MS);
      subscriber.ping().then(() => clearTimeout(timeout), () => clearTimeout(timeout));
    }, HEARTBEAT_MS);
    this.heartbeat.unref();
  }

  stop(): void {
    clearInterval(this.heartbeat);
  }

  private key(kind: string, id: string): string {
    return `${this.prefix}rec:{records}:${kind}:${id}`;
  }

  /** Index keys live apart from record keys, so no record ID can name an index. */
  private indexPrefix(kind: string): string {
    return `${this.prefix}idx:{records}:${kind}:`;
  }

  async get<T>(kind: string, id: string): Promise<T | undefined> {
    const value = await this.redis.hget(this.key(kind, id), 'v');
    return value === null ? undefined : (JSON.parse(value) as T);
  }

  async getVersioned<T>(kind: string, id: string): Promise<{ value: T; revision: number } | undefined> {
    const [value, revision] = await this.redis.hmget(this.key(kind, id), 'v', 'n');
    return value === null || value === undefined ? undefined : { value: JSON.parse(value) as T, revision: Number(revision ?? 0) };
  }

  async replace<T>(kind: string, id: string, value: T, revision: number): Promise<boolean> {
    const written = await this.redis.taReplaceRecord(
      this.key(kind, id),
      String(revision),
      JSON.stringify(value),
      this.channel,
      `${kind}\n${id}`,
    );
    return written === 1;
  }

  async put<T>(kind: string, id: string, group: string, value: T): Promise<void> {
    const key = this.key(kind, id);
    const results = await this.redis
      .multi()
      .hset(key, 'g', group, 'v', JSON.stringify(value))
      .hincrby(key, 'n', 1)
      .sadd(this.indexPrefix(kind) + group, id)
      .publish(this.channel, `${kind}\n${id}`)
      .exec();
    const failed = results?.find(([error]) => error);
    if (!results || failed) throw failed?.[0] ?? new Error('the record write was aborted');
  }

  async delete(kind: string, id: string): Promise<boolean> {
    const deleted = await this.redis.taDeleteRecord(
      this.key(kind, id),
      this.indexPrefix(kind),
      id,
      this.channel,
      `${kind}\n${id}`,
    );
    return deleted === 1;
  }

  async list<T>(kind: string, group: string): Promise<T[]> {
    const ids = await this.redis.smembers(this.indexPrefix(kind) + group);
    if (ids.length === 0) return [];
    const pipeline = this.redis.pipeline();
    for (const id of ids) pipeline.hget(this.key(kind, id), 'v');
    const results = (await pipeline.exec()) ?? [];
    return results
      .map(([, value]) => value)
      .filter((value): value is string => typeof value === 'string')
      .map((value) => JSON.parse(value) as T);
  }
}

export interface RedisStoreOptions {
  url: string;
  keyPrefix?: string;
  redisOptions?: RedisOptions;
  /** Told of connection errors (ioredis reconnects by itself); by default they are dropped. */
  onError?: (error: Error & { code?: string }) => void;
}

/** The production store: every engine model and our records in Redis (ioredis). */
export async function createRedisStore(options: RedisStoreOptions): Promise<Store> {
  const prefix = options.keyPrefix ?? 'talent-auth:';
  const redis = new Redis(options.url, {
    enableAutoPipelining: true,
    lazyConnect: true,
    ...options.redisOptions,
  }) as ScriptedRedis;
  const onError = options.onError ?? (() => {});
  redis.on('error', onError);
  redis.defineCommand('taUpsert', { lua: UPSERT });
  redis.defineCommand('taConsume', { numberOfKeys: 1, lua: CONSUME });
  redis.defineCommand('taRevokeGrant', { numberOfKeys: 1, lua: REVOKE_GRANT });
  redis.defineCommand('taDeleteRecord', { numberOfKeys: 1, lua: DELETE_RECORD });
  redis.defineCommand('taReplaceRecord', { numberOfKeys: 1, lua: REPLACE_RECORD });
  await redis.connect();
  const subscriber = redis.duplicate({ enableAutoPipelining: false, lazyConnect: true, autoResubscribe: false });
  subscriber.on('error', onError);
  const records = new RedisRecords(redis, prefix);
  await records.follow(subscriber);

  const adapters = new Map<string, EngineAdapter>();
  return {
    type: 'redis',
    engine(model) {
      let adapter = adapters.get(model);
      if (!adapter) adapters.set(model, (adapter = new RedisEngineAdapter(model, redis, prefix)));
      return adapter;
    },
    records,
    async ping() {
      await redis.ping();
    },
    async close() {
      if (redis.status !== 'end') {
        // QUIT lets pending replies arrive; when Redis is gone it cannot answer, so do not wait long.
        await Promise.race([redis.quit().catch(() => undefined), new Promise((resolve) => setTimeout(resolve, 1000).unref())]);
      }
      records.stop();
      redis.disconnect();
      subscriber.disconnect();
    },
  };
}
