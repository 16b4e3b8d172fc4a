/*
 * The Redis store (ioredis): every engine model, our records and the rate-limit counters, on a
 * single node, a Redis Cluster or a Sentinel-managed master. This module starts the store: it
 * checks the options, connects, subscribes to the change feed, warns of an eviction policy that
 * can lose data, and hands out the engine adapters, records and counters, which share one client
 * and one deadline per operation. Its exports are the store's whole public surface.
 */
import { randomBytes } from 'node:crypto';
import type { EngineAdapter, Store } from '../types.js';
import {
  Io,
  STARTUP_TIMEOUT_MS,
  StartDeadlinePassed,
  describeRedisTarget,
  StoreStartError,
  connect,
  evictionWarning,
  isCutByPeer,
  isReplyError,
  refuseReplica,
  StoreError,
  startFailure,
  withDeadline,
  type RedisStoreOptions,
  type StartProbes,
} from './connection.js';
import { StoreEpoch } from './epoch.js';
import { StoreFormatError, openStoreFormat, stampStoreFormat } from './format.js';
import { DEFAULT_COMMAND_TIMEOUT_MS, DEFAULT_KEY_PREFIX } from './options.js';
import { addressText, answersPlainRedis, answersTls, firstAddresses, firstAnswering } from './probes.js';
import { RedisCounters } from './counters.js';
import { RedisAuditLog } from './audit.js';
import { RedisEngineAdapter } from './engine-adapter.js';
import { RedisRecords } from './records.js';
import { StoreUpgradeStopped, upgradeRecordsFromFormat1 } from './upgrade.js';

export { StoreError, StoreStartError, describeRedisTarget } from './connection.js';
export { STORE_FORMAT, StoreFormatError } from './format.js';
export type { RedisStoreOptions } from './connection.js';
export type {
  RedisClusterSettings,
  RedisConnectionOptions,
  RedisSentinelSettings,
  RedisSharedSettings,
  RedisTlsSettings,
} from './options.js';

/*
 * Key layout (prefix `p`, default DEFAULT_KEY_PREFIX; <...> are placeholders). The part in braces is
 * the Redis Cluster hash tag: only it decides the slot, so keys with the same tag share a slot.
 *
 *   engine entry               p<Model>:{<id>}                                  HASH p=payload c=consumed (epoch ms) d=confirmed
 *   session uid / user code    p uid:{<uid>} / p userCode:{<code>}              STRING id
 *   records                    p rec:{<kind>:<id>}                              HASH g=group v=value n=revision t=token
 *   record index               p idx:{<kind>:<group>}                           HASH id = token of its record
 *   counters (rate limits)     p rl:{<key>}                                     STRING count, expiring
 *   audit trail                p audit:{audit:t:<tenant>}[:activity], p audit:{audit}[:activity]
 *                                                                              STREAM (adapters/redis/audit.ts)
 *   shared secrets             p secret:{secrets}:<name>                        STRING base64url, 32 bytes
 *   record changes             channel p rec-changes, message "<kind>\n<id>", published in the
 *                              same MULTI/script as the write
 *   change-feed heartbeat      channel p rec-heartbeat:<random per store instance>
 *   store epoch                p epoch:{records}                                STRING random, written once (epoch.ts)
 *   a master's epoch marker    p epoch:{epoch-<n>} (cluster: one per master)   STRING the epoch (epoch.ts)
 *   store format               p format:{records}                               STRING whole number, STORE_FORMAT (format.ts)
 *
 * Nothing grows with the tokens a grant has had: there is no index of a grant's entries. Codes
 * and refresh tokens are usable only while their grant's entry exists (the engine checks it at
 * every use), so ending a grant is one DEL, and its entries expire on their own TTLs.
 *
 * Every multi-key step stays in one slot, which Redis Cluster requires:
 * - Each record is its own tag, and each group's index (a tenant's client configurations, say)
 *   another, so records spread over the slots and listing a tenant reads one index slot. A record
 *   and its index entry change in two steps (records.ts says in which order, and why a listing
 *   never misses a record). The epoch and the format keep the `{records}` tag of format 1, which
 *   holds nothing else now: they are read at start and on a timer, never for a request.
 * - Each counter is its own tag, so counters spread over the slots and no node is asked about
 *   every request. Several counters go in one script on a single node or Sentinel; on a cluster,
 *   one call per counter (counters.ts).
 * The prefix takes part in no tag: on a cluster it must not contain braces.
 *
 * What the loss of one cluster master stops until its replica is promoted (its commands are
 * refused at once, the other masters' are served): the entries and counters in its slots (about a
 * third of them with three masters), the records in its slots (a client whose record is there is
 * still served from an instance's cache, src/engine/client-cache.ts), the listings of the groups
 * whose index is there; with an `{audit...}` slot, that tenant's changes; with the `{records}`
 * slot, nothing a request needs (the epoch is checked again on the next turn).
 * Pub/sub needs no slot: PUBLISH reaches the subscribers on every node of a cluster.
 */

