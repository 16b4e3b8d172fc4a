import { escapeHtml as e } from '../../pages/html.js';
import type { ApiDefinition } from '../../../policies/catalog.js';
import type { Notice } from '../sessions.js';
import type { PortalText } from '../text.js';

/*
 * The parts every portal page is made of: server-rendered forms that work without JavaScript (the
 * secret page's copy button is the only script), every control labelled, every error tied to its
 * field (aria-invalid, aria-describedby) and listed in a summary at the top of its form.
 */

/** A signed-in user, as the pages name her. */
export interface PageUser {
  sub: string;
  name?: string;
  tenant?: string;
}

/** What went wrong with a form: a message per field ID (`''`: the whole form). */
export type FieldErrors = Map<string, string>;

/** Where the page's forms post to and links go: `{pathPrefix}{path}` of the portal. */
export interface ViewContext {
  t: PortalText;
  base: string;
  csrf: string;
  apis: readonly ApiDefinition[];
  /** What a scope allows, in the page's language. */
  scopeWords: (scope: string) => string;
  /** What a consented scope allows and its API's name, in the page's language (OIDC scopes too). */
  consentScopeWords: (scope: string) => { description: string; api?: string };
  /** The organisation's product name (branding), shown above the heading. */
  productName?: string | undefined;
}

/** A time of the APIs (ISO 8601) as the pages show it: to the minute, in UTC. */
export function when(iso: string): string {
  return `${iso.slice(0, 16).replace('T', ' ')} UTC`;
}

/** The form's CSRF token (the session's), hidden. */
export function csrfField(view: ViewContext): string {
  return `<input type="hidden" name="csrf" value="${e(view.csrf)}">`;
}

/** The form's error summary: a link to each field in error (first thing read, focused by nothing). */
export function errorSummary(view: ViewContext, errors: FieldErrors | undefined): string {
  if (!errors?.size) return '';
  const items = [...errors].map(([id, message]) => (id ? `<li><a href="#${e(id)}">${e(message)}</a></li>` : `<li>${e(message)}</li>`)).join('');
  return `<div class="error" role="alert"><p>${e(view.t.fixErrors(errors.size))}</p><ul>${items}</ul></div>`;
}

/** The attributes and message of a field in error, tied together. */
export function fieldError(id: string, errors: FieldErrors | undefined, hintId?: string): { attributes: string; message: string } {
  const message = errors?.get(id);
  const described = [hintId, message ? `${id}-error` : undefined].filter(Boolean).join(' ');
  return {
    attributes: `${message ? ' aria-invalid="true"' : ''}${described ? ` aria-describedby="${described}"` : ''}`,
    message: message ? `<p class="field-error" id="${id}-error">${e(message)}</p>` : '',
  };
}

/** A labelled text input, with its hint and error. */
export function textField(id: string, label: string, name: string, value: string, errors: FieldErrors | undefined, options: { required?: boolean; hint?: string; max?: number; placeholder?: string } = {}): string {
  const hintId = options.hint ? `${id}-hint` : undefined;
  const { attributes, message } = fieldError(id, errors, hintId);
  return `<label for="${id}">${e(label)}</label>
${options.hint ? `<p class="hint" id="${hintId}">${e(options.hint)}</p>` : ''}${message}
<input id="${id}" name="${name}" value="${e(value)}"${options.required ? ' required' : ''} maxlength="${options.max ?? 200}"${options.placeholder ? ` placeholder="${e(options.placeholder)}"` : ''}${attributes}>`;
}

/** A labelled text area, with its error. */
export function textArea(id: string, label: string, name: string, value: string, errors: FieldErrors | undefined): string {
  const { attributes, message } = fieldError(id, errors);
  return `<label for="${id}">${e(label)}</label>${message}
<textarea id="${id}" name="${name}" rows="3" maxlength="1000"${attributes}>${e(value)}</textarea>`;
}

/** The top of a signed-in page: the product, the sign-out button, who is signed in, the navigation (every user has a Security page). */
export function header(view: ViewContext, user: PageUser): string {
  return `${view.productName ? `<p class="product-name">${e(view.productName)}</p>\n` : ''}<div class="header"><h1>${e(view.t.product)}</h1>
<form class="inline" method="post" action="${view.base}/logout">${csrfField(view)}<button class="secondary" type="submit">${e(view.t.signOut)}</button></form></div>
<p>${e(view.t.signedInAs(user.name ?? user.sub, user.sub, user.tenant))}</p>
<nav aria-label="${e(view.t.nav.label)}"><ul class="nav"><li><a href="${view.base}">${e(view.t.nav.home)}</a></li><li><a href="${view.base}/security">${e(view.t.nav.security)}</a></li></ul></nav>`;
}

/** The message the last action left for this page (a status, or an alert). */
export function noticeHtml(notice: Notice | undefined): string {
  if (!notice) return '';
  return notice.kind === 'ok' ? `<p class="notice" role="status">${e(notice.text)}</p>` : `<p class="error" role="alert">${e(notice.text)}</p>`;
}
