import type { KoaContextWithOIDC } from 'oidc-provider';
import type { Localizer, PageLocale } from '../i18n/localizer.js';
import type { Brands } from '../pages/branding.js';
import { sendPage } from '../pages/html.js';
import { engineAppOwner } from './client-directory.js';
import { signedOutPage, signOutPage, type SignOutView } from '../pages/sign-out.js';

/*
 * SIGN-OUT (OpenID Connect RP-Initiated Logout 1.0) on the engine's end_session endpoint:
 *
 * - An app sends the browser to `{issuer}/session/end` with `id_token_hint` and/or `client_id`,
 *   and optionally `post_logout_redirect_uri` and `state`. The engine checks the hint's signature
 *   (a modified hint is an error page), that `client_id` matches it, and that the URI is one the
 *   app registered, exactly (src/engine/patches.ts); an unregistered URI never receives the browser.
 * - A browser that is not signed in here never reaches the engine (src/endpoints/sign-out/end-session.ts: nothing
 *   is stored for it). A signed-in browser gets our confirmation page: one "Sign out" button posting
 *   the engine's CSRF value (bound to the session); no script. Signing out ends this browser's session here (on every
 *   instance: sessions live in the store), so the next authorization request asks for the password.
 * - Then the browser goes back to the registered URI with `state`, or gets our "signed out" page.
 * - Apps that registered a back-channel logout URI and took part in the session get a signed logout
 *   token with the session's `sid` (OpenID Connect Back-Channel Logout 1.0; the engine signs it, we
 *   deliver it where policies/backchannel-logout.ts allows: src/engine/backchannel-delivery.ts).
 * - Grants and refresh tokens stay: they belong to the user's consent, shared by her devices. An app
 *   ends its own with token revocation (RFC 7009) when its user signs out.
 * - The pages speak the language of the request's `ui_locales`, else the browser's; the "signed out"
 *   page follows the browser (the engine's confirmation takes no `ui_locales` and keeps no state
 *   after a full sign-out). The tenant of the app named by the request brands them.
 */

interface SignOutState {
  secret?: string;
  postLogoutRedirectUri?: string;
}

/** The language and branding of the sign-out pages (server.ts makes them, for the engine's hooks). */
export interface SignOutLook {
  localizer: Localizer;
  brands: Brands | undefined;
}

/** The language of a sign-out page: the end-session request's `ui_locales`, else the browser's. */
function localeOf(ctx: KoaContextWithOIDC, setup: SignOutLook): PageLocale {
  return setup.localizer.choose({ uiLocales: ctx.oidc?.params?.ui_locales, acceptLanguage: ctx.get('accept-language') });
}

async function viewOf(ctx: KoaContextWithOIDC, setup: SignOutLook | undefined): Promise<SignOutView | undefined> {
  const state = ctx.oidc.session?.state as SignOutState | undefined;
  if (!state?.secret) return undefined;
  const { client } = ctx.oidc;
  return {
    action: ctx.oidc.urlFor('end_session_confirm'),
    xsrf: state.secret,
    appName: client?.clientName,
    returnTo: state.postLogoutRedirectUri,
    ...(setup ? { locale: localeOf(ctx, setup), branding: await brandingOf(ctx, setup) } : {}),
  };
}

/** The branding of the app's tenant (or the platform's), when the request names an app. */
async function brandingOf(ctx: KoaContextWithOIDC, setup: SignOutLook) {
  const { client } = ctx.oidc;
  return client && setup.brands ? setup.brands.of(engineAppOwner(client).tenant) : undefined;
}

/**
 * The engine's `logoutSource` (our confirmation page) and `postLogoutSuccessSource` (our "signed
 * out" page), in the language and look `look` gives (English, unbranded without it).
 */
export function signOutSources(look?: SignOutLook) {
  return {
    async logoutSource(ctx: KoaContextWithOIDC): Promise<void> {
      const view = await viewOf(ctx, look);
      if (!view) return;
      sendPage(ctx, signOutPage(view));
    },
    async postLogoutSuccessSource(ctx: KoaContextWithOIDC): Promise<void> {
      const pageLook = look ? { locale: localeOf(ctx, look), branding: await brandingOf(ctx, look) } : {};
      sendPage(ctx, signedOutPage(ctx.oidc.client?.clientName, pageLook));
    },
  };
}
