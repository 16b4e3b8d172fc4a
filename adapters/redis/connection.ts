/*
 * How the Redis store reaches Redis, and what it says when it cannot. The options name one of a
 * single node's URL, a Redis Cluster or a Sentinel-managed master (with credentials and TLS);
 * `connect` turns them into an ioredis client that fails fast instead of queueing while Redis is
 * away, plus a factory of subscriber connections for the change feed. `Io` runs every store
 * operation under a deadline and turns "Redis could not be reached" into StoreUnavailable, without
 * leaking keys or payloads into errors. At start, the failure is told in one line an operator can
 * act on (StoreStartError), and an eviction policy that can delete stored data is warned about.
 */
import type { ConnectionOptions as TlsConnectionOptions } from 'node:tls';
import { Cluster, Redis, type ClusterOptions, type RedisOptions } from 'ioredis';
import { StoreUnavailable } from '../types.js';
import { SCRIPTS, type Client, type Scripts } from './scripts.js';
import { databaseIndexProblem } from './url.js';
import { DEFAULT_COMMAND_TIMEOUT_MS, type RedisConnectionOptions, type RedisTlsSettings } from './options.js';

/**
 * How long createRedisStore may take to connect, and to subscribe, before it gives up. The upgrade
 * of an older store format in between is not under it: it makes progress, each of its commands
 * under the command timeout, and a large store takes longer than this.
 */
export const STARTUP_TIMEOUT_MS = 10_000;

/** The start's own deadline passed (STARTUP_TIMEOUT_MS), as opposed to one command's timeout. */
export class StartDeadlinePassed extends Error {
  constructor() {
    super('the start took too long');
    this.name = 'StartDeadlinePassed';
  }
}

/** Reconnect soon, then at most once a second, forever: service resumes within a second of Redis. */
export const reconnectDelay = (attempt: number): number => Math.min(100 * attempt, 1000);

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
export class Io {
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
      const deadline = new Deadline(this.timeoutMs, reject);
      let running: Promise<T>;
      try {
        running = operation(this.client);
      } catch (error) {
        running = Promise.reject(error);
      }
      running.then(
        (value) => {
          deadline.clear();
          resolve(value);
        },
        (error: unknown) => {
          deadline.clear();
          const reason = unavailableReason(error);
          reject(reason === undefined ? withoutCommand(error) : new StoreUnavailable(reason));
        },
      );
    });
  }
}

/**
 * Where Redis is (RedisConnectionOptions), plus the key prefix, the timeouts and the hooks told of
 * errors and warnings.
 */
