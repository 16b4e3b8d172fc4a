import { cspSource, escapeHtml, page, type Page } from './html.js';

/** What the sign-out pages show, and where their form goes. */
export interface SignOutView {
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
  return page(
    'Sign out',
    `<h1>Sign out</h1>
<p>${view.appName ? `<strong>${escapeHtml(view.appName)}</strong> asks you to sign out.` : 'Do you want to sign out?'}</p>
<p class="muted">You will be asked for your password the next time an application signs you in.</p>
${form(view, 'Sign out')}`,
    formTargets(view),
  );
}

/** A browser that is not signed in asked to sign out: nothing to end here, one click back to the app. */
export function notSignedInPage(view: SignOutView): Page {
  return page(
    'Signed out',
    `<h1>You are not signed in</h1>
<p>${view.returnTo ? `Continue to go back${view.appName ? ` to <strong>${escapeHtml(view.appName)}</strong>` : ''}.` : 'There is no session to end.'}</p>
${form(view, 'Continue')}`,
    formTargets(view),
  );
}

/** After the sign-out, when the app gave no (registered) place to go back to. */
export function signedOutPage(appName: string | undefined): Page {
  return page(
    'Signed out',
    `<h1>You are signed out</h1>
<p>${appName ? `You signed out of <strong>${escapeHtml(appName)}</strong> and this sign-in service.` : 'You signed out of this sign-in service.'}</p>
<p class="muted">You can close this window.</p>`,
  );
}
