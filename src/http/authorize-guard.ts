import type { Context, Next } from 'koa';
import type { Counters } from '../../adapters/types.js';
import type { Logger } from '../logger.js';
import { WindowLimits } from '../limits/window-limits.js';
import { errorPage, oauthErrorPage, sendPage } from '../pages/html.js';
import { answerPostWithGet } from './post-as-get.js';
import { localeOf } from '../i18n/localizer.js';

/** The limits of authorization requests (options `limits.authorizeQueryBytes`, `rateLimits.authorize`). */
export interface AuthorizeLimits {
  queryBytes: number;
  perAddress: { max: number; windowSeconds: number } | false;
}

/**
 * The guard of an endpoint that anyone's browser can call without credentials and that may store
 * something for it (the authorization endpoint, the end-session endpoint):
 *
 * - a request larger than `queryBytes` (query string, or declared form body of a POST) is refused
 *   at once with an error page (400), before anything is parsed or stored: no redirect, since
 *   nothing of it is read;
 * - each address may make `perAddress.max` GET requests per window, counted in the store under
 *   `counter` (shared by every instance); past that, a 429 page with `Retry-After` in the user's
 *   words. A POST is counted as the GET it becomes.
 *
 * Answers true when it has answered the request itself (refused it).
 */
export function browserRequestGuard(
  limits: AuthorizeLimits,
  counter: string,
  counters: Counters,
  addressOf: (ctx: Context) => string,
  logger: Logger,
  onRefused: () => void = () => {},
): (ctx: Context) => Promise<boolean> {
  const windows = new WindowLimits(counters, logger, `${counter === 'authz' ? 'authorization' : 'sign-out'} requests refused: too many from one address`, onRefused);
  return async function guard(ctx: Context): Promise<boolean> {
    const declared = ctx.method === 'POST' ? ctx.request.length ?? 0 : 0;
    if (ctx.querystring.length > limits.queryBytes || declared > limits.queryBytes) {
      // Nothing of the request is read, its ui_locales neither: the browser's language.
      const locale = localeOf(ctx, '');
      sendPage(ctx, oauthErrorPage('invalid_request', locale.t.requestTooLarge(limits.queryBytes), locale, true), 400);
      return true;
    }
    if (ctx.method !== 'GET' || !limits.perAddress) return false;
    const address = addressOf(ctx);
    const [counted] = await windows.count([{ key: `${counter}:${address}`, limit: limits.perAddress }]);
    if (!counted!.over) return false;
    const { wait } = windows.refuse([counted!], counted!.key, { address, requests: counted!.count.count });
    ctx.set('Retry-After', String(wait));
    const locale = localeOf(ctx);
    sendPage(ctx, errorPage(locale.t.tooManyRequests(wait), locale.t.waitHeading, locale), 429);
    return true;
  };
}

/**
 * In front of the engine's authorization endpoint, which stores a pending sign-in (an interaction
 * record) for each request: the browser request guard (above), and a POST answered with a 303 to
 * the same request as a GET (src/http/post-as-get.ts). The resumption of a sign-in
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
