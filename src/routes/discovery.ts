import type { Context, Next } from 'koa';

/**
 * RFC 8414 §3: the metadata of issuer `{base}{path}` is also at
 * `/.well-known/oauth-authorization-server{path}`. It is the engine's discovery document.
 */
export function authorizationServerMetadataAlias(oauthPath: string) {
  const alias = `/.well-known/oauth-authorization-server${oauthPath}`;
  return function serveMetadataAlias(ctx: Context, next: Next): Promise<void> {
    if (ctx.path === alias && (ctx.method === 'GET' || ctx.method === 'HEAD')) {
      ctx.path = `${oauthPath}/.well-known/openid-configuration`;
    }
    return next();
  };
}
