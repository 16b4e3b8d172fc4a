import type { ApiCatalog } from '../../policies/catalog.js';
import { checkAppForUser, type AppOwner } from '../../policies/consent.js';
import { MANAGEMENT_SCOPE } from '../../policies/management.js';
import { namedUserAccessTokenSeconds } from '../../policies/lifetimes.js';
import { namedUserResourceScopes } from '../../policies/scopes.js';
import type { TenantPolicy } from '../../policies/tenant-policy.js';

/**
 * NAMED-USER TOKENS: what the authorization-code and refresh-token grants issue for a user, an app
 * and the user's tenant.
 *
 * - Scopes at the resource: those the user consented to that she holds now, that her tenant allows,
 *   and the management right when the app is first-party and she holds integration setup
 *   (policies/scopes.ts, policies/management.ts). Permissions change: a refresh re-reads them, so a
 *   scope she lost never reaches a new token.
 * - Before she is known (the authorization request before sign-in), the upper bound is every API
 *   scope, and the management right for a first-party app; once her browser's session names her,
 *   only what she may receive (src/engine/configuration.ts): the consent page lists nothing else,
 *   and her grant records nothing else.
 * - The app must still be one she may authorize (policies/consent.ts), at every token issue.
 * - Lifetime: her tenant's `accessTokenTtl`, else `namedUserAccessTokenTtl`; at most
 *   `managementAccessTokenTtl` when the token carries the management right (policies/lifetimes.ts).
 * - Claims: `sub` is the user, `client_id` the app, `tenant` the user's tenant; the ID token carries
 *   the identity claims its OIDC scopes allow (IDENTITY_CLAIMS).
 * - The access token's `scope` lists its API scopes and, first, the OIDC scopes of the request that
 *   the user allowed (`openid`, `profile`, `email`): what userinfo may answer with this token. The
 *   grant is the user's consent to the app, shared by her sign-ins; a token reads what its own
 *   request asked for, not everything she ever allowed.
 */

/** Identity claims per OIDC scope, as the ID token carries them. */
export const IDENTITY_CLAIMS: Readonly<Record<string, readonly string[]>> = {
  openid: ['sub'],
  profile: ['name', 'given_name', 'family_name', 'preferred_username'],
  email: ['email', 'email_verified'],
};

/** The user a named-user token is for, as this rule reads her. */
export interface NamedUser {
  tenant: string;
  scopes?: readonly string[] | undefined;
  permissions?: readonly string[] | undefined;
}

/** The app asking, as this rule reads it. */
export interface NamedUserApp extends AppOwner {
  firstParty: boolean;
}

/** What the resource may grant a named-user token, and for how long. */
export interface NamedUserResource {
  scopes: string[];
  /** Seconds, before the management cap (applied on the scopes actually granted). */
  lifetime: number;
}

/**
 * The scopes a named-user token may carry at the resource, and its lifetime.
 * @param user the signed-in user, or undefined during the authorization request before sign-in.
 * @param policy the user's tenant policy (empty before sign-in).
 * @throws InvalidGrant when the app may no longer act for the user (policies/consent.ts).
 */
export function namedUserResource(
  catalog: ApiCatalog,
  app: NamedUserApp,
  user: NamedUser | undefined,
  policy: TenantPolicy,
  serverLifetime: number,
): NamedUserResource {
  if (!user) {
    return { scopes: app.firstParty ? [...catalog.scopes, MANAGEMENT_SCOPE] : [...catalog.scopes], lifetime: serverLifetime };
  }
  checkAppForUser(app, user.tenant, policy, 'token');
  return {
    scopes: namedUserResourceScopes(catalog, user, policy, app.firstParty),
    lifetime: namedUserAccessTokenSeconds(policy.accessTokenTtl, serverLifetime),
  };
}

/** The OIDC scopes an access token may carry: those userinfo answers for. */
const USERINFO_SCOPES: readonly string[] = ['openid', 'profile', 'email'];

/**
 * The `scope` of a named-user access token: the OIDC scopes both requested (`requested`: the code's
 * or refresh token's scopes, or the narrower `scope` of a refresh) and allowed (`allowedOidc`: the
 * grant's), then its API scopes.
 */
export function namedUserTokenScope(resourceScopes: readonly string[], requested: ReadonlySet<string>, allowedOidc: ReadonlySet<string>): string[] {
  const oidc = USERINFO_SCOPES.filter((scope) => requested.has(scope) && allowedOidc.has(scope));
  return [...oidc, ...resourceScopes.filter((scope) => !oidc.includes(scope))];
}

/** The claims a named-user access token carries besides the standard ones. */
export function namedUserClaims(user: { tenant: string }): { tenant: string } {
  return { tenant: user.tenant };
}
