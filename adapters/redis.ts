import { randomUUID } from 'node:crypto';
import type { ConnectionOptions as TlsConnectionOptions } from 'node:tls';
import { Cluster, Redis, type ClusterOptions, type RedisOptions } from 'ioredis';
import {
  AlreadyConsumed,
  StoreUnavailable,
  windowMillis,
  type Consumption,
  type Counters,
  type EngineAdapter,
  type EnginePayload,
  type RecordChange,
  type RecordStore,
  type Store,
  type WindowCount,
} from './types.js';

/*
 * Key layout (prefix `p`, default `talent-auth:`; <...> are placeholders). The part in braces is
 * the Redis Cluster hash tag: only it decides the slot, so keys with the same tag share a slot.
 *
 *   engine entry               p<Model>:{<id>}                                  HASH p=payload c=consumed (epoch ms) d=confirmed
 *   session uid / user code    p uid:{<uid>} / p userCode:{<code>}              STRING id
 *   records                    p rec:{records}:<kind>:<id>                      HASH g=group v=value n=revision
 *   record index               p idx:{records}:<kind>:<group>                   SET of ids
 *   counters (rate limits)     p rl:{rl}:<key>                                  STRING count, expiring
 *   record changes             channel p rec-changes, message "<kind>\n<id>", published in the
 *                              same MULTI/script as the write
 *   change-feed heartbeat      channel p rec-heartbeat:<random per store instance>
 *
 * Nothing grows with the tokens a grant has had: there is no index of a grant's entries. Codes
 * and refresh tokens are usable only while their grant's entry exists (the engine checks it at
 * every use), so ending a grant is one DEL, and its entries expire on their own TTLs.
 *
 * Every multi-key step stays in one slot, which Redis Cluster requires:
 * - All records and record indexes share the `{records}` slot, so an index changes with its record
 *   atomically and a listing is one pipeline.
 * - All counters share the `{rl}` slot, so one call increments several keys in one script.
 * The prefix takes part in no tag: on a cluster it must not contain braces.
 * Pub/sub needs no slot: PUBLISH reaches the subscribers on every node of a cluster.
 */

/* Creates or replaces an entry's payload; a consumed mark it has stays (single use survives a re-save). */
const UPSERT = `
redis.call('HSET', KEYS[1], 'p', ARGV[1])
local ttl = tonumber(ARGV[2])
if ttl > 0 then redis.call('EXPIRE', KEYS[1], ttl) else redis.call('PERSIST', KEYS[1]) end
return 1`;

/* Single use: HSETNX sets the consumed mark only if none is there, in one step; gone = used up. */
const CONSUME = `
if redis.call('EXISTS', KEYS[1]) == 0 then return 0 end
return redis.call('HSETNX', KEYS[1], 'c', ARGV[1])`;

/* The request that consumed the entry completed; an entry that is gone stays gone. */
const CONFIRM = `
if redis.call('EXISTS', KEYS[1]) == 0 then return 0 end
return redis.call('HSET', KEYS[1], 'd', ARGV[1])`;

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

/* Fixed windows: the first increment sets the expiry, later ones keep it. Answers count, ms left. */
const INCREMENT_COUNTERS = `
local window = tonumber(ARGV[1])
local answer = {}
for i, key in ipairs(KEYS) do
  local count = redis.call('INCR', key)
  local left = redis.call('PTTL', key)
  if left < 0 then
    redis.call('PEXPIRE', key, window)
    left = window
  end
  answer[2 * i - 1] = count
  answer[2 * i] = left
end
return answer`;

const PEEK_COUNTERS = `
local answer = {}
for i, key in ipairs(KEYS) do
  answer[2 * i - 1] = tonumber(redis.call('GET', key) or '0')
  answer[2 * i] = redis.call('PTTL', key)
end
return answer`;

const SCRIPTS = {
  taUpsert: { numberOfKeys: 1, lua: UPSERT },
  taConsume: { numberOfKeys: 1, lua: CONSUME },
  taConfirm: { numberOfKeys: 1, lua: CONFIRM },
  taDeleteRecord: { numberOfKeys: 1, lua: DELETE_RECORD },
  taReplaceRecord: { numberOfKeys: 1, lua: REPLACE_RECORD },
  taIncrementCounters: { lua: INCREMENT_COUNTERS },
  taPeekCounters: { lua: PEEK_COUNTERS },
};

