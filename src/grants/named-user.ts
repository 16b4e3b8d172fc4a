import type { ApiCatalog } from '../../policies/catalog.js';
import { checkAppForUser, type AppOwner } from '../../policies/consent.js';
import { MANAGEMENT_SCOPE } from '../../policies/management.js';
import { namedUserAccessTokenSeconds } from '../../policies/lifetimes.js';
import { namedUserResourceScopes } from '../../policies/scopes.js';
import { mayCarryManagement } from '../../policies/second-factor-rule.js';
import { tenantPolicy, type TenantPolicy } from '../../policies/tenant-policy.js';
import { accountOf } from '../engine/accounts.js';
import { engineAppOwner } from '../engine/client-directory.js';
import type { EngineGrantHooks } from '../engine/grants.js';
import { existingTokenRequest, tokenRequestState } from '../engine/token-request.js';
import type { GrantSetup } from './grant.js';

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
 *   only what she may receive (namedUserHooks, below): the consent page lists nothing else,
 *   and her grant records nothing else.
 * - The app must still be one she may authorize (policies/consent.ts), at every token issue.
 * - The management right only after a second factor where her tenant's rule makes her have one
 *   (policies/second-factor-rule.ts): at the code exchange and at every refresh, a sign-in whose
 *   `amr` lacks `mfa` gives a token without it (the management API then answers 403
 *   insufficient_scope), whatever her consent holds. The authorization request still lists it, so
 *   that her consent records it once and a sign-in with a second factor gets it without asking.
 * - Lifetime: her tenant's `accessTokenTtl`, else `namedUserAccessTokenTtl`; at most
 *   `managementAccessTokenTtl` when the token carries the management right (policies/lifetimes.ts).
 * - Claims: `sub` is the user, `client_id` the app, `tenant` the user's tenant, and how she signed
 *   in: `acr`, `amr` and `auth_time` (RFC 9068 §2.2.1), those of the sign-in that gave the code, kept
 *   through every refresh (policies/authentication-context.ts), so that an API can ask for a second
 *   factor or a recent sign-in (the resource-server kit). The ID token carries the same three and
 *   the identity claims its OIDC scopes allow (IDENTITY_CLAIMS, policies/scopes.ts).
 * - The access token's `scope` lists its API scopes and, first, the OIDC scopes of the request that
 *   the user allowed (`openid`, `profile`, `email`): what userinfo may answer with this token. The
 *   grant is the user's consent to the app, shared by her sign-ins; a token reads what its own
 *   request asked for, not everything she ever allowed.
 */

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

/** How a user signed in, as the code or refresh token of a request recorded it (the engine's names). */
export interface SignInRecord {
  acr?: unknown;
  amr?: unknown;
  authTime?: unknown;
}

/** The claims a named-user access token carries besides the standard ones: her tenant, and how and when she signed in. */
export type NamedUserClaims = {
  tenant: string;
  acr?: string;
  amr?: string[];
  auth_time?: number;
};

/** The claims a named-user access token carries besides the standard ones (each sign-in claim only when recorded). */
export function namedUserClaims(user: { tenant: string }, signIn: SignInRecord = {}): NamedUserClaims {
  const { acr, amr, authTime } = signIn;
  return {
    tenant: user.tenant,
    ...(typeof acr === 'string' ? { acr } : {}),
    ...(Array.isArray(amr) && amr.every((method) => typeof method === 'string') ? { amr: [...amr as string[]] } : {}),
    ...(typeof authTime === 'number' ? { auth_time: authTime } : {}),
  };
}

/**
 * What the engine asks of a named-user grant (the authorization request, the code exchange, the
 * refresh): the resource's scopes and lifetime for the user and app, her tenant as a claim, and the
 * access token's `scope` (the OIDC scopes its request was allowed, then its API scopes), which is
 * also the answer's (RFC 6749 §5.1: `alignAnswerScope`).
 */
