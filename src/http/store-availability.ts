import type { Context, Next } from 'koa';
import { StoreUnavailable, type Store } from '../../adapters/types.js';
import { redirectUriMatches } from '../../policies/redirect-uris.js';
import { TemporarilyUnavailable } from '../../policies/errors.js';
import type { Logger } from '../logger.js';
import { oauthErrorPage, sendPage } from '../pages/html.js';
import { localeOf } from '../i18n/localizer.js';
import { undoConsumptions } from '../engine/single-use.js';

/** Seconds a client is told to wait when the store is down (Retry-After). */
export const STORE_RETRY_AFTER_SECONDS = 1;

function retryLater(ctx: Context): void {
  if (!ctx.response.get('Retry-After')) ctx.set('Retry-After', String(STORE_RETRY_AFTER_SECONDS));
}

/** What the authorization endpoint answers while the store is away (a browser is waiting). */
export interface AuthorizeWhileDown {
  /** Whether a request is one of the authorization endpoint. */
  isAuthorize(ctx: Context): boolean;
  issuer: string;
  /** The redirect URIs of a client, as last seen (engine/client-cache.ts); undefined if unknown. */
  redirectUris(clientId: string): readonly string[] | undefined;
}

const UNAVAILABLE = 'the service is temporarily unavailable, try again shortly';

/**
 * A browser at the authorization endpoint while the store is away: back to the app with
 * `error=temporarily_unavailable` (RFC 6749 §4.1.2.1), `state` and `iss`, when the client and its
 * redirect URI are known (exactly as registered) from what was last seen of it; an error page
 * (503) otherwise, never JSON. False when `ctx` is not such a request.
 */
function answerAuthorize(ctx: Context, setup: AuthorizeWhileDown): boolean {
  if (!setup.isAuthorize(ctx)) return false;
  const { client_id: clientId, redirect_uri: redirectUri, state } = ctx.query;
  const registered = typeof clientId === 'string' ? setup.redirectUris(clientId) : undefined;
  if (ctx.method === 'GET' && registered && redirectUriMatches(registered, redirectUri)) {
    const target = new URL(redirectUri as string);
    target.searchParams.append('error', 'temporarily_unavailable');
    target.searchParams.append('error_description', UNAVAILABLE);
    if (typeof state === 'string') target.searchParams.append('state', state);
    target.searchParams.append('iss', setup.issuer);
    ctx.redirect(target.href);
    ctx.status = 303;
  } else {
    retryLater(ctx);
    const locale = localeOf(ctx);
    sendPage(ctx, oauthErrorPage('temporarily_unavailable', locale.t.serviceUnavailable, locale, true), 503);
  }
  return true;
}

/**
 * Refuses at once, with 503 temporarily_unavailable, the requests that need the store while it is
 * known to be down, instead of letting them wait for a connection: no token is issued that could
 * not be recorded, and no caller hangs. Requests answered from memory (JWKS, discovery, health)
 * pass. Every 503 gets a Retry-After, and a code or refresh token the failed request consumed is
 * given back (engine/single-use.ts), so that the retry is not a replay. A browser at the
 * authorization endpoint gets a redirect or a page instead (answerAuthorize), whether the store
 * was known to be down or failed while the request ran.
 */
export function refuseWhileStoreDown(store: Store, needsStore: (ctx: Context) => boolean, logger: Logger, authorize: AuthorizeWhileDown) {
  return async function storeAvailability(ctx: Context, next: Next): Promise<void> {
    try {
      if (!store.available && needsStore(ctx)) throw new TemporarilyUnavailable();
      await next();
    } catch (error) {
      if (!(error instanceof TemporarilyUnavailable || error instanceof StoreUnavailable)) throw error;
      // Our routes' store failures; the engine renders its own (StoreUnavailable is shaped for it).
      if (error instanceof StoreUnavailable) logger.warn('store unavailable', { method: ctx.method, path: ctx.path, reason: error.reason });
      await undoConsumptions(ctx.state);
      if (answerAuthorize(ctx, authorize)) return;
      retryLater(ctx);
      throw error instanceof StoreUnavailable ? new TemporarilyUnavailable() : error;
    }
    if (ctx.status === 503) {
      await undoConsumptions(ctx.state);
      // The engine answered the store's failure itself: with a page or JSON at /authorize too.
      if (answerAuthorize(ctx, authorize)) return;
      retryLater(ctx);
    }
  };
}
