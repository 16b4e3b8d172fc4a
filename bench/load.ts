import { readFileSync } from 'node:fs';
import autocannon from 'autocannon';
import type { Algorithm, TokenTarget } from './protocol.js';

export interface LoadSettings {
  connections: number;
  seconds: number;
  warmupSeconds: number;
}

export interface LoadResult {
  /** 2xx responses per second over the measured run. */
  tokensPerSecond: number;
  /** Latency of 2xx responses, ms. */
  p50: number;
  p99: number;
  /** Non-2xx responses plus socket errors and timeouts. */
  errors: number;
  /** Non-2xx responses by status, and socket errors/timeouts, for the report. */
  errorDetail: Record<string, number>;
  /** CPU time of the serving processes (all their threads) per token, µs: steadier than tokens/s. */
  cpuMicrosPerToken: number;
}

const BODY = 'grant_type=client_credentials&scope=scim.read';

function tokenRequestHeaders(target: TokenTarget): Record<string, string> {
  const credentials = Buffer.from(`${encodeURIComponent(target.clientId)}:${encodeURIComponent(target.clientSecret)}`);
  return {
    'content-type': 'application/x-www-form-urlencoded',
    authorization: `Basic ${credentials.toString('base64')}`,
  };
}

function jwtHeaderAlg(token: string): unknown {
  const [header] = token.split('.');
  try {
    return (JSON.parse(Buffer.from(header ?? '', 'base64url').toString('utf8')) as { alg?: unknown }).alg;
  } catch {
    return undefined;
  }
}

/** One real token request: 200, an access token, signed with the algorithm under test. */
export async function checkTokenEndpoint(target: TokenTarget, alg: Algorithm): Promise<void> {
  const response = await fetch(target.tokenUrl, { method: 'POST', headers: tokenRequestHeaders(target), body: BODY });
  const text = await response.text();
  let body: { access_token?: unknown } = {};
  try {
    body = JSON.parse(text) as typeof body;
  } catch {
    // reported below with the raw text
  }
  if (response.status !== 200 || typeof body.access_token !== 'string') {
    throw new Error(`token request to ${target.tokenUrl} answered ${response.status}: ${text.slice(0, 500)}`);
  }
  const signedWith = jwtHeaderAlg(body.access_token);
  if (signedWith !== alg) throw new Error(`access token from ${target.tokenUrl} is signed with ${String(signedWith)}, not ${alg}`);
}

function run(target: TokenTarget, connections: number, seconds: number): Promise<autocannon.Result> {
  return autocannon({
    url: target.tokenUrl,
    method: 'POST',
    headers: tokenRequestHeaders(target),
    body: BODY,
    connections,
    duration: seconds,
    excludeErrorStats: true,
  });
}

function errorDetail(result: autocannon.Result): Record<string, number> {
  const detail: Record<string, number> = {};
  for (const [status, { count }] of Object.entries(result.statusCodeStats ?? {})) {
    if (!status.startsWith('2') && count) detail[`HTTP ${status}`] = count;
  }
  if (result.errors) detail['socket errors'] = result.errors;
  if (result.timeouts) detail.timeouts = result.timeouts;
  return detail;
}

/**
 * A discarded warm-up run (JIT, connection pools, Redis), then the measured run. `cpuSeconds`
 * reads the CPU time used so far by the processes that serve the target.
 */
export async function measure(target: TokenTarget, settings: LoadSettings, cpuSeconds: () => number): Promise<LoadResult> {
  await run(target, settings.connections, settings.warmupSeconds);
  const cpuBefore = cpuSeconds();
  const result = await run(target, settings.connections, settings.seconds);
  const cpu = cpuSeconds() - cpuBefore;
  const detail = errorDetail(result);
  return {
    cpuMicrosPerToken: result['2xx'] ? (cpu * 1e6) / result['2xx'] : 0,
    tokensPerSecond: result['2xx'] / result.duration,
    p50: result.latency.p50,
    p99: result.latency.p99,
    errors: Object.values(detail).reduce((sum, count) => sum + count, 0),
    errorDetail: detail,
  };
}

/** CPU time (user + system, every thread) a process has used, from /proc (Linux), in seconds. */
export function processCpuSeconds(pid: number): number {
  const stat = readFileSync(`/proc/${pid}/stat`, 'utf8');
  const fields = stat.slice(stat.lastIndexOf(')') + 2).split(' ');
  // fields[11] and [12] are utime and stime (fields 14 and 15 of proc(5)), in clock ticks of 1/100 s.
  return (Number(fields[11]) + Number(fields[12])) / 100;
}
