/**
 * Token-endpoint (and userinfo, introspection) throughput and latency: our server against bare
 * node-oidc-provider, side by side in one run, with the same number of server processes on both
 * sides.
 *
 * Sides. "ours": N processes of createAuthServer() sharing one real redis-server (a client
 * configuration with tenant, scope scim.read and a group constraint; a confidential app
 * registration; an account store). "bare": N processes of node-oidc-provider 9 alone, each with the
 * engine's own memory adapter and two static clients, JWT access tokens for one resource: the
 * engine's own cost, the reference for "ours". Both sides sign with the same keys.
 *
 * Workloads. client_credentials (POST, Basic, scope=scim.read) for each BENCH_ALGS access-token
 * algorithm at each BENCH_PROCESSES count; named user: authorization_code exchange with PKCE S256
 * (ES256 access token, ID token, refresh token) and refresh_token rotation (a new ID token too), at
 * each BENCH_NAMED_USER_PROCESSES count, once for each BENCH_ID_TOKEN_ALGS ID-token algorithm: each
 * side has one app per algorithm, registered with it (ours: an app registration with
 * idTokenSigningAlg; bare: a static client with id_token_signed_response_alg). Codes of that app are
 * minted before each run through the engine's Grant and AuthorizationCode models, on both sides
 * alike (bench/mint-codes.ts); the refresh tokens the code exchange returned feed the refresh run.
 *
 * Lifecycle (bench/lifecycle.ts), at each BENCH_NAMED_USER_PROCESSES count: userinfo (GET, Bearer)
 * and introspection (POST token=..., Basic as the confidential app) on a pool of 2,000 live access
 * tokens of named users per process (scope openid profile email scim.read), got before each
 * measurement by exchanging minted codes and sent in turn. Ours: its own /userinfo and /introspect
 * on its ES256 JWT access tokens (audience the API). Bare: the engine serves only tokens it stores,
 * and its userinfo only tokens without audience, so the same means its features.userinfo (/me)
 * and features.introspection (/token/introspection, client_secret_basic) on opaque access tokens
 * without audience: their codes name no resource and their grant holds openid profile email alone.
 * A 200 that does not say what it should (no sub; active false) counts as an error.
 *
 * Load. One autocannon process per server process (bench/load-process.ts), BENCH_CONNECTIONS
 * connections each; a discarded warm-up of every generator, then the measured runs start together.
 * Every request of a workload must first succeed once with the expected algorithms (bench/checks.ts).
 * Rounds alternate which side goes first; the table gives the median round and the range.
 *
 * Client authentication (BENCH_MODE=client-auth only, not part of all), for each BENCH_ALGS
 * algorithm at each BENCH_CLIENT_AUTH_PROCESSES count: client_credentials with private_key_jwt (a
 * fresh ES256 assertion per request), with Basic and a DPoP proof per request (DPoP required, the
 * server's nonce in the proofs), with both, and the Basic Bearer client_credentials as their
 * reference, in the same rounds. Assertions and proofs are signed in the load generator processes
 * (bench/client-signing.ts), never in a server.
 *
 * Soak (bench/soak.ts; at the end of all, or alone with BENCH_MODE=soak): what Redis keeps after
 * BENCH_SOAK_FLOWS flows on one grant, then BENCH_SOAK_SECONDS of sign-ins, code exchanges,
 * refreshes and revocations of many users on two server processes of ours sharing a fresh
 * redis-server (bench/soak-traffic.ts): a progress line every minute, then operations with p50 and
 * p99, Redis memory and its growth per flow, keys by kind, the largest key, keys without TTL.
 *
 * Run: npm run bench   Knobs (environment):
 * BENCH_MODE=all|client-credentials|named-user|lifecycle|client-auth|soak (lifecycle: userinfo and
 * introspection; soak: the soak alone),
 * BENCH_PROCESSES=1,2  BENCH_NAMED_USER_PROCESSES=1  BENCH_CLIENT_AUTH_PROCESSES=1  BENCH_ALGS=ES256[,RS256]
 * BENCH_ID_TOKEN_ALGS=RS256,ES256,EdDSA (the named-user workloads' ID-token algorithms)  BENCH_CONNECTIONS=32
 * BENCH_WARMUP_SECONDS=2  BENCH_SECONDS=6  BENCH_ROUNDS=3  BENCH_CPU_PROF=dir (CPU profiles of one
 * process per side instead of the measurements, summarised by bench/profile-summary.ts)
 * BENCH_SOAK_FLOWS=2000  BENCH_SOAK_SECONDS=600 (the soak's flows on one grant, and its timed part).
 * BENCH_TRACING=api|off|sdk (our processes' tracing: bench/tracing.ts).
 * BENCH_STORE=redis|cluster (ours on one redis-server, or on a local Redis Cluster of 3 masters
 * without replicas, all on this machine: its redis-server processes are charged to ours).
 */
