/** What the bench prints: the header (method, machine), the results table, the signing limits. */
import { cpus, platform, release, totalmem } from 'node:os';
import { redisVersion } from '../devtools/redis-server.js';
import { ACCESS_TOKEN_POOL } from './lifecycle.js';
import { ALGORITHMS, type Algorithm, type IdTokenAlgorithm } from './protocol.js';
import { measuresClientAuth, measuresClientCredentials, measuresLifecycle, measuresNamedUser, type Settings } from './settings.js';
import type { SideName } from './sides.js';
import { signaturesPerSecond } from './signing.js';
import type { LoadResult } from './measure.js';
import { median, type Summary } from './summary.js';
import { formatTable } from './table.js';
import { tracingMode } from './tracing.js';
import { isClientAuthWorkload, type Workload } from './workloads.js';

export interface Row {
  workload: Workload;
  alg: Algorithm;
  /** The code exchange and refresh rows: the ID-token algorithm of their app. */
  idTokenAlg?: IdTokenAlgorithm;
  processes: number;
  side: SideName;
  /** Every round, in order: round r of every row ran within minutes of each other. */
  rounds: LoadResult[];
  summary: Summary;
}

const LABELS: Record<Workload, string> = {
  'client-credentials': 'client_credentials',
  'client-credentials-pkjwt': 'cc private_key_jwt',
  'client-credentials-dpop': 'cc DPoP',
  'client-credentials-pkjwt-dpop': 'cc pkjwt + DPoP',
  'code-exchange': 'code exchange',
  refresh: 'refresh',
  userinfo: 'userinfo',
  introspection: 'introspection',
};

/** Workloads whose answer is not a token: their "tokens/s" counts answers (requests/s). */
const ANSWERS: readonly Workload[] = ['userinfo', 'introspection'];

export function printHeader(settings: Settings): void {
  const cpu = cpus();
  console.log('talent-auth token endpoint benchmark');
  console.log(
    `machine: ${cpu[0]?.model ?? 'unknown CPU'}, ${cpu.length} CPUs, ${(totalmem() / 2 ** 30).toFixed(1)} GiB, ${platform()} ${release()}`,
  );
  console.log(`node ${process.version}, redis-server ${redisVersion()}`);
  console.log(
    `every process shares these ${cpu.length} CPUs: server processes, redis-server, one autocannon process per server process`,
  );
  console.log(
    `load: ${settings.connections} connections per server process, ${settings.warmupSeconds} s warm-up (discarded) + ` +
      `${settings.seconds} s measured, all processes of a side at once, one side at a time`,
  );
  const ours = settings.store === 'cluster'
    ? 'a shared Redis Cluster of 3 masters (BENCH_STORE=cluster)'
    : 'one shared redis-server';
  console.log(`ours: createAuthServer on ${ours}; bare: node-oidc-provider alone, its own memory adapter per process`);
  console.log(`ours' tracing (BENCH_TRACING): ${tracingMode()}`);
  if (measuresClientCredentials(settings)) {
    console.log(`client_credentials (scope=scim.read, Basic): access token ${settings.algorithms.join(', ')}; processes ${settings.processes.join(', ')}`);
  }
  if (measuresNamedUser(settings)) {
    console.log(
      `named user: code exchange (PKCE S256) and refresh-token rotation, access token ES256 + ID token ` +
        `${settings.idTokenAlgorithms.join(', ')} (ID alg: one app per algorithm, registered with it); ` +
        `processes ${settings.namedUserProcesses.join(', ')}; codes minted through the engine's models before each run`,
    );
  }
  if (measuresLifecycle(settings)) {
    console.log(
      `userinfo (GET, Bearer) and introspection (POST token=, Basic as the app): ${ACCESS_TOKEN_POOL} live access tokens of named ` +
        `users per process, taken in turn; ours: its JWT access tokens at /userinfo and /introspect; bare: opaque access tokens ` +
        `without audience at the engine's own /me and /token/introspection; processes ${settings.namedUserProcesses.join(', ')}`,
    );
  }
  if (measuresClientAuth(settings)) {
    console.log(
      `client authentication: client_credentials (scope=scim.read, access token ${settings.algorithms.join(', ')}) with Basic (Bearer token, ` +
        `the reference), private_key_jwt (ES256 assertion), Basic + DPoP proof (ES256, DPoP required, the server's nonce) and ` +
        `private_key_jwt + DPoP; a fresh assertion and proof (jti) per request, signed in the load generator processes; ` +
        `processes ${settings.clientAuthProcesses.join(', ')}`,
    );
  }
  console.log(`${settings.rounds} rounds, alternating which side goes first; figures are the median round`);
  console.log('');
}

