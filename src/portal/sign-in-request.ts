import { randomBytes } from 'node:crypto';
import type { Context } from 'koa';
import { PORTAL_SIGN_IN_SECONDS } from '../../policies/lifetimes.js';
import { s256Challenge } from '../../policies/pkce.js';
import type { PortalKit } from './kit.js';

/** The portal asks for the management right explicitly; users without the permission get tokens without it. */
const SCOPE = 'openid profile manage.integrations';

/**
 * A sign-in sent to our authorization endpoint; `reauth`: a sign-in again before a destructive
 * action (src/portal/reauth.ts), with `max_age=0` so that the password is asked for whatever
 * sign-in session the browser has (OpenID Connect Core §3.1.2.1).
 */
export function startSignIn(kit: PortalKit, ctx: Context, reauth: boolean): void {
  const state = randomBytes(24).toString('base64url');
  const verifier = randomBytes(32).toString('base64url');
  const nonce = randomBytes(24).toString('base64url');
  // A few sign-ins may be under way in one browser (tabs); the oldest go first. Sealed in a
  // cookie of this browser: a stranger's request stores nothing, and the state is bound to it.
  kit.cookies.addPendingSignIn(ctx, { state, verifier, nonce, expires: Date.now() + PORTAL_SIGN_IN_SECONDS * 1000, ...(reauth ? { reauth: true as const } : {}) });
  const query = new URLSearchParams({
    response_type: 'code', client_id: kit.client.clientId, redirect_uri: `${kit.publicUrl}/callback`, scope: SCOPE, state, nonce,
    code_challenge: s256Challenge(verifier), code_challenge_method: 'S256',
    // The sign-in pages in the portal's language.
    ui_locales: kit.looks.current().lang,
    ...(reauth ? { max_age: '0' } : {}),
  });
  // 303: a sign-in again leaves from a POST (the action's), and goes on as a GET.
  if (reauth) ctx.status = 303;
  ctx.redirect(`${kit.setup.issuer}/authorize?${query}`);
}

