/** Rounds to one figure: the median round, with the range over rounds and every round's errors. */
import type { LoadResult } from './measure.js';

export type Summary = LoadResult & { range: string; rounds: number };

export function median(values: readonly number[]): number {
  const sorted = [...values].sort((a, b) => a - b);
  const middle = Math.floor(sorted.length / 2);
  return sorted.length % 2 ? sorted[middle]! : (sorted[middle - 1]! + sorted[middle]!) / 2;
}

/** The round closest to the median tokens/s gives the latency figures. */
export function summarise(results: readonly LoadResult[]): Summary {
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
    redisCpuMicrosPerToken: median(results.map((result) => result.redisCpuMicrosPerToken)),
    loadCpuMicrosPerToken: median(results.map((result) => result.loadCpuMicrosPerToken)),
    errors: results.reduce((sum, result) => sum + result.errors, 0),
    errorDetail,
    shortestSeconds: Math.min(...results.map((result) => result.shortestSeconds)),
    range: `${Math.min(...rates).toFixed(0)}-${Math.max(...rates).toFixed(0)}`,
    rounds: results.length,
  };
}
