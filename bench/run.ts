/**
 * Token-endpoint throughput: our server against bare node-oidc-provider.
 *
 * Method. For each access-token algorithm (ES256, RS256), two servers are measured one after the
 * other, never at the same time:
 *   - "ours": createAuthServer() on a real redis-server, one client configuration (tenant, scope
 *     scim.read, a group constraint), so each token carries our extra claims;
 *   - "bare": node-oidc-provider 9 alone, default in-memory adapter, one static client, JWT
 *     access tokens for one resource: the engine's own cost, the reference for "ours".
 * Each server runs in its own child process so that the load generator (autocannon, in this
 * process) does not share its event loop. One request must first answer 200 with an access token
 * signed with the expected algorithm; then a warm-up run is discarded and a measured run follows
 * (POST client_credentials, Basic auth, BENCH_CONNECTIONS connections for BENCH_SECONDS s).
 * tokens/s counts 2xx responses only; latency percentiles are of 2xx responses.
 * Finally, node:crypto signs a JWT signing input in a tight loop on this thread: the signatures
 * per second one core can make, the ceiling on tokens/s per core.
 *
 * Rounds: both servers of an algorithm stay up, and BENCH_ROUNDS rounds alternate which is measured
 * first (order and drift bias); the table gives the median round and the range over rounds.
 *
 * Run: npm run bench   (BENCH_CONNECTIONS=32, BENCH_SECONDS=8, BENCH_ROUNDS=3; BENCH_ALGS=RS256 for a subset;
 *      BENCH_CPU_PROF=dir writes a CPU profile of each server process)
 */
import { cpus, platform, release } from 'node:os';
import { checkTokenEndpoint, measure, processCpuSeconds, type LoadResult, type LoadSettings } from './load.js';
import { ALGORITHMS, parseAlgorithm, type Algorithm } from './protocol.js';
import { redisVersion, startRedis, type RedisProcess } from '../devtools/redis-server.js';
import { startServerProcess } from './server-process.js';
import { signaturesPerSecond } from './signing.js';

type Side = 'ours' | 'bare';

interface Row {
  alg: Algorithm;
  side: Side;
  result: LoadResult & { range: string };
}

function positiveInteger(name: string, fallback: number): number {
  const raw = process.env[name];
  if (raw === undefined || raw === '') return fallback;
  const value = Number(raw);
  if (!Number.isInteger(value) || value < 1) throw new Error(`${name} must be a positive integer, got "${raw}"`);
  return value;
}

interface Settings extends LoadSettings {
  rounds: number;
}

function readSettings(): Settings {
  return {
    connections: positiveInteger('BENCH_CONNECTIONS', 32),
    seconds: positiveInteger('BENCH_SECONDS', 8),
    warmupSeconds: 2,
    rounds: positiveInteger('BENCH_ROUNDS', 3),
  };
}

function printHeader(settings: Settings): void {
  const cpu = cpus();
  console.log('talent-auth token endpoint benchmark');
  console.log(`machine: ${cpu[0]?.model ?? 'unknown CPU'}, ${cpu.length} CPUs, ${platform()} ${release()}`);
  console.log(`node ${process.version}, redis-server ${redisVersion()}`);
  console.log(
    `load: autocannon, ${settings.connections} connections, ${settings.warmupSeconds} s warm-up (discarded) + ` +
      `${settings.seconds} s measured, POST client_credentials scope=scim.read, one server at a time`,
  );
  console.log(
    `${settings.rounds} rounds per algorithm, alternating which side goes first; figures are the median round`,
  );
  console.log('');
}

interface RunningSide {
  side: Side;
  server: Awaited<ReturnType<typeof startServerProcess>>;
}

async function startSide(side: Side, alg: Algorithm, redisUrl: string): Promise<RunningSide> {
  const server =
    side === 'ours'
      ? await startServerProcess('./ours-server.js', [alg, redisUrl])
      : await startServerProcess('./bare-server.js', [alg]);
  await checkTokenEndpoint(server.target, alg);
  return { side, server };
}

function median(values: number[]): number {
  const sorted = [...values].sort((a, b) => a - b);
  const middle = Math.floor(sorted.length / 2);
  return sorted.length % 2 ? sorted[middle]! : (sorted[middle - 1]! + sorted[middle]!) / 2;
}

/** The median round by tokens/s, with the errors of all rounds. */
function summarise(results: LoadResult[]): LoadResult & { range: string } {
  const rates = results.map((result) => result.tokensPerSecond);
  const middle = median(rates);
  const closest = results.reduce((best, result) =>
    Math.abs(result.tokensPerSecond - middle) < Math.abs(best.tokensPerSecond - middle) ? result : best,
  );
  const errorDetail: Record<string, number> = {};
  for (const result of results) {
    for (const [what, count] of Object.entries(result.errorDetail)) errorDetail[what] = (errorDetail[what] ?? 0) + count;
  }
  return {
    ...closest,
    tokensPerSecond: middle,
    cpuMicrosPerToken: median(results.map((result) => result.cpuMicrosPerToken)),
    errors: results.reduce((sum, result) => sum + result.errors, 0),
    errorDetail,
    range: `${Math.min(...rates).toFixed(0)}-${Math.max(...rates).toFixed(0)}`,
  };
}

