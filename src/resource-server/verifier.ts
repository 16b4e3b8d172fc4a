import { createHash } from 'node:crypto';
import {
  createLocalJWKSet,
  createRemoteJWKSet,
  errors as joseErrors,
  jwtVerify,
  type JSONWebKeySet,
  type JWTPayload,
  type JWTVerifyGetKey,
} from 'jose';
import type { Constraints } from '../../policies/constraints.js';
import { ACR_MFA } from '../../policies/authentication-context.js';
import {
  InsufficientScope,
  InsufficientUserAuthentication,
  InvalidBearerRequest,
  InvalidToken,
  KeysUnavailable,
  TokenError,
  TokenStatusUnavailable,
  dpopChallenge,
} from '../../policies/errors.js';
import { DPOP_ALGORITHMS, DpopNonces, DpopProofs, type DpopNonceOptions, type DpopRequest } from './dpop.js';

export { TokenError };

/** What an API learns from a verified access token. */
export interface AccessTokenContext {
  /** The user (named-user token) or the client ID (machine token). */
  sub: string;
  clientId: string;
  tenant: string | undefined;
  scopes: ReadonlySet<string>;
  /** `{ [apiId]: { [dimension]: allowed values } }`, empty when unconstrained. */
  constraints: Constraints;
  /** True for a token of a signed-in user, false for a client_credentials token. */
  isNamedUser: boolean;
  /** How the user signed in (RFC 8176 `amr`: `pwd`, `otp`, `hwk`, `swk`, `mfa`); empty for a machine token. */
  amr: readonly string[];
  /** The class of the user's sign-in (`urn:talent-auth:acr:pwd` or `urn:talent-auth:acr:mfa`); undefined for a machine token. */
  acr: string | undefined;
  /** When the user signed in, seconds since the epoch (`auth_time`); undefined for a machine token. */
  authTime: number | undefined;
  claims: JWTPayload;
}

/** What `createTokenVerifier()` takes. */
export interface TokenVerifierOptions {
  /** The authorization server's issuer, e.g. `https://auth.example.com/oauth2`. */
  issuer: string;
  /** The audience of the platform's APIs (the server's `audience` option). */
  audience: string;
  /** The public keys: a key set, or the JWKS URL (`{issuer}/jwks`), fetched and cached. */
  jwks: JSONWebKeySet | URL;
  /** Accepted signing algorithms; default ES256, RS256, PS256, EdDSA. */
  algorithms?: string[];
  clockToleranceSeconds?: number;
  /** A remote key set is refetched at most once per cooldown, even for unknown `kid`s; default 30 s. */
  jwksCooldownSeconds?: number;
  /** A remote key set is kept this long before a refetch; default 600 s. */
  jwksCacheMaxAgeSeconds?: number;
  /** The realm of WWW-Authenticate challenges; default the audience. */
  realm?: string;
  /**
   * Introspect mode: after the local checks, ask the authorization server whether the token is
   * still live (RFC 7662), so that a revoked token, an ended consent or a deleted app is refused
   * within `cacheSeconds` rather than at the token's `exp`. The API authenticates as one of its
   * tenant's client configurations (or a confidential app). Off by default: local verification
   * needs no call per request.
   */
  introspection?: IntrospectionOptions;
  /**
   * Accept DPoP-bound tokens (RFC 9449): `Authorization: DPoP <token>` with its `DPoP` proof,
   * checked for the request's method and URL, its time (five minutes), the token (`ath`), the
   * token's key (`cnf.jkt`), and used once (this process keeps the proofs it saw: `maxProofs`,
   * default 100 000; when that many are still in their window, new proofs are refused until some
   * leave it). A bound token presented as Bearer is refused, with or without this option.
   * Off by default: DPoP-bound tokens are then refused.
   *
   * `nonce` (RFC 9449 §9): every proof must also carry a nonce this API handed out; a proof without
   * the current one is answered 401 `use_dpop_nonce` with the nonce in `DPoP-Nonce` (and each
   * accepted DPoP request's answer carries the current one). `true` derives the nonces from a
   * random secret of this verifier; `{ secret }` from a secret the API's instances share, so that
   * each accepts the others' nonces with no shared state. See DpopNonceOptions.
   *
   * `origin`: the API's public origin (e.g. `https://api.example.com`). A proof's `htu` is then
   * checked against this origin with the request's path, whatever the request's `Host` says: the
   * URL a framework reads comes from the Host (or forwarded) header the caller sends, and behind a
   * proxy that rewrites Host it is not the URL the client called. Without it, the framework's URL.
   */
  dpop?: boolean | { maxProofs?: number; nonce?: boolean | DpopNonceOptions; origin?: string };
}

