import { readFileSync, writeFileSync } from 'node:fs';
import { join } from 'node:path';
import * as table from '../../policies/errors.js';
import { ERRORS, errorTableMarkdown, InsufficientUserAuthentication, InvalidScope, OAuthError, oauthDescription, TokenError, ValidationError } from '../../policies/errors.js';

/** RFC 6749 §5.2: error_description is %x20-21 / %x23-5B / %x5D-7E. */
const RFC_6749_CHARSET = /^[\x20\x21\x23-\x5b\x5d-\x7e]*$/;

/**
 * The codes of RFC 6749 §5.2 and §4.1.2.1, RFC 6750 §3.1, RFC 8707, RFC 9470 §3, OpenID Connect's
 * unmet_authentication_requirements, and our three for APIs.
 */
const CODES = new Set([
  'invalid_request', 'invalid_client', 'access_denied', 'invalid_grant', 'unauthorized_client', 'unsupported_grant_type', 'invalid_scope',
  'invalid_target', 'invalid_token', 'insufficient_scope', 'temporarily_unavailable', 'server_error', 'not_found', 'conflict', 'not_supported',
  'insufficient_user_authentication', 'unmet_authentication_requirements',
  // RFC 9449 §12.2: a DPoP proof that is missing or does not check out, at a resource;
  // a proof without the resource server's current nonce (§9).
  'invalid_dpop_proof', 'use_dpop_nonce',
]);

const DOCS = join(process.cwd(), 'docs/errors.md');
const BEGIN = '<!-- error table: generated from policies/errors.ts -->';
const END = '<!-- end of the error table -->';

