import type { RedisOptions } from 'ioredis';
import { createRedisStore, StoreStartError } from '../../adapters/redis/index.js';
import type { Store } from '../../adapters/types.js';
import { databaseIndexProblem } from '../../adapters/redis/url.js';
import { DEFAULT_KEY_PREFIX } from '../../adapters/redis/options.js';
import { ConnectionError, UsageError } from './errors.js';

/** The server's key prefix (the `store` option's default), for a CLI given none. */
export { DEFAULT_KEY_PREFIX };

/**
 * A CLI runs one command and exits: no reconnecting forever, no queueing while disconnected, a
 * bounded connect time. Any failure ends the command with exit code 2.
 */
const CLI_REDIS_OPTIONS: RedisOptions = {
  retryStrategy: () => null,
  maxRetriesPerRequest: 1,
  connectTimeout: 5000,
};

/**
 * The same Redis store the server uses (adapters/redis/): same key layout, same compare-and-set
 * scripts, and every write publishes the change message that makes running servers drop their
 * cached client at once.
 */
export async function openRedisStore(url: string | undefined, keyPrefix: string): Promise<Store> {
  if (!url) throw new UsageError('--redis <url> or REDIS_URL is required', '--redis');
  if (!/^rediss?:\/\//.test(url)) throw new UsageError('--redis: must be a redis:// or rediss:// URL', '--redis');
  const database = databaseIndexProblem(url);
  if (database) throw new UsageError(`--redis: ${database}`, '--redis');
  try {
    return await createRedisStore({ url, keyPrefix, redisOptions: CLI_REDIS_OPTIONS });
  } catch (error) {
    // The store's own sentence: where (host and port, never the password) and why.
    if (error instanceof StoreStartError) throw new ConnectionError(error.message);
    throw error;
  }
}