/** How the kit asks the authorization server about a token (introspect mode). */
export interface IntrospectionOptions {
  /** The introspection endpoint; default `{issuer}/introspect`. */
  url?: URL;
  clientId: string;
  clientSecret: string;
  /** How long an answer is reused for the same token, 0..60 s; default 5. */
  cacheSeconds?: number;
  /** How long to wait for an answer; default 3000 ms. Past it the request is refused (503). */
  timeoutMs?: number;
}

const MAX_CACHED_ANSWERS = 10_000;

/**
 * Asks the introspection endpoint whether tokens are live, answers kept `cacheSeconds` by SHA-256
 * of the token, at most `maxCached` of them (the oldest goes first). Fails closed: a token it cannot
 * ask about is refused with 503. Internal (the verifier's option `introspection`), exported for its
 * tests.
 */
export function introspector(options: IntrospectionOptions, issuer: string, realm: string, maxCached = MAX_CACHED_ANSWERS): (token: string) => Promise<boolean> {
  const url = options.url ?? new URL(`${issuer}/introspect`);
  const cacheMs = Math.min(60, Math.max(0, options.cacheSeconds ?? 5)) * 1000;
  const authorization = `Basic ${Buffer.from(`${encodeURIComponent(options.clientId)}:${encodeURIComponent(options.clientSecret)}`).toString('base64')}`;
  const answers = new Map<string, { active: boolean; until: number }>();
  /** The endpoint's `active`, or undefined when it could not be asked (no answer, not a 200, not JSON). */
  const ask = (token: string): Promise<boolean | undefined> => fetch(url, {
    method: 'POST',
    headers: { authorization, 'content-type': 'application/x-www-form-urlencoded', accept: 'application/json' },
    body: new URLSearchParams({ token, token_type_hint: 'access_token' }).toString(),
    signal: AbortSignal.timeout(options.timeoutMs ?? 3000),
  }).then(async (response) => (response.status === 200 ? ((await response.json()) as { active?: unknown }).active === true : undefined))
    .catch(() => undefined);
  return async (token) => {
    const key = createHash('sha256').update(token).digest('base64url');
    const cached = answers.get(key);
    if (cached && cached.until > Date.now()) return cached.active;
    const active = await ask(token);
    if (active === undefined) throw new TokenStatusUnavailable(realm);
    if (cacheMs > 0) {
      if (answers.size >= maxCached) answers.delete(answers.keys().next().value as string);
      answers.set(key, { active, until: Date.now() + cacheMs });
    }
    return active;
  };
}

/** A request's credentials as the kit reads them: its headers, method and URL. */
export interface AuthorizedRequest extends Omit<DpopRequest, 'proof'> {
  /** The `Authorization` header. */
  authorization: string | undefined;
  /** The `DPoP` header (the proof of a DPoP-bound token). */
  dpop: string | undefined;
}