const DEFAULT_HEARTBEAT_MS = 5000;
/**
 * A TLS connection not up after this long at start: ask whether plain Redis answers there (it would
 * hold the TLS client until the 10 s deadline). Handshakes take milliseconds; a slow one is only
 * asked about, never cut.
 */
const PLAIN_PROBE_AFTER_MS = 1000;
/** How long a probe of an address may take. */
const PROBE_TIMEOUT_MS = 1000;

/**
 * The production store: every engine model, our records and the counters in Redis (ioredis): a
 * single node, a Redis Cluster or a Sentinel-managed master.
 */
export async function createRedisStore(options: RedisStoreOptions): Promise<Store> {
  const prefix = options.keyPrefix ?? DEFAULT_KEY_PREFIX;
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
  const counters = new RedisCounters(io, prefix, !options.cluster);
  const epoch = new StoreEpoch(io, `${prefix}epoch:{records}`, options.cluster ? `${prefix}epoch:` : undefined);
  const formatKey = `${prefix}format:{records}`;
  epoch.onEmptied(() => {
    records.forgetAll();
    stampStoreFormat(io, formatKey);
  });
  let closed = false;

  const shut = async () => {
    closed = true;
    epoch.stop();
    records.stop();
    if (client.status !== 'end' && connection.ready()) {
      // QUIT lets pending replies arrive; when Redis is gone it cannot answer, so do not wait long.
      await withDeadline(client.quit(), 1000).catch(() => undefined);
    }
    if (client.status !== 'end') client.disconnect();
  };
  const probes: StartProbes = {};
  let probeTimer: NodeJS.Timeout | undefined;
  // A TLS client facing a Redis without TLS waits for an answer that never comes: after a moment,
  // a plain PING to the same addresses tells that case apart at once.
  const tlsAddresses = firstAddresses(options).filter((address) => address.tls);
  const answeredPlain = new Promise<never>((_, reject) => {
    if (tlsAddresses.length === 0) return;
    probeTimer = setTimeout(() => {
      void firstAnswering(tlsAddresses, (address) => answersPlainRedis(address, PROBE_TIMEOUT_MS)).then((address) => {
        if (!address) return;
        probes.answeredPlain = addressText(address);
        reject(new StoreStartError(probes.answeredPlain));
      });
    }, PLAIN_PROBE_AFTER_MS);
  });
  const where = describeRedisTarget(options);
  const startDeadline = () => new StartDeadlinePassed();
  try {
    const connecting = withDeadline(
      (async () => {
        if (options.cluster) {
          // A cluster client goes on trying after a failed first attempt (a slow slots refresh on
          // a busy host, a startup node that is down while others are up): wait until it is ready.
          // Unless every node refused the credentials: trying again would not change that.
          let refusedByAll: ((error: Error & { lastNodeError?: Error }) => void) | undefined;
          await new Promise<void>((resolve, reject) => {
            refusedByAll = (error) => {
              if (error.lastNodeError && /^(WRONGPASS|NOAUTH|NOPERM)\b/.test(error.lastNodeError.message)) {
                noteStartError(error.lastNodeError);
                reject(error.lastNodeError);
              }
            };
            client.on('error', refusedByAll);
            client.once('ready', resolve);
            client.connect().catch(() => {});
          }).finally(() => client.off('error', refusedByAll!));
        } else {
          await client.connect();
        }
        // ioredis reports a refused SELECT (a database the server does not have) or a refused
        // AUTH on a reconnect as an error event and goes on, on database 0: that must stop here.
        const refused = startErrors.find(isReplyError);
        if (refused) throw refused;
      })(),
      STARTUP_TIMEOUT_MS,
      startDeadline,
    );
    await Promise.race([connecting, answeredPlain]);
    // A cluster client writes to the masters only; through Sentinel, ioredis checks the role itself.
    if (!options.cluster && !options.sentinel) await refuseReplica(io);
    // Before anything is written or subscribed: a store this release cannot read is left alone.
    // An older format's upgrade is outside the start's deadline: it takes as long as the store is
    // large, each of its commands under the command timeout.
    await openStoreFormat(io, formatKey, where, () => upgradeRecordsFromFormat1(io, prefix, where, timeoutMs));
    await withDeadline(
      (async () => {
        await records.follow(connection.createSubscriber, heartbeatMs);
        await epoch.start(heartbeatMs);
      })(),
      STARTUP_TIMEOUT_MS,
      startDeadline,
    );
    const warning = await evictionWarning(client);
    if (warning) options.onWarning?.(warning);
    // Allowed (a test rig, a private CA being set up), never silent: anyone on the path could answer as Redis.
    if (typeof options.tls === 'object' && options.tls.rejectUnauthorized === false) {
      options.onWarning?.('tls.rejectUnauthorized is false: the Redis server\'s certificate is not checked, so anyone on the network path could answer as the store');
    }
  } catch (error) {
    clearTimeout(probeTimer);
    await shut();
    if (error instanceof StoreFormatError || error instanceof StoreUpgradeStopped) throw error;
    // A plain connection cut without a word: a TLS-only port does that. Ask it for a TLS hello.
    const plainAddresses = firstAddresses(options).filter((address) => !address.tls);
    if (!probes.answeredPlain && plainAddresses.length > 0 && [...startErrors, error].some((cause) => cause instanceof Error && isCutByPeer(cause))) {
      const tlsAt = await firstAnswering(plainAddresses, (address) => answersTls(address, PROBE_TIMEOUT_MS));
      if (tlsAt) probes.wantsTls = addressText(tlsAt);
    }
    throw new StoreStartError(startFailure(options, error, startErrors, probes));
  } finally {
    clearTimeout(probeTimer);
    client.off('error', noteStartError);
  }
  // Reconnected: the Redis there may be another one, without what we stored (checked on a timer too,
  // for a cluster node emptied while the cluster connection stayed up).
  client.on('ready', () => epoch.check());

  const adapters = new Map<string, EngineAdapter>();
  const secrets = new Map<string, Promise<Buffer>>();
  return {
    type: 'redis',
    engine(model) {
      let adapter = adapters.get(model);
      if (!adapter) adapters.set(model, (adapter = new RedisEngineAdapter(model, io, prefix, !options.cluster)));
      return adapter;
    },
    records,
    counters,
    audit: new RedisAuditLog(io, prefix),
    async sharedSecret(name) {
      let secret = secrets.get(name);
      if (!secret) {
        secret = (async () => {
          const key = `${prefix}secret:{secrets}:${name}`;
          // The first process to ask makes it; every other reads that one (SET NX, then GET).
          const stored = await io.run(async (redis) => {
            await redis.set(key, randomBytes(32).toString('base64url'), 'NX');
            return redis.get(key);
          });
          if (!stored) throw new StoreError('NOSECRET');
          return Buffer.from(stored, 'base64url');
        })();
        secrets.set(name, secret);
        // A failure is not remembered: the next call tries again.
        secret.catch(() => secrets.delete(name));
      }
      return Buffer.from(await secret);
    },
    get available() {
      return !closed && connection.ready() && records.watching;
    },
    ping() {
      return io.run(connection.readiness);
    },
    onEmptied(listener) {
      epoch.onEmptied(listener);
    },
    close: shut,
  };
}
