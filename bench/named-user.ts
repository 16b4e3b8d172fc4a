/**
 * The named-user flows at N processes of one side, for the app of one ID-token algorithm: a supply
 * of that app's authorization codes is minted in each server (not measured), then code exchange is
 * measured; the refresh tokens it returned then feed the refresh-token rotation measurement.
 */
import { measureLanes, type Measured, type RunSettings } from './measure.js';
import type { IdTokenAlgorithm } from './protocol.js';
import { lanesOf, servingPids, type Side } from './sides.js';

/**
 * Exchanges per second one process is assumed to serve at most before any has been measured: each
 * signs an RS256 ID token, and one core makes about 1,000 RS256 signatures per second. An ES256 or
 * EdDSA signature costs a tenth of that, and the RS256 one is about half of an exchange's CPU: twice.
 */
const CEILING_PER_PROCESS: Record<IdTokenAlgorithm, number> = { RS256: 1200, ES256: 2400, EdDSA: 2400 };
/** Head-room over the fastest rate measured so far (rates vary by 2x between rounds on a busy machine). */
const MARGIN = 2;

/** Sizes the code supply from the rates seen so far on a side for one ID-token algorithm, so that a run does not run dry. */
export class CodeSupply {
  private perProcess: number;
  private fastest = 0;

  constructor(idTokenAlg: IdTokenAlgorithm = 'RS256') {
    this.perProcess = CEILING_PER_PROCESS[idTokenAlg];
  }

  count(settings: RunSettings): number {
    return Math.ceil((settings.warmupSeconds + settings.seconds) * this.perProcess) + 2 * settings.connections;
  }

  observe(perProcessRate: number): void {
    this.fastest = Math.max(this.fastest, perProcessRate);
    this.perProcess = Math.max(100, this.fastest * MARGIN);
  }
}

export async function measureNamedUser(
  side: Side,
  processes: number,
  settings: RunSettings,
  supply: CodeSupply,
  idTokenAlg: IdTokenAlgorithm,
): Promise<Measured> {
  const count = supply.count(settings);
  const started = performance.now();
  await Promise.all(
    side.servers.slice(0, processes).map(async (server, index) => side.drivers[index]!.setCodes(await server.mint(count, 'exchange', idTokenAlg))),
  );
  console.log(`  ${side.name}: minted ${count} codes per process (${idTokenAlg} app) in ${((performance.now() - started) / 1000).toFixed(1)} s`);
  const lanes = lanesOf(side, processes);
  const pids = servingPids(side, processes);
  const exchange = await measureLanes(lanes, 'code-exchange', settings, pids, undefined, idTokenAlg);
  supply.observe(exchange.tokensPerSecond / processes);
  const refresh = await measureLanes(lanes, 'refresh', settings, pids, undefined, idTokenAlg);
  return [
    { workload: 'code-exchange', result: exchange, idTokenAlg },
    { workload: 'refresh', result: refresh, idTokenAlg },
  ];
}