/** Verifies our access tokens; made by `createTokenVerifier()`. */
export interface TokenVerifier {
  /**
   * Verifies a JWT access token alone (a DPoP-bound one too: how it was presented is not known
   * here; introspection answers for both). A token from a request: verifyRequest. Throws TokenError.
   */
  verify(token: string): Promise<AccessTokenContext>;
  /** Verifies the token of an `Authorization: Bearer ...` header (RFC 6750 §2.1), a DPoP-bound one refused; throws TokenError. */
  verifyAuthorization(header: string | undefined): Promise<AccessTokenContext>;
  /**
   * Verifies a request's token: a Bearer token, or (option `dpop`) a DPoP-bound token with its
   * proof for this request (RFC 9449 §7.1). Errors of a DPoP request carry a DPoP challenge.
   * @throws TokenError
   */
  verifyRequest(request: AuthorizedRequest): Promise<AccessTokenContext>;
  readonly realm: string;
  /**
   * With option `dpop.nonce`: the nonce DPoP clients are to put in their next proofs, for the
   * `DPoP-Nonce` header of an answer (the kit's middleware sets it); undefined without.
   */
  dpopNonce?(): string | undefined;
}

function isStringArray(value: unknown): value is string[] {
  return Array.isArray(value) && value.every((item) => typeof item === 'string');
}

/** Only well-formed constraints are believed; anything else means the token is refused. */
function readConstraints(value: unknown): Constraints | undefined {
  if (value === undefined) return {};
  if (typeof value !== 'object' || value === null || Array.isArray(value)) return undefined;
  const result: Constraints = {};
  for (const [apiId, filters] of Object.entries(value)) {
    if (typeof filters !== 'object' || filters === null || Array.isArray(filters)) return undefined;
    if (!Object.values(filters).every(isStringArray)) return undefined;
    result[apiId] = filters as Record<string, string[]>;
  }
  return result;
}

/** `Authorization: <scheme> <token>`: the scheme (Bearer or DPoP) and a token68 (RFC 6750 §2.1, RFC 9449 §7.1). */
const TOKEN_IN_HEADER = /^(Bearer|DPoP) +([A-Za-z0-9\-._~+/]+=*)$/i;

/** The token verifier of the resource-server kit: RFC 9068 JWTs of this authorization server. */
export function createTokenVerifier(options: TokenVerifierOptions): TokenVerifier {
  const keys = options.jwks instanceof URL
    ? createRemoteJWKSet(options.jwks, {
      cooldownDuration: (options.jwksCooldownSeconds ?? 30) * 1000,
      cacheMaxAge: (options.jwksCacheMaxAgeSeconds ?? 600) * 1000,
      timeoutDuration: 5000,
    })
    : createLocalJWKSet(options.jwks);
  return verifierWithKeys(options, keys);
}

/**
 * A verifier whose keys come from `keys` at each verification: the server's own APIs verify with
 * the server's key set as it is now (it changes while the server runs when kept in the store).
 * Not part of the kit's entry point.
 */
