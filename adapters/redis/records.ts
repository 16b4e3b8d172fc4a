/*
 * Our own records on Redis (client configurations, app registrations, consents, ...): a record is
 * a hash with its group, value and revision, and each group of a kind has an index set, so a
 * listing is one read of the set and one pipeline. Writes change a record and its index together
 * and publish the change in the same step, and `replace` is a compare-and-set on the revision.
 * Watchers (caches) hear of changes through pub/sub on a connection of its own; because pub/sub
 * loses what is published while disconnected, every (re)subscription tells watchers to forget
 * everything, and a heartbeat echoed through Redis proves the subscription alive or replaces it.
 */
import { randomUUID } from 'node:crypto';
import { Cluster, type Redis } from 'ioredis';
import { StoreUnavailable, type RecordChange, type RecordStore } from '../types.js';
import { reconnectDelay, type Io, type SubscriberFactory } from './connection.js';

const HEARTBEAT_TIMEOUT_MS = 2000;
/** Keys looked at per SCAN step of `groups` (a hint to Redis). */
const SCAN_COUNT = 1000;

/**
 * Drops a connection at once, to be reconnected: a graceful close could wait for a peer that no
 * longer answers.
 */
function drop(connection: Redis): void {
  const stream = connection.stream as Redis['stream'] | undefined;
  if (stream) stream.destroy();
  else connection.disconnect(true);
}

/** The record store: records, their indexes, and the change feed that keeps watchers honest. */
export class RedisRecords implements RecordStore {
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
   * A write of this instance: its watchers are told at once, not only when the change comes back
   * through the channel (on another connection, so possibly after this instance's next request:
   * a client deleted here must not be served from its cache here a moment later). Told twice,
   * a watcher forgets twice, which is harmless.
   */
  private wrote(kind: string, id: string): void {
    this.tell({ kind, id });
  }

  /** Tells watchers to forget everything: the store was emptied, so what they keep is gone. */
  forgetAll(): void {
    this.tell({ kind: undefined });
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
      if (written === 1) this.wrote(kind, id);
      return written === 1;
    });
  }

  create<T>(kind: string, id: string, group: string, value: T): Promise<boolean> {
    return this.io.run(async (redis) => {
      const created = await redis.taCreateRecord(
        this.key(kind, id),
        group,
        JSON.stringify(value),
        this.indexPrefix(kind),
        id,
        this.channel,
        `${kind}\n${id}`,
      );
      if (created === 1) this.wrote(kind, id);
      return created === 1;
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
      this.wrote(kind, id);
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
      if (deleted === 1) this.wrote(kind, id);
      return deleted === 1;
    });
  }

  ids(kind: string, group: string): Promise<string[]> {
    return this.io.run((redis) => redis.smembers(this.indexPrefix(kind) + group));
  }

  async groups(kind: string): Promise<string[]> {
    const prefix = this.indexPrefix(kind);
    // The prefix is matched as it is: a key prefix may hold a glob's special characters.
    const pattern = `${prefix.replace(/[*?[\]\\]/g, '\\$&')}*`;
    const client = this.io.client;
    // Every index lives in the records' slot, on one node of a cluster: each primary is asked, as
    // which one holds the slot may change meanwhile.
    const nodes: Redis[] = client instanceof Cluster ? client.nodes('master') : [client as Redis];
    const found = new Set<string>();
    for (const node of nodes) {
      let cursor = '0';
      do {
        // One step per operation: a whole walk of a large store would outlast the command timeout.
        const [next, keys] = await this.io.run(() => node.scan(cursor, 'MATCH', pattern, 'COUNT', SCAN_COUNT));
        for (const key of keys) found.add(key.slice(prefix.length));
        cursor = next;
      } while (cursor !== '0');
    }
    return [...found];
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