interface Scripts {
  taUpsert(key: string, payload: string, ttl: number): Promise<number>;
  taConsume(key: string, now: number): Promise<number>;
  taConfirm(key: string, now: number): Promise<number>;
  taDeleteRecord(key: string, indexPrefix: string, id: string, channel: string, change: string): Promise<number>;
  taReplaceRecord(key: string, revision: string, value: string, channel: string, change: string): Promise<number>;
  /** taIncrementCounters(numberOfKeys, ...keys, windowMs) */
  taIncrementCounters(numberOfKeys: number, ...args: (string | number)[]): Promise<number[]>;
  /** taPeekCounters(numberOfKeys, ...keys) */
  taPeekCounters(numberOfKeys: number, ...keys: string[]): Promise<number[]>;
}

type Client = (Redis | Cluster) & Scripts;

const DEFAULT_COMMAND_TIMEOUT_MS = 500;
const DEFAULT_HEARTBEAT_MS = 5000;
const HEARTBEAT_TIMEOUT_MS = 2000;
/** How long createRedisStore may take to connect (and subscribe) before it gives up. */
const STARTUP_TIMEOUT_MS = 10_000;

/** Reconnect soon, then at most once a second, forever: service resumes within a second of Redis. */
const reconnectDelay = (attempt: number): number => Math.min(100 * attempt, 1000);

/** Why a store operation could not reach Redis; the codes are safe to log and to show. */
type StoreUnavailableReason = 'connection' | 'timeout' | 'cluster' | 'loading' | 'busy' | 'read-only' | 'refused';

const CONNECTION_ERROR_CODES = new Set([
  'ECONNREFUSED',
  'ECONNRESET',
  'ECONNABORTED',
  'EPIPE',
  'ETIMEDOUT',
  'ENOTCONN',
  'EHOSTUNREACH',
  'ENETUNREACH',
  'ENOTFOUND',
  'EAI_AGAIN',
]);

/** The reason when `error` says Redis could not be reached or did not answer; else undefined. */
function unavailableReason(error: unknown): StoreUnavailableReason | undefined {
  if (!(error instanceof Error)) return undefined;
  const { message, name } = error;
  const code = (error as { code?: unknown }).code;
  if (message === 'Command timed out') return 'timeout';
  if (
    name === 'MaxRetriesPerRequestError'
    || message === 'Connection is closed.'
    || message.includes('enableOfflineQueue options is false')
    || message.startsWith('Socket timeout')
    || message.startsWith('None of startup nodes is available')
    || (typeof code === 'string' && CONNECTION_ERROR_CODES.has(code))
  ) {
    return 'connection';
  }
  // A redirection that reaches us is one ioredis could not follow (the slot's node is gone).
  if (
    name === 'ClusterAllFailedError'
    || message.startsWith('Too many Cluster redirections')
    || /^(CLUSTERDOWN|TRYAGAIN|MASTERDOWN|MOVED|ASK)\b/.test(message)
  ) {
    return 'cluster';
  }
  if (message.startsWith('LOADING')) return 'loading';
  if (message.startsWith('BUSY')) return 'busy';
  if (message.startsWith('READONLY')) return 'read-only';
  // Out of memory, a failing snapshot, too few replicas: Redis refuses writes until an operator acts.
  if (/^(OOM|MISCONF|NOREPLICAS)\b/.test(message)) return 'refused';
  // A MULTI whose queued commands were refused: the reason is that of the refusals.
  const previous = (error as { previousErrors?: unknown }).previousErrors;
  if (message.startsWith('EXECABORT') && Array.isArray(previous)) return unavailableReason(previous[0]);
  return undefined;
}

/**
 * An error Redis answered with, without the command ioredis attaches: its arguments hold payloads
 * and keys, and a key holds a token's id, which is the token itself for opaque tokens. What is
 * left is Redis's error word (WRONGTYPE, OOM, NOSCRIPT, ...), safe for any log or debug output.
 */
export class StoreError extends Error {
  constructor(readonly code: string) {
    super(`redis answered ${code}`);
    this.name = 'StoreError';
  }
}

function withoutCommand(error: unknown): unknown {
  if (!(error instanceof Error) || !('command' in error)) return error;
  return new StoreError(/^[A-Z]+/.exec(error.message)?.[0] ?? 'ERR');
}

/**
 * Runs every store operation: refuses at once while the connection is not ready, rejects with
 * StoreUnavailable when Redis cannot be reached or does not answer within the timeout (the whole
 * operation, however many round trips), and lets every other error through.
 */
class Io {
  constructor(
    readonly client: Client,
    private readonly timeoutMs: number,
    private readonly ready: () => boolean,
  ) {}

