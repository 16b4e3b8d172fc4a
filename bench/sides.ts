/**
 * A side of the comparison: N server processes of ours (on one shared redis-server) or of the bare
 * engine (N independent engines with their own memory), each with its own load generator process.
 */
import { checkClientAuth, checkClientCredentials, checkLifecycle, checkNamedUser } from './checks.js';
import { ClientSigner } from './client-signing.js';
import { startLoadDriver, type LoadDriver } from './load-driver.js';
import type { Lane, ServingPids } from './measure.js';
import type { Algorithm, IdTokenAlgorithm } from './protocol.js';
import { startServerProcess, type ServerProcess } from './server-process.js';
import { clientPrivateJwk } from './shared-keys.js';

export const SIDES = ['ours', 'bare'] as const;
export type SideName = (typeof SIDES)[number];

export interface Side {
  name: SideName;
  servers: ServerProcess[];
  drivers: LoadDriver[];
  /** Processes charged for the tokens besides the servers: ours pays for its Redis. */
  redisPids: number[] | undefined;
}

/**
 * Our side's store: one redis-server, or the masters of a local Redis Cluster (BENCH_STORE). `url`
 * is what bench/ours-server.ts takes: a Redis URL, or `cluster:` and the nodes' URLs.
 */
export interface BenchStore {
  url: string;
  /** The redis-server processes, charged for the tokens' CPU time. */
  pids: number[];
  stop(): Promise<void>;
}

export interface SideSetup {
  alg: Algorithm;
  processes: number;
  connections: number;
  redis: BenchStore;
  /** Environment of the server children (the shared signing keys). */
  env: Record<string, string>;
  namedUser: boolean;
  /** The named-user workloads' ID-token algorithms (one app each), checked before any load. */
  idTokenAlgorithms: readonly IdTokenAlgorithm[];
  /** Userinfo and introspection. */
  lifecycle: boolean;
  /** client_credentials with private_key_jwt and DPoP. */
  clientAuth: boolean;
}

/** The server processes of a side (ours: the first creates the clients in Redis), without load generators. */
export async function startServers(name: SideName, setup: SideSetup): Promise<ServerProcess[]> {
  if (name === 'bare') {
    return Promise.all(Array.from({ length: setup.processes }, () => startServerProcess('./bare-server.js', [setup.alg], setup.env)));
  }
  // The first process creates the clients in Redis; the others are told their credentials.
  const first = await startServerProcess('./ours-server.js', [setup.alg, setup.redis.url], setup.env);
  const { service, app, apps, keyService, dpopService } = first.target;
  const clients = JSON.stringify({ service, app, apps, keyService, dpopService });
  const started = await Promise.allSettled(
    Array.from({ length: setup.processes - 1 }, () => startServerProcess('./ours-server.js', [setup.alg, setup.redis.url, clients], setup.env)),
  );
  const others = started.flatMap((each) => (each.status === 'fulfilled' ? [each.value] : []));
  const failed = started.find((each): each is PromiseRejectedResult => each.status === 'rejected');
  if (failed) {
    // No process left behind: a run that cannot start must end.
    await Promise.all([first, ...others].map((server) => server.stop()));
    throw failed.reason;
  }
  return [first, ...others];
}

export async function startSide(name: SideName, setup: SideSetup): Promise<Side> {
  const servers = await startServers(name, setup);
  const drivers: LoadDriver[] = [];
  const side: Side = { name, servers, drivers, redisPids: name === 'ours' ? setup.redis.pids : undefined };
  const clientKey = clientPrivateJwk(setup.env);
  try {
    for (const server of servers) {
      await checkClientCredentials(server.target, setup.alg);
      if (setup.namedUser) await checkNamedUser(server, setup.idTokenAlgorithms);
      if (setup.lifecycle) await checkLifecycle(server);
      if (setup.clientAuth) await checkClientAuth(server.target, setup.alg, new ClientSigner(clientKey));
      drivers.push(await startLoadDriver(server.target, setup.connections, clientKey));
    }
    return side;
  } catch (error) {
    await stopSide(side);
    throw error;
  }
}

export async function stopSide(side: Side): Promise<void> {
  for (const driver of side.drivers) driver.stop();
  await Promise.all(side.servers.map((server) => server.stop()));
}

/** The first `processes` servers of the side, with their load generators. */
export function lanesOf(side: Side, processes: number): Lane[] {
  return side.drivers.slice(0, processes).map((driver, index) => ({ driver, url: side.servers[index]!.target.tokenUrl }));
}

/** The processes that serve the first `processes` lanes: charged for the tokens' CPU time. */
export function servingPids(side: Side, processes: number): ServingPids {
  return {
    servers: side.servers.slice(0, processes).map((server) => server.pid),
    ...(side.redisPids === undefined ? {} : { redis: side.redisPids }),
  };
}