/** Both servers of one algorithm stay up; rounds alternate which one is measured first. */
async function measureAlgorithm(alg: Algorithm, redis: RedisProcess, settings: Settings): Promise<Row[]> {
  const sides = [await startSide('ours', alg, redis.url), await startSide('bare', alg, redis.url)];
  try {
    const results: Record<Side, LoadResult[]> = { ours: [], bare: [] };
    for (let round = 0; round < settings.rounds; round += 1) {
      const order = round % 2 === 0 ? sides : [...sides].reverse();
      for (const { side, server } of order) {
        console.log(`  ${alg} round ${round + 1}/${settings.rounds} ${side}: ${server.target.tokenUrl}`);
        // Ours is charged for its Redis too: on one machine, Redis CPU is CPU the tokens cost.
        const pids = side === 'ours' ? [server.pid, redis.pid] : [server.pid];
        const cpuSeconds = () => pids.reduce((sum, pid) => sum + processCpuSeconds(pid), 0);
        results[side].push(await measure(server.target, settings, cpuSeconds));
      }
    }
    return (['ours', 'bare'] as const).map((side) => ({ alg, side, result: summarise(results[side]) }));
  } finally {
    await Promise.all(sides.map(({ server }) => server.stop()));
  }
}

function formatTable(headings: string[], rows: string[][]): string {
  const widths = headings.map((heading, column) => Math.max(heading.length, ...rows.map((row) => (row[column] ?? '').length)));
  const line = (cells: string[]) => cells.map((cell, column) => cell.padStart(widths[column] ?? 0)).join('  ');
  return [line(headings), line(widths.map((width) => '-'.repeat(width))), ...rows.map(line)].join('\n');
}

function printLoadTable(rows: Row[]): void {
  const bare = (alg: Algorithm) => rows.find((row) => row.alg === alg && row.side === 'bare')?.result;
  const cells = rows.map(({ alg, side, result }) => {
    const reference = bare(alg);
    const ratio = side === 'ours' && reference ? (result.tokensPerSecond / reference.tokensPerSecond).toFixed(2) : '';
    const cpuRatio = side === 'ours' && reference ? (reference.cpuMicrosPerToken / result.cpuMicrosPerToken).toFixed(2) : '';
    return [
      alg, side, result.tokensPerSecond.toFixed(0), result.range, result.p50.toFixed(1), result.p99.toFixed(1),
      String(result.errors), ratio, result.cpuMicrosPerToken.toFixed(0), cpuRatio,
    ];
  });
  console.log(
    formatTable(
      ['alg', 'side', 'tokens/s', 'range', 'p50 ms', 'p99 ms', 'errors', 'ours/bare', 'CPU µs/token', 'bare/ours CPU'],
      cells,
    ),
  );
  for (const { alg, side, result } of rows) {
    const detail = Object.entries(result.errorDetail).map(([what, count]) => `${what}: ${count}`);
    if (detail.length) console.log(`  ${alg} ${side} errors: ${detail.join(', ')}`);
  }
}

function printSigningLimits(): void {
  console.log('\nsingle-core signing limit (node:crypto, synchronous, ~2 s each)');
  const cells = ALGORITHMS.map((alg) => {
    const { perSecond, inputBytes } = signaturesPerSecond(alg);
    const key = alg === 'ES256' ? 'EC P-256' : 'RSA 2048';
    return [alg, key, String(inputBytes), perSecond.toFixed(0)];
  });
  console.log(formatTable(['alg', 'key', 'input bytes', 'signatures/s'], cells));
}

/** BENCH_ALGS=RS256 (comma-separated) measures a subset. */
function selectedAlgorithms(): Algorithm[] {
  const raw = process.env.BENCH_ALGS;
  if (!raw) return [...ALGORITHMS];
  return raw.split(',').map((name) => parseAlgorithm(name.trim()));
}

async function main(): Promise<void> {
  const settings = readSettings();
  const algorithms = selectedAlgorithms();
  printHeader(settings);
  const redis = await startRedis();
  // Server children exit when the IPC channel closes; redis-server would outlive an interrupted run.
  for (const signal of ['SIGINT', 'SIGTERM'] as const) {
    process.once(signal, () => void redis.stop().finally(() => process.exit(130)));
  }
  const rows: Row[] = [];
  try {
    for (const alg of algorithms) rows.push(...(await measureAlgorithm(alg, redis, settings)));
  } finally {
    await redis.stop();
  }
  console.log('');
  printLoadTable(rows);
  printSigningLimits();
  const errors = rows.reduce((sum, row) => sum + row.result.errors, 0);
  if (errors > 0) {
    console.error(`\nbench failed: ${errors} requests under load did not get a 2xx response`);
    process.exitCode = 1;
  }
}

main().catch((error: unknown) => {
  console.error(`bench failed: ${error instanceof Error ? (error.stack ?? error.message) : String(error)}`);
  process.exitCode = 1;
});
