/**
 * THE ERROR TABLE: every OAuth and API error the server answers, one class each, with its OAuth
 * `error` code, its HTTP status and a public description that is safe to show to the caller (never
 * a secret, token or code). Routes and rules throw these; one renderer writes them as
 * `{ "error", "error_description" }` JSON (or a page, in a browser flow); the engine's own errors
 * are translated into the same codes in one place (src/engine/errors.ts). ERRORS lists every row:
 * the table test covers each, and docs/errors.md is generated from it.
 */

/** What an error adds to the answer besides its body: headers such as Retry-After or Allow. */
export type ErrorHeaders = Record<string, string>;

/**
 * A description in the characters an `error_description` may hold (RFC 6749 §5.2, §4.1.2.1:
 * printable ASCII without `"` and `\`): a double quote becomes a single one, a backslash a
 * slash, anything else outside the set (controls, non-ASCII) a `?`. What the caller sent and we
 * quote (a scope, an origin) can thus never break the charset, nor a header it goes into.
 */
export function oauthDescription(text: string): string {
  return text.replace(/[^\x20-\x7e]|["\\]/g, (char) => (char === '"' ? "'" : char === '\\' ? '/' : '?'));
}

/** The base of every error the server answers. */
export class OAuthError extends Error {
  /** What went wrong, in the RFC 6749 charset (oauthDescription). */
  readonly description: string;

  constructor(
    readonly error: string,
    readonly status: number,
    description: string,
  ) {
    const safe = oauthDescription(description);
    super(safe);
    this.description = safe;
    this.name = new.target.name;
  }

  /** Headers the answer carries (Retry-After, Allow, WWW-Authenticate, ...). */
  get headers(): ErrorHeaders {
    return {};
  }

  toJSON(): { error: string; error_description: string } {
    return { error: this.error, error_description: this.description };
  }
}

/** 400 `invalid_request`: a parameter is missing, repeated or malformed, or the body is unreadable. */
export class InvalidRequest extends OAuthError {
  constructor(description: string) {
    super('invalid_request', 400, description);
  }
}

/** 401 `invalid_client` with a Basic challenge (RFC 6749 §5.2): client authentication failed. */
export class InvalidClient extends OAuthError {
  constructor(description = 'client authentication failed') {
    super('invalid_client', 401, description);
  }
}

/** 400 `invalid_grant`: a code or refresh token that is unknown, expired, used, foreign, or whose grant ended. */
export class InvalidGrant extends OAuthError {
  constructor(description: string) {
    super('invalid_grant', 400, description);
  }
}

/**
 * 400 `unauthorized_client` (RFC 6749 §5.2): an authenticated client asked for a grant type it is
 * not registered for, or one under the high-security profile does not authenticate as it requires.
 */
export class UnauthorizedClient extends OAuthError {
  constructor(description = 'the client is not registered for this grant type') {
    super('unauthorized_client', 400, description);
  }
}

/**
 * `access_denied` (RFC 6749 §4.1.2.1): the user, or her organization's policy, refused the app. An
 * authorization error: it goes back to the app's redirect URI, not as a status of ours.
 */
export class AccessDenied extends OAuthError {
  constructor(description: string) {
    super('access_denied', 400, description);
  }
}

/**
 * `unmet_authentication_requirements` (OpenID Connect's error for a sign-in that could not reach
 * what the request needs): the app asked, with `acr_values`, for a class of sign-in (a second
 * factor) that the sign-in did not reach. An authorization error: it goes back to the app's
 * redirect URI, like access_denied.
 */
export class UnmetAuthenticationRequirements extends OAuthError {
  constructor(description = 'the sign-in did not reach the authentication class the request asked for') {
    super('unmet_authentication_requirements', 400, description);
  }
}

/** 400 `unsupported_grant_type`. */
export class UnsupportedGrantType extends OAuthError {
  constructor(description = 'unsupported grant_type requested') {
    super('unsupported_grant_type', 400, description);
  }
}

/** 400 `invalid_scope`: a scope that is unknown, not assigned, or (management) not for this app. */
export class InvalidScope extends OAuthError {
  constructor(description: string) {
    super('invalid_scope', 400, description);
  }
}

/** 400 `invalid_target` (RFC 8707): a `resource` other than the one audience. */
export class InvalidTarget extends OAuthError {
  constructor(description = 'the requested resource is not valid for this request') {
    super('invalid_target', 400, description);
  }
}

/** 400 `invalid_request` with the field that is wrong: management input (library, API, CLI). */
export class ValidationError extends OAuthError {
  constructor(
    readonly field: string,
    message: string,
  ) {
    super('invalid_request', 400, `${field}: ${message}`);
  }
}

/** 404 `not_found`: no such record (or one of another tenant, which is answered alike). */
export class NotFound extends OAuthError {
  constructor(what: string) {
    super('not_found', 404, `${what} not found`);
  }
}

/** 405 `invalid_request` with `Allow`: a method the path does not have. */
export class MethodNotAllowed extends OAuthError {
  constructor(readonly allow: readonly string[]) {
    super('invalid_request', 405, `use ${allow.join(' or ')}`);
  }

  override get headers(): ErrorHeaders {
    return { Allow: this.allow.join(', ') };
  }
}

/** 408 `invalid_request`: the request body did not arrive in time (`limits.bodyTimeoutMs`). */
export class RequestTimeout extends OAuthError {
  constructor(seconds: number) {
    super('invalid_request', 408, `the request body did not arrive within ${seconds} s`);
  }
}

/** 409 `conflict`: a change that kept losing the race to other changes; try again. */
export class Conflict extends OAuthError {
  constructor(what: string) {
    super('conflict', 409, `${what} is being changed by someone else; try again`);
  }
}

/** 413 `invalid_request`: a request body over its limit (`limits`). */
export class PayloadTooLarge extends OAuthError {
  constructor(limit: number) {
    super('invalid_request', 413, `request body exceeds ${limit} bytes`);
  }
}

/** 415 `invalid_request`: a body of another media type or charset than the endpoint reads. */
export class UnsupportedMediaType extends OAuthError {
  constructor(description: string) {
    super('invalid_request', 415, description);
  }
}

/**
 * 429 `temporarily_unavailable` with Retry-After: a rate limit (failed client authentications).
 * RFC 6749 has no code for "too many attempts"; this registered one says what the situation is.
 */
export class TooManyRequests extends OAuthError {
  constructor(
    readonly retryAfter: number,
    description = `too many failed client authentications; retry after ${retryAfter} s`,
  ) {
    super('temporarily_unavailable', 429, description);
  }

  override get headers(): ErrorHeaders {
    return { 'Retry-After': String(this.retryAfter) };
  }
}

/**
 * 501 `not_supported`: a request this server is not set up to answer, e.g. unlocking a tenant's
 * user when the host's AccountStore cannot look users up by username (`findByUsername`).
 */
export class NotSupported extends OAuthError {
  constructor(description: string) {
    super('not_supported', 501, description);
  }
}

/** 500 `server_error`: something unexpected; the description says nothing of the cause. */
export class ServerError extends OAuthError {
  constructor(description = 'the server could not complete the request') {
    super('server_error', 500, description);
  }
}

/** 500 `server_error`: the host application read the body before us and kept nothing usable. */
export class BodyConsumedByHost extends ServerError {}

/** 500 `server_error`: the host mounted us under a path our published URLs do not have. */
export class MountedWrong extends ServerError {}

/** 503 `temporarily_unavailable` with Retry-After: the store cannot be reached. */
export class TemporarilyUnavailable extends OAuthError {
  constructor(description = 'the service is temporarily unavailable, try again') {
    super('temporarily_unavailable', 503, description);
  }

  override get headers(): ErrorHeaders {
    return { 'Retry-After': '1' };
  }
}

/**
 * A refused bearer token (RFC 6750 §3): its status, error and WWW-Authenticate challenge. The
 * resource-server kit, the consent API and the management API answer these.
 */
export class TokenError extends OAuthError {
  readonly challenge: string;

  constructor(error: string, status: number, description: string, realm: string, extra = '') {
    super(error, status, description);
    // The description in the RFC 6749 charset (no `"` nor `\\`, nothing outside printable ASCII): it
    // cannot end the quoted value nor break the header.
    this.challenge = `Bearer realm="${realm}", error="${error}", error_description="${this.description}"${extra}`;
  }

  override get headers(): ErrorHeaders {
    return { 'WWW-Authenticate': this.challenge };
  }

  /** RFC 6750 §3.1: a request without credentials gets a challenge without an error code. */
  static missing(realm: string): TokenError {
    const error = new InvalidToken('a bearer access token is required', realm);
    (error as { challenge: string }).challenge = `Bearer realm="${realm}"`;
    return error;
  }
}

/** 401 `invalid_token`: no valid bearer token (missing, malformed, expired, foreign, its user gone). */
export class InvalidToken extends TokenError {
  constructor(description: string, realm: string) {
    super('invalid_token', 401, description, realm);
  }
}

/** 403 `insufficient_scope`: a valid token that may not do this (a scope, a tenant, a right). */
export class InsufficientScope extends TokenError {
  constructor(description: string, realm: string, scope?: readonly string[]) {
    super('insufficient_scope', 403, description, realm, scope ? `, scope="${scope.join(' ')}"` : '');
  }
}

/**
 * 403 `invalid_token`: a valid token of a user whose account now belongs to another tenant than
 * the token's (the token no longer says who the user is; re-authorization, not a scope, helps).
 */
export class TenantMoved extends TokenError {
  constructor(realm: string) {
    super('invalid_token', 403, 'this token belongs to another tenant of the user', realm);
  }
}

/** What a route needs of the user's sign-in, as an RFC 9470 challenge says it. */
export interface UserAuthenticationNeeded {
  /** The class the token's sign-in must reach (`acr_values`). */
  acrValues?: string;
  /** The most seconds since the user signed in (`max_age`). */
  maxAge?: number;
}

/**
 * 401 `insufficient_user_authentication` (RFC 9470 §3): a valid token of a user whose sign-in does
 * not meet the route (no second factor, or too long ago); the challenge says what would, with
 * `acr_values` and `max_age`, so that the app can send the user through a sign-in that does.
 */
export class InsufficientUserAuthentication extends TokenError {
  constructor(description: string, realm: string, readonly needed: UserAuthenticationNeeded) {
    super('insufficient_user_authentication', 401, description, realm, [
      ...(needed.acrValues !== undefined ? [`, acr_values="${needed.acrValues}"`] : []),
      ...(needed.maxAge !== undefined ? [`, max_age="${needed.maxAge}"`] : []),
    ].join(''));
  }
}

/** 400 `invalid_request`: an Authorization header that is not `Bearer <token>`. */
export class InvalidBearerRequest extends TokenError {
  constructor(realm: string) {
    super('invalid_request', 400, 'the Authorization header is not a Bearer token', realm);
  }
}

/**
 * 401 `invalid_dpop_proof` (RFC 9449 §7.1): a DPoP-bound token whose proof is missing, malformed,
 * for another request (method, URL), too old, used before, for another token (`ath`) or signed by
 * another key than the token's (`cnf.jkt`). Its challenge is of the DPoP scheme and names the
 * algorithms a proof may use.
 */
export class InvalidDpopProof extends TokenError {
  constructor(description: string, realm: string, algorithms: readonly string[]) {
    super('invalid_dpop_proof', 401, description, realm);
    (this as { challenge: string }).challenge = dpopChallenge(this.challenge, algorithms);
  }
}

/**
 * 401 `use_dpop_nonce` (RFC 9449 §9): a resource server that requires server nonces got a proof
 * without its current nonce (none, a stale one, or one it never gave). The answer carries the
 * nonce to put in the next proof (`DPoP-Nonce`) and a DPoP challenge; a client retries once with it.
 */
export class UseDpopNonce extends TokenError {
  constructor(description: string, realm: string, algorithms: readonly string[], readonly nonce: string) {
    super('use_dpop_nonce', 401, description, realm);
    (this as { challenge: string }).challenge = dpopChallenge(this.challenge, algorithms);
  }

  override get headers(): ErrorHeaders {
    return { ...super.headers, 'DPoP-Nonce': this.nonce };
  }
}

/**
 * A Bearer challenge as the DPoP scheme says it (RFC 9449 §7.1): the answer to a request that
 * presented its token with `Authorization: DPoP`, with the algorithms a proof may use.
 */
export function dpopChallenge(bearerChallenge: string, algorithms: readonly string[]): string {
  return `${bearerChallenge.replace(/^Bearer /, 'DPoP ')}, algs="${algorithms.join(' ')}"`;
}

/** 503 `temporarily_unavailable`: the signing keys could not be fetched to verify a token. */
export class KeysUnavailable extends TokenError {
  constructor(realm: string) {
    super('temporarily_unavailable', 503, 'the signing keys could not be fetched', realm);
  }
}

/** 503 `temporarily_unavailable`: the resource-server kit could not ask the authorization server whether a token is live. */
export class TokenStatusUnavailable extends TokenError {
  constructor(realm: string) {
    super('temporarily_unavailable', 503, 'the authorization server could not tell whether the token is still valid', realm);
  }
}

/** A row of the error table: a class, an example of it, and when it is answered. */
export interface ErrorRow {
  example: OAuthError;
  when: string;
}

/** Every error the server answers (the engine's own, translated, use the same codes). */
export const ERRORS: readonly ErrorRow[] = [
  { example: new InvalidRequest(`missing required parameter 'grant_type'`), when: 'a parameter missing, repeated, malformed or of another grant; a body that cannot be read' },
  { example: new ValidationError('redirect_uris.0', `'ftp://x' is not allowed`), when: 'management input that breaks a rule, or a new secret asked for a client that has none (a public or private_key_jwt app or client); `field` names it' },
  { example: new InvalidClient(), when: 'wrong, missing or malformed client credentials, or credentials in the body' },
  { example: new InvalidGrant('authorization code already used'), when: 'a code or refresh token unknown, expired, used, foreign, or of an ended grant; a PKCE or redirect URI mismatch' },
  { example: new UnauthorizedClient(), when: 'an authenticated client asking for a grant type it is not registered for; a client under the high-security profile that does not authenticate with private_key_jwt (docs/high-security.md)' },
  { example: new AccessDenied('your organization does not allow this application'), when: "sent back to the app's redirect URI: the user declined, or her organization does not allow the app" },
  { example: new UnmetAuthenticationRequirements(), when: "sent back to the app's redirect URI: the request's `acr_values` asked for a second factor the sign-in did not reach" },
  { example: new UnsupportedGrantType(), when: 'a grant type the server does not have' },
  { example: new InvalidScope(`scope 'scim.write' is not assigned to this client`), when: 'a scope unknown, not assigned, or the management right asked by a third-party app' },
  { example: new InvalidTarget(), when: 'a `resource` other than the audience' },
  { example: new NotFound('client configuration 1f0…'), when: 'no such record in the caller\'s tenant' },
  { example: new MethodNotAllowed(['GET', 'DELETE']), when: 'a method the path does not have (with `Allow`)' },
  { example: new RequestTimeout(10), when: 'a body that did not arrive within `limits.bodyTimeoutMs`' },
  { example: new Conflict('client configuration 1f0…'), when: 'a change that kept losing the race to other changes' },
  { example: new PayloadTooLarge(16384), when: 'a body over its limit' },
  { example: new UnsupportedMediaType('the request body must be application/json'), when: 'a body of another media type, or JSON in another charset than UTF-8' },
  { example: new TooManyRequests(30), when: 'past a rate limit (with `Retry-After`)' },
  { example: new ServerError(), when: 'anything unexpected (logged by class, never by message)' },
  { example: new BodyConsumedByHost('the request body was read by the host application before talent-auth: …'), when: 'a host body parser read the request and kept nothing usable' },
  { example: new MountedWrong('talent-auth is mounted under "/auth2" by the host application, but …'), when: 'a host mounted us under a path our URLs do not have' },
  { example: new NotSupported('unlocking a user of a tenant needs the AccountStore\'s findByUsername'), when: 'something this server is not set up for (its `AccountStore` lacks the hook it needs)' },
  { example: new TemporarilyUnavailable(), when: 'the store cannot be reached (with `Retry-After`)' },
  { example: new InvalidToken('the access token has expired', 'realm'), when: 'a bearer token missing (then without an error code), invalid, expired, foreign, or whose user is gone' },
  { example: new InsufficientScope(`the access token lacks the scope 'scim.read'`, 'realm', ['scim.read']), when: 'a valid token without the scope, the tenant or the right needed' },
  { example: new TenantMoved('realm'), when: "a named-user token whose user's account has moved to another tenant" },
  { example: new InsufficientUserAuthentication('the route needs a sign-in with a second factor', 'realm', { acrValues: 'urn:talent-auth:acr:mfa' }), when: 'the resource-server kit: a user\'s token whose sign-in had no second factor, or is older than the route accepts (with `acr_values` or `max_age` in the challenge, RFC 9470)' },
  { example: new InvalidBearerRequest('realm'), when: 'an Authorization header that is not `Bearer <token>`' },
  { example: new InvalidDpopProof('the DPoP proof is for another request', 'realm', ['ES256']), when: 'a DPoP-bound token without a valid proof: missing, for another method or URL, too old, replayed, for another token (`ath`) or key (`cnf.jkt`), or a bound token presented as Bearer' },
  { example: new UseDpopNonce('a DPoP nonce is required: put the one of the DPoP-Nonce header in the proof', 'realm', ['ES256'], 'nonce'), when: 'the resource-server kit with `dpop.nonce`: a DPoP proof without the current server nonce (none, stale, or not ours); the answer carries a new one in `DPoP-Nonce`' },
  { example: new KeysUnavailable('realm'), when: 'the resource-server kit could not fetch the signing keys' },
  { example: new TokenStatusUnavailable('realm'), when: 'the resource-server kit, in introspect mode, could not ask the authorization server (it never lets a token through unchecked)' },
];

/** The error table as Markdown, for docs/errors.md (generated from ERRORS; a test keeps them equal). */
export function errorTableMarkdown(): string {
  const rows = ERRORS.map(({ example, when }) => {
    const headers = Object.keys(example.headers);
    return `| \`${example.constructor.name}\` | ${example.status} | \`${example.error}\` | ${when} | ${headers.length ? headers.map((name) => `\`${name}\``).join(', ') : ''} |`;
  });
  return ['| class | status | `error` | answered for | headers |', '| --- | --- | --- | --- | --- |', ...rows].join('\n');
}
