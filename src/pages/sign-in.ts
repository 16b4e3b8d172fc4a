import type { ApiCatalog } from '../../policies/catalog.js';
import { ENGLISH, type PageLocale } from '../i18n/localizer.js';
import type { CheckedBranding } from './branding.js';
import { brandedTitle, cspSource, escapeHtml, page, withStrong, type Page } from './html.js';
import { scopeWords } from './scope-words.js';

/** What every page of an app has: its language and the tenant's branding. */
export interface PageLook {
  /** The page's language (default English). */
  locale?: PageLocale;
  branding?: CheckedBranding | undefined;
}

export interface LoginView extends PageLook {
  action: string;
  csrf: string;
  appName: string;
  /** After sign-in the browser may go straight back to the app (consent given before). */
  redirectUris: readonly string[];
  username?: string;
  error?: string;
}

export function loginPage({ action, csrf, appName, redirectUris, username, error, locale = ENGLISH, branding }: LoginView): Page {
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
<input id="username" name="username" type="text" autocomplete="username" required autofocus value="${escapeHtml(username ?? '')}"${error ? ' aria-describedby="login-error"' : ''}>
<label for="password">${escapeHtml(t.passwordLabel)}</label>
<input id="password" name="password" type="password" autocomplete="current-password" required>
<button type="submit" class="primary">${escapeHtml(t.signInButton)}</button>
</form>`,
    redirectUris.map(cspSource).filter(Boolean),
    { lang, branding },
  );
}


/** What the second-factor page shows. */
export interface SecondFactorView extends PageLook {
  /** Where both forms post (the interaction's `second-factor` step). */
  action: string;
  csrf: string;
  appName: string;
  redirectUris: readonly string[];
  /** What went wrong with the last code. */
  error?: string;
  /** The recovery-code form open (the last attempt was one). */
  recovery?: boolean;
}

/**
 * The second-factor page, after a correct password for a user with an authenticator app: the app's
 * 6-digit code, or (behind a disclosure on the same page, no script) a recovery code. Both forms
 * post to the same step; `method` says which one.
 */
export function secondFactorPage({ action, csrf, appName, redirectUris, error, recovery = false, locale = ENGLISH, branding }: SecondFactorView): Page {
  const { t, lang } = locale;
  const described = (field: 'app' | 'recovery') => (error && recovery === (field === 'recovery') ? ' aria-describedby="code-error" aria-invalid="true"' : '');
  return page(
    brandedTitle(t.secondFactorTitle, branding),
    `<h1>${escapeHtml(t.secondFactorTitle)}</h1>
<p>${withStrong(t.signInContinueTo, appName)}</p>
${error ? `<p role="alert" class="error" id="code-error">${escapeHtml(error)}</p>` : ''}
<form method="post" action="${escapeHtml(action)}" autocomplete="off">
<input type="hidden" name="csrf" value="${escapeHtml(csrf)}">
<input type="hidden" name="method" value="otp">
<p id="app-code-intro">${escapeHtml(t.secondFactorIntro)}</p>
<label for="app-code">${escapeHtml(t.authenticatorCodeLabel)}</label>
<input id="app-code" name="code" type="text" inputmode="numeric" autocomplete="one-time-code" maxlength="12" required${recovery ? '' : ' autofocus'}${described('app')}>
<button type="submit" class="primary">${escapeHtml(t.verifyButton)}</button>
</form>
<details${recovery ? ' open' : ''}>
<summary>${escapeHtml(t.recoveryCodeInstead)}</summary>
<form method="post" action="${escapeHtml(action)}" autocomplete="off">
<input type="hidden" name="csrf" value="${escapeHtml(csrf)}">
<input type="hidden" name="method" value="recovery">
<p>${escapeHtml(t.recoveryCodeIntro)}</p>
<label for="recovery-code">${escapeHtml(t.recoveryCodeLabel)}</label>
<input id="recovery-code" name="code" type="text" autocomplete="off" autocapitalize="characters" spellcheck="false" maxlength="40" required${recovery ? ' autofocus' : ''}${described('recovery')}>
<button type="submit" class="secondary">${escapeHtml(t.recoveryCodeButton)}</button>
</form>
</details>`,
    redirectUris.map(cspSource).filter(Boolean),
    { lang, branding },
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
