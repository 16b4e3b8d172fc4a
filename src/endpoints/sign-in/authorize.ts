import type { Context, Next } from 'koa';
import type { Counters } from '../../../adapters/types.js';
import type { Logger } from '../../logger.js';
import { browserRequestGuard, type AuthorizeLimits } from '../../limits/browser-requests.js';
import { answerPostWithGet } from './post-as-get.js';

/**
 * In front of the engine's authorization endpoint, which stores a pending sign-in (an interaction
 * record) for each request: the browser request guard (above), and a POST answered with a 303 to
 * the same request as a GET (src/endpoints/sign-in/post-as-get.ts). The resumption of a sign-in
 * (`/authorize/{uid}`) is not counted: it stores nothing new.
 *
 * `state` and `nonce` (1 KiB each) are checked by the engine configuration, which sends the error
 * back to the app; together these bound what one pending sign-in costs in the store.
 */
export function authorizeGuard(
  limits: AuthorizeLimits,
  counters: Counters,
  addressOf: (ctx: Context) => string,
  logger: Logger,
  onRefused: () => void = () => {},
) {
  const guard = browserRequestGuard(limits, 'authz', counters, addressOf, logger, onRefused);
  return async function guardAuthorize(ctx: Context, _params: unknown, next: Next): Promise<void> {
    if (ctx.method !== 'GET' && ctx.method !== 'POST') return next();
    if (await guard(ctx)) return;
    // A POST is the GET with its parameters in the body: it becomes that GET (counted then).
    if (ctx.method === 'POST') return answerPostWithGet(ctx, limits.queryBytes);
    await next();
  };
}