export function verifierWithKeys(options: Omit<TokenVerifierOptions, 'jwks'>, keys: JWTVerifyGetKey): TokenVerifier {
  const realm = options.realm ?? options.audience;
  const refuse = (description: string) => new InvalidToken(description, realm);
  const isLive = options.introspection ? introspector(options.introspection, options.issuer, realm) : undefined;
  const maxProofs = (typeof options.dpop === 'object' ? options.dpop.maxProofs : undefined) ?? 100_000;
  // A mistake of the API's code, said at start: a cache of no proofs would let every proof be replayed.
  if (!Number.isSafeInteger(maxProofs) || maxProofs < 1) throw new TypeError(`dpop.maxProofs must be a positive integer, not ${String(maxProofs)}`);
  const nonceOption = typeof options.dpop === 'object' ? options.dpop.nonce : undefined;
  // A bad secret or window is a mistake of the API's code, said at start (a TypeError).
  const nonces = nonceOption ? new DpopNonces(realm, nonceOption === true ? {} : nonceOption) : undefined;
  const originOption = typeof options.dpop === 'object' ? options.dpop.origin : undefined;
  const publicOrigin = originOption === undefined ? undefined : URL.parse(originOption);
  if (originOption !== undefined && (!publicOrigin || publicOrigin.origin !== originOption.replace(/\/$/, '') || !/^https?:$/.test(publicOrigin.protocol))) {
    throw new TypeError(`dpop.origin must be an http(s) origin such as https://api.example.com, not ${String(originOption)}`);
  }
  /** The URL a proof is checked against: the request's, on the API's public origin when it has one. */
  const proofUrl = (url: string): string => {
    if (!publicOrigin) return url;
    const called = URL.parse(url, publicOrigin.origin);
    return called ? `${publicOrigin.origin}${called.pathname}${called.search}` : '';
  };
  const proofs = options.dpop ? new DpopProofs(realm, { maxProofs, clockToleranceSeconds: options.clockToleranceSeconds ?? 5, ...(nonces ? { nonces } : {}) }) : undefined;

  /** A token's signature and claims; `presented`: how it came (its binding is checked against it), if it matters. */
  async function verifyToken(token: string, presented?: 'bearer' | 'dpop'): Promise<AccessTokenContext> {
    let payload: JWTPayload;
    try {
      ({ payload } = await jwtVerify(token, keys, {
        issuer: options.issuer,
        audience: options.audience,
        typ: 'at+jwt',
        algorithms: options.algorithms ?? ['ES256', 'RS256', 'PS256', 'EdDSA'],
        clockTolerance: options.clockToleranceSeconds ?? 5,
        requiredClaims: ['exp', 'iat', 'sub', 'client_id'],
      }));
    } catch (error) {
      if (error instanceof joseErrors.JWTExpired) throw refuse('the access token has expired');
      if (error instanceof joseErrors.JWKSTimeout || !(error instanceof joseErrors.JOSEError)) {
        throw new KeysUnavailable(realm);
      }
      throw refuse('the access token is not valid');
    }
    const constraints = readConstraints(payload.constraints);
    if (typeof payload.client_id !== 'string' || !constraints) throw refuse('the access token is not valid');
    // RFC 9449 §7.1: a token bound to a key is not a bearer token; whoever holds it without the key gets nothing.
    const hasKey = payload.cnf !== undefined;
    if (hasKey && presented === 'bearer') throw refuse('the access token is bound to a DPoP key: present it with Authorization: DPoP and its proof');
    if (presented === 'dpop' && !hasKey) throw refuse('the access token is not bound to a DPoP key: present it as Bearer');
    if (isLive && !(await isLive(token))) throw refuse('the access token is no longer valid');
    return {
      sub: payload.sub!,
      clientId: payload.client_id,
      tenant: typeof payload.tenant === 'string' ? payload.tenant : undefined,
      scopes: new Set(typeof payload.scope === 'string' ? payload.scope.split(' ').filter(Boolean) : []),
      constraints,
      isNamedUser: payload.sub !== payload.client_id,
      amr: isStringArray(payload.amr) ? payload.amr : [],
      acr: typeof payload.acr === 'string' ? payload.acr : undefined,
      authTime: typeof payload.auth_time === 'number' ? payload.auth_time : undefined,
      claims: payload,
    };
  }

  const verify = (token: string) => verifyToken(token);
  async function verifyAuthorization(header: string | undefined): Promise<AccessTokenContext> {
    if (!header) throw TokenError.missing(realm);
    const match = TOKEN_IN_HEADER.exec(header.trim());
    if (match?.[1]?.toLowerCase() !== 'bearer') throw new InvalidBearerRequest(realm);
    return verifyToken(match[2]!, 'bearer');
  }

  return {
    realm,
    verify,
    verifyAuthorization,
    dpopNonce: () => nonces?.current(),
    async verifyRequest(request) {
      const match = proofs && request.authorization ? TOKEN_IN_HEADER.exec(request.authorization.trim()) : undefined;
      if (!proofs || match?.[1]?.toLowerCase() !== 'dpop') {
        try {
          return await verifyAuthorization(request.authorization);
        } catch (error) {
          // RFC 9449 §7.1: a server that takes DPoP says so in its challenges.
          // (A Bearer request's errors carry a Bearer challenge only: the DPoP one is added.)
          if (proofs && error instanceof TokenError) {
            (error as { challenge: string }).challenge = `${error.challenge}, ${dpopChallenge(`Bearer realm="${realm}"`, DPOP_ALGORITHMS)}`;
          }
          throw error;
        }
      }
      const token = match[2]!;
      try {
        const context = await verifyToken(token, 'dpop');
        await proofs.check({ proof: request.dpop, method: request.method, url: proofUrl(request.url) }, token, context.claims);
        return context;
      } catch (error) {
        if (error instanceof TokenError && !error.challenge.startsWith('DPoP ')) {
          (error as { challenge: string }).challenge = dpopChallenge(error.challenge, DPOP_ALGORITHMS);
        }
        throw error;
      }
    },
  };
}