  run<T>(operation: (client: Client) => Promise<T>): Promise<T> {
    if (!this.ready()) return Promise.reject(new StoreUnavailable('connection'));
    // withDeadline's race in hand-written form: this runs for every store operation of every
    // request, and the race with its finally costs three more promises each time.
    return new Promise<T>((resolve, reject) => {
      const timer = setTimeout(() => reject(new StoreUnavailable('timeout')), this.timeoutMs);
      let running: Promise<T>;
      try {
        running = operation(this.client);
      } catch (error) {
        running = Promise.reject(error);
      }
      running.then(
        (value) => {
          clearTimeout(timer);
          resolve(value);
        },
        (error: unknown) => {
          clearTimeout(timer);
          const reason = unavailableReason(error);
          reject(reason === undefined ? withoutCommand(error) : new StoreUnavailable(reason));
        },
      );
    });
  }
}

/** The hash tag of an id: the whole id, so that each entry picks its own slot. */
function tagged(id: string): string {
  return `{${id}}`;
}

class RedisEngineAdapter implements EngineAdapter {
  constructor(
    private readonly model: string,
    private readonly io: Io,
    private readonly prefix: string,
  ) {}

  private key(id: string): string {
    return `${this.prefix}${this.model}:${tagged(id)}`;
  }

  upsert(id: string, payload: EnginePayload, expiresIn?: number): Promise<void> {
    return this.io.run(async (redis) => {
      const ttl = expiresIn && expiresIn > 0 ? Math.ceil(expiresIn) : 0;
      const { consumed: _consumed, ...stored } = payload;
      const writes: Promise<unknown>[] = [redis.taUpsert(this.key(id), JSON.stringify(stored), ttl)];
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
    if (!payload) return undefined;
    const parsed = JSON.parse(payload) as EnginePayload;
    // The engine's `consumed` is in epoch seconds; we keep milliseconds (races and retries are told apart by them).
    if (consumed) parsed.consumed = Math.floor(Number(consumed) / 1000);
    return parsed;
  }

  find(id: string): Promise<EnginePayload | undefined> {
    return this.io.run((redis) => this.read(redis, id));
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
      const set = await redis.taConsume(this.key(id), Date.now());
      if (set === 0) throw new AlreadyConsumed();
    });
  }

  unconsume(id: string): Promise<void> {
    return this.io.run(async (redis) => {
      await redis.hdel(this.key(id), 'c', 'd');
    });
  }

