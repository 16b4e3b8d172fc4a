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
 * Run: npm run bench   (BENCH_CONNECTIONS=32, BENCH_SECONDS=10 by default)
 */
import { cpus, platform, release } from 'node:os';
import { checkTokenEndpoint, measure, type LoadResult, type LoadSettings } from './load.js';
import { ALGORITHMS, type Algorithm } from './protocol.js';
import { redisVersion, startRedis } from '../devtools/redis-server.js';
import { startServerProcess } from './server-process.js';
import { signaturesPerSecond } from './signing.js';

type Side = 'ours' | 'bare';

interface Row {
  alg: Algorithm;
  side: Side;
  result: LoadResult;
}

function positiveInteger(name: string, fallback: number): number {
  const raw = process.env[name];
  if (raw === undefined || raw === '') return fallback;
  const value = Number(raw);
  if (!Number.isInteger(value) || value < 1) throw new Error(`${name} must be a positive integer, got "${raw}"`);
  return value;
}

function readSettings(): LoadSettings {
  return {
    connections: positiveInteger('BENCH_CONNECTIONS', 32),
    seconds: positiveInteger('BENCH_SECONDS', 10),
    warmupSeconds: 2,
  };
}

function printHeader(settings: LoadSettings): void {
  const cpu = cpus();
  console.log('talent-auth token endpoint benchmark');
  console.log(`machine: ${cpu[0]?.model ?? 'unknown CPU'}, ${cpu.length} CPUs, ${platform()} ${release()}`);
  console.log(`node ${process.version}, redis-server ${redisVersion()}`);
  console.log(
    `load: autocannon, ${settings.connections} connections, ${settings.warmupSeconds} s warm-up (discarded) + ` +
      `${settings.seconds} s measured, POST client_credentials scope=scim.read, one server at a time`,
  );
  console.log('');
}

async function measureSide(side: Side, alg: Algorithm, redisUrl: string, settings: LoadSettings): Promise<LoadResult> {
  const server =
    side === 'ours'
      ? await startServerProcess('./ours-server.js', [alg, redisUrl])
      : await startServerProcess('./bare-server.js', [alg]);
  try {
    await checkTokenEndpoint(server.target, alg);
    console.log(`  ${alg} ${side}: measuring ${server.target.tokenUrl}`);
    return await measure(server.target, settings);
  } finally {
    await server.stop();
  }
}

function formatTable(headings: string[], rows: string[][]): string {
  const widths = headings.map((heading, column) => Math.max(heading.length, ...rows.map((row) => (row[column] ?? '').length)));
  const line = (cells: string[]) => cells.map((cell, column) => cell.padStart(widths[column] ?? 0)).join('  ');
  return [line(headings), line(widths.map((width) => '-'.repeat(width))), ...rows.map(line)].join('\n');
}

function printLoadTable(rows: Row[]): void {
  const bareRate = (alg: Algorithm) => rows.find((row) => row.alg === alg && row.side === 'bare')?.result.tokensPerSecond;
  const cells = rows.map(({ alg, side, result }) => {
    const reference = bareRate(alg);
    const ratio = side === 'ours' && reference ? (result.tokensPerSecond / reference).toFixed(2) : '';
    return [alg, side, result.tokensPerSecond.toFixed(0), result.p50.toFixed(1), result.p99.toFixed(1), String(result.errors), ratio];
  });
  console.log(formatTable(['alg', 'side', 'tokens/s', 'p50 ms', 'p99 ms', 'errors', 'ours/bare'], cells));
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

async function main(): Promise<void> {
  const settings = readSettings();
  printHeader(settings);
  const redis = await startRedis();
  // Server children exit when the IPC channel closes; redis-server would outlive an interrupted run.
  for (const signal of ['SIGINT', 'SIGTERM'] as const) {
    process.once(signal, () => void redis.stop().finally(() => process.exit(130)));
  }
  const rows: Row[] = [];
  try {
    for (const alg of ALGORITHMS) {
      for (const side of ['ours', 'bare'] as const) {
        rows.push({ alg, side, result: await measureSide(side, alg, redis.url, settings) });
      }
    }
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
