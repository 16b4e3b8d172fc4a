import { ENGLISH } from '../i18n/localizer.js';
import { brandedTitle, cspSource, escapeHtml, page, withStrong, type Page } from './html.js';
import type { PageLook } from './sign-in.js';

/** What the page of a tenant that signs its users in through its identity provider shows. */
export interface SsoRequiredView extends PageLook {
  /** Where each "Continue with" form posts (the interaction's `federate` step). */
  action: string;
  csrf: string;
  appName: string;
  /** The tenant's connections: one "Continue with <name>" button each. */
  connections: ReadonlyArray<{ id: string; name: string; issuer: string }>;
  /** A link back to the sign-in page (after a refused password). */
  back?: string;
}

/**
 * SSO required (src/endpoints/sign-in/sso-rule.ts): no password form, the provider named, and a
 * "Continue with <name>" button per connection (field `connection`). The form's submission ends,
 * after our redirect, at the provider: its issuer's origin is a form target (browsers apply
 * form-action to the redirects that follow a POST).
 */
export function ssoRequiredPage({ action, csrf, appName, connections, back, locale = ENGLISH, branding }: SsoRequiredView): Page {
  const { t, lang } = locale;
  const names = connections.map((connection) => connection.name).join(', ');
  const buttons = connections.map((connection) => `<form method="post" action="${escapeHtml(action)}">
<input type="hidden" name="csrf" value="${escapeHtml(csrf)}">
<input type="hidden" name="connection" value="${escapeHtml(connection.id)}">
<button type="submit" class="primary">${escapeHtml(t.continueWith(connection.name))}</button>
</form>`).join('\n');
  return page(
    brandedTitle(t.federationHeading, branding),
    `<h1>${escapeHtml(t.federationHeading)}</h1>
<p>${withStrong(t.signInContinueTo, appName)}</p>
<p role="status">${withStrong(t.ssoRequiredIntro, names)}</p>
<p class="muted">${escapeHtml(t.ssoRequiredNoPassword)}</p>
${buttons}${back ? `
<p><a href="${escapeHtml(back)}">${escapeHtml(t.federationBackToSignIn)}</a></p>` : ''}`,
    connections.map((connection) => cspSource(connection.issuer)).filter(Boolean),
    { lang, branding },
  );
}
