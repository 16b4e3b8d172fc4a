import type { Grant, GrantSetup, TokenRequestRule } from './grant.js';
import { alignAnswerScope, namedUserHooks } from './named-user.js';

/**
 * REFRESH TOKEN (RFC 6749 §6): a confidential app gets a new access token for a user without her.
 *
 * - Who gets one: confidential apps only (a public app cannot keep one from whoever reads its
 *   storage), with every code exchange whatever the scopes; machine clients never.
 * - Parameters: `refresh_token`; an optional `scope` that narrows. `code`, `code_verifier` or
 *   `redirect_uri` make a wrong parameter set.
 * - Client authentication: HTTP Basic only.
 * - Rotation: a refresh token lives one hour and is used once; each use gives a new one. A spent
 *   one presented again is a retry (answered again) within the reuse window and while its
 *   successor is unused, else a reuse that ends the grant (src/engine/single-use.ts).
 * - The grant lives on while it is used: a refresh extends it (policies/lifetimes.ts,
 *   grantNeedsExtending); one nobody refreshes for `grantIdleSeconds` ends.
 * - Scopes, lifetime and claims: those of a named-user token, re-read at each refresh
 *   (src/grants/named-user.ts).
 */
export const refreshToken: TokenRequestRule = {
  grantType: 'refresh_token',
  clientAuthentication: 'basic',
  required: ['refresh_token'],
  requiredOfPublicClients: [],
  accepted: ['scope', 'client_id', 'resource'],
  foreign: ['code', 'code_verifier', 'redirect_uri'],
  normalize: dropOfflineAccess,
};

/**
 * `offline_access` in a refresh request's `scope` asks for what the refresh token in hand already
 * is: it is dropped before the engine compares the scope with the token's (RFC 6749 §6: the scope
 * must not exceed the original grant, and offline access is what a refresh token means). Clients
 * such as Authlib send the original request's scope again at every refresh; without this, a scope
 * that asked for offline_access would make each refresh invalid_scope, since grants keep no
 * offline_access scope of their own. A scope of only `offline_access` becomes no scope: all of it.
 */
function dropOfflineAccess(params: Map<string, string>): boolean {
  const scope = params.get('scope');
  if (scope === undefined) return false;
  const scopes = scope.split(' ');
  if (!scopes.includes('offline_access')) return false;
  const kept = scopes.filter((each) => each !== 'offline_access' && each !== '');
  if (kept.length) params.set('scope', kept.join(' '));
  else params.delete('scope');
  return true;
}

/** The grant, whole (see above): a named user's, its grant extended after its answer. */
export function refreshTokenGrant(setup: GrantSetup): Grant {
  return {
    ...refreshToken,
    ...namedUserHooks(setup),
    async afterIssue(ctx) {
      await setup.singleUse.extendRefreshedGrant(ctx as Parameters<GrantSetup['singleUse']['extendRefreshedGrant']>[0], setup.grantIdleSeconds);
      alignAnswerScope(ctx);
    },
  };
}

/** Whether a client gets refresh tokens: a confidential app allowed the grant (public apps and machine clients never). */
export function issuesRefreshTokens(client: { clientAuthMethod?: string | undefined; grantTypeAllowed(type: string): boolean }): boolean {
  return client.clientAuthMethod !== 'none' && client.grantTypeAllowed('refresh_token');
}
