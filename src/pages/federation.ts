import { ENGLISH, type PageLocale } from '../i18n/localizer.js';
import type { Messages } from '../i18n/messages/en.js';
import { brandedTitle, escapeHtml, page, type Page } from './html.js';
import type { CheckedBranding } from './branding.js';

/*
 * THE PAGES OF ENTERPRISE SIGN-IN (src/endpoints/sign-in/federation-steps.ts): the login page's
 * section (an email field for home-realm discovery, a "Continue with <name>" button per connection
 * of the app's tenant), the page of a failed sign-in through a provider, and the page that sends
 * the browser on to a provider the login page's CSP did not name.
 */

/** What the login page offers of enterprise sign-in. */
export interface FederationOffer {
  /** Where its forms post (the interaction's `federate` step). */
  action: string;
  /** The email field (home-realm discovery): always, where the section is shown. */
  discovery: boolean;
  /** The app's tenant's connections: a button each. */
  connections: ReadonlyArray<{ id: string; name: string }>;
  /** The origins of those connections' providers: the login page's forms may lead there. */
  formTargets: readonly string[];
}

/** The login page's section (after the password form: a form submitted first stays the password's). */
export function federationSection(offer: FederationOffer, csrf: string, t: Messages): string {
  const buttons = offer.connections.map((connection) => `<form method="post" action="${escapeHtml(offer.action)}">
<input type="hidden" name="csrf" value="${escapeHtml(csrf)}">
<input type="hidden" name="connection" value="${escapeHtml(connection.id)}">
<button type="submit" class="secondary">${escapeHtml(t.continueWith(connection.name))}</button>
</form>`);
  const discovery = offer.discovery ? `<form method="post" action="${escapeHtml(offer.action)}">
<input type="hidden" name="csrf" value="${escapeHtml(csrf)}">
<label for="federation-email">${escapeHtml(t.workEmailLabel)}</label>
<input id="federation-email" name="email" type="email" autocomplete="email" required>
<button type="submit" class="secondary">${escapeHtml(t.continueButton)}</button>
</form>` : '';
  return `<section aria-labelledby="federation-heading">
<h2 id="federation-heading">${escapeHtml(t.federationHeading)}</h2>
${discovery}${buttons.join('\n')}
</section>`;
}

/** What the page of a failed sign-in through a provider shows. */
export interface FederationFailedView {
  message: string;
  /** The pending sign-in's page (another try), when the sign-in is known. */
  backTo?: string | undefined;
  locale?: PageLocale;
  branding?: CheckedBranding | undefined;
}

/** A failed sign-in through a provider: what happened, what to do, the way back to the sign-in. */
export function federationFailedPage({ message, backTo, locale = ENGLISH, branding }: FederationFailedView): Page {
  const { t, lang } = locale;
  return page(
    brandedTitle(t.federationFailedHeading, branding),
    `<h1>${escapeHtml(t.federationFailedHeading)}</h1>
<p role="alert" class="error">${escapeHtml(message)}</p>
${backTo ? `<p><a href="${escapeHtml(backTo)}">${escapeHtml(t.federationBackToSignIn)}</a></p>` : `<p class="muted">${escapeHtml(t.errorReturnToApp)}</p>`}`,
    [],
    { lang, branding },
  );
}

/**
 * The way on to a provider whose origin the login page's CSP did not name (an address whose
 * domain another tenant's connection owns, on a platform app): a form may not lead there, a
 * `Refresh` and a link may. `to` is the provider's authorization URL.
 */
export function federationOnwardPage(to: string, connection: string, locale: PageLocale = ENGLISH, branding?: CheckedBranding): Page {
  const { t, lang } = locale;
  return page(
    brandedTitle(t.federationHeading, branding),
    `<h1>${escapeHtml(t.federationHeading)}</h1>
<p><a href="${escapeHtml(to)}">${escapeHtml(t.continueWith(connection))}</a></p>`,
    [],
    { lang, branding },
  );
}
