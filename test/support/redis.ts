import { execFileSync } from 'node:child_process';
import { mkdtempSync, readFileSync, rmSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { Redis } from 'ioredis';
import { freePort, spawnRedisServer, startRedis as startRedisProcess, terminate } from '../../devtools/redis-server.js';

export { freePort } from '../../devtools/redis-server.js';

export interface RedisServer {
  url: string;
  port: number;
  /** Of the redis-server running now (changes at restart). */
  readonly pid: number;
  /** Kills redis-server (SIGKILL); restart() brings it back on the same port and data dir. */
  kill(): Promise<void>;
  /** SIGSTOP: connections stay open, nothing answers; resume() (SIGCONT) undoes it. */
  pause(): void;
  resume(): void;
  restart(): Promise<void>;
  /** A client for inspecting what the store wrote; disconnected by stop(). */
  client(): Redis;
  stop(): Promise<void>;
}

/** A real redis-server on a free loopback port, with inspection clients. */
export async function startRedis(extraArgs: string[] = []): Promise<RedisServer> {
  const process = await startRedisProcess(extraArgs);
  const clients: Redis[] = [];
  return {
    url: process.url,
    port: process.port,
    get pid() {
      return process.pid;
    },
    kill: () => process.kill(),
    pause: () => process.pause(),
    resume: () => process.resume(),
    restart: () => process.restart(),
    client() {
      const client = new Redis(process.url);
      clients.push(client);
      return client;
    },
    async stop() {
      clients.forEach((client) => client.disconnect());
      await process.stop();
    },
  };
}

export interface TlsRedisServer {
  /** `rediss://127.0.0.1:<port>`: a TLS-only port (no plain one). */
  url: string;
  port: number;
  /** The server's self-signed certificate (PEM), for `tls: { ca }`. */
  ca: string;
  stop(): Promise<void>;
}

/**
 * A real redis-server that speaks TLS only, with a self-signed certificate for 127.0.0.1 made by
 * `openssl` for this run (no persistence, clients need no certificate).
 */
export async function startTlsRedis(): Promise<TlsRedisServer> {
  const dir = mkdtempSync(join(tmpdir(), 'talent-auth-redis-tls-'));
  const cert = join(dir, 'cert.pem');
  const key = join(dir, 'key.pem');
  execFileSync('openssl', [
    'req', '-x509', '-newkey', 'ec', '-pkeyopt', 'ec_paramgen_curve:P-256', '-nodes', '-days', '1',
    '-subj', '/CN=127.0.0.1', '-addext', 'subjectAltName=IP:127.0.0.1', '-keyout', key, '-out', cert,
  ], { stdio: 'ignore' });
  const ca = readFileSync(cert, 'utf8');
  const port = await freePort();
  const child = spawnRedisServer([
    '--port', '0', '--tls-port', String(port), '--bind', '127.0.0.1', '--tls-cert-file', cert, '--tls-key-file', key,
    '--tls-ca-cert-file', cert, '--tls-auth-clients', 'no', '--save', '', '--appendonly', 'no', '--dir', dir,
  ]);
  const url = `rediss://127.0.0.1:${port}`;
  const stop = async () => {
    await terminate(child);
    rmSync(dir, { recursive: true, force: true });
  };
  const deadline = Date.now() + 10_000;
  for (;;) {
    if (child.exitCode !== null) {
      await stop();
      throw new Error(`redis-server (TLS) exited with code ${child.exitCode}: is it built with TLS?`);
    }
    const probe = new Redis(url, { tls: { ca }, lazyConnect: true, maxRetriesPerRequest: 0, retryStrategy: () => null });
    probe.on('error', () => {});
    try {
      await probe.connect();
      await probe.ping();
      break;
    } catch (error) {
      if (Date.now() > deadline) {
        await stop();
        throw error;
      }
      await new Promise((resolve) => setTimeout(resolve, 50));
    } finally {
      if (probe.status !== 'end') probe.disconnect();
    }
  }
  return { url, port, ca, stop };
}

/**
 * Every key matching `pattern` and its value, one line each (`<key> <value as JSON>`), whatever
 * its type: what a test searches for a secret that must not be stored in clear.
 * @throws Error for a key of a type it does not read (so that nothing is skipped unseen).
 */
export async function redisContents(client: Redis, pattern = '*'): Promise<string> {
  const lines: string[] = [];
  for (const key of await client.keys(pattern)) {
    const type = await client.type(key);
    const value = type === 'string' ? await client.get(key)
      : type === 'hash' ? await client.hgetall(key)
        : type === 'set' ? await client.smembers(key)
          : type === 'zset' ? await client.zrange(key, 0, -1)
            : type === 'list' ? await client.lrange(key, 0, -1)
              : type === 'stream' ? await client.xrange(key, '-', '+')
                : undefined;
    if (value === undefined && type !== 'none') throw new Error(`a key of type ${type}: read it too`);
    lines.push(`${key} ${JSON.stringify(value ?? null)}`);
  }
  return lines.join('\n');
}
