import type { Context, Next } from 'koa';
import { StoreUnavailable, type Store } from '../../adapters/types.js';
import { TemporarilyUnavailable } from '../errors.js';
import type { Logger } from '../logger.js';
import { undoConsumptions } from '../provider/single-use.js';

/** Seconds a client is told to wait when the store is down (Retry-After). */
export const STORE_RETRY_AFTER_SECONDS = 1;

function retryLater(ctx: Context): void {
  if (!ctx.response.get('Retry-After')) ctx.set('Retry-After', String(STORE_RETRY_AFTER_SECONDS));
}

/**
 * Refuses at once, with 503 temporarily_unavailable, the requests that need the store while it is
 * known to be down, instead of letting them wait for a connection: no token is issued that could
 * not be recorded, and no caller hangs. Requests answered from memory (JWKS, discovery, health)
 * pass. Every 503 gets a Retry-After, and a code or refresh token the failed request consumed is
 * given back (provider/single-use.ts), so that the retry is not a replay.
 */
export function refuseWhileStoreDown(store: Store, needsStore: (path: string) => boolean, logger: Logger) {
  return async function storeAvailability(ctx: Context, next: Next): Promise<void> {
    try {
      if (!store.available && needsStore(ctx.path)) throw new TemporarilyUnavailable();
      await next();
    } catch (error) {
      if (!(error instanceof TemporarilyUnavailable || error instanceof StoreUnavailable)) throw error;
      // Our routes' store failures; the engine renders its own (StoreUnavailable is shaped for it).
      if (error instanceof StoreUnavailable) logger.warn('store unavailable', { method: ctx.method, path: ctx.path, reason: error.reason });
      retryLater(ctx);
      await undoConsumptions(ctx.state);
      throw error instanceof StoreUnavailable ? new TemporarilyUnavailable() : error;
    }
    if (ctx.status === 503) {
      retryLater(ctx);
      await undoConsumptions(ctx.state);
    }
  };
}
