import type { Context } from 'koa';
import type { Counters } from '../../adapters/types.js';
import type { Logger } from '../logger.js';
import { WindowLimits } from './window-limits.js';
import { errorPage, oauthErrorPage, sendPage } from '../pages/html.js';
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
