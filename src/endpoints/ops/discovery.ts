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
 * Every request under the OAuth path sees our public origin as its own: every URL the engine
 * builds from the request's `href` is pinned to the origin of `baseUrl`. That covers what it
 * publishes or redirects to (the endpoints in discovery, the issuer's redirects), so that a request
 * with another `Host` (or, behind a proxy, other forwarded headers) gets our own URLs, never one
 * that would send secrets and codes elsewhere; and what it checks against: the audiences a client
 * assertion may name (RFC 7523 §3: the audience identifies this server) and the URL a DPoP proof
 * must be made for (RFC 9449 §4.3: `htu` is the URL of the request as the server knows itself).
 * Without the pin, an assertion or proof made for another server would pass with that server's
 * name in `Host`. It runs before our routes, since the token and pushed authorization endpoints
 * hand their requests to the engine from there.
 */
export function pinPublicOrigin(oauthPath: string, publicOrigin: string) {
  const prefix = engineRouteKey(oauthPath);
  return async function pinOrigin(ctx: Context, next: Next): Promise<void> {
    pinIfOurs(ctx, prefix, publicOrigin);
    await next();
  };
}

/**
 * Pins `href` when the request's path is under the OAuth path. Run again after our routes, for a
 * request a route of ours moved there (the RFC 8414 metadata alias, metadataAliasHandler).
 */
function pinIfOurs(ctx: Context, prefix: string, publicOrigin: string): void {
  const key = engineRouteKey(ctx.path);
  if (key !== prefix && !key.startsWith(`${prefix}/`)) return;
  Object.defineProperty(ctx, 'href', {
    configurable: true,
    get(this: Context) {
      return publicOrigin + this.originalUrl;
    },
  });
}

/**
 * The engine's public documents made cacheable, their URLs pinned (pinPublicOrigin; again here for a
 * request a route of ours moved under the OAuth path):
 *
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
  return async function cacheable(ctx: Context, next: Next): Promise<void> {
    pinIfOurs(ctx, prefix, publicOrigin);
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