import { startRedis } from '../devtools/redis-server.js';
import { startRedisCluster } from '../devtools/redis-cluster.js';
import { measureLifecycle } from './lifecycle.js';
import { measureLanes, type LoadResult, type Measured } from './measure.js';
import { CodeSupply, measureNamedUser } from './named-user.js';
import { runProfiles } from './profile-pass.js';
import { ALGORITHMS, ID_TOKEN_ALGORITHMS, type Algorithm } from './protocol.js';
import { printClientAuthCosts, printHeader, printResults, printSigningLimits, type Row } from './report.js';
import { measuresClientAuth, measuresClientCredentials, measuresLifecycle, measuresNamedUser, measuresSoak, readSettings, type Settings } from './settings.js';
import { sharedKeysEnvironment } from './shared-keys.js';
import { lanesOf, servingPids, SIDES, startSide, stopSide, type BenchStore, type Side, type SideName } from './sides.js';
import { runSoak } from './soak.js';
import { summarise } from './summary.js';
import { CLIENT_AUTH_WORKLOADS, WORKLOADS, type Workload } from './workloads.js';

/** The servers started together: one access-token algorithm, the process counts measured on them. */
interface ServerSet {
  alg: Algorithm;
  clientCredentials: number[];
  namedUser: number[];
  /** Userinfo and introspection. */
  lifecycle: number[];
  /** client_credentials with private_key_jwt and DPoP, with Basic Bearer as their reference. */
  clientAuth: number[];
}

function serverSets(settings: Settings): ServerSet[] {
  const ccAlgs = measuresClientCredentials(settings) ? settings.algorithms : [];
  const caAlgs = measuresClientAuth(settings) ? settings.algorithms : [];
  // Named-user access tokens are ES256.
  const nuAlgs: Algorithm[] = measuresNamedUser(settings) || measuresLifecycle(settings) ? ['ES256'] : [];
  return [...new Set<Algorithm>([...nuAlgs, ...ccAlgs, ...caAlgs])].map((alg) => ({
    alg,
    clientCredentials: ccAlgs.includes(alg) ? settings.processes : [],
    namedUser: nuAlgs.includes(alg) && measuresNamedUser(settings) ? settings.namedUserProcesses : [],
    lifecycle: nuAlgs.includes(alg) && measuresLifecycle(settings) ? settings.namedUserProcesses : [],
    clientAuth: caAlgs.includes(alg) ? settings.clientAuthProcesses : [],
  }));
}

type RowKey = Omit<Row, 'rounds' | 'summary'>;

/** Every round's result of every row, printed as it comes. */
class Results {
  private readonly byKey = new Map<string, { row: RowKey; results: LoadResult[] }>();

  add(row: RowKey, result: LoadResult): void {
    const key = `${row.workload}/${row.alg}/${row.idTokenAlg ?? ''}/${row.processes}/${row.side}`;
    const entry = this.byKey.get(key) ?? { row, results: [] };
    entry.results.push(result);
    this.byKey.set(key, entry);
    console.log(
      `  ${row.alg} ${row.workload}${row.idTokenAlg ? ` (ID ${row.idTokenAlg})` : ''} ×${row.processes} ${row.side}: ${result.tokensPerSecond.toFixed(0)} tokens/s, ` +
        `p99 ${result.p99.toFixed(0)} ms${result.errors ? `, ${result.errors} errors` : ''}`,
    );
  }

  /** By workload, algorithm, ID-token algorithm, process count, then ours before bare. */
  rows(): Row[] {
    const rank = (row: RowKey) => [
      WORKLOADS.indexOf(row.workload),
      ALGORITHMS.indexOf(row.alg),
      row.idTokenAlg ? ID_TOKEN_ALGORITHMS.indexOf(row.idTokenAlg) : -1,
      row.processes,
      SIDES.indexOf(row.side),
    ];
    return [...this.byKey.values()]
      .map(({ row, results }) => ({ ...row, rounds: results, summary: summarise(results) }))
      .sort((a, b) => {
        const [left, right] = [rank(a), rank(b)];
        const differs = left.findIndex((value, index) => value !== right[index]);
        return differs < 0 ? 0 : left[differs]! - right[differs]!;
      });
  }
}