describe('the error table (policies/errors.ts)', () => {
  it.each(ERRORS.map((row) => [row.example.constructor.name, row] as const))('%s', (_name, { example, when }) => {
    expect(example).toBeInstanceOf(OAuthError);
    expect(CODES.has(example.error)).toBe(true);
    expect(example.status).toBeGreaterThanOrEqual(400);
    expect(example.status).toBeLessThan(600);
    expect(example.toJSON()).toEqual({ error: example.error, error_description: example.description });
    expect(example.description).not.toBe('');
    expect(example.description).toMatch(RFC_6749_CHARSET);
    expect(when).not.toBe('');
    // Status, code and headers agree with what HTTP and OAuth say of them.
    if (example.status === 401 && example.error === 'invalid_client') expect(example.headers).toEqual({});
    // A DPoP refusal challenges with the DPoP scheme and the algorithms a proof may use (RFC 9449 §7.1).
    const dpopError = example.error === 'invalid_dpop_proof' || example.error === 'use_dpop_nonce';
    if (example instanceof TokenError) expect(example.headers['WWW-Authenticate']).toMatch(dpopError ? /^DPoP realm="realm", .*algs="ES256"$/ : /^Bearer realm="realm"/);
    // RFC 9449 §9: the nonce to use comes with the refusal that asks for it.
    if (example.error === 'use_dpop_nonce') expect(example.headers['DPoP-Nonce']).toBe('nonce');
    if (example.status === 405) expect(example.headers.Allow).toBe('GET, DELETE');
    if (example.status === 429 || example.status === 503) {
      if (!(example instanceof TokenError)) expect(Number(example.headers['Retry-After'])).toBeGreaterThan(0);
    }
  });

  it.each([
    ['a class', { acrValues: 'urn:talent-auth:acr:mfa' }, ', acr_values="urn:talent-auth:acr:mfa"'],
    ['an age', { maxAge: 300 }, ', max_age="300"'],
    ['both', { acrValues: 'urn:talent-auth:acr:mfa', maxAge: 60 }, ', acr_values="urn:talent-auth:acr:mfa", max_age="60"'],
  ])('insufficient_user_authentication is a 401 whose challenge names what would do (RFC 9470 §3): %s', (_what, needed, tail) => {
    const error = new InsufficientUserAuthentication('this route needs more', 'realm', needed);
    expect(error.status).toBe(401);
    expect(error.headers['WWW-Authenticate']).toBe(`Bearer realm="realm", error="insufficient_user_authentication", error_description="this route needs more"${tail}`);
  });

  it.each([
    ['a token refused', new table.InvalidToken('the access token has expired', 'api'), 'Bearer realm="api", error="invalid_token", error_description="the access token has expired"'],
    ['a description that would break the header', new table.InvalidToken('bad "x" \\ \u00e9\n', 'api'), 'Bearer realm="api", error="invalid_token", error_description="bad \'x\' / ??"'],
    ['a scope missing', new table.InsufficientScope('no', 'api', ['scim.read']), 'Bearer realm="api", error="insufficient_scope", error_description="no", scope="scim.read"'],
    ['two scopes missing', new table.InsufficientScope('no', 'api', ['scim.read', 'scim.write']), 'Bearer realm="api", error="insufficient_scope", error_description="no", scope="scim.read scim.write"'],
    ['no scope named', new table.InsufficientScope('no', 'api'), 'Bearer realm="api", error="insufficient_scope", error_description="no"'],
    ['no token at all (RFC 6750 §3.1: no error code)', table.TokenError.missing('api'), 'Bearer realm="api"'],
  ] as const)('the challenge of %s', (_what, error, challenge) => {
    expect(error.headers['WWW-Authenticate']).toBe(challenge);
  });

  it('no token at all is described as such', () => {
    expect(table.TokenError.missing('api').description).toBe('a bearer access token is required');
  });

  it('a DPoP challenge is the Bearer one in the DPoP scheme, with every algorithm a proof may use (RFC 9449 §7.1)', () => {
    expect(table.dpopChallenge('Bearer realm="api", error="invalid_token"', ['ES256', 'EdDSA'])).toBe('DPoP realm="api", error="invalid_token", algs="ES256 EdDSA"');
  });

  it('a method the path does not have says which it has', () => {
    const error = new table.MethodNotAllowed(['GET', 'DELETE']);
    expect(error.description).toBe('use GET or DELETE');
    expect(error.headers.Allow).toBe('GET, DELETE');
  });

  it.each([
    ['a quoted value', 'unknown scope "address"', "unknown scope 'address'"],
    ['a backslash', 'path a\\b', 'path a/b'],
    ['controls, format and bidi characters, non-ASCII', 'x\u0000\u202e\u200b\n\té', 'x??????'],
    ['a lone surrogate', 'a\ud800b', 'a?b'],
    ['what is already in the charset', "it's fine: [a-z] {x} ~!#$%&()*+,-./:;<=>?@^_`|", "it's fine: [a-z] {x} ~!#$%&()*+,-./:;<=>?@^_`|"],
  ])('every description is in the RFC 6749 charset: %s', (_what, given, expected) => {
    expect(oauthDescription(given)).toBe(expected);
    expect(new InvalidScope(given).description).toBe(expected);
    expect(new InvalidScope(given).toJSON().error_description).toMatch(RFC_6749_CHARSET);
    expect(new ValidationError('name', given).description).toBe(`name: ${expected}`);
  });

  it('has a row for every error class it exports', () => {
    const classes = Object.entries(table)
      .filter(([, value]) => typeof value === 'function' && value.prototype instanceof OAuthError)
      .map(([name]) => name)
      .filter((name) => name !== 'TokenError');
    expect(new Set(ERRORS.map((row) => row.example.constructor.name))).toEqual(new Set(classes));
  });

  it('is what docs/errors.md shows (UPDATE_DOCS=1 writes it)', () => {
    const docs = readFileSync(DOCS, 'utf8');
    const generated = `${BEGIN}\n${errorTableMarkdown()}\n${END}`;
    const current = docs.slice(docs.indexOf(BEGIN), docs.indexOf(END) + END.length);
    if (process.env.UPDATE_DOCS === '1' && current !== generated) writeFileSync(DOCS, docs.replace(current, generated));
    else expect(current).toBe(generated);
  });
});
