import { escapeHtml as e } from '../../pages/html.js';
import type { FactorListEntry, FactorSummary } from '../../factors/index.js';
import type { Notice } from '../sessions.js';
import { csrfField, header, noticeHtml, when, type PageUser, type ViewContext } from './parts.js';

/*
 * The Security page (every user's own second factors) and its steps: an authenticator app's
 * setup (its QR code drawn on the server, the key in text, the first code), the recovery codes
 * shown once, a passkey's creation (the one page with the passkey script). Every form is a plain
 * POST with the session's CSRF token; a removal or a replacement may lead through a sign-in again.
 */

/** What the Security page shows: what she holds (never a secret), and what was just done. */
export interface SecurityView {
  summary: FactorSummary;
  list: FactorListEntry[];
  notice?: Notice | undefined;
}

/** A small form with one button that posts `factor` (a removal). */
function removeForm(view: ViewContext, factorId: string, label: string, text: string): string {
  return `<form class="inline" method="post" action="${view.base}/security/remove">${csrfField(view)}<input type="hidden" name="factor" value="${e(factorId)}">`
    + `<button class="secondary" type="submit" aria-label="${e(label)}">${e(text)}</button></form>`;
}

/** A form with one button posting to `path` (start an app's setup, new recovery codes). */
function buttonForm(view: ViewContext, path: string, text: string, primary = false): string {
  return `<form class="inline" method="post" action="${view.base}${path}">${csrfField(view)}<button class="${primary ? 'primary' : 'secondary'}" type="submit">${e(text)}</button></form>`;
}

function appSection(view: ViewContext, { summary, list }: SecurityView): string {
  const { t } = view;
  const app = list.find((entry) => entry.type === 'totp');
  const state = summary.authenticatorApp
    ? `<p>${e(t.securityApp.set)} ${e(t.security.added(when(summary.authenticatorApp.addedAt)))}</p>`
    : `<p>${e(t.securityApp.none)}</p>`;
  const actions = summary.authenticatorApp
    ? `${buttonForm(view, '/security/authenticator-app', t.securityApp.reset)}${app ? removeForm(view, app.id, t.securityApp.remove, t.securityApp.remove) : ''}`
    : buttonForm(view, '/security/authenticator-app', t.securityApp.start, true);
  return `<h2 id="app-heading">${e(t.securityApp.heading)}</h2>
<p class="hint">${e(t.securityApp.lead)}</p>
${state}
<div class="actions">${actions}</div>`;
}

function passkeySection(view: ViewContext, { summary }: SecurityView): string {
  const { t } = view;
  const words = t.securityPasskeys;
  const rows = summary.passkeys.map((passkey) => `<tr>
<th scope="row">${e(passkey.name)}</th>
<td>${e(when(passkey.createdAt))}</td>
<td>${e(passkey.backedUp ? words.synced : words.device)}</td>
<td>${removeForm(view, passkey.id, words.remove(passkey.name), words.removeButton)}</td>
</tr>`).join('\n');
  const table = summary.passkeys.length
    ? `<table aria-labelledby="passkeys-heading"><thead><tr><th scope="col">${e(words.nameColumn)}</th><th scope="col">${e(words.addedColumn)}</th><th scope="col">${e(words.kindColumn)}</th><th scope="col">${e(words.actionColumn)}</th></tr></thead><tbody>
${rows}
</tbody></table>`
    : `<p>${e(words.none)}</p>`;
  return `<h2 id="passkeys-heading">${e(words.heading)}</h2>
<p class="hint">${e(words.lead)}</p>
${table}
<p><a class="button primary" href="${view.base}/security/passkeys/new">${e(words.add)}</a></p>`;
}

function recoverySection(view: ViewContext, { summary, list }: SecurityView): string {
  const { t } = view;
  const words = t.securityRecovery;
  const set = list.find((entry) => entry.type === 'recovery_codes');
  const state = summary.recoveryCodes
    ? `<p>${e(words.remaining(summary.recoveryCodes.remaining))} ${e(t.security.added(when(summary.recoveryCodes.createdAt)))}</p><p class="hint">${e(words.renewWarning)}</p>`
    : `<p>${e(words.none)}</p>`;
  const actions = summary.recoveryCodes
    ? `${buttonForm(view, '/security/recovery-codes', words.renew)}${set ? removeForm(view, set.id, words.remove, words.remove) : ''}`
    : buttonForm(view, '/security/recovery-codes', words.create, true);
  return `<h2 id="recovery-heading">${e(words.heading)}</h2>
<p class="hint">${e(words.lead)}</p>
${state}
<div class="actions">${actions}</div>`;
}

