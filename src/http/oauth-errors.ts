import type { Context, Next } from 'koa';
import type { Logger } from '../logger.js';
import { oauthDescription, OAuthError, ServerError } from '../../policies/errors.js';

function challenge(issuer: string, error: string): string {
  return `Basic realm="${issuer}", error="${error}"`;
}

/**
 * Renders every error of our routes (and of the engine's, which it renders itself) as OAuth JSON:
 * `{ error, error_description }`, `Cache-Control: no-store`, and for `invalid_client` a 401 with a
 * WWW-Authenticate challenge (RFC 6749 §5.2). Anything unexpected is a logged 500 `server_error`
 * whose description says nothing of the cause.
 */
export function oauthErrors(issuer: string, logger: Logger) {
  return async function renderOAuthErrors(ctx: Context, next: Next): Promise<void> {
    try {
      await next();
    } catch (caught) {
      const error = caught instanceof OAuthError ? caught : new ServerError();
      if (!(caught instanceof OAuthError)) {
        logger.error('request failed', {
          method: ctx.method,
          path: ctx.path,
          error: caught instanceof Error ? caught.name : typeof caught,
        });
      }
      ctx.status = error.status;
      ctx.body = error.toJSON();
      ctx.set(error.headers);
      ctx.set('Cache-Control', 'no-store');
      ctx.set('Pragma', 'no-cache');
    }
    const body = ctx.body as { error?: unknown; error_description?: unknown } | undefined;
    if (ctx.status === 401 && body?.error === 'invalid_client' && !ctx.response.get('WWW-Authenticate')) {
      ctx.set('WWW-Authenticate', challenge(issuer, 'invalid_client'));
    }
    // The engine's own errors too: their descriptions may quote the request (an Origin, a path).
    if (body && typeof body === 'object' && typeof body.error_description === 'string') body.error_description = oauthDescription(body.error_description);
    if (ctx.status >= 300 && ctx.status < 400) keepRedirectedErrorInCharset(ctx);
  };
}

/** An error sent back to the app in a redirect (RFC 6749 §4.1.2.1): its description in the charset too. */
function keepRedirectedErrorInCharset(ctx: Context): void {
  const location = ctx.response.get('Location');
  if (!location.includes('error_description=')) return;
  const url = URL.parse(location);
  const description = url?.searchParams.get('error_description');
  if (!url || description === null || description === undefined || oauthDescription(description) === description) return;
  url.searchParams.set('error_description', oauthDescription(description));
  ctx.set('Location', url.href);
}
