import type { Context, Next } from 'koa';
import { engineRouteKey } from '../../http/engine-path.js';
import type { RouteHandler } from '../../http/router.js';

/**
 * RFC 8414 §3: the metadata of issuer `{base}{path}` is also at
 * `/.well-known/oauth-authorization-server{path}`. It is the engine's discovery document.
 */
export function metadataAliasHandler(oauthPath: string): RouteHandler {
  return (ctx, _params, next) => {
    if (ctx.method === 'GET' || ctx.method === 'HEAD') ctx.path = `${oauthPath}/.well-known/openid-configuration`;
    return next();
  };
}

/** How long shared caches may keep the discovery document and the JWKS (seconds). */
export const PUBLIC_DOCUMENT_MAX_AGE = 300;

/**
 * The engine's routes, with the public origin pinned and the public documents made cacheable:
 *
 * - Every URL the engine publishes or redirects to (the endpoints in discovery, the issuer's
 *   redirects) is built from the request's `href`: it is pinned here to the origin of `baseUrl`,
 *   so that a request with another `Host` (or, behind a proxy, other forwarded headers) gets our
 *   own URLs, never one that would send secrets and codes elsewhere.
 * - Discovery lists only the `query` response mode, the only one we answer in (the others are
 *   refused at /authorize), and the endpoints we serve beside the engine (`ownEndpoints`:
 *   userinfo, introspection, revocation).
 * - Discovery and JWKS no longer depend on the request, so shared caches may keep them for
 *   PUBLIC_DOCUMENT_MAX_AGE seconds (the key-rotation waits allow for it).
 */
export function publicDocuments(
  oauthPath: string,
  publicOrigin: string,
  isPublicDocument: (ctx: Context) => boolean,
  ownEndpoints: Readonly<Record<string, unknown>>,
) {
  const prefix = engineRouteKey(oauthPath);
  return async function pinAndCache(ctx: Context, next: Next): Promise<void> {
    const key = engineRouteKey(ctx.path);
    if (key !== prefix && !key.startsWith(`${prefix}/`)) return next();
    Object.defineProperty(ctx, 'href', {
      configurable: true,
      get(this: Context) {
        return publicOrigin + this.originalUrl;
      },
    });
    await next();
    if (!isPublicDocument(ctx) || ctx.status !== 200) return;
    ctx.set('Cache-Control', `public, max-age=${PUBLIC_DOCUMENT_MAX_AGE}`);
    const body = ctx.body as Record<string, unknown> | undefined;
    if (body && typeof body === 'object' && 'response_modes_supported' in body) {
      body.response_modes_supported = ['query'];
      Object.assign(body, ownEndpoints);
    }
  };
}
