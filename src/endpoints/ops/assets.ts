import type { RouteHandler } from '../../http/router.js';
import { PASSKEY_SCRIPT } from '../../pages/passkey-script.js';

/** How long a browser keeps the script: a year, never revalidated (a new version is a new path). */
const SCRIPT_CACHE = 'public, max-age=31536000, immutable';

/**
 * Serves the passkey script (src/pages/passkey-script.ts) at its content-hashed path: JavaScript,
 * cached for good, never sniffed, and loadable by pages of our own origin only.
 */
export const passkeyScriptHandler: RouteHandler = async (ctx) => {
  ctx.set('Content-Type', 'text/javascript; charset=utf-8');
  ctx.set('Cache-Control', SCRIPT_CACHE);
  ctx.set('X-Content-Type-Options', 'nosniff');
  ctx.set('Cross-Origin-Resource-Policy', 'same-origin');
  ctx.body = PASSKEY_SCRIPT;
};
