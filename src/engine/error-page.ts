import type { KoaContextWithOIDC } from 'oidc-provider';
import type { Localizer } from '../i18n/localizer.js';
import { oauthErrorPage, sendPage } from '../pages/html.js';

/**
 * The engine's error page for browsers (unknown client, unregistered redirect URI, ...), in the
 * language of the request's `ui_locales`, else of the browser.
 */
export function errorPageRenderer(localizer: Localizer) {
  return async function renderErrorPage(
    ctx: KoaContextWithOIDC,
    out: { error: string; error_description?: string },
  ): Promise<void> {
    const locale = localizer.choose({ uiLocales: ctx.oidc?.params?.ui_locales, acceptLanguage: ctx.get('accept-language') });
    // The engine has set the status already.
    sendPage(ctx, oauthErrorPage(out.error, out.error_description ?? '', locale), ctx.status);
  };
}
