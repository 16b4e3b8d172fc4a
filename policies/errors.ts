/**
 * Errors that carry what the wire needs: the OAuth `error` code, the HTTP status and a public
 * description that is safe to show to the caller (never a secret, token or code).
 */
export class OAuthError extends Error {
  constructor(
    readonly error: string,
    readonly status: number,
    readonly description: string,
  ) {
    super(description);
    this.name = new.target.name;
  }

  toJSON(): { error: string; error_description: string } {
    return { error: this.error, error_description: this.description };
  }
}

/** 400 `invalid_request`: a parameter is missing, repeated or malformed. */
export class InvalidRequest extends OAuthError {
  constructor(description: string) {
    super('invalid_request', 400, description);
  }
}

/** RFC 6749 §5.2: 401 with a WWW-Authenticate challenge. */
export class InvalidClient extends OAuthError {
  constructor(description = 'client authentication failed') {
    super('invalid_client', 401, description);
  }
}

/** 400 `invalid_scope`: a scope that is unknown or not assigned. */
export class InvalidScope extends OAuthError {
  constructor(description: string) {
    super('invalid_scope', 400, description);
  }
}

/** 400 `unsupported_grant_type`. */
export class UnsupportedGrantType extends OAuthError {
  constructor(description = 'unsupported grant_type requested') {
    super('unsupported_grant_type', 400, description);
  }
}

/** 413: a request body over its limit (`limits`). */
export class PayloadTooLarge extends OAuthError {
  constructor(limit: number) {
    super('invalid_request', 413, `request body exceeds ${limit} bytes`);
  }
}

/** A management call (create, update, ...) with invalid input; `field` names the offending one. */
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

/** 503 `temporarily_unavailable`: the store cannot be reached; retry after `Retry-After`. */
export class TemporarilyUnavailable extends OAuthError {
  constructor(description = 'the service is temporarily unavailable, try again') {
    super('temporarily_unavailable', 503, description);
  }
}
