/**
 * Userinfo and introspection at N processes of one side. Before each measurement (not measured),
 * every server process gets a pool of live access tokens of named users: codes minted through the
 * engine's models (purpose `lifecycle`, bench/mint-codes.ts), exchanged at its own token endpoint.
 * Ours's are its JWT access tokens; the bare engine's are opaque and without audience, the only
 * kind its userinfo answers (bench/bare-server.ts). Its load generator then sends them in turn, to
 * userinfo, then to introspection. A fresh pool for every measurement: these tokens live 5 minutes.
 */
import { tokenRequest } from './checks.js';
import { measureLanes, type Measured, type RunSettings } from './measure.js';
import type { ServerProcess } from './server-process.js';
import { lanesOf, servingPids, type Side } from './sides.js';
import { codeExchangeBody, type Workload } from './workloads.js';

export const LIFECYCLE_WORKLOADS = ['userinfo', 'introspection'] as const satisfies readonly Workload[];

/** Access tokens per server process: two for each bench user. */
export const ACCESS_TOKEN_POOL = 2000;
/** Code exchanges in flight per server process while its pool is filled. */
const EXCHANGE_CONCURRENCY = 8;

async function accessTokens(server: ServerProcess, count: number): Promise<string[]> {
  const { target } = server;
  const codes = await server.mint(count, 'lifecycle');
  const tokens: string[] = [];
  const exchange = async () => {
    for (let code = codes.pop(); code; code = codes.pop()) {
      const answer = await tokenRequest(target, target.app, codeExchangeBody(target, code));
      tokens.push(String(answer.access_token));
    }
  };
  await Promise.all(Array.from({ length: EXCHANGE_CONCURRENCY }, exchange));
  return tokens;
}

/** Gives the load generator of each of the first `processes` servers a fresh pool of its server's access tokens. */
export async function fillAccessTokens(side: Side, processes: number): Promise<void> {
  const started = performance.now();
  await Promise.all(
    side.servers
      .slice(0, processes)
      .map(async (server, index) => side.drivers[index]!.setAccessTokens(await accessTokens(server, ACCESS_TOKEN_POOL))),
  );
  console.log(`  ${side.name}: ${ACCESS_TOKEN_POOL} access tokens per process in ${((performance.now() - started) / 1000).toFixed(1)} s`);
}

export async function measureLifecycle(side: Side, processes: number, settings: RunSettings): Promise<Measured> {
  await fillAccessTokens(side, processes);
  const lanes = lanesOf(side, processes);
  const pids = servingPids(side, processes);
  const measured: Measured = [];
  for (const workload of LIFECYCLE_WORKLOADS) measured.push({ workload, result: await measureLanes(lanes, workload, settings, pids) });
  return measured;
}
