import { readFileSync } from 'node:fs';

/** CPU time (user + system, every thread) a process has used, from /proc (Linux), in seconds. */
export function processCpuSeconds(pid: number): number {
  const stat = readFileSync(`/proc/${pid}/stat`, 'utf8');
  const fields = stat.slice(stat.lastIndexOf(')') + 2).split(' ');
  // fields[11] and [12] are utime and stime (fields 14 and 15 of proc(5)), in clock ticks of 1/100 s.
  return (Number(fields[11]) + Number(fields[12])) / 100;
}

export function totalCpuSeconds(pids: readonly number[]): number {
  return pids.reduce((sum, pid) => sum + processCpuSeconds(pid), 0);
}
