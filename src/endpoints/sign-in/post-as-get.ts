import type { Context } from 'koa';
import { oauthErrorPage, sendPage } from '../../pages/html.js';
import { localeOf } from '../../i18n/localizer.js';
import { readForm } from '../../http/forms.js';

/**
 * A browser POST to the authorization or end-session endpoint, answered with a 303 to the same
 * endpoint with the same parameters in the query, so that both methods have exactly the rules of
 * GET (OpenID Connect Core §3.1.2.1 and RP-Initiated Logout §2 want both).
 *
 * Why not serve the POST itself: the sign-in session cookie is SameSite=Lax, so a browser does not
 * send it with a POST coming from an app's site: the user would look signed out (a POST sign-out
 * would end nothing). The GET that follows the redirect is a top-level navigation: the cookie goes
 * with it. (The engine serves POST only with SameSite=None session cookies, which we do not use.)
 * The body is read as the GET's query would be: urlencoded, each parameter once, within `limit`.
 */
export async function answerPostWithGet(ctx: Context, limit: number): Promise<void> {
  let query: string;
  try {
    query = (await readForm(ctx, limit)).toQuery();
  } catch {
    const locale = localeOf(ctx, '');
    sendPage(ctx, oauthErrorPage('invalid_request', locale.t.requestNotAForm, locale, true), 400);
    return;
  }
  ctx.status = 303;
  ctx.set('Cache-Control', 'no-store');
  ctx.redirect(query ? `${ctx.path}?${query}` : ctx.path);
}