export function namedUserHooks(setup: GrantSetup): EngineGrantHooks {
  const { catalog, audience, accessTokenFormat, accounts, namedUserAccessTokenTtl } = setup;
  const policyOf = (tenant: string | undefined) => tenantPolicy(setup.tenantPolicy, tenant);
  /** Whether the sign-in behind this code or refresh token lets a token of `account` carry the management right. */
  async function managementAfterSignIn(ctx: Parameters<EngineGrantHooks['resource']>[0], account: NamedUser): Promise<boolean> {
    const entities = ctx.oidc.entities as { AuthorizationCode?: SignInRecord; RefreshToken?: SignInRecord };
    const signIn = entities.AuthorizationCode ?? entities.RefreshToken;
    const { secondFactor } = await setup.secondFactorRules.of(account.tenant);
    return mayCarryManagement(secondFactor, account, signIn?.amr);
  }
  return {
    async resource(ctx, client) {
      // The engine keeps the consented scopes that this list holds, so a scope the user does not
      // hold (now: permissions can change) never reaches a token.
      const account = accountOf(ctx);
      const extras = client as unknown as { first_party?: unknown };
      const app = { clientId: client.clientId, firstParty: extras.first_party === true, ...engineAppOwner(client) };
      // The authorization request once the browser's user is known (the resumption after
      // sign-in, or a session): the engine asks consent for this list, so it holds only what
      // she may receive. A scope she cannot have is then neither on her consent page nor in
      // her grant, and gaining it later asks her (she allows the management right on the
      // consent page, policies/management.ts). The consent rule's app check comes next, in
      // loadExistingGrant (access_denied).
      const sessionAccountId = account ? undefined : ctx.oidc.session?.accountId;
      const signedIn = sessionAccountId && accounts ? await accounts.findAccount(sessionAccountId) : undefined;
      if (signedIn) {
        const scopes = namedUserResourceScopes(catalog, signedIn, await policyOf(signedIn.tenant), app.firstParty);
        return { scope: scopes.join(' '), audience, accessTokenTTL: namedUserAccessTokenTtl, ...accessTokenFormat };
      }
      const policy = account ? await policyOf(account.tenant) : {};
      const { scopes, lifetime } = namedUserResource(catalog, app, account, policy, namedUserAccessTokenTtl);
      const granted = account && scopes.includes(MANAGEMENT_SCOPE) && !(await managementAfterSignIn(ctx, account)) ? scopes.filter((scope) => scope !== MANAGEMENT_SCOPE) : scopes;
      return { scope: granted.join(' '), audience, accessTokenTTL: lifetime, ...accessTokenFormat };
    },
    async claims(ctx, token) {
      const user = accountOf(ctx);
      if (token.kind !== 'AccessToken' || !user) return undefined;
      // The code being exchanged, or the refresh token (which keeps the code's sign-in).
      const entities = ctx.oidc.entities as { AuthorizationCode?: SignInRecord; RefreshToken?: SignInRecord };
      return namedUserClaims(user, entities.AuthorizationCode ?? entities.RefreshToken);
    },
    customizeJwt(ctx, token, jwt) {
      if (!token.accountId) return;
      const entities = ctx.oidc.entities as { AuthorizationCode?: { scope?: string }; RefreshToken?: { scope?: string }; Grant?: { getOIDCScope(): string } };
      const requested = ctx.oidc.params?.scope ?? entities.AuthorizationCode?.scope ?? entities.RefreshToken?.scope ?? '';
      const allowed = entities.Grant?.getOIDCScope() ?? '';
      const payload = jwt.payload as { scope?: string };
      const scope = namedUserTokenScope(payload.scope?.split(' ') ?? [], new Set(String(requested).split(' ')), new Set(allowed.split(' ')));
      payload.scope = scope.join(' ') || undefined;
      tokenRequestState(ctx.state as Record<PropertyKey, unknown>).scope = payload.scope;
    },
  };
}

/**
 * The token response's `scope` made the access token's own (RFC 6749 §5.1): a named-user token's
 * scope also names the OIDC scopes it may use at userinfo, which the engine's answer leaves out.
 */
export function alignAnswerScope(ctx: { state: Record<PropertyKey, unknown>; body: unknown }): void {
  const scope = existingTokenRequest(ctx.state)?.scope;
  const body = ctx.body as { scope?: unknown } | undefined;
  if (typeof scope === 'string' && body && typeof body === 'object') body.scope = scope;
}
