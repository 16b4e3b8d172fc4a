import { randomBytes } from 'node:crypto';
import { createMemoryStore } from '../../adapters/memory.js';
import { createRedisStore } from '../../adapters/redis/index.js';
import type { Store } from '../../adapters/types.js';
import type { Logger } from '../logger.js';
import type { Metrics } from '../observability/metrics.js';
import type { ResolvedOptions } from '../options.js';

/** The store of the `store` option: memory, or Redis with its errors counted and logged by code. */
export async function openStore(options: ResolvedOptions, logger: Logger, metrics: Metrics | undefined): Promise<Store> {
  if (options.store.type === 'memory') return createMemoryStore();
  const { type: _type, ...redis } = options.store;
  return createRedisStore({
    ...redis,
    // The code only: an error message could quote the URL, password included.
    onError: (error) => {
      const reason = error.code ?? error.name;
      metrics?.storeErrors.inc({ reason });
      logger.warn('redis connection error', { error: reason });
    },
    onWarning: (message) => logger.warn(message),
  });
}

/** The cookie keys of the option, or one made for this process (with a warning: development only). */
export function cookieKeysOf(options: ResolvedOptions, logger: Logger): string[] {
  if (options.cookieKeys) return options.cookieKeys;
  logger.warn(
    'NO COOKIE KEYS CONFIGURED: generated a key for this process. Sign-in sessions end at restart and do '
      + 'not work across instances. Configure cookieKeys outside development.',
  );
  return [randomBytes(32).toString('base64url')];
}

/**
 * The keys sealing the users' factor secrets: `factorKeys`, or the cookie keys (the Sealer derives
 * its own key from each under its own label, so no cookie use shares it) with a warning: a cookie
 * key dropped in a rotation would then take the authenticator apps sealed under it along.
 */
export function factorKeysOf(options: ResolvedOptions, cookieKeys: string[], logger: Logger): string[] {
  if (options.factorKeys) return options.factorKeys;
  logger.warn(
    'NO FACTOR KEYS CONFIGURED: authenticator app secrets and recovery codes are sealed under keys derived from '
      + 'cookieKeys; dropping a cookie key makes what was sealed under it unusable. Configure factorKeys outside development.',
  );
  return cookieKeys;
}
