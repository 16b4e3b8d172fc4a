import type { Context, Next } from 'koa';
import { checkScopes, TokenError, type AccessTokenContext, type TokenVerifier } from './verifier.js';

/** `ctx.state.auth` after `authenticate`. */
export interface AuthState {
  auth: AccessTokenContext;
}

function refuse(ctx: Context, error: TokenError): void {
  ctx.status = error.status;
  ctx.set('WWW-Authenticate', error.challenge);
  ctx.set('Cache-Control', 'no-store');
  ctx.body = error.toJSON();
}

/** Koa middleware: verifies the Bearer access token and puts what it says in `ctx.state.auth`. */
export function authenticate(verifier: TokenVerifier) {
  return async function authenticateBearer(ctx: Context, next: Next): Promise<void> {
    let auth: AccessTokenContext;
    try {
      auth = await verifier.verifyAuthorization(ctx.get('authorization') || undefined);
    } catch (error) {
      if (error instanceof TokenError) return refuse(ctx, error);
      throw error;
    }
    (ctx.state as AuthState).auth = auth;
    await next();
  };
}

/** Koa middleware after `authenticate`: 403 insufficient_scope naming any missing scope. */
export function requireScopes(verifier: TokenVerifier, ...scopes: string[]) {
  return async function requireTokenScopes(ctx: Context, next: Next): Promise<void> {
    const { auth } = ctx.state as Partial<AuthState>;
    if (!auth) return refuse(ctx, TokenError.missing(verifier.realm));
    try {
      checkScopes(auth, scopes, verifier.realm);
    } catch (error) {
      if (error instanceof TokenError) return refuse(ctx, error);
      throw error;
    }
    await next();
  };
}
