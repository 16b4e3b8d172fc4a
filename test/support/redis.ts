import { Redis } from 'ioredis';
import { startRedis as startRedisProcess } from '../../devtools/redis-server.js';

export { freePort } from '../../devtools/redis-server.js';

export interface RedisServer {
  url: string;
  port: number;
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