/** RFC 6750 §3.1: 403 insufficient_scope naming what is missing. */
export function checkScopes(auth: AccessTokenContext, required: readonly string[], realm: string): void {
  const missing = required.filter((scope) => !auth.scopes.has(scope));
  if (missing.length) {
    throw new InsufficientScope(`the access token lacks the scope ${missing.map((scope) => `'${scope}'`).join(', ')}`, realm, required);
  }
}

/**
 * The tenant guard: a token of one tenant never reads another tenant's data. `tenant` is the
 * tenant the request is for, as the API knows it (its path, its host name); a token of another
 * tenant, or of none, is refused with 403 `insufficient_scope`, and so is a request whose tenant
 * the API could not tell (undefined).
 *
 * @throws TokenError 403 when the token's tenant is not `tenant`.
 */
export function checkTenant(auth: AccessTokenContext, tenant: string | undefined, realm: string): void {
  if (tenant === undefined || tenant === '' || auth.tenant !== tenant) {
    throw new InsufficientScope('the access token belongs to another tenant', realm);
  }
}

/** The user's sign-in checks need a user: a machine token has none, and no sign-in would give it one. */
function checkSignedInUser(auth: AccessTokenContext, realm: string): void {
  if (!auth.isNamedUser) throw new InsufficientScope('this route needs the token of a signed-in user', realm);
}

/**
 * "Requires a second factor": the user's sign-in used one (`amr` holds `mfa`, or `acr` is the mfa
 * class). A user's token without it is refused with 401 `insufficient_user_authentication` and
 * `acr_values` naming the mfa class (RFC 9470 §3), so that the app signs her in again asking for
 * it; a machine token with 403 `insufficient_scope`.
 *
 * @throws TokenError 401 or 403, as above.
 */
export function checkSecondFactor(auth: AccessTokenContext, realm: string): void {
  checkSignedInUser(auth, realm);
  if (auth.amr.includes('mfa') || auth.acr === ACR_MFA) return;
  throw new InsufficientUserAuthentication('this route needs a sign-in with a second factor', realm, { acrValues: ACR_MFA });
}

/** Seconds a route's "within N minutes" allows (RFC 9470's `max_age` is whole seconds, at least 1). */
export function recentSignInSeconds(minutes: number): number {
  // Number.isFinite takes no text for a number ('5' is not finite here).
  if (!Number.isFinite(minutes) || minutes <= 0) {
    throw new TypeError(`a recent sign-in is a positive number of minutes, not ${String(minutes)}`);
  }
  return Math.max(1, Math.floor(minutes * 60));
}

/**
 * "Authenticated within N minutes": the user signed in (`auth_time`) at most `minutes` ago. A
 * user's token whose sign-in is older, or that does not say when it was, is refused with 401
 * `insufficient_user_authentication` and `max_age` in seconds (RFC 9470 §3); a machine token with
 * 403 `insufficient_scope`. `now` is in milliseconds (default: the clock).
 *
 * @throws TypeError when `minutes` is not a positive number (a mistake of the API, not of the caller).
 * @throws TokenError 401 or 403, as above.
 */
export function checkRecentSignIn(auth: AccessTokenContext, minutes: number, realm: string, now = Date.now()): void {
  const maxAge = recentSignInSeconds(minutes);
  checkSignedInUser(auth, realm);
  if (auth.authTime !== undefined && Math.floor(now / 1000) - auth.authTime <= maxAge) return;
  throw new InsufficientUserAuthentication(`this route needs a sign-in within the last ${maxAge} s`, realm, { maxAge });
}