export type RedisStoreOptions = RedisConnectionOptions & {
  keyPrefix?: string;
  /**
   * Every store operation answers within this many milliseconds or rejects with
   * StoreUnavailable('timeout'), e.g. when Redis accepts connections but does not answer (default:
   * DEFAULT_COMMAND_TIMEOUT_MS, options.ts).
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
  const database = databaseIndexProblem(url);
  if (database) throw new TypeError(`cluster.nodes[${index}]: ${database}`);
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

/** A new subscriber connection, not yet connected (on a cluster: to the next node in turn). */
export type SubscriberFactory = () => Redis;

/** The store's client (not yet connected), whether it is ready, and how to open a subscriber. */
export interface Connection {
  client: Client;
  ready(): boolean;
  /**
   * Resolves when Redis serves every slot the store uses: a PING on a single node or Sentinel's
   * master; on a cluster, every slot has a master that answers and sees the cluster whole
   * (clusterReadiness). Run under Io's deadline.
   */
  readiness(): Promise<void>;
  createSubscriber: SubscriberFactory;
}

/**
 * The client for `options`, not yet connected (lazyConnect), failing fast while Redis is away.
 * Throws TypeError when the options do not name exactly one of url, cluster and sentinel, a
 * cluster node is not a redis:// or rediss:// URL, or a URL's database is not a plain number.
 */
export function connect(options: RedisStoreOptions, timeoutMs: number): Connection {
  const modes = [options.url, options.cluster, options.sentinel].filter((mode) => mode !== undefined);
  if (modes.length !== 1) throw new TypeError('RedisStoreOptions: give exactly one of url, cluster and sentinel');
  const database = options.url === undefined ? undefined : databaseIndexProblem(options.url);
  if (database) throw new TypeError(`url: ${database}`);
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
    // Io's Deadline answers an operation first, and it tolerates a busy moment of ours; ioredis's
    // own timers do not (they fire before the reply is read), so they are backstops, further off:
    // for a command outside Io, and for a connection on which nothing at all answers.
    commandTimeout: BACKSTOP_FACTOR * timeoutMs,
    socketTimeout: socketTimeoutMs(timeoutMs),
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
        // ioredis opens a node's connection at the node's first command. Without this, the
        // commands sent to that node while the connection is being opened would be refused (only
        // the first would wait for it): a burst of requests at start, or after the slots moved,
        // would get 503s from a healthy cluster. With it, they wait for that connection; a node
        // that refuses it (gone) fails them at once. Nothing waits for a cluster that is down:
        // Io refuses every operation while the cluster client is not ready.
        enableOfflineQueue: true,
        // Auto-pipelines are grouped by node when queued and checked again when sent: a slot map
        // that changed in between (a node gone) fails them with a cross-slot error.
        enableAutoPipelining: false,
        clusterRetryStrategy: reconnectDelay,
        // While a slot's master is down (killed, or failing over to its replica), a command for it
        // fails at once: ioredis would otherwise retry it every 100 ms (the connection refused,
        // or CLUSTERDOWN) until our deadline, so each request would wait the command timeout for
        // its 503. Commands for the other slots go on. After the promotion, the first command
        // for the slot is redirected (MOVED) to the new master, which ioredis follows at once.
        retryDelayOnFailover: 0,
        retryDelayOnClusterDown: 0,
        slotsRefreshTimeout: Math.max(1000, timeoutMs),
        scripts: SCRIPTS,
        redisOptions: { ...nodeCredentials, ...nodeFailFast, ...nodeOptionsOf(options.redisOptions) },
      },
    ) as Cluster & Scripts;
    cluster.on('+node', (node: Redis) => releaseSocketTimerOnClose(node));
    // A node gone: ask the others for the slots now, and again later while one is gone (without
    // the retries above, nothing else would before a command is redirected).
    const refreshSlots = throttled(SLOTS_REFRESH_MIN_MS, () => cluster.status === 'ready' && cluster.refreshSlotsCache());
    cluster.on('-node', refreshSlots);
    let turn = 0;
    return {
      client: cluster,
      ready: () => cluster.status === 'ready',
      readiness: () => clusterReadiness(cluster, refreshSlots),
      // PUBLISH reaches every node, so any node will do; ioredis' own cluster subscriber moves to
      // another node without a word, which would hide missed changes, hence a plain connection.
      createSubscriber: () => {
        const known = cluster
          .nodes('all')
          .map((node) => ({ host: node.options.host, port: node.options.port }))
          .filter((node): node is { host: string; port: number } => node.host !== undefined && node.port !== undefined);
        const candidates: Array<{ host: string; port: number }> = known.length > 0 ? known : nodes;
        const node = candidates[turn++ % candidates.length]!;
        return releaseSocketTimerOnClose(new Redis({
          ...nodeCredentials,
          ...failFast,
          ...options.redisOptions,
          ...subscriberOptions,
          host: node.host,
          port: node.port,
          // A few quick tries, then 'end', and the next node gets its turn.
          retryStrategy: (attempt: number) => (attempt > 2 ? null : reconnectDelay(attempt)),
        }));
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
  const single = releaseSocketTimerOnClose(redis) as Redis & Scripts;
  return {
    client: single,
    ready: () => single.status === 'ready',
    readiness: async () => {
      await single.ping();
    },
    createSubscriber: () => releaseSocketTimerOnClose(single.duplicate(subscriberOptions)),
  };
}

/** A cluster's slots are asked for again at most this often when a node goes. */
const SLOTS_REFRESH_MIN_MS = 250;

/** `run`, at most once per `ms` (a call within that time is dropped). */
function throttled(ms: number, run: () => unknown): () => void {
  let last = -Infinity;
  return () => {
    const now = performance.now();
    if (now - last < ms) return;
    last = now;
    run();
  };
}

/**
 * Readiness on a cluster. A PING tells nothing there: any live node answers it while a third of
 * the slots have no master. Every request may need any slot (tokens and sessions spread over all
 * of them), so ready means: every slot has a master in ioredis' slot map, and each of those
 * masters (three, say) answers CLUSTER INFO with cluster_state:ok. A master gone (killed, not yet
 * replaced by its replica) fails that at once; its replica's promotion is then learnt from the
 * others by a slots refresh, started here since a load balancer that stopped sending requests
 * would leave none to be redirected.
 */
async function clusterReadiness(cluster: Cluster, refreshSlots: () => void): Promise<void> {
  const masters = new Set<string>();
  let covered = 0;
  for (const owners of cluster.slots) {
    const master = owners?.[0];
    if (master === undefined) continue;
    covered += 1;
    masters.add(master);
  }
  const connections = new Map(cluster.nodes('master').map((node) => [`${node.options.host}:${node.options.port}`, node]));
  const unready = () => {
    refreshSlots();
    return new StoreUnavailable('cluster');
  };
  if (covered < CLUSTER_SLOTS) throw unready();
  await Promise.all([...masters].map(async (key) => {
    const node = connections.get(key);
    if (!node) throw unready();
    const info = (await node.cluster('INFO').catch(() => undefined)) as string | undefined;
    if (info === undefined || !/^cluster_state:ok\b/m.test(info)) throw unready();
  }));
}

/** Every Redis Cluster has 16384 hash slots. */
const CLUSTER_SLOTS = 16384;

/**
 * ioredis (5.x) arms its socket timer with a command and clears it only when data arrives: on a
 * connection that closes with a command unanswered, the timer stays, holds a process that wants to
 * exit for up to `socketTimeout`, and, after a reconnect, would destroy the new connection. Cleared
 * when the connection closes.
 */
export function releaseSocketTimerOnClose<C extends Redis>(client: C): C {
  client.on('close', () => {
    const held = client as unknown as { socketTimeoutTimer?: NodeJS.Timeout };
    clearTimeout(held.socketTimeoutTimer);
    held.socketTimeoutTimer = undefined;
  });
  return client;
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
export function isReplyError(error: Error): boolean {
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

/**
 * A TLS handshake that failed: a certificate refused (Node's verification codes, e.g.
 * DEPTH_ZERO_SELF_SIGNED_CERT, CERT_HAS_EXPIRED, ERR_TLS_CERT_ALTNAME_INVALID), OpenSSL refusing
 * the peer's protocol, or a peer that hung up in the middle of it.
 */
export function isTlsFailure(error: Error): boolean {
  const code = (error as { code?: unknown }).code;
  return (typeof code === 'string' && /^ERR_(SSL|TLS)_|CERT|SELF_SIGNED|UNABLE_TO_(GET|VERIFY|DECRYPT)/.test(code))
    || /SSL routines|before secure TLS connection was established/.test(error.message);
}

/** A connection the peer cut without a word: what a TLS-only port does to a plain connection. */
export function isCutByPeer(error: Error): boolean {
  const code = (error as { code?: unknown }).code;
  return code === 'ECONNRESET' || code === 'EPIPE' || error.message === 'Connection is closed.';
}

/** What the start learnt by asking the addresses themselves (./probes.ts), in `host:port` form. */
export interface StartProbes {
  /** A TLS address at which plain Redis answered: TLS was asked of a server without it. */
  answeredPlain?: string;
  /** A plain address that completed a TLS handshake: the server there wants TLS. */
  wantsTls?: string;
}

/**
 * Why the start failed, in one line: where (never credentials) and why, from what the probes found,
 * the errors noted while starting (a refusal by Redis first, then a failed TLS handshake) or else
 * from the error the start ended with.
 */
export function startFailure(options: RedisStoreOptions, error: unknown, noted: readonly Error[], probes: StartProbes = {}): string {
  const where = describeRedisTarget(options);
  if (probes.answeredPlain) {
    return `TLS handshake failed at ${probes.answeredPlain}: Redis there answers without TLS (connect with redis:// and no tls option, or turn TLS on in Redis)`;
  }
  const refused = noted.find(isReplyError);
  if (refused) {
    const word = /^[A-Z]+/.exec(refused.message)?.[0] ?? 'ERR';
    if (/DB index/i.test(refused.message)) return `${where}: the database cannot be selected (${refused.message})`;
    if (word === 'WRONGPASS' || word === 'NOAUTH' || word === 'NOPERM') return `${where} refused the credentials (${refused.message})`;
    return `${where} refused to start the connection (${refused.message})`;
  }
  const handshake = noted.find(isTlsFailure) ?? (error instanceof Error && isTlsFailure(error) ? error : undefined);
  if (handshake) {
    const at = options.url !== undefined ? hostOf(options.url) : where.replace(/^the /, '');
    return `TLS handshake failed at ${at}: ${handshake.message}`;
  }
  if (probes.wantsTls) {
    return `cannot connect to ${where}: ${probes.wantsTls} wants a TLS handshake and cut the plain connection (use a rediss:// URL or the tls option)`;
  }
  const timeoutMs = options.commandTimeoutMs ?? DEFAULT_COMMAND_TIMEOUT_MS;
  if (error instanceof StartDeadlinePassed) return `cannot connect to ${where}: no answer within ${STARTUP_TIMEOUT_MS / 1000} s`;
  // Connected, then a command failed: saying "no answer within 10 s" would send the operator to
  // the network when Redis answered at once that it is a replica, or one command timed out.
  if (error instanceof StoreUnavailable) return `cannot start on ${where}: ${unavailableWords(error, timeoutMs)}`;
  // Connected, and nothing came back: ioredis drops the connection at its socket timeout, and
  // what it says after that ("Stream isn't writeable ...") is about itself.
  if (noted.some((cause) => cause.message.startsWith('Socket timeout'))) {
    return `cannot connect to ${where}: connected, but nothing answered within ${socketTimeoutMs(timeoutMs) / 1000} s`;
  }
  // The socket's own error says why (ECONNREFUSED, ENOTFOUND, ...); ioredis' rejection only says
  // "Connection is closed."
  const cause = noted.at(-1) ?? (error instanceof Error ? error : undefined);
  return `cannot connect to ${where}: ${cause?.message ?? String(error)}`;
}

/**
 * Refuses a replica (StoreUnavailable 'read-only'): it would answer every read and refuse every
 * write, so the server would start, say it is ready, and answer 503 to every sign-in. A Redis that
 * refuses ROLE itself (an ACL, a managed Redis that renamed it) is let through: its first write
 * says what it is.
 */
export async function refuseReplica(io: Io): Promise<void> {
  let role: unknown[];
  try {
    role = await io.run((redis) => (redis as Redis).role());
  } catch (error) {
    if (error instanceof StoreUnavailable) throw error;
    return;
  }
  if (role[0] === 'slave' || role[0] === 'replica') throw new StoreUnavailable('read-only');
}

/** Each reason of StoreUnavailable in words an operator can act on. */
const UNAVAILABLE_WORDS: Record<StoreUnavailableReason, (timeoutMs: number) => string> = {
  connection: () => 'the connection was lost',
  timeout: (timeoutMs) => `a command got no answer within ${timeoutMs} ms (store.commandTimeoutMs)`,
  cluster: () => 'the cluster does not serve every slot (a master is down or its slots are moving)',
  loading: () => 'Redis is still loading its data from disk',
  busy: () => 'Redis is busy running a script',
  'read-only': () => 'it is a read-only replica (connect to the master)',
  refused: () => 'Redis refuses writes (out of memory, a failed snapshot or too few replicas)',
};

/** Why the store was unavailable, in words (`timeoutMs`: the command timeout, for 'timeout'). */
export function unavailableWords(error: StoreUnavailable, timeoutMs: number): string {
  const words = UNAVAILABLE_WORDS[error.reason as StoreUnavailableReason] as ((ms: number) => string) | undefined;
  return words ? words(timeoutMs) : error.reason;
}

/**
 * Redis under `maxmemory` with an eviction policy may delete our keys to make room: with an
 * allkeys-* policy the records that have no expiry (client configurations, app registrations,
 * consents) are lost; with a volatile-* policy sign-in sessions, grants (users are signed out),
 * consumed marks and rate-limit counters may go. `noeviction` makes Redis refuse writes instead
 * (503, nothing lost). Undefined when the policy is safe or cannot be read (CONFIG is often
 * disabled on managed Redis).
 */
export async function evictionWarning(client: Client): Promise<string | undefined> {
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

/** ioredis's timers are this many times the command timeout (failFast in connect). */
const BACKSTOP_FACTOR = 4;
/** A connection on which nothing answers is dropped after this long at least. */
const SOCKET_TIMEOUT_MIN_MS = 2000;

/** After how long without a byte ioredis drops a connection (its socketTimeout). */
function socketTimeoutMs(commandTimeoutMs: number): number {
  return Math.max(SOCKET_TIMEOUT_MIN_MS, BACKSTOP_FACTOR * commandTimeoutMs);
}

/**
 * The deadline of one store operation, which is there to tell a Redis that does not answer. The
 * time that counts is the event loop's: timers run before the loop reads its sockets, so when the
 * process itself was busy past the deadline (a long garbage collection, a synchronous task), an
 * answer Redis gave in time is still unread when the timer fires, and an operation that started
 * just before the busy moment may not even have sent its command. Failing then would turn a busy
 * moment of ours into a 503 for every request in flight. So a timer that fires late by more than a
 * tenth of its time (the process was busy) gives the operation its time once more, and a deadline that has passed rejects only after
 * the replies already received are read (setImmediate runs after that read): an operation
 * answered meanwhile has settled, and the rejection no longer counts. A Redis that does not answer
 * is still told within the timeout, or within about twice it after a busy moment.
 */
class Deadline {
  private readonly timer: NodeJS.Timeout;
  private due: number;
  private extended = false;

  constructor(
    private readonly ms: number,
    private readonly reject: (error: unknown) => void,
    private readonly failure: () => Error = timedOut,
  ) {
    this.due = performance.now() + ms;
    this.timer = setTimeout(() => this.passed(), ms);
  }

  clear(): void {
    clearTimeout(this.timer);
  }

  private passed(): void {
    const now = performance.now();
    if (!this.extended && now - this.due > this.ms / 10) {
      this.extended = true;
      this.due = now + this.ms;
      this.timer.refresh();
      return;
    }
    setImmediate(this.reject, this.failure());
  }
}

function timedOut(): Error {
  return new StoreUnavailable('timeout');
}

/**
 * `promise`, or a rejection with `failure()` (StoreUnavailable('timeout') unless told) if it has
 * not settled within `ms`.
 */
export function withDeadline<T>(promise: Promise<T>, ms: number, failure?: () => Error): Promise<T> {
  let deadline: Deadline | undefined;
  const passed = new Promise<never>((_, reject) => {
    deadline = new Deadline(ms, reject, failure);
  });
  return Promise.race([promise, passed]).finally(() => deadline?.clear());
}
