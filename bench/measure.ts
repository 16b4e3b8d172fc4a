/**
 * One measurement: a workload driven at N server processes at once, one load generator each. All
 * generators first run a discarded warm-up; once every warm-up is over, the measured runs start
 * together. Tokens/s is the sum over the processes; latency percentiles are of the merged
 * histograms (2xx responses only); CPU time is that of the processes serving (for ours, its Redis too).
 */
import autocannon from 'autocannon';
import { totalCpuSeconds } from './cpu-time.js';
import type { LoadDriver } from './load-driver.js';
import type { IdTokenAlgorithm } from './protocol.js';
import type { Workload } from './workloads.js';

export interface RunSettings {
  connections: number;
  warmupSeconds: number;
  seconds: number;
}

export interface LoadResult {
  /** 2xx responses per second over the measured run, summed over the processes. */
  tokensPerSecond: number;
  /** Latency of 2xx responses, ms. */
  p50: number;
  p99: number;
  /** Non-2xx responses, 200s with a wrong answer (userinfo, introspection), socket errors and timeouts. */
  errors: number;
  errorDetail: Record<string, number>;
  /** CPU time of the serving processes (all their threads) per token, µs: steadier than tokens/s. */
  cpuMicrosPerToken: number;
  /** Of that, redis-server's (ours only, else 0). */
  redisCpuMicrosPerToken: number;
  /** CPU time of the load generator processes per token, µs: what the load took from the shared CPUs. */
  loadCpuMicrosPerToken: number;
  /** The shortest measured run, s (shorter than asked when a code supply ran out). */
  shortestSeconds: number;
}

type Aggregate = (results: autocannon.Result[], options: { url: string; connections: number }) => autocannon.Result;
const aggregateResult = (autocannon as unknown as { aggregateResult: Aggregate }).aggregateResult;

function errorDetail(result: autocannon.Result): Record<string, number> {
  const detail: Record<string, number> = {};
  for (const [status, { count }] of Object.entries(result.statusCodeStats ?? {})) {
    if (!status.startsWith('2') && count) detail[`HTTP ${status}`] = count;
  }
  if (result.errors) detail['socket errors'] = result.errors;
  if (result.timeouts) detail.timeouts = result.timeouts;
  return detail;
}

/** The results of the workloads measured one after the other on the same servers (named-user ones: with their ID-token algorithm). */
export type Measured = Array<{ workload: Workload; result: LoadResult; idTokenAlg?: IdTokenAlgorithm }>;

export interface Lane {
  driver: LoadDriver;
  url: string;
}

/** Ours is charged for its Redis too: on one machine, Redis CPU is CPU the tokens cost. */
export interface ServingPids {
  servers: number[];
  redis?: number[];
}

/** The CPU seconds each group of processes uses from now until the returned function is called. */
function cpuMeter<K extends string>(groups: Record<K, readonly number[]>): () => Record<K, number> {
  const entries = Object.entries(groups) as Array<[K, readonly number[]]>;
  const before = entries.map(([, pids]) => totalCpuSeconds(pids));
  return () => Object.fromEntries(entries.map(([name, pids], index) => [name, totalCpuSeconds(pids) - before[index]!])) as Record<K, number>;
}

/** Called right before and right after the measured run (a CPU profile of it, say). */
export interface MeasuredRunHooks {
  before(): Promise<void>;
  after(): Promise<void>;
}

export async function measureLanes(
  lanes: readonly Lane[],
  workload: Workload,
  settings: RunSettings,
  serving: ServingPids,
  hooks?: MeasuredRunHooks,
  idTokenAlg?: IdTokenAlgorithm,
): Promise<LoadResult & { tokens: number }> {
  await Promise.all(lanes.map(({ driver }) => driver.run(workload, settings.warmupSeconds, idTokenAlg)));
  await hooks?.before();
  const meter = cpuMeter({
    servers: serving.servers,
    redis: serving.redis ?? [],
    load: lanes.map(({ driver }) => driver.pid),
  });
  const runs = await Promise.all(lanes.map(({ driver }) => driver.run(workload, settings.seconds, idTokenAlg)));
  const cpu = meter();
  await hooks?.after();
  const raws = runs.map((run) => run.raw);
  const merged = aggregateResult(raws, { url: lanes[0]!.url, connections: settings.connections * lanes.length });
  const tokens = raws.reduce((sum, raw) => sum + raw['2xx'], 0);
  const detail = errorDetail(merged);
  const unexpected = runs.reduce((sum, run) => sum + run.unexpected, 0);
  if (unexpected) detail['HTTP 200 with a wrong answer'] = unexpected;
  const perToken = (seconds: number) => (tokens ? (seconds * 1e6) / tokens : 0);
  return {
    tokensPerSecond: raws.reduce((sum, raw) => sum + raw['2xx'] / raw.duration, 0),
    p50: merged.latency.p50,
    p99: merged.latency.p99,
    errors: Object.values(detail).reduce((sum, count) => sum + count, 0),
    errorDetail: detail,
    cpuMicrosPerToken: perToken(cpu.servers + cpu.redis),
    redisCpuMicrosPerToken: perToken(cpu.redis),
    loadCpuMicrosPerToken: perToken(cpu.load),
    shortestSeconds: Math.min(...raws.map((raw) => raw.duration)),
    tokens,
  };
}
