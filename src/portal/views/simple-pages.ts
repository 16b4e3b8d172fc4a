import { escapeHtml as e } from '../../pages/html.js';
import { csrfField, header, type PageUser, type ViewContext } from './parts.js';

/* The pages with little on them: the signed-out page, the permission's page, a confirmation. */

/** The page of a signed-out browser: what the portal is, and the way in (with what just happened, if anything). */
export function landingPage(view: Pick<ViewContext, 't' | 'base'>, notice?: string): string {
  return `<h1>${e(view.t.product)}</h1>
${notice ? `<p class="notice" role="status">${e(notice)}</p>` : ''}
<p>${e(view.t.intro)}</p>
<p><a class="button primary" href="${view.base}/login">${e(view.t.signIn)}</a></p>`;
}

/** What a user without the permission gets instead of a form or a confirmation (403): which permission she lacks. */
export function forbiddenPage(view: ViewContext, user: PageUser): string {
  const { t } = view;
  return `${header(view, user)}
<p><a href="${view.base}">${e(t.back)}</a></p>
<h2 id="forbidden-heading">${e(t.forbidden.heading)}</h2>
<p class="permission" role="alert">${e(t.permission)}</p>
<p>${e(t.forbidden.again)}</p>`;
}

/** A confirmation (delete, regenerate): what will happen, a button that does it, a way back. */
export function confirmPage(view: ViewContext, heading: string, warning: string, action: string, button: string, danger: boolean): string {
  return `<p><a href="${view.base}">${e(view.t.back)}</a></p>
<h1>${e(heading)}</h1>
<p class="warning">${e(warning)}</p>
<form method="post" action="${action}">${csrfField(view)}
<button class="${danger ? 'danger' : 'primary'}" type="submit">${e(button)}</button>
<a class="button secondary" href="${view.base}">${e(view.t.cancel)}</a>
</form>`;
}

/** Before a destructive action after a sign-in that is not recent: why, and the way to sign in again (or back). */
export function reauthPage(view: ViewContext, minutes: number): string {
  const { t } = view;
  return `<h1>${e(t.reauth.title)}</h1>
<p>${e(t.reauth.lead(minutes))}</p>
<p>${e(t.reauth.then)}</p>
<form method="post" action="${view.base}/reauth">${csrfField(view)}
<button class="primary" type="submit" autofocus>${e(t.reauth.button)}</button>
<a class="button secondary" href="${view.base}">${e(t.cancel)}</a>
</form>`;
}
