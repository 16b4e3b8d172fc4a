import type { Grant, GrantSetup, TokenRequestRule } from './grant.js';
import { alignAnswerScope, namedUserHooks } from './named-user.js';

/**
 * AUTHORIZATION CODE (RFC 6749 §4.1, with PKCE, RFC 7636): an app exchanges the code a user's
 * consent gave it for a named-user access token (and an ID token, and for a confidential app a
 * refresh token).
 *
 * - Parameters: `code` and `redirect_uri` always (the URI must be the one of the authorization
 *   request, exactly); `code_verifier` always for a public app, and for a confidential one whose
 *   PKCE is on (the engine refuses a missing or wrong verifier with invalid_grant; policies/pkce.ts).
 *   `refresh_token` makes a wrong parameter set.
 * - Client authentication: HTTP Basic for a confidential app; `client_id` alone for a public app.
 * - A code is used once, within its lifetime (policies/lifetimes.ts): a second use ends what the code
 *   issued (src/engine/single-use.ts tells a replay from a retry). The code is consumed and
 *   confirmed (a replay from then on) in one store step with the exchange's first refresh token,
 *   or as the answer goes when there is none; an exchange refused after the engine's checks uses
 *   the code up all the same.
 * - Scopes, lifetime and claims: those of a named-user token (src/grants/named-user.ts).
 * - A refresh token comes with it for a confidential app only (src/grants/refresh-token.ts).
 */
export const authorizationCode: TokenRequestRule = {
  grantType: 'authorization_code',
  clientAuthentication: 'basic-or-none',
  required: ['code', 'redirect_uri'],
  requiredOfPublicClients: ['code_verifier'],
  accepted: ['code_verifier', 'client_id', 'resource'],
  foreign: ['refresh_token'],
};

/** The grant, whole (see above): a named user's, the code consumed with its answer or its refusal. */
export function authorizationCodeGrant(setup: GrantSetup): Grant {
  return {
    ...authorizationCode,
    ...namedUserHooks(setup),
    async afterIssue(ctx) {
      await setup.singleUse.confirmCodes(ctx.state);
      alignAnswerScope(ctx);
    },
    async afterRefusal(ctx) {
      await setup.singleUse.refusedExchange(ctx.state);
    },
  };
}
