import { MANAGEMENT_SCOPE } from './management.js';

/**
 * LIFETIMES: how long each thing the server issues or keeps lives, in seconds, in one place. The
 * configurable ones are stated here once, as bounds and a default (LifetimeBounds): the option
 * schema (src/options.ts) checks them and the option reference (docs/configuration.md) shows them.
 *
 * - A machine token (client_credentials) lives one hour, and that is not configurable.
 * - A named-user access token lives `namedUserAccessTokenTtl` (NAMED_USER_ACCESS_TOKEN: the short
 *   default because a JWT already out lives until it expires even after its consent is revoked),
 *   or what the user's tenant policy says within the same bounds; one that carries the management
 *   right lives at most `managementAccessTokenTtl` (MANAGEMENT_ACCESS_TOKEN).
 * - An authorization code lives 5 minutes (60 s for a client under the high-security profile,
 *   policies/high-security.ts); a refresh token one hour, rolling (each refresh gives a
 *   new one); an ID token one hour; a pending sign-in 10 minutes.
 * - A sign-in session (the browser's, here) lives `sessionTtl` (SESSION) unless the user signs
 *   out; `prompt=login` and `max_age` ask for the password sooner.
 * - Kept for a moment only: a portal sign-in or a secret waiting for its page (10 minutes), an
 *   authenticator app's enrolment waiting for its first code (10 minutes), a passkey ceremony's
 *   challenge (5 minutes, used once), a
 *   sign-out's carried parameters (a minute), what an instance remembers of a client (10 minutes).
 * - A portal user's sign-in is recent enough for a destructive action for 5 minutes; after that
 *   the portal asks for a sign-in again (PORTAL_REAUTH_SECONDS).
 * - A grant nobody refreshed for `grantIdleSeconds` ends (a refresh token lifetime plus a session
 *   lifetime by default); a grant is never shorter-lived than a refresh token of it.
 */

/** An authenticator app's enrolment waiting for its first code: 10 minutes (time to scan and type). */
export const TOTP_ENROLMENT_SECONDS = 600;
/** An enrolment is shown again (the sign-in's page reloaded) only while it has this long left: else a new one, not one that ends as she types. */
export const TOTP_ENROLMENT_SHOWN_AGAIN_SECONDS = 60;
/** A passkey ceremony's challenge (registration or sign-in): 5 minutes, the browser's own timeout. */
export const PASSKEY_CHALLENGE_SECONDS = 300;
/** A machine token's lifetime: one hour, not configurable. */
export const CLIENT_CREDENTIALS_ACCESS_TOKEN_SECONDS = 3600;
/** An authorization code: 5 minutes (short: it travels in a URL). */
export const AUTHORIZATION_CODE_SECONDS = 300;
/** An authorization code of a client under the high-security profile: at most 60 s (what that profile asks). */
export const HIGH_SECURITY_AUTHORIZATION_CODE_SECONDS = 60;
/** A refresh token: one hour, and each refresh gives a new one. */
export const REFRESH_TOKEN_SECONDS = 3600;
/** An ID token. */
export const ID_TOKEN_SECONDS = 3600;
/** A pending sign-in (the engine's interaction). */
export const INTERACTION_SECONDS = 600;
/** A sign-in session (the browser's, at the authorization server), by default. */
export const SESSION_SECONDS = 86_400;
/** A portal session without use (its tokens are refreshed within it). */
export const PORTAL_SESSION_SECONDS = 30 * 60;
/** A portal sign-in under way, from the portal's redirect to its callback. */
export const PORTAL_SIGN_IN_SECONDS = 600;
/** A secret the portal holds for its one showing (shown once, then gone, or gone after this). */
export const PORTAL_SECRET_SECONDS = 600;
/**
 * How recent a portal user's last sign-in must be for a destructive action (delete, a new secret,
 * a client type changed, a factor removed or replaced): 5 minutes. Long enough that a user who
 * just signed in (or just signed in again for one action) is not asked twice for the next ones;
 * short enough that a session left open or taken over cannot destroy anything without the password
 * (and second factor) being given again.
 */
