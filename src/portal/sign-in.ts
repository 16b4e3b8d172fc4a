import type { Context } from 'koa';
import { constantTimeEqual } from '../../policies/constant-time.js';
import { PortalApiClient } from './api-client.js';
import type { PortalKit } from './kit.js';
import { done } from './outcomes.js';
import { keptAction } from './reauth.js';
import type { PortalCall, PortalRouteName } from './routes.js';
import type { PortalSession } from './sessions.js';
import { startSignIn } from './sign-in-request.js';

/*
 * SIGNING IN AND OUT: the portal is a confidential app of our own authorization endpoint (code,
 * PKCE S256, state and nonce). A sign-in under way waits in a sealed cookie of the browser that
 * started it; its callback exchanges the code over our own connection and starts a new session.
 * The access token is refreshed where it is used (src/portal/api-client.ts).
 */

/** The payload of a JWT (not verified: the tokens came straight from our token endpoint), or {}. */
function jwtPayload(jwt: unknown): Record<string, unknown> {
  if (typeof jwt !== 'string') return {};
  try {
    return JSON.parse(Buffer.from(jwt.split('.')[1] ?? '', 'base64url').toString('utf8')) as Record<string, unknown>;
  } catch {
    return {};
  }
}

/** GET /login: a new sign-in, sent to our authorization endpoint. */
export async function login(kit: PortalKit, ctx: Context): Promise<void> {
  startSignIn(kit, ctx, false);
}

/** Who signed in, from the token response of the callback; undefined when it is not one of this sign-in. */
function signedInUser(tokens: Record<string, unknown>, nonce: string): PortalSession['user'] | undefined {
  const idToken = jwtPayload(tokens.id_token);
  // The nonce ties the ID token to this sign-in.
  if (typeof tokens.access_token !== 'string' || idToken.nonce !== nonce || typeof idToken.sub !== 'string') return undefined;
  const access = jwtPayload(tokens.access_token);
  return {
    sub: idToken.sub,
    ...(typeof idToken.name === 'string' ? { name: idToken.name } : {}),
    ...(typeof access.tenant === 'string' ? { tenant: access.tenant } : {}),
  };
}

/** When the ID token says the user signed in (`auth_time`, epoch seconds), if it does. */
function authTimeOf(tokens: Record<string, unknown>): number | undefined {
  const authTime = jwtPayload(tokens.id_token).auth_time;
  return typeof authTime === 'number' && Number.isFinite(authTime) ? authTime : undefined;
}

/** Does a destructive action kept for after a sign-in again (src/portal/reauth.ts), through its row. */
export type Resume = (name: PortalRouteName, call: PortalCall) => Promise<void>;

/**
 * GET /callback: the end of a sign-in this browser started; a new session. A sign-in again
 * (`reauth`) then does the action its session kept, when it is the same user's (reauth.ts).
 */
export async function callback(kit: PortalKit, ctx: Context, resume: Resume): Promise<void> {
  const { t, cookies } = kit;
  const state = typeof ctx.query.state === 'string' ? ctx.query.state : '';
  // State is compared exactly and must be one this browser started (no login CSRF).
  const pending = cookies.pendingSignIns(ctx);
  const signIn = pending.find((entry) => constantTimeEqual(entry.state, state));
  if (!signIn) return kit.pages.landing(ctx, t.signInUnknown, 400);
  cookies.setPendingSignIns(ctx, pending.filter((entry) => entry !== signIn));
  if (ctx.query.error) {
    // A sign-in again given up (or refused): still signed in as before, the action not done.
    const still = signIn.reauth ? await cookies.current(ctx) : undefined;
    if (still?.session.user) {
      await kit.setup.sessions.takeAction(still.id);
      return done(kit, ctx, still, t.reauth.notDone, 'error');
    }
    return kit.pages.landing(ctx, ctx.query.error === 'access_denied' ? t.signInDenied : t.signInFailed);
  }
  const tokens = await kit.api.token({ grant_type: 'authorization_code', code: String(ctx.query.code ?? ''), redirect_uri: `${kit.publicUrl}/callback`, code_verifier: signIn.verifier });
  const user = signedInUser(tokens, signIn.nonce);
  if (!user) {
    kit.setup.logger.warn('portal sign-in failed', { error: typeof tokens.error === 'string' ? tokens.error : 'unexpected_answer' });
    return kit.pages.landing(ctx, t.signInFailed, 400);
  }
  // Signed in: a new session ID and CSRF token, so an ID planted before gives no access.
  const before = await cookies.current(ctx);
  const authTime = authTimeOf(tokens);
  // The action the session kept, taken once whatever happens next (a replay finds nothing).
  const kept = signIn.reauth ? await keptAction(kit, before, user, authTime) : undefined;
  if (before) await kit.setup.sessions.delete(before.id);
  const next = cookies.fresh({ user, ...(authTime !== undefined ? { authTime } : {}) });
  PortalApiClient.keep(next.session, tokens);
  if (kept?.run) {
    await cookies.save(ctx, next);
    return resume(kept.route, { ctx, now: next, ...kept.call });
  }
  if (kept) next.session.notice = { kind: 'error', text: t.reauth.notDone };
  await cookies.save(ctx, next);
  kit.pages.seeOther(ctx);
}

/** POST /logout: the portal's grant and session end here, the sign-in session at our end-session endpoint. */
export async function logout(kit: PortalKit, { ctx, now }: PortalCall): Promise<void> {
  // The portal's grant ends with its refresh token (even if she cancels the sign-out below);
  if (now.session.refreshToken) await kit.api.revoke(now.session.refreshToken).catch(() => undefined);
  // the portal's session ends here; the sign-in session (every app's single sign-on) ends at
  // our end-session endpoint, which asks the user and sends her back to the portal. By client
  // ID, not by ID token: a token has no place in a URL.
  await kit.cookies.end(ctx, now.id);
  const query = new URLSearchParams({ client_id: kit.client.clientId, post_logout_redirect_uri: kit.publicUrl, state: 'signed-out', ui_locales: kit.looks.current().lang });
  ctx.status = 303;
  ctx.redirect(`${kit.setup.issuer}/session/end?${query}`);
}
