import { mkdtempSync, rmSync, writeFileSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { Redis } from 'ioredis';
import { freePort, spawnRedisServer, startRedis, terminate, waitForPing, type RedisProcess } from './redis-server.js';

export interface RedisSentinelProcess {
  /** The master that the sentinel watches (at the start: a failover makes a replica the master). */
  master: RedisProcess;
  /** Replicas of the master, known to the sentinel. */
  replicas: RedisProcess[];
  /** For `sentinel: { sentinels, name }`. */
  sentinels: Array<{ host: string; port: number }>;
  name: string;
  /** Of the sentinel process. */
  readonly sentinelPid: number;
  /** Stops the sentinel and the master (by pid) and removes their temporary directories. */
  stop(): Promise<void>;
}

/** Until the sentinel names `port` as the master of `name` (10 s at most). */
async function waitForMaster(sentinelUrl: string, name: string, port: number): Promise<void> {
  const client = new Redis(sentinelUrl, { lazyConnect: true, maxRetriesPerRequest: 0, retryStrategy: () => null });
  client.on('error', () => {});
  try {
    await client.connect();
    const deadline = Date.now() + 10_000;
    while (Date.now() < deadline) {
      const address = (await client.call('SENTINEL', 'get-master-addr-by-name', name)) as [string, string] | null;
      if (address && Number(address[1]) === port) return;
      await new Promise((resolve) => setTimeout(resolve, 100));
    }
    throw new Error('the sentinel did not name the master within 10 s');
  } finally {
    if (client.status !== 'end') client.disconnect();
  }
}

/** Until the sentinel knows `count` replicas of `name` in sync with the master (20 s at most). */
async function waitForReplicas(sentinelUrl: string, name: string, count: number): Promise<void> {
  const client = new Redis(sentinelUrl, { lazyConnect: true, maxRetriesPerRequest: 0, retryStrategy: () => null });
  client.on('error', () => {});
  try {
    await client.connect();
    const deadline = Date.now() + 20_000;
    while (Date.now() < deadline) {
      const replicas = (await client.call('SENTINEL', 'replicas', name)) as string[][];
      const healthy = replicas.filter((fields) => {
        const info = new Map<string, string>();
        for (let i = 0; i + 1 < fields.length; i += 2) info.set(fields[i]!, fields[i + 1]!);
        return !/disconnected|s_down/.test(info.get('flags') ?? '') && info.get('master-link-status') === 'ok';
      });
      if (healthy.length >= count) return;
      await new Promise((resolve) => setTimeout(resolve, 200));
    }
    throw new Error(`the sentinel did not see ${count} replica(s) in sync within 20 s`);
  } finally {
    if (client.status !== 'end') client.disconnect();
  }
}

export interface RedisSentinelSetup {
  /** The master group name. */
  name?: string;
  /** How many replicas of the master to start (each a failover candidate). */
  replicas?: number;
  /** Extra redis-server arguments for the master and the replicas (e.g. persistence). */
  serverArgs?: string[];
}

/**
 * A throw-away master (startRedis), its replicas, and one `redis-server --sentinel` watching them
 * with quorum 1 (a master unreachable for 2 s is failed over), on free loopback ports, each in its
 * own temporary directory.
 */
export async function startRedisSentinel(setup: RedisSentinelSetup = {}): Promise<RedisSentinelProcess> {
  const name = setup.name ?? 'talent-auth';
  const serverArgs = setup.serverArgs ?? [];
  const master = await startRedis(serverArgs);
  const replicas: RedisProcess[] = [];
  const dir = mkdtempSync(join(tmpdir(), 'talent-auth-sentinel-'));
  let sentinel: ReturnType<typeof spawnRedisServer> | undefined;
  const stop = async () => {
    if (sentinel) await terminate(sentinel);
    await Promise.all(replicas.map((replica) => replica.stop()));
    await master.stop();
    rmSync(dir, { recursive: true, force: true });
  };
  try {
    for (let i = 0; i < (setup.replicas ?? 0); i += 1) {
      replicas.push(await startRedis([...serverArgs, '--replicaof', '127.0.0.1', String(master.port)]));
    }
    const port = await freePort();
    // The sentinel rewrites its configuration file: it must be a file of its own, writable.
    const config = join(dir, 'sentinel.conf');
    writeFileSync(
      config,
      [
        `port ${port}`,
        'bind 127.0.0.1',
        `dir ${dir}`,
        `sentinel monitor ${name} 127.0.0.1 ${master.port} 1`,
        `sentinel down-after-milliseconds ${name} 2000`,
        `sentinel failover-timeout ${name} 10000`,
        '',
      ].join('\n'),
    );
    sentinel = spawnRedisServer([config, '--sentinel']);
    const url = `redis://127.0.0.1:${port}`;
    await waitForPing(url, sentinel);
    await waitForMaster(url, name, master.port);
    if (replicas.length > 0) await waitForReplicas(url, name, replicas.length);
    const running = sentinel;
    return {
      master,
      replicas,
      sentinels: [{ host: '127.0.0.1', port }],
      name,
      get sentinelPid() {
        return running.pid!;
      },
      stop,
    };
  } catch (error) {
    await stop();
    throw error;
  }
}