export const PORTAL_REAUTH_SECONDS = 300;
/** The cookie that remembers a browser which signed in as a user before (the sign-in throttle trusts it). */
export const KNOWN_DEVICE_SECONDS = 180 * 86_400;
/** The cookie that carries a sign-out POST's parameters to its GET: one redirect's time. */
export const SIGN_OUT_CARRIED_SECONDS = 60;
/**
 * How long the way back from a provider's sign-out (its `state`, sealed) is good: the time a
 * person takes at the provider's sign-out page, if it shows one.
 */
export const UPSTREAM_SIGN_OUT_SECONDS = 15 * 60;
/**
 * How long a sign-in at a tenant's provider may take, from our redirect to its callback (the
 * browser binding's cookie lives as long): the time a person takes at the provider's sign-in.
 */
export const FEDERATION_MAX_SECONDS = 15 * 60;
/** How long an instance trusts the redirect URIs it read of a client, unless told it changed. */
export const CLIENT_CACHE_SECONDS = 600;
/** The window in which repeated refusals of one kind count as one audit event. */
export const REFUSAL_WINDOW_SECONDS = 300;

/** A configurable lifetime: its bounds and its default. */
export interface LifetimeBounds {
  min: number;
  max: number;
  default: number;
}

/** `namedUserAccessTokenTtl`, and a tenant policy's `accessTokenTtl`. */
export const NAMED_USER_ACCESS_TOKEN: LifetimeBounds = { min: 300, max: 3600, default: 300 };
/** The longest a named-user access token can live (server or tenant lifetime): how long a revocation of its chain is kept. */
export const MAX_ACCESS_TOKEN_SECONDS = NAMED_USER_ACCESS_TOKEN.max;
/** `managementAccessTokenTtl`. */
export const MANAGEMENT_ACCESS_TOKEN: LifetimeBounds = { min: 60, max: 3600, default: 300 };
/** `grantIdleSeconds`: never under a refresh token's lifetime. */
export const GRANT_IDLE: LifetimeBounds = { min: REFRESH_TOKEN_SECONDS, max: 366 * 86_400, default: REFRESH_TOKEN_SECONDS + SESSION_SECONDS };
/** `sessionTtl`: how long a browser stays signed in at the authorization server without signing out. */
export const SESSION: LifetimeBounds = { min: 300, max: 30 * 86_400, default: SESSION_SECONDS };
/** `refreshTokenReuseWindowSeconds`. */
export const REFRESH_TOKEN_REUSE_WINDOW: LifetimeBounds = { min: 0, max: 60, default: 5 };

/** A named-user access token's lifetime before the management cap: the tenant's, else the server's. */
export function namedUserAccessTokenSeconds(tenantTtl: number | undefined, serverTtl: number): number {
  return tenantTtl ?? serverTtl;
}

/**
 * The lifetime of an access token with these scopes: `ttl`, but at most `managementTtl` when it
 * carries the management right (a token that can mint credentials must not live long).
 */
export function accessTokenSeconds(scopes: Iterable<string>, ttl: number, managementTtl: number): number {
  for (const scope of scopes) if (scope === MANAGEMENT_SCOPE) return Math.min(ttl, managementTtl);
  return ttl;
}

/**
 * Whether a grant in use must be saved again with a whole lifetime: once its lifetime has run down
 * by a refresh token's, or when less than one is left, so that a refresh token issued now never
 * outlives its grant, and the grant is not rewritten at every refresh.
 */
export function grantNeedsExtending(secondsLeft: number, grantIdleSeconds: number): boolean {
  return secondsLeft < Math.max(REFRESH_TOKEN_SECONDS, grantIdleSeconds - REFRESH_TOKEN_SECONDS);
}