  confirm(id: string): Promise<void> {
    return this.io.run(async (redis) => {
      await redis.taConfirm(this.key(id), Date.now());
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

/**
 * Drops a connection at once, to be reconnected: a graceful close could wait for a peer that no
 * longer answers.
 */
function drop(connection: Redis): void {
  const stream = connection.stream as Redis['stream'] | undefined;
  if (stream) stream.destroy();
  else connection.disconnect(true);
}

/** A new subscriber connection, not yet connected (on a cluster: to the next node in turn). */
type SubscriberFactory = () => Redis;

class RedisRecords implements RecordStore {
  private readonly listeners: Array<(change: RecordChange) => void> = [];
  private subscriber: Redis | undefined;
  private subscribed = false;
  private closed = false;
  private heartbeat: NodeJS.Timeout | undefined;
  private echo: { token: string; timer?: NodeJS.Timeout } | undefined;
  private beats = 0;
  readonly channel: string;
  private readonly heartbeatChannel: string;

  constructor(
    private readonly io: Io,
    private readonly prefix: string,
    private readonly onError: (error: Error) => void,
  ) {
    this.channel = `${prefix}rec-changes`;
    this.heartbeatChannel = `${prefix}rec-heartbeat:${randomUUID()}`;
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

  /**
   * Follows the change channel on a connection of its own; while it is down, nothing is promised.
   * Resolves once subscribed; rejects when the first connection fails.
   */
  async follow(createSubscriber: SubscriberFactory, heartbeatMs: number): Promise<void> {
    // Closed already: the store gave up starting (its deadline passed) before Redis was ready.
    if (this.closed) throw new StoreUnavailable('connection');
    const first = this.attach(createSubscriber, createSubscriber());
    // A connection can die without a word (a NAT dropping idle flows), and a cluster node can stop
    // receiving other nodes' messages: prove the whole path with an echo, and reconnect (which
    // tells watchers to forget everything) when it does not come back.
    this.heartbeat = setInterval(() => this.beat(Math.min(HEARTBEAT_TIMEOUT_MS, heartbeatMs)), heartbeatMs);
    this.heartbeat.unref();
    await first;
  }

  private attach(createSubscriber: SubscriberFactory, subscriber: Redis): Promise<void> {
    this.subscriber = subscriber;
    const current = () => subscriber === this.subscriber && !this.closed;
    let firstSubscription: () => void = () => {};
    const subscribedOnce = new Promise<void>((resolve) => (firstSubscription = resolve));
    subscriber.on('error', this.onError);
    subscriber.on('message', (channel: string, message: string) => {
      if (!current()) return;
      if (channel === this.channel) {
        const newline = message.indexOf('\n');
        this.tell({ kind: message.slice(0, newline), id: message.slice(newline + 1) });
      } else if (channel === this.heartbeatChannel && this.echo?.token === message) {
        clearTimeout(this.echo.timer);
        this.echo = undefined;
      }
    });
    subscriber.on('close', () => {
      if (subscriber !== this.subscriber) return;
      // An echo pending on the connection that went is no verdict on the next one.
      clearTimeout(this.echo?.timer);
      this.echo = undefined;
      if (!this.subscribed) return;
      this.subscribed = false;
      this.tell({ kind: undefined });
    });
    subscriber.on('ready', () => {
      subscriber.subscribe(this.channel, this.heartbeatChannel).then(
        () => {
          if (!current()) return;
          // Subscribed (again): what changed meanwhile is unknown.
          this.tell({ kind: undefined });
          this.subscribed = true;
          firstSubscription();
        },
        (error: Error) => {
          // E.g. NOPERM (an ACL user without pub/sub): worth telling, and trying again.
          this.onError(error);
          drop(subscriber);
        },
      );
    });
    subscriber.on('end', () => {
      if (!current()) return;
      // This connection gave up (on a cluster: its node may be gone for good); take a new one.
      setTimeout(() => {
        if (current()) this.attach(createSubscriber, createSubscriber()).catch(() => {});
      }, reconnectDelay(1)).unref();
    });
    return subscriber.connect().then(() => subscribedOnce);
  }

  private beat(timeoutMs: number): void {
    const subscriber = this.subscriber;
    if (this.closed || !this.subscribed || !subscriber || this.echo) return;
    this.beats += 1;
    const token = String(this.beats);
    const echo: { token: string; timer?: NodeJS.Timeout } = { token };
    this.echo = echo;
    this.io.run((redis) => redis.publish(this.heartbeatChannel, token)).then(
      () => {
        // Redis has handed the message to the subscriber connection by now: only the way back is
        // timed, however slow Redis itself was.
        if (this.echo !== echo) return;
        echo.timer = setTimeout(() => {
          if (this.echo !== echo) return;
          this.echo = undefined;
          if (subscriber === this.subscriber && !this.closed) drop(subscriber);
        }, timeoutMs);
        echo.timer.unref();
      },
      () => {
        // A publish that fails says the main connection is down, not the subscription: no verdict.
        if (this.echo === echo) this.echo = undefined;
      },
    );
  }

  stop(): void {
    this.closed = true;
    this.subscribed = false;
    clearInterval(this.heartbeat);
    clearTimeout(this.echo?.timer);
    if (this.subscriber && this.subscriber.status !== 'end') this.subscriber.disconnect();
  }

  private key(kind: string, id: string): string {
    return `${this.prefix}rec:{records}:${kind}:${id}`;
  }

  /** Index keys live apart from record keys, so no record ID can name an index. */
  private indexPrefix(kind: string): string {
    return `${this.prefix}idx:{records}:${kind}:`;
  }

  get<T>(kind: string, id: string): Promise<T | undefined> {
    return this.io.run(async (redis) => {
      const value = await redis.hget(this.key(kind, id), 'v');
      return value === null ? undefined : (JSON.parse(value) as T);
    });
  }

  getVersioned<T>(kind: string, id: string): Promise<{ value: T; revision: number } | undefined> {
    return this.io.run(async (redis) => {
      const [value, revision] = await redis.hmget(this.key(kind, id), 'v', 'n');
      return value === null || value === undefined
        ? undefined
        : { value: JSON.parse(value) as T, revision: Number(revision ?? 0) };
    });
  }

  replace<T>(kind: string, id: string, value: T, revision: number): Promise<boolean> {
    return this.io.run(async (redis) => {
      const written = await redis.taReplaceRecord(
        this.key(kind, id),
        String(revision),
        JSON.stringify(value),
        this.channel,
        `${kind}\n${id}`,
      );
      return written === 1;
    });
  }

  put<T>(kind: string, id: string, group: string, value: T): Promise<void> {
    return this.io.run(async (redis) => {
      const key = this.key(kind, id);
      const results = await redis
        .multi()
        .hset(key, 'g', group, 'v', JSON.stringify(value))
        .hincrby(key, 'n', 1)
        .sadd(this.indexPrefix(kind) + group, id)
        .publish(this.channel, `${kind}\n${id}`)
        .exec();
      const failed = results?.find(([error]) => error);
      if (!results || failed) throw failed?.[0] ?? new Error('the record write was aborted');
    });
  }

  delete(kind: string, id: string): Promise<boolean> {
    return this.io.run(async (redis) => {
      const deleted = await redis.taDeleteRecord(
        this.key(kind, id),
        this.indexPrefix(kind),
        id,
        this.channel,
        `${kind}\n${id}`,
      );
      return deleted === 1;
    });
  }

  list<T>(kind: string, group: string): Promise<T[]> {
    return this.io.run(async (redis) => {
      const ids = await redis.smembers(this.indexPrefix(kind) + group);
      if (ids.length === 0) return [];
      const pipeline = redis.pipeline();
      for (const id of ids) pipeline.hget(this.key(kind, id), 'v');
      const results = (await pipeline.exec()) ?? [];
      // A listing with holes would look complete: any failed read fails the whole listing.
      const failed = results.find(([error]) => error);
      if (failed) throw failed[0];
      return results
        .map(([, value]) => value)
        .filter((value): value is string => typeof value === 'string')
        .map((value) => JSON.parse(value) as T);
    });
  }
}


/** Whole seconds left of a window from Redis' PTTL (-2: no key, -1: no expiry). */
const secondsLeft = (pttl: number): number => (pttl > 0 ? Math.max(1, Math.ceil(pttl / 1000)) : 0);

function windowCounts(answer: readonly number[], length: number): WindowCount[] {
  return Array.from({ length }, (_, i) => ({ count: answer[2 * i] ?? 0, resetsIn: secondsLeft(answer[2 * i + 1] ?? -2) }));
}

class RedisCounters implements Counters {
  constructor(
    private readonly io: Io,
    private readonly prefix: string,
  ) {}

  private key(key: string): string {
    return `${this.prefix}rl:{rl}:${key}`;
  }

  async increment(keys: readonly string[], windowSeconds: number): Promise<WindowCount[]> {
    const windowMs = windowMillis(windowSeconds);
    if (keys.length === 0) return [];
    const redisKeys = keys.map((key) => this.key(key));
    const answer = await this.io.run((redis) => redis.taIncrementCounters(redisKeys.length, ...redisKeys, windowMs));
    return windowCounts(answer, keys.length);
  }

  async peek(keys: readonly string[]): Promise<WindowCount[]> {
    if (keys.length === 0) return [];
    const redisKeys = keys.map((key) => this.key(key));
    const answer = await this.io.run((redis) => redis.taPeekCounters(redisKeys.length, ...redisKeys));
    return windowCounts(answer, keys.length);
  }
}

/** TLS towards Redis (PEM text); `true` means TLS with the system's CAs. */
export interface RedisTlsSettings {
  ca?: string;
  cert?: string;
  key?: string;
  servername?: string;
  rejectUnauthorized?: boolean;
}

/** Settings shared by every connection mode. Secrets here never appear in errors or logs. */
export interface RedisSharedSettings {
  /** ACL user (Redis 6+); a url may carry it instead. */
  username?: string;
  /** AUTH password; a url may carry it instead. */
  password?: string;
  /** TLS for every connection (with Sentinel, to the sentinels too); `rediss://` URLs imply it. */
  tls?: boolean | RedisTlsSettings;
}

export interface RedisClusterSettings {
  /** Some nodes of the cluster (redis:// or rediss:// URLs); the others are discovered. */
  nodes: string[];
}

export interface RedisSentinelSettings {
  sentinels: Array<{ host: string; port: number }>;
  /** The master group name (`sentinel monitor <name> ...`). */
  name: string;
  /** Credentials of the sentinels themselves, when they require AUTH. */
  username?: string;
  password?: string;
}

/** Where Redis is: exactly one of a single node's URL, a Redis Cluster, or a Sentinel-managed master. */
export type RedisConnectionOptions = RedisSharedSettings & (
  | { url: string; cluster?: never; sentinel?: never }
  | { cluster: RedisClusterSettings; url?: never; sentinel?: never }
  | { sentinel: RedisSentinelSettings; url?: never; cluster?: never }
);

export type RedisStoreOptions = RedisConnectionOptions & {
  keyPrefix?: string;
  /**
   * Every store operation answers within this many milliseconds or rejects with
   * StoreUnavailable('timeout'), e.g. when Redis accepts connections but does not answer. 500 ms.
   */
  commandTimeoutMs?: number;
  /** How often the change subscription is proven live by an echo through Redis. 5000 ms. */
  heartbeatMs?: number;
  /** Low-level ioredis options, applied last (on a cluster, to each node's connection). */
  redisOptions?: RedisOptions;
  /** Told of connection errors (ioredis reconnects by itself); by default they are dropped. */
  onError?: (error: Error & { code?: string }) => void;
  /** Told at start of a Redis setting that puts stored data at risk (an eviction policy). */
  onWarning?: (message: string) => void;
};

function tlsOf(tls: boolean | RedisTlsSettings | undefined): TlsConnectionOptions | undefined {
  if (tls === undefined || tls === false) return undefined;
  return tls === true ? {} : { ...tls };
}

interface NodeAddress {
  host: string;
  port: number;
  username?: string;
  password?: string;
  tls: boolean;
}

/** host/port (and credentials, TLS) of a cluster node URL; never quotes the URL when it fails. */
function clusterNode(url: string, index: number): NodeAddress {
  const parsed = URL.parse(url);
  if (!parsed || (parsed.protocol !== 'redis:' && parsed.protocol !== 'rediss:') || !parsed.hostname) {
    throw new TypeError(`cluster.nodes[${index}]: not a redis:// or rediss:// URL`);
  }
  return {
    host: parsed.hostname.replace(/^\[(.*)\]$/, '$1'),
    port: parsed.port ? Number(parsed.port) : 6379,
    ...(parsed.username ? { username: decodeURIComponent(parsed.username) } : {}),
    ...(parsed.password ? { password: decodeURIComponent(parsed.password) } : {}),
    tls: parsed.protocol === 'rediss:',
  };
}

/** ioredis refuses these per-node options on a cluster (the cluster sets them itself). */
function nodeOptionsOf(options: RedisOptions | undefined): ClusterOptions['redisOptions'] {
  if (!options) return {};
  const { port, host, path, sentinels, retryStrategy, enableOfflineQueue, readOnly, ...rest } = options;
  return rest;
}

interface Connection {
  client: Client;
  ready(): boolean;
  createSubscriber: SubscriberFactory;
}

function connect(options: RedisStoreOptions, timeoutMs: number): Connection {
  const modes = [options.url, options.cluster, options.sentinel].filter((mode) => mode !== undefined);
  if (modes.length !== 1) throw new TypeError('RedisStoreOptions: give exactly one of url, cluster and sentinel');
  const tls = tlsOf(options.tls);
  const credentials: RedisOptions = {
    ...(options.username !== undefined ? { username: options.username } : {}),
    ...(options.password !== undefined ? { password: options.password } : {}),
    ...(tls ? { tls } : {}),
  };
  // After the first connect nothing queues: while disconnected every command fails at once, a
  // command in flight when the connection drops fails at once and is never resent, and a
  // connection on which nothing answers is dropped and reconnected.
  const failFast: RedisOptions = {
    lazyConnect: true,
    enableOfflineQueue: false,
    maxRetriesPerRequest: 0,
    autoResendUnfulfilledCommands: false,
    commandTimeout: timeoutMs,
    socketTimeout: Math.max(1000, 2 * timeoutMs),
    // A closing connection whose peer does not answer is destroyed this soon (ioredis: 2 s, which
    // would also hold a process that wants to exit).
    disconnectTimeout: 200,
    retryStrategy: reconnectDelay,
  };
  const subscriberOptions: RedisOptions = { enableAutoPipelining: false, autoResubscribe: false, lazyConnect: true };

  if (options.cluster) {
    const nodes = options.cluster.nodes.map(clusterNode);
    if (nodes.length === 0) throw new TypeError('cluster.nodes: give at least one node');
    const fromUrls = nodes.find((node) => node.password !== undefined);
    const nodeCredentials: RedisOptions = {
      ...(fromUrls?.username !== undefined ? { username: fromUrls.username } : {}),
      ...(fromUrls?.password !== undefined ? { password: fromUrls.password } : {}),
      ...(nodes.some((node) => node.tls) ? { tls: {} } : {}),
      ...credentials,
    };
    const { retryStrategy: _ignored, enableOfflineQueue: _alsoIgnored, ...nodeFailFast } = failFast;
    const cluster = new Cluster(
      nodes.map(({ host, port }) => ({ host, port })),
      {
        lazyConnect: true,
        enableOfflineQueue: false,
        // Auto-pipelines are grouped by node when queued and checked again when sent: a slot map
        // that changed in between (a node gone) fails them with a cross-slot error.
        enableAutoPipelining: false,
        clusterRetryStrategy: reconnectDelay,
        slotsRefreshTimeout: Math.max(1000, timeoutMs),
        scripts: SCRIPTS,
        redisOptions: { ...nodeCredentials, ...nodeFailFast, ...nodeOptionsOf(options.redisOptions) },
      },
    ) as Cluster & Scripts;
    let turn = 0;
    return {
      client: cluster,
      ready: () => cluster.status === 'ready',
      // PUBLISH reaches every node, so any node will do; ioredis' own cluster subscriber moves to
      // another node without a word, which would hide missed changes, hence a plain connection.
      createSubscriber: () => {
        const known = cluster
          .nodes('all')
          .map((node) => ({ host: node.options.host, port: node.options.port }))
          .filter((node): node is { host: string; port: number } => node.host !== undefined && node.port !== undefined);
        const candidates: Array<{ host: string; port: number }> = known.length > 0 ? known : nodes;
        const node = candidates[turn++ % candidates.length]!;
        return new Redis({
          ...nodeCredentials,
          ...failFast,
          ...options.redisOptions,
          ...subscriberOptions,
          host: node.host,
          port: node.port,
          // A few quick tries, then 'end', and the next node gets its turn.
          retryStrategy: (attempt: number) => (attempt > 2 ? null : reconnectDelay(attempt)),
        });
      },
    };
  }

  let redis: Redis;
  if (options.sentinel) {
    const { sentinels, name, username, password } = options.sentinel;
    redis = new Redis({
      sentinels: sentinels.map(({ host, port }) => ({ host, port })),
      name,
      ...(username !== undefined ? { sentinelUsername: username } : {}),
      ...(password !== undefined ? { sentinelPassword: password } : {}),
      ...(tls ? { enableTLSForSentinelMode: true, sentinelTLS: tls } : {}),
      sentinelRetryStrategy: reconnectDelay,
      sentinelCommandTimeout: timeoutMs,
      ...credentials,
      ...failFast,
      enableAutoPipelining: true,
      scripts: SCRIPTS,
      // Sentinel drops the clients of a master it demotes, which makes us ask it for the new one;
      // should a connection to a demoted master survive, its READONLY answers do the same.
      reconnectOnError: (error) => error.message.startsWith('READONLY'),
      ...options.redisOptions,
    });
  } else {
    redis = new Redis(options.url!, {
      ...credentials,
      ...failFast,
      enableAutoPipelining: true,
      scripts: SCRIPTS,
      ...options.redisOptions,
    });
  }
  const single = redis as Redis & Scripts;
  return {
    client: single,
    ready: () => single.status === 'ready',
    createSubscriber: () => single.duplicate(subscriberOptions),
  };
}

/**
 * The store could not start: Redis could not be reached, refused the credentials or the database,
 * or did not answer in time. The message says where (hosts and ports, never credentials) and why,
 * in one line an operator can act on.
 */
export class StoreStartError extends Error {
  constructor(message: string) {
    super(message);
    this.name = 'StoreStartError';
  }
}

/** An error Redis itself answered (as opposed to a socket error). */
function isReplyError(error: Error): boolean {
  return error.name === 'ReplyError' || /^(ERR|WRONGPASS|NOAUTH|NOPERM)\b/.test(error.message);
}

/** host:port of a redis:// URL, or the URL's position when it cannot be parsed; never credentials. */
function hostOf(url: string): string {
  const parsed = URL.parse(url);
  if (!parsed?.hostname) return 'an unparseable URL';
  return `${parsed.hostname}:${parsed.port || 6379}`;
}

/** Where the store connects, for messages: hosts, ports, database, never credentials. */
export function describeRedisTarget(options: RedisConnectionOptions): string {
  if (options.cluster) return `the Redis Cluster of ${options.cluster.nodes.map(hostOf).join(', ')}`;
  if (options.sentinel) {
    const sentinels = options.sentinel.sentinels.map(({ host, port }) => `${host}:${port}`).join(', ');
    return `the Redis master "${options.sentinel.name}" of the sentinels ${sentinels}`;
  }
  const database = URL.parse(options.url ?? '')?.pathname.replace(/^\//, '');
  return `Redis at ${hostOf(options.url ?? '')}${database ? `, database ${database}` : ''}`;
}

function startFailure(options: RedisStoreOptions, error: unknown, noted: readonly Error[]): string {
  const where = describeRedisTarget(options);
  const refused = noted.find(isReplyError);
  if (refused) {
    const word = /^[A-Z]+/.exec(refused.message)?.[0] ?? 'ERR';
    if (/DB index/i.test(refused.message)) return `${where}: the database cannot be selected (${refused.message})`;
    if (word === 'WRONGPASS' || word === 'NOAUTH' || word === 'NOPERM') return `${where} refused the credentials (${refused.message})`;
    return `${where} refused to start the connection (${refused.message})`;
  }
  if (error instanceof StoreUnavailable) return `cannot connect to ${where}: no answer within ${STARTUP_TIMEOUT_MS / 1000} s`;
  // The socket's own error says why (ECONNREFUSED, ENOTFOUND, ...); ioredis' rejection only says
  // "Connection is closed."
  const cause = noted.at(-1) ?? (error instanceof Error ? error : undefined);
  return `cannot connect to ${where}: ${cause?.message ?? String(error)}`;
}

/**
 * Redis under `maxmemory` with an eviction policy may delete our keys to make room: with an
 * allkeys-* policy the records that have no expiry (client configurations, app registrations,
 * consents) are lost; with a volatile-* policy sign-in sessions, grants (users are signed out),
 * consumed marks and rate-limit counters may go. `noeviction` makes Redis refuse writes instead
 * (503, nothing lost). Undefined when the policy is safe or cannot be read (CONFIG is often
 * disabled on managed Redis).
 */
async function evictionWarning(client: Client): Promise<string | undefined> {
  try {
    const [, policy] = (await client.config('GET', 'maxmemory-policy')) as string[];
    const [, limit] = (await client.config('GET', 'maxmemory')) as string[];
    if (!policy || policy === 'noeviction' || Number(limit) === 0) return undefined;
    const at = policy.startsWith('allkeys-')
      ? 'client configurations, app registrations and consents can be deleted for good'
      : 'sign-in sessions, grants (users are signed out), consumed codes and rate-limit counters can be deleted';
    return `Redis maxmemory-policy is ${policy} with maxmemory ${limit} bytes: when memory runs out, ${at}. Set maxmemory-policy noeviction (docs/operations.md, "Redis configuration")`;
  } catch {
    return undefined;
  }
}

function withDeadline<T>(promise: Promise<T>, ms: number): Promise<T> {
  let timer: NodeJS.Timeout | undefined;
  const deadline = new Promise<never>((_, reject) => {
    timer = setTimeout(() => reject(new StoreUnavailable('timeout')), ms);
  });
  return Promise.race([promise, deadline]).finally(() => clearTimeout(timer));
}

/**
 * The production store: every engine model, our records and the counters in Redis (ioredis): a
 * single node, a Redis Cluster or a Sentinel-managed master.
 */
export async function createRedisStore(options: RedisStoreOptions): Promise<Store> {
  const prefix = options.keyPrefix ?? 'talent-auth:';
  if (options.cluster && /[{}]/.test(prefix)) throw new TypeError('keyPrefix: no braces on a cluster (they would make a hash tag)');
  const timeoutMs = options.commandTimeoutMs ?? DEFAULT_COMMAND_TIMEOUT_MS;
  if (!Number.isFinite(timeoutMs) || timeoutMs <= 0) throw new RangeError('commandTimeoutMs must be a positive number');
  const heartbeatMs = options.heartbeatMs ?? DEFAULT_HEARTBEAT_MS;
  if (!Number.isFinite(heartbeatMs) || heartbeatMs <= 0) throw new RangeError('heartbeatMs must be a positive number');
  const onError = options.onError ?? (() => {});
  const connection = connect(options, timeoutMs);
  const { client } = connection;
  // What went wrong while starting, to say it in one line if the start fails.
  const startErrors: Error[] = [];
  const noteStartError = (error: Error) => startErrors.push(error);
  client.on('error', noteStartError);
  client.on('error', onError);
  const io = new Io(client, timeoutMs, connection.ready);
  const records = new RedisRecords(io, prefix, onError);
  const counters = new RedisCounters(io, prefix);
  let closed = false;

  const shut = async () => {
    closed = true;
    records.stop();
    if (client.status !== 'end' && connection.ready()) {
      // QUIT lets pending replies arrive; when Redis is gone it cannot answer, so do not wait long.
      await withDeadline(client.quit(), 1000).catch(() => undefined);
    }
    if (client.status !== 'end') client.disconnect();
  };
  try {
    await withDeadline(
      (async () => {
        if (options.cluster) {
          // A cluster client goes on trying after a failed first attempt (a slow slots refresh on
          // a busy host, a startup node that is down while others are up): wait until it is ready.
          await new Promise<void>((resolve) => {
            client.once('ready', resolve);
            client.connect().catch(() => {});
          });
        } else {
          await client.connect();
        }
        // ioredis reports a refused SELECT (a database the server does not have) or a refused
        // AUTH on a reconnect as an error event and goes on, on database 0: that must stop here.
        const refused = startErrors.find(isReplyError);
        if (refused) throw refused;
        await records.follow(connection.createSubscriber, heartbeatMs);
      })(),
      STARTUP_TIMEOUT_MS,
    );
    const warning = await evictionWarning(client);
    if (warning) options.onWarning?.(warning);
  } catch (error) {
    await shut();
    throw new StoreStartError(startFailure(options, error, startErrors));
  } finally {
    client.off('error', noteStartError);
  }

  const adapters = new Map<string, EngineAdapter>();
  return {
    type: 'redis',
    engine(model) {
      let adapter = adapters.get(model);
      if (!adapter) adapters.set(model, (adapter = new RedisEngineAdapter(model, io, prefix)));
      return adapter;
    },
    records,
    counters,
    get available() {
      return !closed && connection.ready() && records.watching;
    },
    ping() {
      return io.run(async (redis) => {
        await redis.ping();
      });
    },
    close: shut,
  };
}
