import { spawn, spawnSync, type ChildProcess } from 'node:child_process';
import { mkdtempSync, rmSync } from 'node:fs';
import { createServer } from 'node:net';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { Redis } from 'ioredis';

const REDIS_SERVER = '/usr/bin/redis-server';
export const REDIS_CLI = '/usr/bin/redis-cli';

export interface RedisProcess {
  url: string;
  port: number;
  /** Of the redis-server running now (changes at restart). */
  readonly pid: number;
  /** Kills redis-server (SIGKILL: no goodbye to clients, no save at exit); the data dir stays. */
  kill(): Promise<void>;
  /** Freezes redis-server (SIGSTOP): connections stay open but nothing answers. */
  pause(): void;
  /** Undoes pause() (SIGCONT). */
  resume(): void;
  /** Starts redis-server again on the same port and data dir (what persistence kept comes back). */
  restart(): Promise<void>;
  stop(): Promise<void>;
}

export function redisVersion(): string {
  const { stdout } = spawnSync(REDIS_SERVER, ['--version'], { encoding: 'utf8' });
  return /v=(\S+)/.exec(stdout ?? '')?.[1] ?? 'unknown';
}

function listenOn(port: number): Promise<number | undefined> {
  return new Promise((resolve) => {
    const server = createServer();
    server.once('error', () => resolve(undefined));
    server.listen(port, '127.0.0.1', () => {
      const address = server.address();
      const bound = typeof address === 'object' && address ? address.port : undefined;
      server.close(() => resolve(bound));
    });
  });
}

/** A port that was free a moment ago on 127.0.0.1. */
export async function freePort(): Promise<number> {
  const port = await listenOn(0);
  if (port === undefined) throw new Error('no free port on 127.0.0.1');
  return port;
}

/**
 * A port P such that P and P + 10000 (a cluster node's bus port) were both free a moment ago;
 * P + 10000 must stay a valid port, so P ≤ 55535.
 */
export async function freeClusterPort(taken: ReadonlySet<number> = new Set()): Promise<number> {
  for (let attempt = 0; attempt < 200; attempt += 1) {
    const port = 20000 + Math.floor(Math.random() * 35000);
    if (taken.has(port) || taken.has(port + 10000) || taken.has(port - 10000)) continue;
    if ((await listenOn(port)) === port && (await listenOn(port + 10000)) === port + 10000) return port;
  }
  throw new Error('no free port pair (P, P + 10000) on 127.0.0.1');
}

/** PINGs until redis-server answers (10 s at most); fails at once when the process has exited. */
export async function waitForPing(url: string, child: ChildProcess): Promise<void> {
  const deadline = Date.now() + 10_000;
  while (Date.now() < deadline) {
    if (child.exitCode !== null || child.signalCode !== null) {
      throw new Error(`redis-server exited with code ${child.exitCode ?? child.signalCode}`);
    }
    const probe = new Redis(url, { lazyConnect: true, enableReadyCheck: false, maxRetriesPerRequest: 0, retryStrategy: () => null });
    probe.on('error', () => {}); // a refused connection before redis listens is expected; connect() rejects too
    try {
      await probe.connect();
      await probe.ping();
      return;
    } catch (error) {
      // It answers, but wants a password (--requirepass): up all the same.
      if (error instanceof Error && error.message.includes('NOAUTH')) return;
      await new Promise((resolve) => setTimeout(resolve, 50));
    } finally {
      // After a failed attempt the socket is gone already; disconnect() would then hold the process
      // for ioredis' disconnectTimeout waiting for a close event that never comes.
      if (probe.status !== 'end') probe.disconnect();
    }
  }
  throw new Error('redis-server did not answer PING within 10 s');
}

const running = new Set<ChildProcess>();
let exitHook = false;

/**
 * Spawns redis-server (or redis-server in sentinel mode). Should the test process end without
 * stopping it, it is killed by its pid on exit rather than left running.
 */
export function spawnRedisServer(args: readonly string[]): ChildProcess {
  const child = spawn(REDIS_SERVER, args, { stdio: 'ignore' });
  running.add(child);
  child.once('exit', () => running.delete(child));
  if (!exitHook) {
    exitHook = true;
    process.once('exit', () => {
      for (const orphan of running) if (orphan.pid !== undefined) process.kill(orphan.pid, 'SIGKILL');
    });
  }
  return child;
}

export async function terminate(child: ChildProcess, signal: NodeJS.Signals = 'SIGTERM'): Promise<void> {
  if (child.exitCode !== null || child.signalCode !== null) return;
  const exited = new Promise((resolve) => child.once('exit', resolve));
  child.kill(signal);
  // A paused (SIGSTOPped) process keeps SIGTERM pending until it runs again.
  if (signal !== 'SIGKILL') child.kill('SIGCONT');
  await exited;
}

/**
 * A throw-away redis-server (the Debian package; no persistence unless `extraArgs` ask for it) on a
 * free loopback port, in its own temporary directory. Used by the tests and the benchmark.
 */
export async function startRedis(extraArgs: string[] = []): Promise<RedisProcess> {
  const port = await freePort();
  const dir = mkdtempSync(join(tmpdir(), 'talent-auth-redis-'));
  const args = ['--port', String(port), '--bind', '127.0.0.1', '--save', '', '--appendonly', 'no', '--dir', dir, ...extraArgs];
  const url = `redis://127.0.0.1:${port}`;
  let child: ChildProcess | undefined;
  const launch = async () => {
    child = spawnRedisServer(args);
    await waitForPing(url, child);
  };
  const stop = async () => {
    if (child) await terminate(child);
    rmSync(dir, { recursive: true, force: true });
  };
  const current = (): ChildProcess => {
    if (!child) throw new Error('redis-server not started');
    return child;
  };
  try {
    await launch();
  } catch (error) {
    await stop();
    throw error;
  }
  return {
    url,
    port,
    get pid() {
      return current().pid!;
    },
    kill: () => terminate(current(), 'SIGKILL'),
    pause: () => void current().kill('SIGSTOP'),
    resume: () => void current().kill('SIGCONT'),
    restart: async () => {
      await terminate(current());
      await launch();
    },
    stop,
  };
}
