import { errorResponse, json, ref, response, TOKEN_HEADERS, type Json } from '../../http/openapi-parts.js';

function tokenOperation(): Json {
  const body = { schema: ref('TokenRequest') };
  return {
    post: {
      operationId: 'token',
      tags: ['oauth2'],
      summary: 'Token endpoint (client_credentials, authorization_code + PKCE, refresh_token)',
      description:
        'Credentials go only in the HTTP Basic header (client_id and client_secret form-urlencoded, then Base64: '
        + 'RFC 6749 §2.3.1). Public apps exchanging a code send no Authorization header and put `client_id` in the '
        + 'body. Browser calls (and CORS preflights) are answered for the origins of a public app\'s redirect '
        + 'URIs. Any method but POST gets 405 `invalid_request` with `Allow: POST`. The body is limited to '
        + '`limits.tokenRequestBytes` (16 KiB by default). A private_key_jwt client sends `client_assertion_type` and '
        + '`client_assertion` in the body instead of Basic (RFC 7523). With a `DPoP` proof (RFC 9449) the access token '
        + 'is bound to the proof\'s key (`token_type: DPoP`, `cnf.jkt`), and so is the refresh token; every answer '
        + 'carries a fresh `DPoP-Nonce`.',
      security: [{ basicAuth: [] }, {}],
      parameters: [{
        name: 'DPoP',
        in: 'header',
        required: false,
        description: 'A DPoP proof (RFC 9449 §4): a JWT of type `dpop+jwt` signed by the key in its header (ES256, EdDSA, '
          + 'Ed25519, RS256 or PS256), `htm` POST, `htu` this endpoint\'s URL, a recent `iat` or the current server '
          + 'nonce, a `jti` used once. Required for a client with `dpop: required`.',
        schema: { type: 'string' },
      }],
      requestBody: {
        required: true,
        description:
          'Form-urlencoded, or multipart/form-data with text fields only (a file part is `invalid_request`).',
        content: {
          'application/x-www-form-urlencoded': body,
          'multipart/form-data': body,
        },
      },
      responses: {
        200: { description: 'The tokens.', headers: TOKEN_HEADERS, content: json(ref('TokenResponse')) },
        400: errorResponse(
          'Missing or duplicated parameters, bad encoding, another content type, a parameter of another grant '
            + '(`invalid_request`); an unassigned or widened scope (`invalid_scope`); an expired, used, unknown or '
            + 'foreign code or refresh token, a different `redirect_uri`, a PKCE mismatch, an app the user\'s tenant policy '
            + 'does not allow (`invalid_grant`); another '
            + 'grant type (`unsupported_grant_type`); a foreign `resource` (`invalid_target`); a DPoP proof that is '
            + 'malformed, replayed, for another URL or method, or too old (`invalid_dpop_proof`), or without the '
            + 'current nonce (`use_dpop_nonce`, with the nonce in `DPoP-Nonce`); a client the high-security profile '
            + 'does not allow (`unauthorized_client`).',
          ['invalid_request', 'invalid_scope', 'invalid_grant', 'unsupported_grant_type', 'invalid_target', 'invalid_dpop_proof', 'use_dpop_nonce', 'unauthorized_client'],
          TOKEN_HEADERS,
        ),
        401: errorResponse(
          'Client authentication failed: wrong secret, unknown client, missing or malformed credentials, a secret '
            + 'in the body, Basic with a public app or a confidential app without it; a client assertion that is '
            + 'malformed, replayed, expired, for another audience or signed by a key the client did not register.',
          ['invalid_client'],
          {
            ...TOKEN_HEADERS,
            'WWW-Authenticate': {
              description: '`Basic realm="{issuer}", error="invalid_client"`',
              schema: { type: 'string', pattern: '^Basic realm=' },
            },
          },
        ),
        413: errorResponse('The body exceeds the limit.', ['invalid_request'], TOKEN_HEADERS),
        500: response('ServerError'),
      },
    },
  };
}


/** The token endpoint's operation of the OpenAPI document. */
export function tokenOperations(): Record<'token', Json> {
  return { token: tokenOperation() };
}
