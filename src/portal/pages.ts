import { randomBytes } from 'node:crypto';
import type { Context } from 'koa';
import { escapeHtml, page, sendPage } from '../pages/html.js';
import { PASSKEY_SCRIPT_PATH, passkeyScriptTag } from '../pages/passkey-script.js';
import { scopeWords } from '../pages/scope-words.js';
import type { RequestLooks } from './looks.js';
import type { PortalSession } from './sessions.js';
import type { PortalSetup } from './setup.js';
import type { ViewContext } from './views/parts.js';
import { landingPage } from './views/simple-pages.js';
import { PORTAL_STYLE } from './views/style.js';

/** What a page may add to its sending: its status, a script (allowed by this page's nonce). */
export interface SendOptions {
  status?: number;
  script?: string;
  /** The passkey script (src/pages/passkey-script.ts), loaded from our own origin by nonce and integrity. */
  passkeyScript?: boolean;
}

/**
 * How the portal answers: its pages in the request's language and the organisation's look, under a
 * strict CSP (a nonce for its style, and for the one script when a page has it), and its redirects.
 */
export class PortalPages {
  constructor(
    private readonly setup: PortalSetup,
    private readonly looks: RequestLooks,
    /** `{pathPrefix}{path}`: where the portal's links go. */
    readonly base: string,
  ) {}

  /** A page: `body` within the portal's frame, `title` before the product's name. */
  send(ctx: Context, title: string, body: string, options: SendOptions = {}): void {
    const nonce = randomBytes(16).toString('base64');
    const script = (options.script ? `\n<script nonce="${nonce}">${options.script}</script>` : '')
      + (options.passkeyScript ? `\n${passkeyScriptTag(`${this.setup.pathPrefix}${PASSKEY_SCRIPT_PATH}`, nonce)}` : '');
    const { lang, branding, t } = this.looks.current();
    const product = branding?.productName ? `${t.product} – ${branding.productName}` : t.product;
    // The accent (a checked #rrggbb with AA contrast on white) also on the portal's own buttons and links.
    const accent = branding?.accentColor
      ? `a,a.button.secondary,.secondary{color:${branding.accentColor}}a.button,button{border-color:${branding.accentColor}}a.button.primary,.primary{background:${branding.accentColor};color:#fff}`
        + `a:focus,input:focus,select:focus,textarea:focus,button:focus{outline-color:${branding.accentColor}}`
      : '';
    const rendered = page(`${title} · ${product}`, `<style nonce="${nonce}">${PORTAL_STYLE}${accent}</style>\n${body}${script}`, [], { lang, branding });
    let csp = rendered.csp.replace("style-src 'nonce-", `style-src 'nonce-${nonce}' 'nonce-`);
    if (options.script || options.passkeyScript) csp += `; script-src 'nonce-${nonce}'`;
    sendPage(ctx, { html: rendered.html, csp }, options.status ?? 200);
  }

  /** 303 to a page of the portal (its home by default). */
  seeOther(ctx: Context, path = ''): void {
    ctx.status = 303;
    ctx.redirect(`${this.base}${path}`);
  }

  /** What the views need of the request and the session: texts, links, the CSRF token, words. */
  view(session: PortalSession): ViewContext {
    const { lang, branding } = this.looks.current();
    const { catalog, localizer } = this.setup;
    return {
      t: this.looks.t, base: this.base, csrf: session.csrf, apis: this.setup.apis,
      scopeWords: (scope) => catalog.scopeWords(scope, lang) ?? scope,
      consentScopeWords: (scope) => scopeWords(catalog, scope, localizer.messages(lang), lang),
      productName: branding?.logoUrl ? undefined : branding?.productName,
    };
  }

  /** The page of a signed-out browser, with what just happened. */
  landing(ctx: Context, notice = '', status = 200): void {
    const { t } = this.looks;
    this.send(ctx, t.product, landingPage({ t, base: this.base }, notice), { status });
  }

  /** A page that only says what happened (an error), and the way back. */
  simple(ctx: Context, status: number, text: string): void {
    const { t } = this.looks;
    const base = this.base;
    this.send(ctx, text, `<h1>${escapeHtml(t.product)}</h1><p class="error" role="alert">${escapeHtml(text)}</p><p><a href="${base}">${escapeHtml(t.back)}</a></p>`, { status });
  }
}