function find(rows: readonly Row[], like: Row, changes: Partial<Row>): Row | undefined {
  const wanted = { ...like, ...changes };
  return rows.find(
    (row) => row.workload === wanted.workload && row.alg === wanted.alg && row.idTokenAlg === wanted.idTokenAlg
      && row.processes === wanted.processes && row.side === wanted.side,
  );
}

/**
 * A ratio of two rows taken round by round (the rounds of both ran back to back, so that drift of
 * the machine cancels out), then the median, with the range over rounds.
 */
function pairedRatio(top: Row, bottom: Row | undefined, value: (result: LoadResult) => number, scale = 1): string {
  if (!bottom) return '';
  const ratios = top.rounds
    .map((result, round) => value(result) / (scale * value(bottom.rounds[round] ?? result)))
    .filter(Number.isFinite);
  if (ratios.length === 0) return '';
  const middle = median(ratios).toFixed(2);
  return ratios.length < 2 ? middle : `${middle} (${Math.min(...ratios).toFixed(2)}-${Math.max(...ratios).toFixed(2)})`;
}

/** `withIdAlg`: the ID alg column, when a row has one (named-user workloads measured). */
function cells(rows: readonly Row[], row: Row, withIdAlg: boolean): string[] {
  const { summary } = row;
  const bare = row.side === 'ours' ? find(rows, row, { side: 'bare' }) : undefined;
  const single = row.processes > 1 ? find(rows, row, { processes: 1 }) : undefined;
  const tokensPerSecond = (result: LoadResult) => result.tokensPerSecond;
  return [
    LABELS[row.workload],
    row.alg,
    ...(withIdAlg ? [row.idTokenAlg ?? ''] : []),
    String(row.processes),
    row.side,
    summary.tokensPerSecond.toFixed(0),
    summary.range,
    summary.p50.toFixed(1),
    summary.p99.toFixed(1),
    String(summary.errors),
    pairedRatio(row, bare, tokensPerSecond),
    pairedRatio(row, bare, (result) => result.p99),
    pairedRatio(row, single, tokensPerSecond, row.processes),
    summary.cpuMicrosPerToken.toFixed(0),
    row.side === 'ours' ? summary.redisCpuMicrosPerToken.toFixed(0) : '',
    summary.loadCpuMicrosPerToken.toFixed(0),
  ];
}

