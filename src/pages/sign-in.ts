import type { ApiCatalog } from '../../policies/catalog.js';
import { cspSource, escapeHtml, page, type Page } from './html.js';
import { scopeWords } from './scope-words.js';

export interface LoginView {
  action: string;
  csrf: string;
  appName: string;
  /** After sign-in the browser may go straight back to the app (consent given before). */
  redirectUris: readonly string[];
  username?: string;
  error?: string;
}

export function loginPage({ action, csrf, appName, redirectUris, username, error }: LoginView): Page {
  return page(
    'Sign in',
    `<h1>Sign in</h1>
<p>to continue to <strong>${escapeHtml(appName)}</strong></p>
${error ? `<p role="alert" class="error" id="login-error">${escapeHtml(error)}</p>` : ''}
<form method="post" action="${escapeHtml(action)}" autocomplete="on">
<input type="hidden" name="csrf" value="${escapeHtml(csrf)}">
<label for="username">Username</label>
<input id="username" name="username" type="text" autocomplete="username" required autofocus value="${escapeHtml(username ?? '')}"${error ? ' aria-describedby="login-error"' : ''}>
<label for="password">Password</label>
<input id="password" name="password" type="password" autocomplete="current-password" required>
<button type="submit" class="primary">Sign in</button>
</form>`,
    redirectUris.map(cspSource).filter(Boolean),
  );
}


export interface ConsentView {
  action: string;
  csrf: string;
  appName: string;
  appDescription?: string;
  /** Who registered the app: a tenant's display name, or "the platform". */
  registeredBy: string;
  requestedScopes: string[];
  /** Resource scopes the user may be given; requested ones outside it are shown as unavailable. */
  userScopes: ReadonlySet<string>;
  redirectUris: readonly string[];
  catalog: ApiCatalog;
}

/** The consent page: the app, and what it asks for in words, with Allow and Deny. */
export function consentPage(view: ConsentView): Page {
  const items = view.requestedScopes.map((scope) => {
    const { api, description } = scopeWords(view.catalog, scope);
    if (!api) return `<li>${escapeHtml(description)}</li>`;
    const words = `${escapeHtml(api)}: ${escapeHtml(description)}`;
    return view.userScopes.has(scope)
      ? `<li>${words}</li>`
      : `<li class="muted">${words} (not available: you do not hold this permission)</li>`;
  });
  return page(
    'Allow access?',
    `<h1>Allow <strong>${escapeHtml(view.appName)}</strong> to access your account?</h1>
${view.appDescription ? `<p class="muted">${escapeHtml(view.appDescription)}</p>` : ''}
<p class="muted" id="registered-by">Registered by ${escapeHtml(view.registeredBy)}</p>
<p id="scopes-heading">This application asks to:</p>
<ul aria-labelledby="scopes-heading">${items.join('')}</ul>
<form method="post" action="${escapeHtml(view.action)}">
<input type="hidden" name="csrf" value="${escapeHtml(view.csrf)}">
<button type="submit" name="decision" value="allow" class="primary">Allow</button>
<button type="submit" name="decision" value="deny" class="secondary">Deny</button>
</form>`,
    view.redirectUris.map(cspSource).filter(Boolean),
  );
}
