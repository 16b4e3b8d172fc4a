import type { Context, Next } from 'koa';

/**
 * CORS at the token, revocation and userinfo endpoints: only a browser on the origin of a public
 * app's redirect URI (an SPA exchanging its code, revoking, asking who its user is) may call
 * them; nobody else gets a CORS header.
 *
 * - A preflight is answered here: with the CORS headers when its origin is such an origin, without
 *   them otherwise (the browser then stops). Which app calls is unknown at preflight time; the
 *   request itself is checked against its own client by the engine (clientBasedCORS).
 * - A request without an Origin (a server, curl) gets no CORS header at all; the engine would add
 *   `Access-Control-Allow-Origin: *`.
 * - Every answer carries `Pragma: no-cache` beside the engine's `Cache-Control: no-store`, for
 *   HTTP/1.0 caches (RFC 6749 §5.1).
 * - The answer to such an origin lets the page read `DPoP-Nonce` and `WWW-Authenticate`
 *   (Access-Control-Expose-Headers): a browser app must see the nonce to put in its next proof
 *   (RFC 9449 §8, §9) and the challenge that says why it was refused. The engine's answers (the
 *   token endpoint) carry their own CORS headers, checked against the calling client; our own
 *   answers (`ownAnswer`: userinfo, revocation) get them here.
 */
export function publicAppCors(publicOrigins: () => Promise<ReadonlySet<string>>, options: PublicAppCorsOptions = {}) {
  const methods = (options.methods ?? ['POST']).join(', ');
  return async function tokenCors(ctx: Context, next: Next): Promise<void> {
    const origin = ctx.get('origin');
    ctx.vary('Origin');
    if (ctx.method === 'OPTIONS') {
      ctx.set('Pragma', 'no-cache');
      if (origin && ctx.get('access-control-request-method') && (await publicOrigins()).has(origin)) {
        ctx.set('Access-Control-Allow-Origin', origin);
        ctx.set('Access-Control-Allow-Methods', methods);
        const requested = ctx.get('access-control-request-headers');
        if (requested) ctx.set('Access-Control-Allow-Headers', requested);
        ctx.set('Access-Control-Max-Age', '3600');
      }
      ctx.status = 204;
      return;
    }
    try {
      await next();
    } finally {
      ctx.set('Pragma', 'no-cache');
      if (!origin) {
        for (const name of Object.keys(ctx.response.headers)) {
          if (name.toLowerCase().startsWith('access-control-')) ctx.remove(name);
        }
      } else {
        if (options.ownAnswer && !ctx.response.get('Access-Control-Allow-Origin') && (await allowed(publicOrigins, origin))) {
          ctx.set('Access-Control-Allow-Origin', origin);
        }
        if (ctx.response.get('Access-Control-Allow-Origin') && !ctx.response.get('Access-Control-Expose-Headers')) {
          ctx.set('Access-Control-Expose-Headers', EXPOSED_HEADERS);
        }
      }
    }
  };
}

/** What a browser app must read of our answers: the DPoP nonce to retry with, and the challenge. */
const EXPOSED_HEADERS = 'DPoP-Nonce, WWW-Authenticate';

/** How publicAppCors serves an endpoint. */
export interface PublicAppCorsOptions {
  /** The methods a preflight allows; default POST. */
  methods?: readonly string[];
  /** The answer is ours, not the engine's (which sets CORS itself): allow the origin here. */
  ownAnswer?: boolean;
}

/** Whether `origin` is a public app's; false when that cannot be told now (no CORS then: the answer stands). */
async function allowed(publicOrigins: () => Promise<ReadonlySet<string>>, origin: string): Promise<boolean> {
  try {
    return (await publicOrigins()).has(origin);
  } catch {
    return false;
  }
}
