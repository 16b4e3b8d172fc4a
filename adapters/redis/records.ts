/*
 * Our own records on Redis (client configurations, app registrations, consents, ...): a record is
 * a hash with its group, value, revision and token under a key of its own slot, and each group of a
 * kind has an index (ID to token) in a slot of its own, so a listing is one read of the index and
 * one read per record, sent together. Writes publish the change in the same step as the record,
 * and `replace` is a compare-and-set on the revision.
 * Watchers (caches) hear of changes through pub/sub on a connection of its own; because pub/sub
 * loses what is published while disconnected, every (re)subscription tells watchers to forget
 * everything, and a heartbeat echoed through Redis proves the subscription alive or replaces it.
 */
import { randomBytes, randomUUID } from 'node:crypto';
import { Cluster, type Redis } from 'ioredis';
import { StoreUnavailable, type RecordChange, type RecordStore } from '../types.js';
import { reconnectDelay, type Io, type SubscriberFactory } from './connection.js';

const HEARTBEAT_TIMEOUT_MS = 2000;
/** Keys looked at per SCAN step (a hint to Redis). */
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

  /**
   * A record's key: its hash tag is its own kind and ID, so records spread over a cluster's slots
   * and losing one master stops only the records in its slots.
   */
  private key(kind: string, id: string): string {
    return recordKey(this.prefix, kind, id);
  }

  /**
   * A group's index: a tag of its own (one slot per tenant), apart from record keys, so that no
   * record ID can name an index.
   */
  private index(kind: string, group: string): string {
    return indexKey(this.prefix, kind, group);
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

  /*
   * A record and its group's index are in two slots on a cluster, so no single step writes both.
   * The index entry is written first and removed last: a listing may meet an ID whose record is
   * gone or in another group (it skips it), never a record its index lacks. Each index entry
   * holds the token of the record it was written for, and is removed only while it still does, so
   * a record deleted and created again at the same moment keeps its entry.
   */

  create<T>(kind: string, id: string, group: string, value: T): Promise<boolean> {
    return this.io.run(async (redis) => {
      const token = newRecordToken();
      const index = this.index(kind, group);
      await redis.hset(index, id, token);
      const [created, there, thereToken] = await redis.taCreateRecord(this.key(kind, id), group, JSON.stringify(value), token, this.channel, `${kind}\n${id}`);
      if (created === 1) {
        this.wrote(kind, id);
        return true;
      }
      // One was there already: the entry just written goes back to its token (or goes, when it is
      // in another group), unless another writer changed the entry meanwhile.
      await redis.taUnindexRecord(index, id, token, ...(there === group && thereToken ? [thereToken] : []));
      return false;
    });
  }

  put<T>(kind: string, id: string, group: string, value: T): Promise<void> {
    return this.io.run(async (redis) => {
      const token = newRecordToken();
      await redis.hset(this.index(kind, group), id, token);
      const [before, beforeToken] = await redis.taPutRecord(this.key(kind, id), group, JSON.stringify(value), token, this.channel, `${kind}\n${id}`);
      this.wrote(kind, id);
      // Moved to another group: its entry in the group before goes.
      if (before !== null && before !== group && beforeToken !== null) await redis.taUnindexRecord(this.index(kind, before), id, beforeToken);
    });
  }

  delete(kind: string, id: string): Promise<boolean> {
    return this.io.run(async (redis) => {
      const deleted = await redis.taDeleteRecord(this.key(kind, id), this.channel, `${kind}\n${id}`);
      if (deleted === null) return false;
      this.wrote(kind, id);
      const [group, token] = deleted;
      if (token !== null) await redis.taUnindexRecord(this.index(kind, group), id, token);
      return true;
    });
  }

  /** The IDs in a group's index whose record is there and still in that group, with its value. */
  private members(kind: string, group: string): Promise<Array<{ id: string; value: string }>> {
    return this.io.run(async (redis) => {
      const ids = await redis.hkeys(this.index(kind, group));
      // Sent together (one round trip on one node; on a cluster, to each record's node at once).
      // A listing with holes would look complete: any failed read fails the whole listing.
      const found = await Promise.all(ids.map((id) => redis.hmget(this.key(kind, id), 'g', 'v')));
      const members: Array<{ id: string; value: string }> = [];
      found.forEach(([recordGroup, value], at) => {
        if (recordGroup === group && typeof value === 'string') members.push({ id: ids[at]!, value });
      });
      return members;
    });
  }

  async ids(kind: string, group: string): Promise<string[]> {
    return (await this.members(kind, group)).map(({ id }) => id);
  }

  async groups(kind: string): Promise<string[]> {
    const start = this.index(kind, '').slice(0, -1);
    const found = new Set<string>();
    await scanKeys(this.io, start, (keys) => {
      for (const key of keys) if (key.endsWith('}')) found.add(key.slice(start.length, -1));
    });
    return [...found];
  }

  async list<T>(kind: string, group: string): Promise<T[]> {
    return (await this.members(kind, group)).map(({ value }) => JSON.parse(value) as T);
  }
}

/** A record's key (store format 2): its tag is its kind and ID. */
export function recordKey(prefix: string, kind: string, id: string): string {
  return `${prefix}rec:{${kind}:${id}}`;
}

/** The key of a group's index (store format 2): a hash of ID to the token of its record. */
export function indexKey(prefix: string, kind: string, group: string): string {
  return `${prefix}idx:{${kind}:${group}}`;
}

/**
 * Walks every key that starts with `start`, on every primary of a cluster (or the one node), a
 * step at a time, handing each step's keys to `each`: for the operator's tools and the store's
 * upgrade, never for a request.
 */
export async function scanKeys(io: Io, start: string, each: (keys: string[]) => void | Promise<void>): Promise<void> {
  // The start is matched as it is: a key prefix may hold a glob's special characters.
  const pattern = `${start.replace(/[*?[\]\\]/g, '\\$&')}*`;
  const client = io.client;
  const nodes: Redis[] = client instanceof Cluster ? client.nodes('master') : [client as Redis];
  for (const node of nodes) {
    let cursor = '0';
    do {
      // One step per operation: a whole walk of a large store would outlast the command timeout.
      const [next, keys] = await io.run(() => node.scan(cursor, 'MATCH', pattern, 'COUNT', SCAN_COUNT));
      await each(keys);
      cursor = next;
    } while (cursor !== '0');
  }
}

/** A random token that ties an index entry to the record written with it. */
export function newRecordToken(): string {
  return randomBytes(9).toString('base64url');
}
