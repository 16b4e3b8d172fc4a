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

declare global {
  // Express's own request type, merged: `req.auth` is typed in every Express handler of an app
  // that imports the kit (with or without @types/express installed).
  // eslint-disable-next-line @typescript-eslint/no-namespace
  namespace Express {
    interface Request {
      /** The verified access token, set by `expressAuthenticate`. */
      auth?: AccessTokenContext;
    }
  }
}

/** The parts of Express's (or Node's) request and response that the kit uses. */
export interface ExpressLikeRequest {
  headers: { authorization?: string | undefined; dpop?: string | string[] | undefined; host?: string | undefined };
  auth?: AccessTokenContext;
  /** The request's method, scheme and path: what a DPoP proof is checked against (option `dpop`). */
  method?: string;
  protocol?: string;
  originalUrl?: string;
  /** Express 5's host with its port: honours `trust proxy` (X-Forwarded-Host), as `protocol` does. */
  host?: string;
  /** Express's header reader (the raw Host header, whatever `trust proxy` says). */
  get?(name: string): string | undefined;
}

/**
 * The absolute URL the client called, as Express reads it: `trust proxy` decides the scheme and
 * the host (`req.host`); the kit's `dpop.origin` option replaces both when the API knows its own.
 */
function requestUrl(req: ExpressLikeRequest): string {
  const host = req.host ?? req.get?.('host') ?? req.headers.host;
  return req.protocol && host && req.originalUrl ? `${req.protocol}://${host}${req.originalUrl}` : '';
}
/** The parts of Express's response that the kit uses. */
export interface ExpressLikeResponse {
  status(code: number): this;
  set(name: string, value: string): this;
  json(body: unknown): void;
}
type NextFunction = (error?: unknown) => void;

function refuse(res: ExpressLikeResponse, error: TokenError): void {
  res.status(error.status);
  // WWW-Authenticate, and DPoP-Nonce with a use_dpop_nonce refusal.
  for (const [name, value] of Object.entries(error.headers)) res.set(name, value);
  res.set('Cache-Control', 'no-store').json(error.toJSON());
}

/**
 * Express middleware: verifies the Bearer access token (or, with the verifier's option `dpop`, a
 * DPoP-bound token and its proof) into `req.auth`.
 */
export function expressAuthenticate(verifier: TokenVerifier) {
  return (req: ExpressLikeRequest, res: ExpressLikeResponse, next: NextFunction): void => {
    const { dpop } = req.headers;
    verifier.verifyRequest({
      authorization: req.headers.authorization,
      // Two DPoP headers are two proofs: refused (RFC 9449 §4.3), as a joined value.
      dpop: Array.isArray(dpop) ? dpop.join(',') : dpop,
      method: req.method ?? '',
      url: requestUrl(req),
    }).then(
      (auth) => {
        req.auth = auth;
        // RFC 9449 §9: a DPoP client learns the current nonce from every answer, before it is asked.
        const nonce = /^DPoP /i.test(req.headers.authorization?.trim() ?? '') ? verifier.dpopNonce?.() : undefined;
        if (nonce) res.set('DPoP-Nonce', nonce);
        next();
      },
      (error: unknown) => (error instanceof TokenError ? refuse(res, error) : next(error)),
    );
  };
}

/** A check on the verified token, as Express middleware after `expressAuthenticate` (401 when it did not run). */
function afterAuthenticate<R extends ExpressLikeRequest>(verifier: TokenVerifier, check: (auth: AccessTokenContext, req: R) => void) {
  return (req: R, res: ExpressLikeResponse, next: NextFunction): void => {
    try {
      if (!req.auth) throw TokenError.missing(verifier.realm);
      check(req.auth, req);
      next();
    } catch (error) {
      if (error instanceof TokenError) refuse(res, error);
      else next(error);
    }
  };
}

/** Express middleware after `expressAuthenticate`: 403 insufficient_scope naming any missing scope. */
export function expressRequireScopes(verifier: TokenVerifier, ...scopes: string[]) {
  return afterAuthenticate(verifier, (auth) => checkScopes(auth, scopes, verifier.realm));
}

/**
 * Express middleware after `expressAuthenticate`, the tenant guard: the request's tenant, as the
 * API tells it (`tenantOf`: from the path, the host name, ...), must be the token's; otherwise 403.
 *
 * @example
 * ```ts
 * app.get('/tenants/:tenant/users', expressAuthenticate(verifier),
 *   expressRequireTenant(verifier, (req: Request) => req.params.tenant), listUsers);
 * ```
 */
export function expressRequireTenant<R extends ExpressLikeRequest>(verifier: TokenVerifier, tenantOf: (req: R) => string | undefined) {
  return afterAuthenticate<R>(verifier, (auth, req) => checkTenant(auth, tenantOf(req), verifier.realm));
}

/**
 * Express middleware after `expressAuthenticate`: the route needs a sign-in with a second factor
 * (the token's `amr` holds `mfa`); otherwise 401 `insufficient_user_authentication` with
 * `acr_values` (RFC 9470; 403 `insufficient_scope` for a machine token).
 */
export function expressRequireSecondFactor(verifier: TokenVerifier) {
  return afterAuthenticate(verifier, (auth) => checkSecondFactor(auth, verifier.realm));
}

/**
 * Express middleware after `expressAuthenticate`: the user signed in at most `minutes` ago (the
 * token's `auth_time`); otherwise 401 `insufficient_user_authentication` with `max_age` in seconds
 * (RFC 9470; 403 `insufficient_scope` for a machine token).
 *
 * @throws TypeError at once when `minutes` is not a positive number.
 */
export function expressRequireRecentSignIn(verifier: TokenVerifier, minutes: number) {
  recentSignInSeconds(minutes);
  return afterAuthenticate(verifier, (auth) => checkRecentSignIn(auth, minutes, verifier.realm));
}
