import { Redis, type RedisOptions } from 'ioredis';
import { createRedisStore } from '../../adapters/redis.js';
import type { Store } from '../../adapters/types.js';
import { ConnectionError, UsageError } from './errors.js';

export const DEFAULT_KEY_PREFIX = 'talent-auth:';

/** The URL without its password, for messages. */
function redactedUrl(url: string): string {
  try {
    const parsed = new URL(url);
    if (parsed.password) parsed.password = '***';
    return parsed.toString().replace(/\/$/, '');
  } catch {
    return '(unparseable URL)';
  }
}

/**
 * A CLI runs one command and exits: no reconnecting forever, no queueing while disconnected, a
 * bounded connect time. Any failure ends the command with exit code 2.
 */
const CLI_REDIS_OPTIONS: RedisOptions = {
  retryStrategy: () => null,
  maxRetriesPerRequest: 1,
  connectTimeout: 5000,
};

/** Pings Redis with a client of our own (which listens for errors, so ioredis prints nothing). */
async function probe(url: string): Promise<void> {
  const client = new Redis(url, { ...CLI_REDIS_OPTIONS, lazyConnect: true, maxRetriesPerRequest: 0 });
  let lastError: Error | undefined;
  client.on('error', (error: Error) => (lastError = error));
  try {
    await client.connect();
    await client.ping();
  } catch (error) {
    const cause = lastError ?? (error as Error);
    throw new ConnectionError(`cannot connect to Redis at ${redactedUrl(url)}: ${cause.message}`);
  } finally {
    // After a failed attempt the socket is gone already; disconnect() would then hold the process
    // for ioredis' disconnectTimeout (2 s) waiting for a close event that never comes.
    if (client.status !== 'end') client.disconnect();
  }
}

/**
 * The same Redis store the server uses (adapters/redis.ts): same key layout, same compare-and-set
 * scripts, and every write publishes the change message that makes running servers drop their
 * cached client at once.
 */
export async function openRedisStore(url: string | undefined, keyPrefix: string): Promise<Store> {
  if (!url) throw new UsageError('--redis <url> or REDIS_URL is required', '--redis');
  if (!/^rediss?:\/\//.test(url)) throw new UsageError('--redis: must be a redis:// or rediss:// URL', '--redis');
  await probe(url);
  try {
    return await createRedisStore({ url, keyPrefix, redisOptions: CLI_REDIS_OPTIONS });
  } catch (error) {
    throw new ConnectionError(`cannot connect to Redis at ${redactedUrl(url)}: ${(error as Error).message}`);
  }
}
