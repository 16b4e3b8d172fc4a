/**
 * BENCH_CPU_PROF=dir: instead of the measurements, one server process per side (access token
 * ES256) is profiled with V8's sampling profiler during a measured run of each workload (warm-up
 * excluded); the .cpuprofile files go to dir and are summarised here (bench/profile-summary.ts).
 */
import { mkdirSync, readFileSync } from 'node:fs';
import { resolve } from 'node:path';
import type { BenchStore } from './sides.js';
import { fillAccessTokens, LIFECYCLE_WORKLOADS } from './lifecycle.js';
import { measureLanes } from './measure.js';
import { CodeSupply } from './named-user.js';
import { formatProfileSummary, type CpuProfile } from './profile-summary.js';
import { measuresClientAuth, measuresClientCredentials, measuresLifecycle, measuresNamedUser, type Settings } from './settings.js';
import { lanesOf, servingPids, SIDES, startSide, stopSide } from './sides.js';
import { CLIENT_AUTH_WORKLOADS, type Workload } from './workloads.js';

const SAMPLING_INTERVAL_MICROS = 250;
const TOP_FUNCTIONS = 15;

export async function runProfiles(settings: Settings, dir: string, redis: BenchStore, env: Record<string, string>): Promise<void> {
  mkdirSync(dir, { recursive: true });
  const namedUser = measuresNamedUser(settings);
  const lifecycle = measuresLifecycle(settings);
  const clientAuth = measuresClientAuth(settings);
  const workloads: Workload[] = [
    ...(measuresClientCredentials(settings) || clientAuth ? (['client-credentials'] as const) : []),
    ...(clientAuth ? CLIENT_AUTH_WORKLOADS : []),
    ...(namedUser ? (['code-exchange', 'refresh'] as const) : []),
    ...(lifecycle ? LIFECYCLE_WORKLOADS : []),
  ];
  console.log(`CPU profiles (sampling every ${SAMPLING_INTERVAL_MICROS} µs, measured run only), one process per side, in ${resolve(dir)}\n`);
  for (const name of SIDES) {
    // Named-user workloads with the RS256 app (OpenID Connect's default).
    const side = await startSide(name, { alg: 'ES256', processes: 1, connections: settings.connections, redis, env, namedUser, idTokenAlgorithms: ['RS256'], lifecycle, clientAuth });
    try {
      const server = side.servers[0]!;
      for (const workload of workloads) {
        if (workload === 'code-exchange') await side.drivers[0]!.setCodes(await server.mint(new CodeSupply().count(settings)));
        if (workload === LIFECYCLE_WORKLOADS[0]) await fillAccessTokens(side, 1);
        const file = resolve(dir, `${name}-${workload}.cpuprofile`);
        const result = await measureLanes(lanesOf(side, 1), workload, settings, servingPids(side, 1), {
          before: () => server.startProfile(SAMPLING_INTERVAL_MICROS),
          after: () => server.stopProfile(file),
        });
        console.log(`=== ${name} ${workload} (ES256): ${result.tokensPerSecond.toFixed(0)} tokens/s while profiled; ${file}`);
        const profile = JSON.parse(readFileSync(file, 'utf8')) as CpuProfile;
        console.log(formatProfileSummary(profile, { top: TOP_FUNCTIONS, tokens: result.tokens }));
        console.log('');
      }
    } finally {
      await stopSide(side);
    }
  }
}
