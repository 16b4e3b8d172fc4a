/**
 * Child process: the load generator (autocannon) for one server process, in a process of its own
 * so that it neither shares the parent's event loop nor the other targets' generators. It keeps
 * the pools of codes, refresh tokens and access tokens of its target between runs, and signs the
 * client-authentication workloads' assertions and DPoP proofs (bench/client-signing.ts). Driven by
 * bench/load-driver.ts.
 */
import autocannon from 'autocannon';
import { ClientSigner } from './client-signing.js';
import type { LoadReply, LoadRequest } from './load-driver.js';
import { ID_TOKEN_ALGORITHMS, type IdTokenAlgorithm, type ServerTarget } from './protocol.js';
import { loadOptions, Pool, RoundRobin, type Pools } from './workloads.js';

let target: ServerTarget | undefined;
let connections = 1;
const pools: Pools = {
  codes: new Pool(),
  // Per app: a refresh token is its app's alone.
  refreshTokens: Object.fromEntries(ID_TOKEN_ALGORITHMS.map((alg) => [alg, new Pool<string>()])) as Record<IdTokenAlgorithm, Pool<string>>,
  accessTokens: new RoundRobin(),
  unexpected: 0,
};

async function answer(request: LoadRequest): Promise<LoadReply> {
  switch (request.type) {
    case 'init':
      target = request.target;
      connections = request.connections;
      pools.signer = new ClientSigner(request.clientKey);
      return { type: 'ok' };
    case 'set-codes':
      pools.codes = new Pool();
      pools.codes.pushAll(request.codes);
      return { type: 'ok' };
    case 'set-access-tokens':
      pools.accessTokens = new RoundRobin(request.tokens);
      return { type: 'ok' };
    case 'run': {
      if (!target) throw new Error('run before init');
      pools.unexpected = 0;
      const raw = await autocannon(loadOptions(request.workload, target, pools, { connections, seconds: request.seconds, idTokenAlg: request.idTokenAlg }));
      const refreshTokensLeft = pools.refreshTokens[request.idTokenAlg].size;
      return { type: 'ran', raw, unexpected: pools.unexpected, codesLeft: pools.codes.size, refreshTokensLeft };
    }
  }
}

if (!process.send) throw new Error('must be started by bench/run.js (fork with IPC)');
const send = (reply: LoadReply) => process.send?.(reply);
process.on('disconnect', () => process.exit(0));
process.on('message', (message: LoadRequest) => {
  answer(message).then(send, (error: unknown) =>
    send({ type: 'failed', error: error instanceof Error ? (error.stack ?? error.message) : String(error) }),
  );
});
send({ type: 'ok' });
