import { resolve } from 'node:path';
import type { RedisOptions } from 'ioredis';
import { createRedisStore, StoreStartError } from '../../adapters/redis/index.js';
import type { Store } from '../../adapters/types.js';
import { DEFAULT_KEY_PREFIX } from '../../adapters/redis/options.js';
import {
  REDIS_LOCATION_VARIABLES,
  RedisSettingsError,
  redisSettingsFromEnv,
  redisSettingsFromFile,
  resolveRedisStore,
  type RedisSettingsSource,
} from '../../adapters/redis/settings.js';
import type { ParsedArgs } from './args.js';
import { ConnectionError, UsageError } from './errors.js';
import type { CliIo } from './output.js';

/** The server's key prefix (the `store` option's default), for a CLI given none. */
export { DEFAULT_KEY_PREFIX };

/**
 * A CLI runs one command and exits: no reconnecting forever, no queueing while disconnected, a
 * bounded connect time. Any failure ends the command with exit code 2.
 */
const CLI_REDIS_OPTIONS: RedisOptions = {
  retryStrategy: () => null,
  // Sentinels that do not answer, or do not know the master's name: said at once, not after 10 s.
  sentinelRetryStrategy: () => null,
  maxRetriesPerRequest: 1,
  connectTimeout: 5000,
};

const NO_STORE =
  'no Redis store given: --redis <url>, --store-config <file>, or REDIS_URL, REDIS_CLUSTER_NODES or REDIS_SENTINELS (see talent-auth --help)';

/** The flags' settings: `--redis` and `--key-prefix`. */
function flagSettings(args: ParsedArgs): RedisSettingsSource {
  const { redis, 'key-prefix': keyPrefix } = args.values;
  return {
    settings: { ...(redis !== undefined ? { url: redis } : {}), ...(keyPrefix !== undefined ? { keyPrefix } : {}) },
    nameOf: ([field]) => (field === 'keyPrefix' ? '--key-prefix' : '--redis'),
  };
}

/**
 * Where the settings are, highest precedence first: the flags, the `--store-config` file, the
 * environment (the example server's variables, adapters/redis/settings.ts).
 */
function storeSources(args: ParsedArgs, io: Pick<CliIo, 'env' | 'cwd'>): RedisSettingsSource[] {
  const file = args.values['store-config'];
  return [
    flagSettings(args),
    ...(file !== undefined ? [redisSettingsFromFile(resolve(io.cwd, file), file, '--store-config')] : []),
    redisSettingsFromEnv(io.env),
  ];
}

/** Whether the command line or the environment names a store at all (keys commands record only then). */
export function storeGiven(args: ParsedArgs, env: CliIo['env']): boolean {
  return args.values.redis !== undefined || args.values['store-config'] !== undefined
    || REDIS_LOCATION_VARIABLES.some((name) => Boolean(env[name]));
}

/**
 * The same Redis store the server uses (adapters/redis/): same key layout, same compare-and-set
 * scripts, and every write publishes the change message that makes running servers drop their
 * cached client at once. A single node, a Redis Cluster or a Sentinel-managed master, with an ACL
 * user and TLS, from the flags, a `--store-config` file and the environment.
 */
export async function openRedisStore(args: ParsedArgs, io: Pick<CliIo, 'env' | 'cwd'>): Promise<Store> {
  let option;
  try {
    option = resolveRedisStore(storeSources(args, io), NO_STORE);
  } catch (error) {
    if (error instanceof RedisSettingsError) throw new UsageError(error.message, error.field);
    throw error;
  }
  const { type: _redis, ...connection } = option;
  try {
    return await createRedisStore({ ...connection, keyPrefix: connection.keyPrefix ?? DEFAULT_KEY_PREFIX, redisOptions: CLI_REDIS_OPTIONS });
  } catch (error) {
    // The store's own sentence: where (host and port, never the password) and why.
    if (error instanceof StoreStartError) throw new ConnectionError(error.message);
    // A setting the store itself refuses (a prefix with braces on a cluster): a usage error.
    if (error instanceof TypeError || error instanceof RangeError) throw new UsageError(error.message);
    throw error;
  }
}
