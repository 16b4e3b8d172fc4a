import { spawn, type ChildProcess } from 'node:child_process';
import { mkdirSync, mkdtempSync, rmSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { Redis } from 'ioredis';
import { REDIS_CLI, freeClusterPort, spawnRedisServer, terminate, waitForPing } from './redis-server.js';

export interface RedisClusterNode {
  host: string;
  port: number;
  url: string;
  /** The node's cluster ID (CLUSTER MYID). */
  readonly id: string;
  readonly pid: number;
  /**
   * SIGKILL to this node's own redis-server (by its pid): gone for good. A master's slots go with
   * it unless it has a replica, which the others then promote (waitForFailover).
   */
  kill(): Promise<void>;
}

export interface RedisClusterProcess {
  /** Every node, masters and replicas, in the order they were started. */
  nodes: RedisClusterNode[];
  /** The nodes' URLs, for `cluster: { nodes }`. */
  urls: string[];
  /** The nodes that serve slots now, as a live node sees them. */
  masters(): Promise<RedisClusterNode[]>;
  /** The node that serves `key`'s slot now, as a live node sees it. */
  masterOf(key: string): Promise<RedisClusterNode>;
  /**
   * After `killed` (a master with a replica) was killed: until every live node says cluster_state:ok
   * with every slot served by a node not failing, and `killed` serves none (its replica was
   * promoted). Resolves with the milliseconds waited; rejects after `ms`.
   */
  waitForFailover(killed: RedisClusterNode, ms?: number): Promise<number>;
  /** Stops every node (by its pid) and removes the temporary directory. */
  stop(): Promise<void>;
}

function run(command: string, args: readonly string[], env: NodeJS.ProcessEnv = process.env): Promise<{ code: number | null; output: string }> {
  return new Promise((resolve, reject) => {
    const child = spawn(command, args, { stdio: ['ignore', 'pipe', 'pipe'], env });
    let output = '';
    child.stdout.on('data', (chunk: Buffer) => (output += chunk.toString()));
    child.stderr.on('data', (chunk: Buffer) => (output += chunk.toString()));
    child.once('error', reject);
    child.once('close', (code) => resolve({ code, output }));
  });
}

const sleep = (ms: number) => new Promise((resolve) => setTimeout(resolve, ms));

/** One plain client per URL, connected, that never retries (a node may be gone). */
async function plainClients(urls: readonly string[], password: string | undefined): Promise<Redis[]> {
  const clients = urls.map((url) => new Redis(url, {
    lazyConnect: true,
    maxRetriesPerRequest: 0,
    retryStrategy: () => null,
    disconnectTimeout: 100,
    ...(password ? { password } : {}),
  }));
  clients.forEach((client) => client.on('error', () => {}));
  await Promise.all(clients.map((client) => client.connect().catch(() => undefined)));
  return clients;
}

function closeAll(clients: readonly Redis[]): void {
  clients.forEach((client) => client.status !== 'end' && client.disconnect());
}

/** The answer of one node, or undefined when it cannot answer (killed, or not yet up). */
function ask<T>(client: Redis, ...args: string[]): Promise<T | undefined> {
  if (client.status !== 'ready') return Promise.resolve(undefined);
  return (client.call(args[0]!, ...args.slice(1)) as Promise<T>).catch(() => undefined);
}

/** One line of CLUSTER NODES: the node's ID, address, flags and whether it serves any slot. */
interface NodeLine {
  id: string;
  port: number;
  flags: string[];
  servesSlots: boolean;
}

function nodeLines(text: string): NodeLine[] {
  return text.trim().split('\n').map((line) => {
    const [id, address, flags, , , , , , ...slots] = line.split(' ');
    return {
      id: id!,
      port: Number(/:(\d+)@/.exec(address ?? '')?.[1]),
      flags: (flags ?? '').split(','),
      servesSlots: slots.some((slot) => /^\d/.test(slot)),
    };
  });
}

/** Whether one node's CLUSTER INFO says the cluster is whole: state ok and every slot served by a node not failing. */
const whole = (info: string | undefined, knownNodes: number): boolean =>
  info !== undefined
  && /cluster_state:ok/.test(info)
  && /cluster_slots_ok:16384\b/.test(info)
  && new RegExp(`cluster_known_nodes:${knownNodes}\\b`).test(info);

/**
 * Until every node says cluster_state:ok and knows every node and every slot, and every replica's
 * link to its master is up (20 s at most).
 */
async function waitForClusterOk(urls: readonly string[], password: string | undefined): Promise<void> {
  const clients = await plainClients(urls, password);
  try {
    const deadline = Date.now() + 20_000;
    while (Date.now() < deadline) {
      const infos = await Promise.all(clients.map((client) => ask<string>(client, 'CLUSTER', 'INFO')));
      const replication = await Promise.all(clients.map((client) => ask<string>(client, 'INFO', 'replication')));
      const synced = replication.every((info) => info !== undefined && (/role:master/.test(info) || /master_link_status:up/.test(info)));
      if (infos.every((info) => whole(info, urls.length)) && synced) return;
      await sleep(100);
    }
    throw new Error('the Redis Cluster did not reach cluster_state:ok within 20 s');
  } finally {
    closeAll(clients);
  }
}

/** Options of a throw-away cluster. */
export interface RedisClusterSetup {
  /** The default user's password on every node (`requirepass`, and `masterauth` between nodes). */
  requirepass?: string;
  /** Replicas of each master (`--cluster-replicas`): 0 (the default) or 1. */
  replicas?: 0 | 1;
  /**
   * `cluster-node-timeout`: how long a node may not answer before the others count it as failing
   * (and, when it is a master with a replica, promote the replica). 5000 ms by default; a test of a
   * failover takes 1000 to 2000 so that it lasts a few seconds.
   */
  nodeTimeoutMs?: number;
  /**
   * `cluster-require-full-coverage` (Redis's default: true): whether the whole cluster refuses
   * every command while one slot has no master. False lets the other masters go on serving theirs.
   */
  requireFullCoverage?: boolean;
}

/**
 * A throw-away Redis Cluster of `masters` master nodes, each with `setup.replicas` replicas (no
 * persistence), on free loopback ports, each port P with its bus port P + 10000 free, in one
 * temporary directory. Which node is a master is the cluster's choice: ask masters().
 */
export async function startRedisCluster(masters = 3, setup: RedisClusterSetup = {}): Promise<RedisClusterProcess> {
  const { requirepass, replicas = 0, nodeTimeoutMs = 5000, requireFullCoverage = true } = setup;
  const dir = mkdtempSync(join(tmpdir(), 'talent-auth-redis-cluster-'));
  const children: ChildProcess[] = [];
  const nodes: RedisClusterNode[] = [];
  const ids = new Map<RedisClusterNode, string>();
  const stop = async () => {
    await Promise.all(children.map((child) => terminate(child)));
    rmSync(dir, { recursive: true, force: true });
  };
  // What a live node says; undefined when none answers.
  const fromLiveNode = async <T>(...args: string[]): Promise<T | undefined> => {
    const live = nodes.filter((node) => {
      const child = children[nodes.indexOf(node)]!;
      return child.exitCode === null && child.signalCode === null;
    });
    const clients = await plainClients(live.map((node) => node.url), requirepass);
    try {
      for (const client of clients) {
        const answer = await ask<T>(client, ...args);
        if (answer !== undefined) return answer;
      }
      return undefined;
    } finally {
      closeAll(clients);
    }
  };
  const byId = (id: string): RedisClusterNode => {
    const node = nodes.find((each) => each.id === id);
    if (!node) throw new Error(`no node of this cluster has the ID ${id}`);
    return node;
  };
  const currentLines = async (): Promise<NodeLine[]> => {
    const text = await fromLiveNode<string>('CLUSTER', 'NODES');
    if (text === undefined) throw new Error('no node of the cluster answers');
    return nodeLines(text);
  };
  try {
    const taken = new Set<number>();
    for (let i = 0; i < masters * (1 + replicas); i += 1) {
      const port = await freeClusterPort(taken);
      taken.add(port);
      const nodeDir = join(dir, String(port));
      mkdirSync(nodeDir);
      const child = spawnRedisServer([
        '--port', String(port),
        '--bind', '127.0.0.1',
        '--dir', nodeDir,
        '--save', '',
        '--appendonly', 'no',
        '--cluster-enabled', 'yes',
        '--cluster-config-file', join(nodeDir, 'nodes.conf'),
        '--cluster-node-timeout', String(nodeTimeoutMs),
        '--cluster-require-full-coverage', requireFullCoverage ? 'yes' : 'no',
        ...(requirepass ? ['--requirepass', requirepass, '--masterauth', requirepass] : []),
      ]);
      children.push(child);
      const url = `redis://127.0.0.1:${port}`;
      const node: RedisClusterNode = {
        host: '127.0.0.1',
        port,
        url,
        get id() {
          return ids.get(node)!;
        },
        get pid() {
          return child.pid!;
        },
        kill: () => terminate(child, 'SIGKILL'),
      };
      nodes.push(node);
      await waitForPing(url, child);
    }
    const clients = await plainClients(nodes.map((node) => node.url), requirepass);
    try {
      const myIds = await Promise.all(clients.map((client) => ask<string>(client, 'CLUSTER', 'MYID')));
      nodes.forEach((node, i) => ids.set(node, myIds[i]!));
    } finally {
      closeAll(clients);
    }
    const created = await run(REDIS_CLI, [
      '--cluster', 'create',
      ...nodes.map((node) => `${node.host}:${node.port}`),
      '--cluster-replicas', String(replicas),
      '--cluster-yes',
    // REDISCLI_AUTH: the password without `-a` (which redis-cli warns about).
    ], requirepass ? { ...process.env, REDISCLI_AUTH: requirepass } : process.env);
    if (created.code !== 0) throw new Error(`redis-cli --cluster create failed:\n${created.output}`);
    await waitForClusterOk(nodes.map((node) => node.url), requirepass);
  } catch (error) {
    await stop();
    throw error;
  }
  return {
    nodes,
    urls: nodes.map((node) => node.url),
    async masters() {
      return (await currentLines()).filter((line) => line.servesSlots && !line.flags.includes('fail')).map((line) => byId(line.id));
    },
    async masterOf(key) {
      const slots = await fromLiveNode<Array<[number, number, [string, number, string], ...unknown[]]>>('CLUSTER', 'SLOTS');
      const slot = await fromLiveNode<number>('CLUSTER', 'KEYSLOT', key);
      const range = slots?.find(([from, to]) => slot !== undefined && from <= slot && slot <= to);
      if (!range) throw new Error('no node serves the slot of that key');
      return byId(range[2][2]);
    },
    async waitForFailover(killed, ms = 20_000) {
      const started = Date.now();
      const live = nodes.filter((node) => node !== killed);
      const clients = await plainClients(live.map((node) => node.url), requirepass);
      try {
        while (Date.now() - started < ms) {
          const infos = await Promise.all(clients.map((client) => ask<string>(client, 'CLUSTER', 'INFO')));
          const views = await Promise.all(clients.map((client) => ask<string>(client, 'CLUSTER', 'NODES')));
          const promoted = views.every((view) => view !== undefined && nodeLines(view).some((line) => line.id === killed.id && !line.servesSlots));
          if (promoted && infos.every((info) => whole(info, nodes.length))) return Date.now() - started;
          await sleep(50);
        }
        throw new Error(`no replica took over from the killed master within ${ms} ms`);
      } finally {
        closeAll(clients);
      }
    },
    stop,
  };
}
