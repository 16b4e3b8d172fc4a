import { createHash } from 'node:crypto';

/*
 * THE PASSKEY SCRIPT: the one piece of JavaScript our pages run, served from our own origin (no
 * CDN, no third-party library, nothing inline) so that pages keep a strict CSP: a page that runs a
 * passkey ceremony loads it with a nonce (`script-src 'nonce-...'`) and an integrity hash; every
 * other page still allows no script at all.
 *
 * - Its path carries a hash of its content: the browser may keep it a year (immutable), and a new
 *   version is a new path, so that no page ever gets a stale copy.
 * - What it does: a form marked `data-passkey="create"` or `data-passkey="get"` holds the options
 *   JSON (from the server, base64url binaries) in `data-passkey-options`; on submit the script
 *   calls `navigator.credentials.create`/`get` with them, puts the credential (as JSON,
 *   base64url binaries) into the form's `credential` field and submits the form itself. When the
 *   browser refuses or the user cancels, the form's `[data-passkey-error]` element says so (it is
 *   a live region) and nothing is sent. A `get` form marked `data-passkey-autofill` also starts a
 *   conditional request (the browser's autofill UI for passkeys, on inputs whose autocomplete
 *   names `webauthn`) when the browser offers one; pressing the form's button ends it first
 *   (browsers run one request at a time).
 * - Sending by form (not fetch) keeps the CSRF token, the redirects and the error pages of our
 *   forms as they are, and needs no `connect-src`.
 */

/** The script's source (plain ES2020, no dependency). */
export const PASSKEY_SCRIPT = `'use strict';
(() => {
  const toBytes = (text) => {
    const base64 = text.replace(/-/g, '+').replace(/_/g, '/');
    const raw = atob(base64 + '='.repeat((4 - (base64.length % 4)) % 4));
    const bytes = new Uint8Array(raw.length);
    for (let i = 0; i < raw.length; i += 1) bytes[i] = raw.charCodeAt(i);
    return bytes.buffer;
  };
  const toText = (buffer) => {
    if (!buffer) return undefined;
    const bytes = new Uint8Array(buffer);
    let raw = '';
    for (let i = 0; i < bytes.length; i += 1) raw += String.fromCharCode(bytes[i]);
    return btoa(raw).replace(/\\+/g, '-').replace(/\\//g, '_').replace(/=+$/, '');
  };
  const descriptors = (list) => (list || []).map((item) => Object.assign({}, item, { id: toBytes(item.id) }));
  const createOptions = (json) => Object.assign({}, json, {
    challenge: toBytes(json.challenge),
    user: Object.assign({}, json.user, { id: toBytes(json.user.id) }),
    excludeCredentials: descriptors(json.excludeCredentials),
  });
  const getOptions = (json) => Object.assign({}, json, {
    challenge: toBytes(json.challenge),
    allowCredentials: descriptors(json.allowCredentials),
  });
  const asJson = (credential) => {
    const r = credential.response;
    const response = { clientDataJSON: toText(r.clientDataJSON) };
    if (r.attestationObject) {
      response.attestationObject = toText(r.attestationObject);
      if (typeof r.getTransports === 'function') response.transports = r.getTransports();
    } else {
      response.authenticatorData = toText(r.authenticatorData);
      response.signature = toText(r.signature);
      const handle = toText(r.userHandle);
      if (handle) response.userHandle = handle;
    }
    return {
      id: credential.id,
      rawId: toText(credential.rawId),
      type: credential.type,
      response,
      clientExtensionResults: credential.getClientExtensionResults(),
      authenticatorAttachment: credential.authenticatorAttachment || undefined,
    };
  };
  const say = (form, text) => {
    const place = form.querySelector('[data-passkey-error]');
    if (place) place.textContent = text;
  };
  const run = async (form, mediation, signal) => {
    const mode = form.getAttribute('data-passkey');
    const json = JSON.parse(form.getAttribute('data-passkey-options'));
    const credential = mode === 'create'
      ? await navigator.credentials.create({ publicKey: createOptions(json) })
      : await navigator.credentials.get(Object.assign({ publicKey: getOptions(json) }, mediation ? { mediation, signal } : {}));
    if (!credential) throw new Error('no credential');
    form.elements.namedItem('credential').value = JSON.stringify(asJson(credential));
    HTMLFormElement.prototype.submit.call(form);
  };
  for (const form of document.querySelectorAll('form[data-passkey]')) {
    let autofill;
    form.addEventListener('submit', (event) => {
      event.preventDefault();
      say(form, '');
      // One request at a time: the autofill's waiting request ends before the button's starts.
      if (autofill) autofill.abort();
      autofill = undefined;
      run(form).catch(() => say(form, form.getAttribute('data-passkey-failed') || 'The passkey was not used.'));
    });
    if (form.getAttribute('data-passkey') === 'get' && form.hasAttribute('data-passkey-autofill')
      && window.PublicKeyCredential && typeof PublicKeyCredential.isConditionalMediationAvailable === 'function') {
      PublicKeyCredential.isConditionalMediationAvailable()
        .then((available) => {
          if (!available) return undefined;
          autofill = new AbortController();
          return run(form, 'conditional', autofill.signal);
        })
        .catch(() => undefined);
    }
  }
})();
`;

const digest = (algorithm: string) => createHash(algorithm).update(PASSKEY_SCRIPT).digest();

/** The script's Subresource Integrity value (`integrity="..."` on its script element). */
export const PASSKEY_SCRIPT_INTEGRITY = `sha384-${digest('sha384').toString('base64')}`;

/** The script's path under the server's path prefix: its content hash in the name (cached for good). */
export const PASSKEY_SCRIPT_PATH = `/assets/passkeys-${digest('sha256').toString('base64url').slice(0, 16)}.js`;

/**
 * The script element a page puts in its `<head>` (`src`: the prefix and PASSKEY_SCRIPT_PATH); the
 * page's CSP then carries `script-src 'nonce-<nonce>'`, and no page without it allows a script.
 */
export function passkeyScriptTag(src: string, nonce: string): string {
  return `<script src="${src}" nonce="${nonce}" integrity="${PASSKEY_SCRIPT_INTEGRITY}" defer></script>`;
}
