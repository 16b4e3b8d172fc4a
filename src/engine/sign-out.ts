import type { KoaContextWithOIDC } from 'oidc-provider';
import { sendPage } from '../pages/html.js';
import { notSignedInPage, signedOutPage, signOutPage, type SignOutView } from '../pages/sign-out.js';

/*
 * SIGN-OUT (OpenID Connect RP-Initiated Logout 1.0) on the engine's end_session endpoint:
 *
 * - An app sends the browser to `{issuer}/session/end` with `id_token_hint` and/or `client_id`,
 *   and optionally `post_logout_redirect_uri` and `state`. The engine checks the hint's signature
 *   (a modified hint is an error page), that `client_id` matches it, and that the URI is one the
 *   app registered, exactly (src/engine/patches.ts); an unregistered URI never receives the browser.
 * - The browser gets our confirmation page: one "Sign out" button posting the engine's CSRF value
 *   (bound to the session); no script. Signing out ends this browser's session here (on every
 *   instance: sessions live in the store), so the next authorization request asks for the password.
 * - Then the browser goes back to the registered URI with `state`, or gets our "signed out" page.
 * - Apps that registered a back-channel logout URI and took part in the session get a signed logout
 *   token (OpenID Connect Back-Channel Logout 1.0; the engine sends it).
 * - Grants and refresh tokens stay: they belong to the user's consent, shared by her devices. An app
 *   ends its own with token revocation (RFC 7009) when its user signs out.
 */

const RENDERED = Symbol('a sign-out page of ours was rendered');

interface SignOutState {
  secret?: string;
  postLogoutRedirectUri?: string;
}

function viewOf(ctx: KoaContextWithOIDC): SignOutView | undefined {
  const state = ctx.oidc.session?.state as SignOutState | undefined;
  if (!state?.secret) return undefined;
  return {
    action: ctx.oidc.urlFor('end_session_confirm'),
    xsrf: state.secret,
    appName: ctx.oidc.client?.clientName,
    returnTo: state.postLogoutRedirectUri,
  };
}

/** The engine's `logoutSource`: our confirmation page. */
export async function logoutSource(ctx: KoaContextWithOIDC): Promise<void> {
  const view = viewOf(ctx);
  if (!view) return;
  (ctx.state as Record<symbol, unknown>)[RENDERED] = true;
  sendPage(ctx, signOutPage(view));
}

/** The engine's `postLogoutSuccessSource`: our "signed out" page. */
export async function postLogoutSuccessSource(ctx: KoaContextWithOIDC): Promise<void> {
  sendPage(ctx, signedOutPage(ctx.oidc.client?.clientName));
}

/**
 * A browser with no session at the end_session endpoint gets, from the engine, a page that posts
 * itself with an inline script (which our pages' policy would not run). It is replaced by a page
 * with a button doing the same post.
 */
export function replaceSelfPostingPage(ctx: KoaContextWithOIDC): void {
  if ((ctx.state as Record<symbol, unknown>)[RENDERED] || ctx.status !== 200 || !ctx.response.is('html')) return;
  const view = ctx.oidc ? viewOf(ctx) : undefined;
  if (view) sendPage(ctx, notSignedInPage(view));
}
