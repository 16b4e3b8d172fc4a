import type { Context, Next } from 'koa';
import type { Counters } from '../../adapters/types.js';
import type { Logger } from '../logger.js';
import { RefusalLog } from '../observability/refusal-log.js';
import { errorPage, oauthErrorPage, sendPage } from '../pages/html.js';
import { answerPostWithGet } from './post-as-get.js';
import { localeOf } from '../i18n/localizer.js';

/** The limits of authorization requests (options `limits.authorizeQueryBytes`, `rateLimits.authorize`). */
export interface AuthorizeLimits {
  queryBytes: number;
  perAddress: { max: number; windowSeconds: number } | false;
}

/**
 * In front of the engine's authorization endpoint, which anyone can call without credentials and
 * which stores a pending sign-in (an interaction record) for each request:
 *
 * - a POST is answered with a 303 to the same request as a GET (src/http/post-as-get.ts);
 * - a request larger than `queryBytes` (query string, or form body of a POST) is refused at once
 *   with an error page (400), before anything is parsed or stored: no redirect, since nothing of
 *   it is read;
 * - each address may start `perAddress.max` authorization requests per window, counted in the
 *   store (shared by every instance); past that, a 429 page with `Retry-After` in the user's
 *   words. The resumption of a sign-in (`/authorize/{uid}`) is not counted: it stores nothing new.
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
  const refusals = new RefusalLog(logger, 'authorization requests refused: too many from one address');
  return async function guardAuthorize(ctx: Context, _params: unknown, next: Next): Promise<void> {
    if (ctx.method !== 'GET' && ctx.method !== 'POST') return next();
    const declared = ctx.method === 'POST' ? ctx.request.length ?? 0 : 0;
    if (ctx.querystring.length > limits.queryBytes || declared > limits.queryBytes) {
      // Nothing of the request is read, its ui_locales neither: the browser's language.
      const locale = localeOf(ctx, '');
      sendPage(ctx, oauthErrorPage('invalid_request', locale.t.requestTooLarge(limits.queryBytes), locale, true), 400);
      return;
    }
    // A POST is the GET with its parameters in the body: it becomes that GET (counted then).
    if (ctx.method === 'POST') return answerPostWithGet(ctx, limits.queryBytes);
    if (limits.perAddress) {
      const address = addressOf(ctx);
      const key = `authz:${address}`;
      const [count] = await counters.increment([key], limits.perAddress.windowSeconds);
      if (count!.count > limits.perAddress.max) {
        const wait = Math.max(1, count!.resetsIn);
        refusals.refused(key, wait, { address, requests: count!.count });
        onRefused();
        ctx.set('Retry-After', String(wait));
        const locale = localeOf(ctx);
        sendPage(ctx, errorPage(locale.t.tooManyRequests(wait), locale.t.waitHeading, locale), 429);
        return;
      }
    }
    await next();
  };
}
