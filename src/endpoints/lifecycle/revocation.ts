import type Provider from 'oidc-provider';
import type { Store } from '../../../adapters/types.js';
import { InvalidRequest, TokenError } from '../../../policies/errors.js';
import type { EngineClient } from '../../engine/client-cache.js';
import { endGrant } from '../../records/end-grant.js';
import type { LiveTokens } from '../../engine/live-tokens.js';
import type { ClientAssertionCheck } from './client-assertion.js';
import { callingClient } from './calling-client.js';
import type { RouteHandler } from '../../http/router.js';
import { readForm } from '../../http/oauth-request.js';

/** A JWS in compact form: three base64url parts. Our refresh tokens are opaque (no dot). */
const COMPACT_JWS = /^[A-Za-z0-9_-]+\.[A-Za-z0-9_-]*\.[A-Za-z0-9_-]+$/;

/**
 * TOKEN REVOCATION (RFC 7009), `POST {issuer}/revoke`.
 *
 * - The client authenticates as at the token endpoint: HTTP Basic, or a public app by its
 *   `client_id` alone (§2.1); a failure is 401 invalid_client.
 * - `token` is required; `token_type_hint` is optional and not needed: the token's form tells.
 * - A refresh token of the client: its whole grant ends (the refresh token, the access tokens of
 *   the grant as userinfo and introspection see them, unused codes). The user's consent stays: her
 *   next sign-in to the app makes a new grant without asking again.
 * - An access token of the client (named-user or machine): that token is no longer live for
 *   userinfo and introspection (resource servers that verify locally honour it until `exp`).
 * - Anything else (unknown, expired, malformed, another client's) is answered 200 as well, with
 *   nothing done (§2.2): the answer tells nothing about the token.
 */
export function revocationHandler(setup: {
  provider: Provider;
  store: Store;
  liveTokens: LiveTokens;
  findClient: (clientId: string) => Promise<EngineClient | undefined>;
  bodyLimit: number;
  /** How a private_key_jwt caller's assertion is checked, and this endpoint's URL (an audience). */
  assertions?: { check: ClientAssertionCheck; endpointUrl: string };
}): RouteHandler {
  const { provider, store, liveTokens, findClient, bodyLimit, assertions } = setup;
  return async (ctx) => {
    ctx.set('Cache-Control', 'no-store');
    const { params } = await readForm(ctx, bodyLimit);
    const client = await callingClient(ctx, params, 'basic-or-none', findClient, assertions);
    const token = params.get('token');
    if (token === undefined) throw new InvalidRequest(`missing required parameter 'token'`);
    if (COMPACT_JWS.test(token)) {
      const verified = await liveTokens.verify(token).catch((error: unknown) => {
        if (error instanceof TokenError) return undefined;
        throw error;
      });
      if (verified?.clientId === client.clientId) await liveTokens.revoke(verified);
    } else {
      const refreshToken = await provider.RefreshToken.find(token);
      if (refreshToken?.clientId === client.clientId) {
        if (refreshToken.grantId) await endGrant(store, refreshToken.grantId);
        await refreshToken.destroy();
      }
    }
    ctx.status = 200;
    ctx.body = '';
  };
}
