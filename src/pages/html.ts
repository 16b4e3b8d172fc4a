import { randomBytes } from 'node:crypto';
import { ENGLISH, type PageLocale } from '../i18n/localizer.js';
import type { CheckedBranding } from './branding.js';
import { passkeyScriptTag } from './passkey-script.js';

const escapes: Record<string, string> = { '&': '&amp;', '<': '&lt;', '>': '&gt;', '"': '&quot;', "'": '&#39;' };

export function escapeHtml(value: string): string {
  return value.replace(/[&<>"']/g, (char) => escapes[char] ?? char);
}

/** A rendered page and the Content-Security-Policy it needs. */
export interface Page {
  html: string;
  csp: string;
}

const STYLE = `
body{font-family:system-ui,-apple-system,"Segoe UI",Roboto,sans-serif;background:#f4f5f7;color:#1d2330;margin:0}
main{max-width:26rem;margin:3rem auto;background:#fff;border-radius:8px;padding:2rem;box-shadow:0 1px 3px rgba(0,0,0,.15)}
h1{font-size:1.4rem;margin:0 0 1rem}
label{display:block;margin:.8rem 0 .3rem;font-weight:600}
input{width:100%;box-sizing:border-box;padding:.6rem;border:1px solid #8a93a6;border-radius:4px;font-size:1rem}
input:focus,button:focus,summary:focus{outline:3px solid #2f6fde;outline-offset:1px}
button{margin-top:1.2rem;padding:.6rem 1.2rem;font-size:1rem;border-radius:4px;border:1px solid #1f4fa8;cursor:pointer}
.primary{background:#1f5fcf;color:#fff}.secondary{background:#fff;color:#1f4fa8}
.error{color:#a4161a;background:#fde8e8;padding:.6rem;border-radius:4px}.error:empty{padding:0;margin:0}
ul{padding-left:1.2rem}li{margin:.3rem 0}.muted{color:#5b6478}
details{margin-top:1.5rem}summary{cursor:pointer;color:#1f4fa8}
.brand{margin:0 0 1rem}.brand img{height:40px;width:auto;max-width:100%}
`;

/** The language and look of a page (both optional: English, the default look). */
export interface PageOptions {
  /** The page's language tag, for `<html lang>`; default `en`. */
  lang?: string;
  /** A tenant's branding, already checked (src/pages/branding.ts). */
  branding?: CheckedBranding | undefined;
  /**
   * The URL path of the passkey script (src/pages/passkey-script.ts) for a page that runs a passkey
   * ceremony: loaded by path under the page's nonce with its integrity hash; every other page
   * allows no script at all.
   */
  passkeyScript?: string;
}

/** The accent colour in place of the default blue (a checked `#rrggbb`: safe in a stylesheet). */
function brandStyle(accent: string): string {
  return `
input:focus,button:focus,summary:focus,a:focus{outline-color:${accent}}
button{border-color:${accent}}
.primary{background:${accent}}.secondary{color:${accent}}a{color:${accent}}`;
}

/** The logo above the page's content; its alt text is the product name. */
function brandHeader(branding: CheckedBranding | undefined): string {
  if (!branding?.logoUrl) return '';
  return `<header class="brand"><img src="${escapeHtml(branding.logoUrl)}" alt="${escapeHtml(branding.productName ?? '')}" height="40"></header>\n`;
}

/**
 * A server-rendered page: no external assets, one inline stylesheet allowed by nonce, no script
 * (but the passkey script, by path under the same nonce, on a page that runs a ceremony).
 * `formTargets` are the sources a form submission may end at: 'self' and, for the consent page,
 * the app's redirect URIs (browsers apply form-action to the redirects that follow a POST).
 * A branded page may also load images from its logo's origin, and nothing else.
 */
export function page(title: string, body: string, formTargets: readonly string[] = [], options: PageOptions = {}): Page {
  const nonce = randomBytes(16).toString('base64');
  const lang = options.lang ?? 'en';
  const { branding } = options;
  const html = `<!doctype html>
<html lang="${escapeHtml(lang)}">
<head>
<meta charset="utf-8">
<meta name="viewport" content="width=device-width, initial-scale=1">
<meta name="referrer" content="same-origin">
<title>${escapeHtml(title)}</title>
<style nonce="${nonce}">${STYLE}${branding?.accentColor ? brandStyle(branding.accentColor) : ''}</style>
${options.passkeyScript ? `${passkeyScriptTag(escapeHtml(options.passkeyScript), nonce)}\n` : ''}</head>
<body>
<main>
${brandHeader(branding)}${body}
</main>
</body>
</html>`;
  const csp = [
    "default-src 'none'",
    `style-src 'nonce-${nonce}'`,
    ...(options.passkeyScript ? [`script-src 'nonce-${nonce}'`] : []),
    ...(branding?.logoSource ? [`img-src ${branding.logoSource}`] : []),
    `form-action 'self'${formTargets.map((target) => ` ${target}`).join('')}`,
    "frame-ancestors 'none'",
    "base-uri 'none'",
  ].join('; ');
  return { html, csp };
}

/** A page's title with the product's name after it, when the page is branded with one. */
export function brandedTitle(title: string, branding: CheckedBranding | undefined): string {
  return branding?.productName ? `${title} – ${branding.productName}` : title;
}

/**
 * A text (escaped) with `value` in bold where the message puts it: messages are plain text, so a
 * host's text can never add markup.
 */
export function withStrong(message: (value: string) => string, value: string): string {
  const MARK = '\u0000';
  return escapeHtml(message(MARK)).split(MARK).join(`<strong>${escapeHtml(value)}</strong>`);
}

/** The CSP source of a redirect URI: its origin, or its scheme for a deep link. */
export function cspSource(uri: string): string {
  const url = URL.parse(uri);
  if (!url) return '';
  return url.protocol === 'http:' || url.protocol === 'https:' ? url.origin : url.protocol;
}

/** What sending a page needs of a Koa context (a page can be sent from any of our routes). */
interface PageContext {
  status: number;
  type: string;
  body: unknown;
  set(field: string, value: string): void;
}

/**
 * Sends a page with the headers every page of ours has: its CSP, no caching (a sign-in page holds
 * a CSRF token), no MIME sniffing, no framing for browsers without CSP `frame-ancestors`, and a
 * same-origin Referer (not no-referrer: under it browsers send "Origin: null" with our own forms).
 */
export function sendPage(ctx: PageContext, { html, csp }: Page, status = 200): void {
  ctx.status = status;
  ctx.type = 'html';
  ctx.set('Content-Security-Policy', csp);
  ctx.set('Cache-Control', 'no-store');
  ctx.set('X-Content-Type-Options', 'nosniff');
  ctx.set('X-Frame-Options', 'DENY');
  ctx.set('Referrer-Policy', 'same-origin');
  ctx.body = html;
}

/** An error page: a title and what happened, in words (`heading` default: "Sign-in cannot continue"). */
export function errorPage(message: string, heading?: string, locale: PageLocale = ENGLISH): Page {
  const { t, lang } = locale;
  return page(
    t.errorTitle,
    `<h1>${escapeHtml(heading ?? t.errorHeading)}</h1><p role="alert" class="error">${escapeHtml(message)}</p>`,
    [],
    { lang },
  );
}

/**
 * The page of an OAuth error that cannot go back to the app (no trusted redirect URI). `description`
 * is technical (the engine's, in English) unless `ownWords`: then it is in the page's language; an
 * English description on another language's page is marked `lang="en"` (screen readers switch).
 */
export function oauthErrorPage(error: string, description: string, locale: PageLocale = ENGLISH, ownWords = false): Page {
  const { t, lang } = locale;
  const details = `<strong>${escapeHtml(error)}</strong>: ${escapeHtml(description)}`;
  if (ownWords) {
    return page(t.errorTitle, `<h1>${escapeHtml(t.errorHeading)}</h1>
<p role="alert" class="error">${details}</p>
<p class="muted">${escapeHtml(t.errorReturnToApp)}</p>`, [], { lang });
  }
  return page(
    t.errorTitle,
    `<h1>${escapeHtml(t.errorHeading)}</h1>
<p role="alert" class="error">${lang === 'en' ? details : `${escapeHtml(t.errorDetails)}: <span lang="en">${details}</span>`}</p>
<p class="muted">${escapeHtml(t.errorReturnToApp)}</p>`,
    [],
    { lang },
  );
}