/** The Security page. */
export function securityPage(view: ViewContext, user: PageUser, security: SecurityView): string {
  const { t } = view;
  const nothing = !security.summary.authenticatorApp && security.summary.passkeys.length === 0;
  return `${header(view, user)}
<h2 id="security-heading" class="page-heading">${e(t.security.title)}</h2>
${noticeHtml(security.notice)}
<p>${e(t.security.lead)}</p>
${security.summary.resetRequested ? `<p class="warning">${e(t.security.resetRequested)}</p>` : ''}${nothing ? `<p class="warning">${e(t.security.none)}</p>` : ''}
${appSection(view, security)}
${passkeySection(view, security)}
${recoverySection(view, security)}`;
}

/** What the app's setup page shows (the QR code and key only on its first showing). */
export interface AppSetupView {
  qrSvg?: string;
  secret?: string;
  /** When the setup ends unless confirmed (on its first showing). */
  expiresAt?: string;
  replaces: boolean;
  error?: string;
}

/** The QR code as an image with a name (the SVG drawn by the server, no external resource). */
function qrImage(svg: string, label: string): string {
  return svg.replace(/^\s*(?:<\?xml[^>]*>\s*)?<svg\b/, `<svg role="img" aria-label="${e(label)}" focusable="false" class="qr"`);
}

/** The key grouped in fours, as apps show and people type it. */
function groupedKey(secret: string): string {
  return secret.replace(/(.{4})/g, '$1 ').trim();
}

/** An authenticator app's setup: scan or type, then the first code. */
export function appSetupPage(view: ViewContext, setup: AppSetupView): string {
  const { t } = view;
  const words = t.securityApp;
  const described = ['app-code-hint', setup.error ? 'app-code-error' : undefined].filter(Boolean).join(' ');
  return `<p><a href="${view.base}/security">${e(t.security.title)}</a></p>
<h1 id="form-heading">${e(words.setupTitle)}</h1>
${setup.error ? `<div class="error" role="alert"><p>${e(t.fixErrors(1))}</p><ul><li><a href="#app-code">${e(setup.error)}</a></li></ul></div>` : ''}
${setup.qrSvg && setup.secret ? `<p>${e(words.scan)}</p>
<div class="qr-box">${qrImage(setup.qrSvg, words.qrLabel)}</div>
<p>${e(words.key)}</p>
<p><code class="secret" id="app-key">${e(groupedKey(setup.secret))}</code></p>` : ''}
${setup.replaces ? `<p class="warning">${e(words.replaces)}</p>` : ''}
<form method="post" action="${view.base}/security/authenticator-app/confirm" autocomplete="off">${csrfField(view)}
<label for="app-code">${e(words.code)}</label>
<p class="hint" id="app-code-hint">${e(words.codeHint)}${setup.expiresAt ? ` ${e(words.expires(when(setup.expiresAt)))}` : ''}</p>
${setup.error ? `<p class="field-error" id="app-code-error">${e(setup.error)}</p>` : ''}
<input id="app-code" name="code" type="text" inputmode="numeric" autocomplete="one-time-code" maxlength="12" required autofocus aria-describedby="${described}"${setup.error ? ' aria-invalid="true"' : ''}>
<button class="primary" type="submit">${e(words.confirm)}</button>
</form>
${setup.error ? buttonForm(view, '/security/authenticator-app', words.startAgain) : ''}`;
}

/** The recovery codes, shown this once. */
export function recoveryCodesPage(view: ViewContext, codes: readonly string[]): string {
  const { t } = view;
  const words = t.securityRecovery;
  return `<h1>${e(words.title)}</h1>
<p class="warning" role="status">${e(words.once)}</p>
<ol class="codes" aria-label="${e(words.title)}">
${codes.map((code) => `<li><code class="secret">${e(code)}</code></li>`).join('\n')}
</ol>
<p><a class="button primary" href="${view.base}/security">${e(words.done)}</a></p>`;
}

/** A passkey's creation: its name, and the button the passkey script runs the ceremony on. */
export function newPasskeyPage(view: ViewContext, ceremony: string, options: unknown): string {
  const { t } = view;
  const words = t.securityPasskeys;
  return `<p><a href="${view.base}/security">${e(t.security.title)}</a></p>
<h1 id="form-heading">${e(words.addTitle)}</h1>
<noscript><p class="warning">${e(words.needsScript)}</p></noscript>
<form method="post" action="${view.base}/security/passkeys" data-passkey="create" data-passkey-options="${e(JSON.stringify(options))}" data-passkey-failed="${e(words.failed)}">${csrfField(view)}
<input type="hidden" name="ceremony" value="${e(ceremony)}">
<input type="hidden" name="credential" value="">
<label for="passkey-name">${e(words.name)}</label>
<p class="hint" id="passkey-name-hint">${e(words.nameHint)}</p>
<input id="passkey-name" name="name" type="text" required maxlength="64" autocomplete="off" autofocus aria-describedby="passkey-name-hint passkey-error">
<p class="field-error" id="passkey-error" data-passkey-error aria-live="assertive"></p>
<button class="primary" type="submit">${e(words.create)}</button>
<a class="button secondary" href="${view.base}/security">${e(t.cancel)}</a>
</form>`;
}
