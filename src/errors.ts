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

export class InvalidScope extends OAuthError {
  constructor(description: string) {
    super('invalid_scope', 400, description);
  }
}

export class UnsupportedGrantType extends OAuthError {
  constructor(description = 'unsupported grant_type requested') {
    super('unsupported_grant_type', 400, description);
  }
}

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

export class NotFound extends OAuthError {
  constructor(what: string) {
    super('not_found', 404, `${what} not found`);
  }
}

export class TemporarilyUnavailable extends OAuthError {
  constructor(description = 'the service is temporarily unavailable, try again') {
    super('temporarily_unavailable', 503, description);
  }
}
