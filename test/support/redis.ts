import { Redis } from 'ioredis';
import { startRedis as startRedisProcess } from '../../devtools/redis-server.js';

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
