import type { Context, Next } from 'koa';
import type { Counters } from '../../../adapters/types.js';
import { checkClientAuthentication } from '../../../policies/client-authentication.js';
import { TooManyRequests } from '../../../policies/errors.js';
import { basicCredentialsOf, readForm } from '../../http/oauth-request.js';
import type { AuthorizeLimits } from '../../limits/browser-requests.js';
import { WindowLimits } from '../../limits/window-limits.js';
import type { Logger } from '../../logger.js';
import { replaceBody } from '../token/token-endpoint.js';

/**
 * In front of the engine's pushed authorization request endpoint (RFC 9126), which stores the
 * request for 60 seconds and answers its `request_uri`: the guards of the authorization endpoint
 * it stands for, in an app's words (JSON errors, not pages: the caller is the app's back end).
 *
 * - Requests per address: `rateLimits.authorize`, counted apart from `/authorize` (counter `par`),
 *   each push counted before its body is read. A public app's push is made by anyone who knows its
 *   client ID and stores a request: this limit, and the 60 s lifetime, bound what that costs.
 * - Size: the body at most `limits.authorizeQueryBytes`, as the query of `/authorize` (413).
 * - Client authentication as at the token endpoint (policies/client-authentication.ts): Basic for
 *   apps with a secret, a client assertion for private_key_jwt apps (never both), a public app by
 *   its `client_id` in the body; a secret in the body refused. The engine then checks the secret
 *   or the assertion (RFC 9126 §2: the client authenticates as at the token endpoint; an
 *   assertion's audience may be the issuer, the token endpoint or this endpoint, its `jti` is used
 *   once in the store the token endpoint shares), behind the failed-authentication limit the
 *   caller wraps this in.
 * The request's own rules (redirect URI, scopes, PKCE, state) are the engine's checks of an
 * authorization request, the same code as `/authorize`; the tenant rules apply when the request is
 * used, at the sign-in and consent pages, as for any authorization request.
 */
export function pushedAuthorizationGuard(
  limits: AuthorizeLimits,
  counters: Counters,
  addressOf: (ctx: Context) => string,
  logger: Logger,
  onRefused: () => void = () => {},
) {
  const windows = new WindowLimits(counters, logger, 'pushed authorization requests refused: too many from one address', onRefused);
  return async function guardPushedAuthorization(ctx: Context, next: Next): Promise<void> {
    if (limits.perAddress) {
      const address = addressOf(ctx);
      const [counted] = await windows.count([{ key: `par:${address}`, limit: limits.perAddress }]);
      if (counted!.over) {
        const { wait } = windows.refuse([counted!], counted!.key, { address, requests: counted!.count.count });
        throw new TooManyRequests(wait, `too many pushed authorization requests; retry after ${wait} s`);
      }
    }
    const form = await readForm(ctx, limits.queryBytes);
    checkClientAuthentication('basic-or-none', () => basicCredentialsOf(ctx), form.params);
    replaceBody(ctx, form);
    // RFC 9126 §2.3: its errors are JSON, as the token endpoint's; the engine would render HTML to a
    // caller that prefers it.
    ctx.req.headers.accept = 'application/json';
    await next();
  };
}
