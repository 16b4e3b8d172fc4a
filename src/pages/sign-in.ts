import type { ApiCatalog } from '../../policies/catalog.js';
import { ENGLISH, type PageLocale } from '../i18n/localizer.js';
import type { CheckedBranding } from './branding.js';
import { brandedTitle, cspSource, escapeHtml, page, withStrong, type Page } from './html.js';
import { scopeWords } from './scope-words.js';
import { federationSection, type FederationOffer } from './federation.js';

/** What every page of an app has: its language and the tenant's branding. */
export interface PageLook {
  /** The page's language (default English). */
  locale?: PageLocale;
  branding?: CheckedBranding | undefined;
}

/**
 * A passkey ceremony a sign-in page offers (src/endpoints/sign-in/passkey-steps.ts): a form the
 * passkey script (src/pages/passkey-script.ts) runs, posting the credential to `action`.
 */
export interface PasskeyOffer {
  /** Where the credential is posted (the interaction's `passkey` or `passkey-sign-in` step). */
  action: string;
  /** The ceremony's id (its challenge stays on the server). */
  ceremony: string;
  /** The options for `navigator.credentials.get`, as JSON. */
  options: unknown;
  /** The URL path of the passkey script. */
  script: string;
  /**
   * A login page's passkeys also in the browser's autofill (a conditional request started with
   * the page; default true). Not after a passkey was just refused: the page would otherwise start
   * the same request again at once.
   */
  autofill?: boolean;
}

export interface LoginView extends PageLook {
  action: string;
  csrf: string;
  appName: string;
  /** After sign-in the browser may go straight back to the app (consent given before). */
  redirectUris: readonly string[];
  username?: string;
  error?: string;
  /**
   * A passkey alone (the tenant allows it): the browser's autofill offers passkeys on the username
   * field, and a "Sign in with a passkey" button starts the ceremony.
   */
  passkey?: PasskeyOffer | undefined;
  /** Enterprise sign-in (src/pages/federation.ts): an email field and a button per connection, after the password form. */
  federation?: FederationOffer | undefined;
}

/** The form of a passkey ceremony: the script runs it; without the script it posts no credential (refused, said so). */
function passkeyForm(offer: PasskeyOffer, csrf: string, button: string, failed: string, autofill: boolean): string {
  return `<form method="post" action="${escapeHtml(offer.action)}" data-passkey="get"${autofill ? ' data-passkey-autofill' : ''} data-passkey-options="${escapeHtml(JSON.stringify(offer.options))}" data-passkey-failed="${escapeHtml(failed)}">
<input type="hidden" name="csrf" value="${escapeHtml(csrf)}">
<input type="hidden" name="ceremony" value="${escapeHtml(offer.ceremony)}">
<input type="hidden" name="credential" value="">
<p class="error" data-passkey-error role="status"></p>
<button type="submit" class="secondary">${escapeHtml(button)}</button>
</form>`;
}

export function loginPage({ action, csrf, appName, redirectUris, username, error, passkey, federation, locale = ENGLISH, branding }: LoginView): Page {
  const { t, lang } = locale;
  const title = branding?.productName ? t.signInToProduct(branding.productName) : t.signInTitle;
  return page(
    title,
    `<h1>${escapeHtml(title)}</h1>
<p>${withStrong(t.signInContinueTo, appName)}</p>
${error ? `<p role="alert" class="error" id="login-error">${escapeHtml(error)}</p>` : ''}
<form method="post" action="${escapeHtml(action)}" autocomplete="on">
<input type="hidden" name="csrf" value="${escapeHtml(csrf)}">
<label for="username">${escapeHtml(t.usernameLabel)}</label>
<input id="username" name="username" type="text" autocomplete="${passkey && (passkey.autofill ?? true) ? 'username webauthn' : 'username'}" required autofocus value="${escapeHtml(username ?? '')}"${error ? ' aria-describedby="login-error"' : ''}>
<label for="password">${escapeHtml(t.passwordLabel)}</label>
<input id="password" name="password" type="password" autocomplete="current-password" required>
<button type="submit" class="primary">${escapeHtml(t.signInButton)}</button>
</form>${passkey ? `
<p class="muted">${escapeHtml(t.passkeySignInIntro)}</p>
${passkeyForm(passkey, csrf, t.signInWithPasskeyButton, t.passkeyNotUsed, passkey.autofill ?? true)}` : ''}${federation ? `
${federationSection(federation, csrf, t)}` : ''}`,
    [...redirectUris.map(cspSource).filter(Boolean), ...(federation?.formTargets ?? [])],
    { lang, branding, ...(passkey ? { passkeyScript: passkey.script } : {}) },
  );
}


