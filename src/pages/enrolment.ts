import { ENGLISH } from '../i18n/localizer.js';
import { brandedTitle, cspSource, escapeHtml, page, withStrong, type Page } from './html.js';
import type { PageLook } from './sign-in.js';

/** The QR code's side, in CSS pixels (large enough for a phone's camera at arm's length). */
const QR_SIZE = 200;

/** What the enrolment page shows (an authenticator app, after the password). */
export interface EnrolmentView extends PageLook {
  /** Where the form posts (the interaction's `enrol` step). */
  action: string;
  csrf: string;
  appName: string;
  redirectUris: readonly string[];
  /** The QR code, an SVG drawn on the server (Factors.startAuthenticatorApp). */
  qrSvg: string;
  /** The secret, base32, for typing into the app. */
  secret: string;
  /** An admin asked for the reset this enrolment completes. */
  reset?: boolean;
  /** What went wrong with the last code. */
  error?: string;
}

/** The secret in groups of four, as authenticator apps let one type it. */
function grouped(secret: string): string {
  return secret.replace(/(.{4})(?=.)/g, '$1 ');
}

/**
 * The QR code inline, sized, with an accessible name. The SVG is ours (drawn by `qrcode` from the
 * URI: paths and presentation attributes only, no style or script), so it needs nothing of the CSP.
 */
function qrImage(svg: string, label: string): string {
  return svg.replace('<svg ', `<svg role="img" aria-label="${escapeHtml(label)}" width="${QR_SIZE}" height="${QR_SIZE}" focusable="false" `);
}

/**
 * The enrolment page: why she is asked, the QR code and the secret in text, and a field for the
 * app's first code (posting to the `enrol` step).
 */
export function enrolmentPage({ action, csrf, appName, redirectUris, qrSvg, secret, reset = false, error, locale = ENGLISH, branding }: EnrolmentView): Page {
  const { t, lang } = locale;
  const invalid = error ? ' aria-describedby="code-error" aria-invalid="true"' : '';
  return page(
    brandedTitle(t.enrolTitle, branding),
    `<h1>${escapeHtml(t.enrolTitle)}</h1>
<p>${withStrong(t.signInContinueTo, appName)}</p>
${error ? `<p role="alert" class="error" id="code-error">${escapeHtml(error)}</p>` : ''}
<p id="enrol-intro">${escapeHtml(reset ? t.enrolResetIntro : t.enrolIntro)}</p>
<p class="qr">${qrImage(qrSvg, t.enrolQrLabel)}</p>
<p id="secret-label">${escapeHtml(t.enrolSecretLabel)}</p>
<p><code id="secret">${escapeHtml(grouped(secret))}</code></p>
<form method="post" action="${escapeHtml(action)}" autocomplete="off">
<input type="hidden" name="csrf" value="${escapeHtml(csrf)}">
<label for="code">${escapeHtml(t.enrolCodeLabel)}</label>
<input id="code" name="code" type="text" inputmode="numeric" autocomplete="one-time-code" maxlength="12" required autofocus${invalid}>
<button type="submit" class="primary">${escapeHtml(t.enrolButton)}</button>
</form>`,
    redirectUris.map(cspSource).filter(Boolean),
    { lang, branding },
  );
}

/** What the recovery codes page shows. */
export interface RecoveryCodesView extends PageLook {
  /** Where Continue posts (the interaction's `enrolled` step). */
  action: string;
  csrf: string;
  redirectUris: readonly string[];
  /** The ten new codes; absent when shown already (the page reloaded): they are never shown twice. */
  codes?: readonly string[];
}

/**
 * Her recovery codes, shown once, after the app's first code: a list, and Continue, which
 * finishes the sign-in.
 */
export function recoveryCodesPage({ action, csrf, redirectUris, codes, locale = ENGLISH, branding }: RecoveryCodesView): Page {
  const { t, lang } = locale;
  const list = codes
    ? `<p id="codes-intro">${escapeHtml(t.recoveryCodesIntro)}</p>
<ol aria-labelledby="codes-intro" class="codes">${codes.map((code) => `<li><code>${escapeHtml(code)}</code></li>`).join('')}</ol>`
    : `<p>${escapeHtml(t.recoveryCodesShownOnce)}</p>`;
  return page(
    brandedTitle(t.recoveryCodesTitle, branding),
    `<h1>${escapeHtml(t.recoveryCodesTitle)}</h1>
${list}
<form method="post" action="${escapeHtml(action)}">
<input type="hidden" name="csrf" value="${escapeHtml(csrf)}">
<button type="submit" class="primary" autofocus>${escapeHtml(t.continueButton)}</button>
</form>`,
    redirectUris.map(cspSource).filter(Boolean),
    { lang, branding },
  );
}
