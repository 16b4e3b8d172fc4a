import { ENGLISH } from '../i18n/localizer.js';
import { brandedTitle, cspSource, escapeHtml, page, withStrong, type Page } from './html.js';
import type { PageLook } from './sign-in.js';

/** What the sign-out pages show, and where their form goes. */
export interface SignOutView extends PageLook {
  /** The engine's confirmation endpoint (the form posts there). */
  action: string;
  /** The engine's CSRF value for this sign-out, bound to the browser's session. */
  xsrf: string;
  /** The app that asked for the sign-out, when it said which it is. */
  appName?: string | undefined;
  /** Where the browser goes after it (a registered post-logout redirect URI), if anywhere. */
  returnTo?: string | undefined;
}

function form({ action, xsrf }: SignOutView, label: string): string {
  return `<form method="post" action="${escapeHtml(action)}">
<input type="hidden" name="xsrf" value="${escapeHtml(xsrf)}">
<input type="hidden" name="logout" value="yes">
<button type="submit" class="primary" autofocus>${escapeHtml(label)}</button>
</form>`;
}

/** The form's submission ends at the confirmation endpoint, then (a redirect) at the app's URI. */
function formTargets(view: SignOutView): string[] {
  return view.returnTo ? [cspSource(view.returnTo)].filter(Boolean) : [];
}

/**
 * The confirmation a signed-in browser gets: one "Sign out" button (no script). Signing out ends
 * the session of this browser here, for every app; the apps keep what they hold until they revoke it.
 */
export function signOutPage(view: SignOutView): Page {
  const { t, lang } = view.locale ?? ENGLISH;
  return page(
    brandedTitle(t.signOutTitle, view.branding),
    `<h1>${escapeHtml(t.signOutHeading)}</h1>
<p>${view.appName ? withStrong(t.signOutAppAsks, view.appName) : escapeHtml(t.signOutQuestion)}</p>
<p class="muted">${escapeHtml(t.signOutPasswordNextTime)}</p>
${form(view, t.signOutButton)}`,
    formTargets(view),
    { lang, branding: view.branding },
  );
}

/** What the page for a browser that is not signed in shows (nothing of it is stored anywhere). */
export interface NotSignedInView extends PageLook {
  /** The app that asked for the sign-out, when it said which it is. */
  appName?: string | undefined;
  /** The registered post-logout redirect URI the request named, if any. */
  returnTo?: string | undefined;
  /** The request's `state`, handed back to the app with the browser. */
  state?: string | undefined;
}

/**
 * A GET form to the app's post-logout URI, its own query and `state` as fields: the browser goes
 * back exactly as the engine would send it after a sign-out, without anything kept here.
 */
function returnForm(returnTo: string, state: string | undefined, label: string): string {
  const target = new URL(returnTo);
  const fields: Array<[string, string]> = [...target.searchParams, ...(state !== undefined ? [['state', state] as [string, string]] : [])];
  target.search = '';
  return `<form method="get" action="${escapeHtml(target.href)}">
${fields.map(([name, value]) => `<input type="hidden" name="${escapeHtml(name)}" value="${escapeHtml(value)}">`).join('\n')}
<button type="submit" class="primary" autofocus>${escapeHtml(label)}</button>
</form>`;
}

/**
 * A browser that is not signed in asked to sign out: nothing to end here, one click back to the
 * app (when it named a registered URI), and nothing stored for it.
 */
export function notSignedInPage(view: NotSignedInView): Page {
  const { t, lang } = view.locale ?? ENGLISH;
  const text = view.returnTo
    ? view.appName ? withStrong(t.notSignedInBackTo, view.appName) : escapeHtml(t.notSignedInBack)
    : escapeHtml(t.notSignedInNothingToEnd);
  return page(
    brandedTitle(t.notSignedInTitle, view.branding),
    `<h1>${escapeHtml(t.notSignedInHeading)}</h1>
<p>${text}</p>
${view.returnTo ? returnForm(view.returnTo, view.state, t.continueButton) : ''}`,
    view.returnTo ? [cspSource(view.returnTo)].filter(Boolean) : [],
    { lang, branding: view.branding },
  );
}

/** After the sign-out, when the app gave no (registered) place to go back to. */
export function signedOutPage(appName: string | undefined, look: PageLook = {}): Page {
  const { t, lang } = look.locale ?? ENGLISH;
  return page(
    brandedTitle(t.signedOutTitle, look.branding),
    `<h1>${escapeHtml(t.signedOutHeading)}</h1>
<p>${appName ? withStrong(t.signedOutOfApp, appName) : escapeHtml(t.signedOutOfService)}</p>
<p class="muted">${escapeHtml(t.signedOutClose)}</p>`,
    [],
    { lang, branding: look.branding },
  );
}