/** What the second-factor page shows. */
export interface SecondFactorView extends PageLook {
  /** Where the code form posts (the interaction's `second-factor` step). */
  action: string;
  csrf: string;
  appName: string;
  redirectUris: readonly string[];
  /** The code field: the user has an authenticator app or recovery codes (default true). */
  code?: boolean;
  /** The "Use a passkey" button: the user has a passkey (and the pages may start a ceremony). */
  passkey?: PasskeyOffer | undefined;
  /** What went wrong with the last attempt. */
  error?: string;
  /** What the error is about: the code typed (default) or the passkey. */
  errorOf?: 'code' | 'passkey';
}

/**
 * The second-factor page, after a correct password for a user with a second factor: ONE form with
 * ONE field, `code`, that takes the authenticator app's code or a recovery code (the server tells
 * them apart: Factors.checkCode), and, for a user with a passkey, a "Use a passkey" button (its own
 * form, run by the passkey script).
 */
export function secondFactorPage({ action, csrf, appName, redirectUris, code = true, passkey, error, errorOf = 'code', locale = ENGLISH, branding }: SecondFactorView): Page {
  const { t, lang } = locale;
  const described = error && errorOf === 'code' ? ' aria-describedby="code-error" aria-invalid="true"' : '';
  const codeForm = `<form method="post" action="${escapeHtml(action)}" autocomplete="off">
<input type="hidden" name="csrf" value="${escapeHtml(csrf)}">
<p id="code-intro">${escapeHtml(t.secondFactorIntro)}</p>
<label for="code">${escapeHtml(t.secondFactorCodeLabel)}</label>
<input id="code" name="code" type="text" inputmode="text" autocomplete="one-time-code" autocapitalize="characters" spellcheck="false" maxlength="40" required autofocus${described}>
<button type="submit" class="primary">${escapeHtml(t.verifyButton)}</button>
</form>`;
  return page(
    brandedTitle(t.secondFactorTitle, branding),
    `<h1>${escapeHtml(t.secondFactorTitle)}</h1>
<p>${withStrong(t.signInContinueTo, appName)}</p>
${error ? `<p role="alert" class="error" id="code-error">${escapeHtml(error)}</p>` : ''}
${code ? codeForm : ''}${passkey ? `
<p class="muted">${escapeHtml(code ? t.passkeyInstead : t.passkeySecondFactorIntro)}</p>
${passkeyForm(passkey, csrf, t.usePasskeyButton, t.passkeyNotUsed, false)}` : ''}`,
    redirectUris.map(cspSource).filter(Boolean),
    { lang, branding, ...(passkey ? { passkeyScript: passkey.script } : {}) },
  );
}

export interface ConsentView extends PageLook {
  action: string;
  csrf: string;
  appName: string;
  appDescription?: string;
  /** Who registered the app: a tenant's display name; absent: the platform (in the page's language). */
  registeredBy?: string | undefined;
  requestedScopes: string[];
  /** Resource scopes the user may be given; requested ones outside it are not listed (she cannot give them). */
  userScopes: ReadonlySet<string>;
  redirectUris: readonly string[];
  catalog: ApiCatalog;
}

/**
 * The consent page: the app, and what it asks for in words, with Allow and Deny. It lists what the
 * user can give: a resource scope outside `userScopes` (a permission she does not hold, a scope her
 * tenant does not allow) is not listed, since no token of hers carries it and her grant does not
 * record it (src/engine/configuration.ts): gaining it later brings her back here for it.
 */
export function consentPage(view: ConsentView): Page {
  const { t, lang } = view.locale ?? ENGLISH;
  const items = view.requestedScopes.flatMap((scope) => {
    const { api, description } = scopeWords(view.catalog, scope, t, lang);
    if (!api) return [`<li>${escapeHtml(description)}</li>`];
    return view.userScopes.has(scope) ? [`<li>${escapeHtml(api)}: ${escapeHtml(description)}</li>`] : [];
  });
  return page(
    brandedTitle(t.consentTitle, view.branding),
    `<h1>${withStrong(t.consentHeading, view.appName)}</h1>
${view.appDescription ? `<p class="muted">${escapeHtml(view.appDescription)}</p>` : ''}
<p class="muted" id="registered-by">${escapeHtml(t.consentRegisteredBy(view.registeredBy ?? t.consentThePlatform))}</p>
<p id="scopes-heading">${escapeHtml(t.consentAsks)}</p>
<ul aria-labelledby="scopes-heading">${items.join('')}</ul>
<form method="post" action="${escapeHtml(view.action)}">
<input type="hidden" name="csrf" value="${escapeHtml(view.csrf)}">
<button type="submit" name="decision" value="allow" class="primary">${escapeHtml(t.allowButton)}</button>
<button type="submit" name="decision" value="deny" class="secondary">${escapeHtml(t.denyButton)}</button>
</form>`,
    view.redirectUris.map(cspSource).filter(Boolean),
    { lang, branding: view.branding },
  );
}
