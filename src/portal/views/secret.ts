import { escapeHtml as e } from '../../pages/html.js';
import type { ShownSecret } from '../sessions.js';
import type { PortalText } from '../text.js';
import type { ViewContext } from './parts.js';

/** The secret, once: read-only field, copy button, the warning. */
export function secretPageBody(view: ViewContext, shown: ShownSecret): string {
  const { t } = view;
  const what = t.secret.what[shown.what];
  return `<h1>${e(shown.regenerated ? t.secret.newHeading(shown.name) : t.secret.createdHeading(shown.name))}</h1>
<p>${e(shown.fromKeys ? t.clientAuth.fromKeys(what) : shown.regenerated ? t.secret.regenerated(what) : t.secret.created(what))}</p>
<p>${e(t.clientId)} <code id="client-id">${e(shown.clientId)}</code></p>
<label for="secret">${e(t.secret.label)}</label>
<input id="secret" class="secret" value="${e(shown.clientSecret)}" readonly autocomplete="off" spellcheck="false" aria-describedby="secret-once">
<button class="primary" type="button" data-copy="secret">${e(t.secret.copy)}</button>
<p id="copy-status" role="status" aria-live="polite"></p>
<p id="secret-once"><strong>${e(t.secret.once)}</strong> ${e(t.secret.onceMore)}</p>
<p><a href="${view.base}">${e(t.back)}</a></p>`;
}

/** A text as a string literal that cannot end its script element. */
function scriptString(text: string): string {
  return JSON.stringify(text).replace(/</g, '\\u003c');
}

/** The copy button of the secret page (allowed by this page's script nonce only). */
export function copyScript(t: PortalText): string {
  return `
(function () {
  var status = document.getElementById('copy-status');
  function said(ok) { status.textContent = ok ? ${scriptString(t.secret.copied)} : ${scriptString(t.secret.copyFailed)}; }
  function fallback(input) { input.focus(); input.select(); try { said(document.execCommand('copy')); } catch (e) { said(false); } }
  // Not in the browser's back/forward cache either: the field empties as the page is left.
  window.addEventListener('pagehide', function () { var field = document.getElementById('secret'); if (field) field.value = ''; });
  window.addEventListener('pageshow', function (event) { if (event.persisted) window.location.reload(); });
  var buttons = document.querySelectorAll('button[data-copy]');
  for (var i = 0; i < buttons.length; i += 1) {
    buttons[i].addEventListener('click', function (event) {
      var input = document.getElementById(event.currentTarget.getAttribute('data-copy'));
      if (navigator.clipboard && window.isSecureContext) {
        navigator.clipboard.writeText(input.value).then(function () { said(true); }, function () { fallback(input); });
      } else {
        fallback(input);
      }
    });
  }
})();
`;
}
