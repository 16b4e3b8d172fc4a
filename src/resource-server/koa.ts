import {
  checkRecentSignIn,
  checkScopes,
  checkSecondFactor,
  checkTenant,
  recentSignInSeconds,
  TokenError,
  type AccessTokenContext,
  type TokenVerifier,
} from './verifier.js';

/** `ctx.state.auth` after `authenticate`. */
export interface AuthState {
  auth: AccessTokenContext;
}

/**
 * The parts of a Koa context the kit uses. Stated here rather than imported from Koa's types, so
 * that an API built on the light entry (`talent-auth/resource-server`) needs no Koa types at all;
 * a Koa context is one of these.
 */
export interface KoaLikeContext {
  get(field: string): string;
  set(field: string, value: string): void;
  status: number;
  body: unknown;
  state: object;
  /** The request's method and absolute URL: what a DPoP proof is checked against (option `dpop`). */
  method?: string;
  href?: string;
}

/** Koa's `next`. */
export type KoaLikeNext = () => Promise<unknown>;

/** A Koa middleware of the kit: `app.use(authenticate(verifier))`. */
export type KoaLikeMiddleware = (ctx: KoaLikeContext, next: KoaLikeNext) => Promise<void>;

function refuse(ctx: KoaLikeContext, error: TokenError): void {
  ctx.status = error.status;
  // WWW-Authenticate, and DPoP-Nonce with a use_dpop_nonce refusal.
  for (const [name, value] of Object.entries(error.headers)) ctx.set(name, value);
  ctx.set('Cache-Control', 'no-store');
  ctx.body = error.toJSON();
}

/**
 * Koa middleware: verifies the Bearer access token (or, with the verifier's option `dpop`, a
 * DPoP-bound token and its proof) and puts what it says in `ctx.state.auth`. Answers 401 (no or
 * an invalid token or proof), 400 (not a Bearer header) or 503 (keys unreachable) with the
 * RFC 6750 (or RFC 9449) challenge; the request goes no further.
 *
 * @example
 * ```ts
 * api.use(authenticate(verifier));
 * api.use((ctx) => { const { auth } = ctx.state as AuthState; ctx.body = { tenant: auth.tenant }; });
 * ```
 */
export function authenticate(verifier: TokenVerifier): KoaLikeMiddleware {
  return async function authenticateBearer(ctx, next) {
    let auth: AccessTokenContext;
    const authorization = ctx.get('authorization') || undefined;
    try {
      // The URL as Koa reads it (behind a proxy: with `app.proxy`, from X-Forwarded-Proto and -Host).
      auth = await verifier.verifyRequest({
        authorization,
        dpop: ctx.get('dpop') || undefined,
        method: ctx.method ?? '',
        url: ctx.href ?? '',
      });
    } catch (error) {
      if (error instanceof TokenError) return refuse(ctx, error);
      throw error;
    }
    (ctx.state as AuthState).auth = auth;
    // RFC 9449 §9: a DPoP client learns the current nonce from every answer, before it is asked.
    const nonce = isDpop(authorization) ? verifier.dpopNonce?.() : undefined;
    if (nonce) ctx.set('DPoP-Nonce', nonce);
    await next();
  };
}

/** Whether a request presented its token with the DPoP scheme. */
function isDpop(authorization: string | undefined): boolean {
  // Node's parser takes a header's value without the spaces around it.
  return /^DPoP /i.test(authorization ?? '');
}

/** A check on the verified token, as middleware after `authenticate` (401 when it did not run). */
function afterAuthenticate(verifier: TokenVerifier, check: (auth: AccessTokenContext, ctx: KoaLikeContext) => void): KoaLikeMiddleware {
  return async function checkToken(ctx, next) {
    const { auth } = ctx.state as Partial<AuthState>;
    if (!auth) return refuse(ctx, TokenError.missing(verifier.realm));
    try {
      check(auth, ctx);
    } catch (error) {
      if (error instanceof TokenError) return refuse(ctx, error);
      throw error;
    }
    await next();
  };
}

/**
 * Koa middleware after `authenticate`: 403 `insufficient_scope` naming every missing scope (and
 * 401 when `authenticate` did not run before it).
 */
export function requireScopes(verifier: TokenVerifier, ...scopes: string[]): KoaLikeMiddleware {
  return afterAuthenticate(verifier, (auth) => checkScopes(auth, scopes, verifier.realm));
}

/**
 * Koa middleware after `authenticate`, the tenant guard: the request's tenant, as the API tells it
 * (`tenantOf`: from the path, the host name, ...), must be the token's; otherwise 403. Put it
 * before any handler that reads tenant data.
 *
 * @example
 * ```ts
 * router.get('/tenants/:tenant/users', authenticate(verifier), requireTenant(verifier, (ctx) => ctx.params.tenant),
 *   requireScopes(verifier, 'scim.read'), listUsers);
 * ```
 */
export function requireTenant<C extends KoaLikeContext>(verifier: TokenVerifier, tenantOf: (ctx: C) => string | undefined): KoaLikeMiddleware {
  return afterAuthenticate(verifier, (auth, ctx) => checkTenant(auth, tenantOf(ctx as C), verifier.realm));
}

/**
 * Koa middleware after `authenticate`: the route needs a sign-in with a second factor (the token's
 * `amr` holds `mfa`). Otherwise 401 `insufficient_user_authentication` with `acr_values` (RFC 9470;
 * 403 `insufficient_scope` for a machine token).
 *
 * @example
 * ```ts
 * router.get('/employees/:id/salary', authenticate(verifier), requireSecondFactor(verifier), showSalary);
 * ```
 */
export function requireSecondFactor(verifier: TokenVerifier): KoaLikeMiddleware {
  return afterAuthenticate(verifier, (auth) => checkSecondFactor(auth, verifier.realm));
}

/**
 * Koa middleware after `authenticate`: the user signed in at most `minutes` ago (the token's
 * `auth_time`). Otherwise 401 `insufficient_user_authentication` with `max_age` in seconds (RFC
 * 9470; 403 `insufficient_scope` for a machine token).
 *
 * @throws TypeError at once when `minutes` is not a positive number.
 * @example
 * ```ts
 * router.delete('/employees/:id', authenticate(verifier), requireRecentSignIn(verifier, 5), removeEmployee);
 * ```
 */
export function requireRecentSignIn(verifier: TokenVerifier, minutes: number): KoaLikeMiddleware {
  recentSignInSeconds(minutes);
  return afterAuthenticate(verifier, (auth) => checkRecentSignIn(auth, minutes, verifier.realm));
}
