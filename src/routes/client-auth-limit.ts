import type { Context, Next } from 'koa';
import type { Counters } from '../../adapters/types.js';
import { InvalidClient, OAuthError } from '../errors.js';
import type { Logger } from '../logger.js';

export interface WindowLimit {
  max: number;
  windowSeconds: number;
}

export interface FailedClientAuthLimits {
  perClient: WindowLimit;
  perAddress: WindowLimit;
}

/** 429: the caller's client ID or address failed to authenticate too often in the window. */
export class TooManyFailedAuthentications extends OAuthError {
  constructor(readonly retryAfter: number) {
    super('temporarily_unavailable', 429, `too many failed client authentications; retry after ${retryAfter} s`);
  }
}

const UUID = /^[0-9a-f]{8}-[0-9a-f]{4}-[0-9a-f]{4}-[0-9a-f]{4}-[0-9a-f]{12}$/i;

/**
 * The client ID a Basic header claims, judged no further: only UUID-shaped IDs (ours are UUIDs)
 * get a counter of their own, so that an attacker cannot make us keep one per made-up string.
 */
function claimedClientId(authorization: string): string | undefined {
  const match = /^Basic ([A-Za-z0-9+/]+={0,2})$/i.exec(authorization);
  if (!match?.[1]) return undefined;
  const decoded = Buffer.from(match[1], 'base64').toString('latin1');
  const colon = decoded.indexOf(':');
  const clientId = colon > 0 ? decoded.slice(0, colon) : '';
  return UUID.test(clientId) ? clientId.toLowerCase() : undefined;
}

function failedToAuthenticate(ctx: Context): boolean {
  return ctx.status === 401 && (ctx.body as { error?: unknown } | undefined)?.error === 'invalid_client';
}

/**
 * Rate limit of failed client authentications at the token endpoint, per client ID and per source
 * address, in the store's counters (shared by every instance). Over the limit, the request is
 * refused before its credentials are checked: a correct secret waits too, or guessing would go on.
 * A successful authentication costs one counter read.
 */
export function failedClientAuthLimit(
  counters: Counters,
  limits: FailedClientAuthLimits,
  logger: Logger,
  onRefused: () => void = () => {},
) {
  return async function limitFailedClientAuth(ctx: Context, next: Next): Promise<void> {
    if (ctx.method !== 'POST') return next();
    const clientId = claimedClientId(ctx.get('authorization'));
    const address = ctx.ip;
    const watched: Array<{ key: string; limit: WindowLimit }> = [{ key: `addr:${address}`, limit: limits.perAddress }];
    if (clientId) watched.push({ key: `client:${clientId}`, limit: limits.perClient });

    const counts = await counters.peek(watched.map(({ key }) => key));
    const exceeded = counts.filter((count, index) => count.count >= watched[index]!.limit.max);
    if (exceeded.length) {
      const retryAfter = Math.max(1, ...exceeded.map((count) => count.resetsIn));
      ctx.set('Retry-After', String(retryAfter));
      logger.warn('client authentication refused: too many failures', { client_id: clientId, address, retry_after: retryAfter });
      onRefused();
      throw new TooManyFailedAuthentications(retryAfter);
    }

    let failed = false;
    try {
      await next();
      failed = failedToAuthenticate(ctx);
    } catch (error) {
      failed = error instanceof InvalidClient;
      throw error;
    } finally {
      if (failed) {
        try {
          const after = await Promise.all(
            watched.map(({ key, limit }) => counters.increment([key], limit.windowSeconds).then(([count]) => count!.count)),
          );
          logger.info('client authentication failed', { client_id: clientId, address, failures: after });
        } catch (error) {
          // The answer stays the authentication failure; the store's own fault is reported elsewhere.
          logger.warn('client authentication failure not counted', { client_id: clientId, address, error: (error as Error).name });
        }
      }
    }
  };
}
