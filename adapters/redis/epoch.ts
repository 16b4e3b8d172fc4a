/*
 * Noticing a store that was emptied under a running server: Redis restarted without persistence,
 * flushed, or a failover to a replica that had nothing. Nothing in Redis says so, and every
 * instance would go on as if its own writes of the start (the portal's app registration) were
 * still there. So the store keeps an epoch: a random value written once, when there is none, and
 * never changed. Each instance remembers the epoch it saw; when it reads another one (or finds
 * none and writes a new one), everything stored before is gone. Every instance notices on its own,
 * whichever of them wrote the new epoch.
 *
 * On a cluster each master can come back empty on its own (a restart without persistence, a
 * failover to a replica that had nothing), and since store format 2 every master holds records. So
 * each master also keeps a marker: the epoch's value under a tag of one of its slots (the first of
 * `epoch-0`, `epoch-1`, ... that falls there), written when there is none. A marker this instance
 * saw holding the epoch, found gone, means its master was emptied: the same news as a new epoch.
 */
import { randomUUID } from 'node:crypto';
import { Cluster } from 'ioredis';
import type { Io } from './connection.js';
import { keySlot } from './slots.js';

/** Tags tried for the masters' markers: with a few masters, the first dozen cover them all. */
const MARKER_TAGS_TRIED = 10_000;

/** The store's epoch, read at start, after every reconnect and on a timer. */
export class StoreEpoch {
  private epoch: string | undefined;
  private checking = false;
  private again = false;
  private timer: NodeJS.Timeout | undefined;
  private readonly listeners: Array<() => void> = [];
  /** The markers this instance saw holding the epoch: one found gone later was emptied. */
  private readonly seen = new Set<string>();

  constructor(
    private readonly io: Io,
    private readonly key: string,
    /** On a cluster: the start of the masters' marker keys (`<prefix>epoch:`). */
    private readonly markerPrefix?: string,
  ) {}

  /** Reads (or writes) the epoch at start, then checks it every `everyMs`. */
  async start(everyMs: number): Promise<void> {
    this.epoch = (await this.read()).epoch;
    this.timer = setInterval(() => this.check(), everyMs);
    this.timer.unref();
  }

  /** Tells `listener` each time the store is found emptied. */
  onEmptied(listener: () => void): void {
    this.listeners.push(listener);
  }

  /**
   * Reads the epoch again (a check already running runs once more after it, so a reconnect is never
   * missed). A store that cannot be read now is checked at the next turn.
   */
  check(): void {
    if (this.epoch === undefined) return;
    if (this.checking) {
      this.again = true;
      return;
    }
    this.checking = true;
    this.read().then(
      ({ epoch, markerLost }) => {
        if (this.epoch === undefined || (epoch === this.epoch && !markerLost)) return;
        this.epoch = epoch;
        for (const listener of this.listeners) listener();
      },
      () => {},
    ).finally(() => {
      this.checking = false;
      if (this.again) {
        this.again = false;
        this.check();
      }
    });
  }

  stop(): void {
    clearInterval(this.timer);
    this.epoch = undefined;
  }

  /** The epoch (written where there is none), and whether a master's marker was found gone. */
  private async read(): Promise<{ epoch: string; markerLost: boolean }> {
    const epoch = await this.io.run((redis) => redis.taGetOrSet(this.key, randomUUID()));
    const client = this.io.client;
    if (this.markerPrefix === undefined || !(client instanceof Cluster)) return { epoch, markerLost: false };
    const markers = markerTags(client.slots).map((tag) => `${this.markerPrefix}{${tag}}`);
    // Each marker set to the epoch; what it held before tells whether its master was emptied.
    const before = await Promise.all(markers.map((marker) => this.io.run((redis) => redis.taSwap(marker, epoch))));
    let markerLost = false;
    markers.forEach((marker, at) => {
      // Gone: its master was emptied. Another value is an older epoch (the store's epoch changed,
      // which its own key tells): written over, no news.
      if (before[at] === null && this.seen.has(marker)) markerLost = true;
      this.seen.add(marker);
    });
    // The epoch's own master may have been emptied between the two reads: one emptying, told once,
    // with the epoch as it is now.
    if (markerLost) return { epoch: await this.io.run((redis) => redis.taGetOrSet(this.key, randomUUID())), markerLost };
    return { epoch, markerLost };
  }
}

/**
 * A tag per master of the slot map (`slots[slot]`: its nodes, the master first): the first of
 * `epoch-0`, `epoch-1`, ... whose slot that master serves. The same map gives the same tags on
 * every instance, and a failover (a replica serving the same slots) keeps them.
 */
export function markerTags(slots: ReadonlyArray<readonly string[] | undefined>): string[] {
  const masters = new Set(slots.map((nodes) => nodes?.[0]).filter((node): node is string => node !== undefined));
  const covered = new Set<string>();
  const tags: string[] = [];
  for (let n = 0; covered.size < masters.size && n < MARKER_TAGS_TRIED; n += 1) {
    const tag = `epoch-${n}`;
    const master = slots[keySlot(`{${tag}}`)]?.[0];
    if (master !== undefined && !covered.has(master)) {
      covered.add(master);
      tags.push(tag);
    }
  }
  return tags;
}