export function printResults(rows: readonly Row[], settings: Settings): void {
  const withIdAlg = rows.some((row) => row.idTokenAlg);
  console.log(
    formatTable(
      ['workload', 'alg', ...(withIdAlg ? ['ID alg'] : []), 'procs', 'side', 'tokens/s', 'range', 'p50 ms', 'p99 ms', 'errors', 'ours/bare', 'p99 o/b', 'scaling', 'CPU µs/token', 'of it Redis', 'load CPU µs'],
      rows.map((row) => cells(rows, row, withIdAlg)),
    ),
  );
  console.log(
    'ours/bare, p99 o/b (p99 ours / p99 bare) and scaling (tokens/s(N) / (N × tokens/s(1))) are taken round by round: ' +
      'median (range over rounds)',
  );
  if (withIdAlg) {
    console.log('alg: the access token\'s; ID alg: the ID token\'s (code exchange and refresh: the app registered with it, on both sides)');
  }
  if (rows.some((row) => ANSWERS.includes(row.workload))) {
    console.log(`${ANSWERS.join(', ')}: tokens/s and CPU µs/token count answers (requests/s, CPU µs per request)`);
  }
  console.log(
    'CPU µs/token: server processes, all threads (ours: and its redis-server, also shown apart); ' +
      'load CPU µs: the autocannon processes, per token',
  );
  for (const { workload, alg, idTokenAlg, processes, side, summary } of rows) {
    const label = `${LABELS[workload]} ${alg}${idTokenAlg ? ` ID ${idTokenAlg}` : ''} ×${processes} ${side}`;
    const detail = Object.entries(summary.errorDetail).map(([what, count]) => `${what}: ${count}`);
    if (detail.length) console.log(`  ${label} errors: ${detail.join(', ')}`);
    if (summary.shortestSeconds < settings.seconds * 0.95) {
      console.log(`  ${label}: a run ended after ${summary.shortestSeconds.toFixed(1)} s (code supply ran out)`);
    }
  }
}

/** A per-round difference of two rows (round r of both ran back to back), then the median. */
function pairedDifference(top: Row, bottom: Row, value: (result: LoadResult) => number): string {
  const differences = top.rounds.map((result, round) => value(result) - value(bottom.rounds[round] ?? result));
  return differences.length ? `${median(differences) >= 0 ? '+' : ''}${median(differences).toFixed(0)}` : '';
}

/**
 * What private_key_jwt and DPoP cost over Basic and Bearer, per side: each client-authentication
 * row against the Basic client_credentials row of the same side, algorithm and process count.
 */
export function printClientAuthCosts(rows: readonly Row[]): void {
  const costs = rows.flatMap((row) => {
    if (!isClientAuthWorkload(row.workload)) return [];
    const basic = find(rows, row, { workload: 'client-credentials' });
    if (!basic) return [];
    return [[
      LABELS[row.workload],
      row.alg,
      String(row.processes),
      row.side,
      pairedRatio(row, basic, (result) => result.tokensPerSecond),
      pairedDifference(row, basic, (result) => result.cpuMicrosPerToken),
      pairedDifference(row, basic, (result) => result.loadCpuMicrosPerToken),
    ]];
  });
  if (costs.length === 0) return;
  console.log('\ncost over Basic and Bearer (each row against client_credentials with Basic, same side, algorithm and processes)');
  console.log(formatTable(['workload', 'alg', 'procs', 'side', 'tokens/s vs Basic', 'server CPU µs/token added', 'load CPU µs added'], costs));
  console.log(
    'tokens/s vs Basic: taken round by round, median (range over rounds); CPU µs added: the median of the rounds\' differences. ' +
      'The load generators sign the assertions and proofs: their CPU is the load column, not the servers\'',
  );
}

const KEY_TYPES: Record<Algorithm | IdTokenAlgorithm, string> = { ES256: 'EC P-256', RS256: 'RSA 2048', EdDSA: 'OKP Ed25519' };

/** The access-token algorithms, and the ID-token algorithms measured (EdDSA when it is one). */
export function printSigningLimits(idTokenAlgorithms: readonly IdTokenAlgorithm[] = []): void {
  console.log('\nsingle-core signing limit (node:crypto, synchronous, ~2 s each)');
  const algorithms = [...new Set<Algorithm | IdTokenAlgorithm>([...ALGORITHMS, ...idTokenAlgorithms])];
  const rows = algorithms.map((alg) => {
    const { perSecond, inputBytes } = signaturesPerSecond(alg);
    return [alg, KEY_TYPES[alg], String(inputBytes), perSecond.toFixed(0), (1e6 / perSecond).toFixed(0)];
  });
  console.log(formatTable(['alg', 'key', 'input bytes', 'signatures/s', 'µs each'], rows));
}
