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
 */
export function publicAppCors(publicOrigins: () => Promise<ReadonlySet<string>>) {
  return async function tokenCors(ctx: Context, next: Next): Promise<void> {
    const origin = ctx.get('origin');
    ctx.vary('Origin');
    if (ctx.method === 'OPTIONS') {
      ctx.set('Pragma', 'no-cache');
      if (origin && ctx.get('access-control-request-method') && (await publicOrigins()).has(origin)) {
        ctx.set('Access-Control-Allow-Origin', origin);
        ctx.set('Access-Control-Allow-Methods', 'POST');
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
      }
    }
  };
}