async function measureSet(set: ServerSet, redis: BenchStore, env: Record<string, string>, settings: Settings, results: Results): Promise<void> {
  const processes = Math.max(...set.clientCredentials, ...set.namedUser, ...set.lifecycle, ...set.clientAuth);
  const setup = {
    alg: set.alg,
    processes,
    connections: settings.connections,
    redis,
    env,
    namedUser: set.namedUser.length > 0,
    idTokenAlgorithms: settings.idTokenAlgorithms,
    lifecycle: set.lifecycle.length > 0,
    clientAuth: set.clientAuth.length > 0,
  };
  const sides = new Map<SideName, Side>();
  try {
    for (const name of SIDES) sides.set(name, await startSide(name, setup));
    // A code supply per side and ID-token algorithm: their rates differ.
    const supplies = new Map(SIDES.flatMap((name) => settings.idTokenAlgorithms.map((idTokenAlg) => [`${name}/${idTokenAlg}`, new CodeSupply(idTokenAlg)] as const)));
    // In each round, in this order: each group at each of its process counts, one side after the other.
    const groups: Array<{ counts: number[]; measure: (side: Side, count: number) => Promise<Measured> }> = [
      {
        counts: set.clientCredentials,
        measure: async (side, count) => [
          { workload: 'client-credentials', result: await measureLanes(lanesOf(side, count), 'client-credentials', settings, servingPids(side, count)) },
        ],
      },
      // One group per ID-token algorithm: both sides measure an algorithm back to back.
      ...settings.idTokenAlgorithms.map((idTokenAlg) => ({
        counts: set.namedUser,
        measure: (side: Side, count: number) => measureNamedUser(side, count, settings, supplies.get(`${side.name}/${idTokenAlg}`)!, idTokenAlg),
      })),
      { counts: set.lifecycle, measure: (side, count) => measureLifecycle(side, count, settings) },
      {
        counts: set.clientAuth,
        measure: async (side, count) => {
          const measured: Measured = [];
          for (const workload of ['client-credentials', ...CLIENT_AUTH_WORKLOADS] as const satisfies readonly Workload[]) {
            measured.push({ workload, result: await measureLanes(lanesOf(side, count), workload, settings, servingPids(side, count)) });
          }
          return measured;
        },
      },
    ];
    for (let round = 0; round < settings.rounds; round += 1) {
      console.log(`${set.alg} round ${round + 1}/${settings.rounds}`);
      const order = round % 2 === 0 ? SIDES : [...SIDES].reverse();
      for (const { counts, measure } of groups) {
        for (const count of counts) {
          for (const name of order) {
            for (const { workload, result, idTokenAlg } of await measure(sides.get(name)!, count)) {
              results.add({ workload, alg: set.alg, ...(idTokenAlg ? { idTokenAlg } : {}), processes: count, side: name }, result);
            }
          }
        }
      }
    }
  } finally {
    await Promise.all([...sides.values()].map(stopSide));
  }
}

/** Our side's store (BENCH_STORE): one redis-server, or a Redis Cluster of 3 masters (no replicas). */
async function startStore(kind: Settings['store']): Promise<BenchStore> {
  if (kind === 'redis') {
    const redis = await startRedis();
    return { url: redis.url, pids: [redis.pid], stop: () => redis.stop() };
  }
  const cluster = await startRedisCluster(3);
  return { url: `cluster:${cluster.urls.join(',')}`, pids: cluster.nodes.map((node) => node.pid), stop: () => cluster.stop() };
}

async function main(): Promise<void> {
  const settings = readSettings();
  if (settings.mode === 'soak') {
    if (!(await runSoak(settings))) failSoak();
    return;
  }
  printHeader(settings);
  const redis = await startStore(settings.store);
  // Server and load children exit when the IPC channel closes; redis-server would outlive an interrupted run.
  const interrupted = () => void redis.stop().finally(() => process.exit(130));
  for (const signal of ['SIGINT', 'SIGTERM'] as const) process.once(signal, interrupted);
  const env = await sharedKeysEnvironment();
  const results = new Results();
  try {
    if (settings.profileDir) {
      await runProfiles(settings, settings.profileDir, redis, env);
      return;
    }
    for (const set of serverSets(settings)) await measureSet(set, redis, env, settings, results);
  } finally {
    await redis.stop();
    // The soak has a redis-server of its own, and its own handlers.
    for (const signal of ['SIGINT', 'SIGTERM'] as const) process.off(signal, interrupted);
  }
  const rows = results.rows();
  console.log('');
  printResults(rows, settings);
  printClientAuthCosts(rows);
  printSigningLimits(measuresNamedUser(settings) ? settings.idTokenAlgorithms : []);
  const errors = rows.reduce((sum, row) => sum + row.summary.errors, 0);
  if (errors > 0) {
    console.error(`\nbench failed: ${errors} requests under load did not get a 2xx response`);
    process.exitCode = 1;
  }
  if (measuresSoak(settings)) {
    console.log('');
    if (!(await runSoak(settings))) failSoak();
  }
}

function failSoak(): void {
  console.error('\nbench failed: the soak saw errors, or transient state kept in Redis without a TTL');
  process.exitCode = 1;
}

main().catch((error: unknown) => {
  console.error(`bench failed: ${error instanceof Error ? (error.stack ?? error.message) : String(error)}`);
  process.exitCode = 1;
});
