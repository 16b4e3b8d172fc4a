import { spawn, spawnSync, type ChildProcess } from 'node:child_process';
import { mkdtempSync, rmSync } from 'node:fs';
import { createServer } from 'node:net';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { Redis } from 'ioredis';

const REDIS_SERVER = '/usr/bin/redis-server';

export interface RedisProcess {
  url: string;
  port: number;
  pid: number;
  stop(): Promise<void>;
}

export function redisVersion(): string {
  const { stdout } = spawnSync(REDIS_SERVER, ['--version'], { encoding: 'utf8' });
  return /v=(\S+)/.exec(stdout ?? '')?.[1] ?? 'unknown';
}

/** A port that was free a moment ago on 127.0.0.1. */
export async function freePort(): Promise<number> {
  return new Promise((resolve, reject) => {
    const server = createServer();
    server.once('error', reject);
    server.listen(0, '127.0.0.1', () => {
      const address = server.address();
      const port = typeof address === 'object' && address ? address.port : 0;
      server.close(() => resolve(port));
    });
  });
}

async function waitForPing(url: string, child: ChildProcess): Promise<void> {
  const deadline = Date.now() + 10_000;
  while (Date.now() < deadline) {
    if (child.exitCode !== null) throw new Error(`redis-server exited with code ${child.exitCode}`);
    const probe = new Redis(url, { lazyConnect: true, maxRetriesPerRequest: 0, retryStrategy: () => null });
    probe.on('error', () => {}); // a refused connection before redis listens is expected; connect() rejects too
    try {
      await probe.connect();
      await probe.ping();
      return;
    } catch {
      await new Promise((resolve) => setTimeout(resolve, 50));
    } finally {
      probe.disconnect();
    }
  }
  throw new Error('redis-server did not answer PING within 10 s');
}

async function terminate(child: ChildProcess): Promise<void> {
  if (child.exitCode !== null || child.signalCode !== null) return;
  const exited = new Promise((resolve) => child.once('exit', resolve));
  child.kill('SIGTERM');
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
  const child = spawn(REDIS_SERVER, args, { stdio: 'ignore' });
  const stop = async () => {
    await terminate(child);
    rmSync(dir, { recursive: true, force: true });
  };
  const url = `redis://127.0.0.1:${port}`;
  try {
    await waitForPing(url, child);
  } catch (error) {
    await stop();
    throw error;
  }
  return { url, port, pid: child.pid!, stop };
}
