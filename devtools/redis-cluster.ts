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
  readonly pid: number;
  /** SIGKILL: the node is gone for good (its slots with it: there are no replicas). */
  kill(): Promise<void>;
}

export interface RedisClusterProcess {
  nodes: RedisClusterNode[];
  /** The nodes' URLs, for `cluster: { nodes }`. */
  urls: string[];
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

/** Until every node says cluster_state:ok and knows every node and every slot (20 s at most). */
async function waitForClusterOk(urls: readonly string[], password: string | undefined): Promise<void> {
  const clients = urls.map((url) => new Redis(url, { lazyConnect: true, maxRetriesPerRequest: 0, retryStrategy: () => null, ...(password ? { password } : {}) }));
  clients.forEach((client) => client.on('error', () => {}));
  try {
    await Promise.all(clients.map((client) => client.connect()));
    const deadline = Date.now() + 20_000;
    while (Date.now() < deadline) {
      const infos = await Promise.all(clients.map((client) => client.cluster('INFO') as Promise<string>));
      const ok = infos.every(
        (info) =>
          /cluster_state:ok/.test(info)
          && /cluster_slots_ok:16384/.test(info)
          && new RegExp(`cluster_known_nodes:${urls.length}\\b`).test(info),
      );
      if (ok) return;
      await new Promise((resolve) => setTimeout(resolve, 100));
    }
    throw new Error('the Redis Cluster did not reach cluster_state:ok within 20 s');
  } finally {
    clients.forEach((client) => client.status !== 'end' && client.disconnect());
  }
}

/** Options of a throw-away cluster. */
export interface RedisClusterSetup {
  /** The default user's password on every node (`requirepass`, and `masterauth` between nodes). */
  requirepass?: string;
}

/**
 * A throw-away Redis Cluster of `masters` master nodes (no replicas, no persistence) on free
 * loopback ports, each port P with its bus port P + 10000 free, in one temporary directory.
 */
export async function startRedisCluster(masters = 3, setup: RedisClusterSetup = {}): Promise<RedisClusterProcess> {
  const { requirepass } = setup;
  const dir = mkdtempSync(join(tmpdir(), 'talent-auth-redis-cluster-'));
  const children: ChildProcess[] = [];
  const nodes: RedisClusterNode[] = [];
  const stop = async () => {
    await Promise.all(children.map((child) => terminate(child)));
    rmSync(dir, { recursive: true, force: true });
  };
  try {
    const taken = new Set<number>();
    for (let i = 0; i < masters; i += 1) {
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
        '--cluster-node-timeout', '5000',
        ...(requirepass ? ['--requirepass', requirepass, '--masterauth', requirepass] : []),
      ]);
      children.push(child);
      const url = `redis://127.0.0.1:${port}`;
      nodes.push({
        host: '127.0.0.1',
        port,
        url,
        get pid() {
          return child.pid!;
        },
        kill: () => terminate(child, 'SIGKILL'),
      });
      await waitForPing(url, child);
    }
    const created = await run(REDIS_CLI, [
      '--cluster', 'create',
      ...nodes.map((node) => `${node.host}:${node.port}`),
      '--cluster-replicas', '0',
      '--cluster-yes',
    // REDISCLI_AUTH: the password without `-a` (which redis-cli warns about).
    ], requirepass ? { ...process.env, REDISCLI_AUTH: requirepass } : process.env);
    if (created.code !== 0) throw new Error(`redis-cli --cluster create failed:\n${created.output}`);
    await waitForClusterOk(nodes.map((node) => node.url), requirepass);
  } catch (error) {
    await stop();
    throw error;
  }
  return { nodes, urls: nodes.map((node) => node.url), stop };
}
