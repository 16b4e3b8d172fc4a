import { errorResponse, json, response, uuid, NO_STORE, type Json } from '../../http/openapi-parts.js';

/** The parameters of an authorization request: in the query (GET) or the form body (POST). */
const AUTHORIZE_PARAMETERS: ReadonlyArray<[name: string, required: boolean, schema: Json, description: string]> = [
  ['response_type', true, { type: 'string', const: 'code' }, 'Anything else: `unsupported_response_type` back to the app.'],
  ['client_id', true, uuid, 'The app registration\'s client ID.'],
  ['redirect_uri', true, { type: 'string' }, 'Exactly one of the registered redirect URIs.'],
  ['scope', true, { type: 'string' }, 'Space-separated: API scopes of the catalog and `openid`, `profile`, `email`, `offline_access`.'],
  ['state', true, { type: 'string', minLength: 1, maxLength: 1024 }, 'Returned unchanged.'],
  ['code_challenge', false, { type: 'string', pattern: '^[A-Za-z0-9_-]{43}$' }, 'PKCE S256 challenge: required for public and PKCE-enabled apps.'],
  ['code_challenge_method', false, { type: 'string', const: 'S256' }, '`plain` is refused.'],
  ['nonce', false, { type: 'string', maxLength: 1024 }, 'Echoed in the ID token.'],
  ['response_mode', false, { type: 'string', const: 'query' }, 'Only `query` (the default); another is `invalid_request` back to the app.'],
  ['prompt', false, { type: 'string' }, 'OpenID Connect `prompt`: `none` (no page: `login_required` or `consent_required` back to the app), `login` (the password again), `consent`.'],
  ['max_age', false, { type: 'integer', minimum: 0 }, 'Seconds since the user last entered her password; older asks again. The ID token then carries `auth_time`.'],
];

function authorizeOperation(): Json {
  const common = {
    tags: ['oauth2'],
    summary: 'Starts a user sign-in (browser redirect)',
    description:
      'Authorization code flow with PKCE. The browser is sent to the login and consent pages (browser pages, '
      + 'not described here) and then back to the app. Errors before the client and `redirect_uri` are '
      + 'verified give an HTML error page and never a redirect; every later error goes back to the app with '
      + '`error`, `error_description`, the unchanged `state` and `iss` (`access_denied` when the user denies or the '
      + 'user\'s tenant policy does not allow the app). GET and POST take the same parameters (OpenID Connect Core §3.1.2.1).',
    security: [],
    responses: {
      303: {
        description:
          'To the login, second-factor or consent page (`{pathPrefix}/oauth2/interaction/{uid}`), or back to the app\'s '
          + 'redirect URI with `code`, `state`, `iss` or with `error`, `error_description`, `state`, `iss`.',
        headers: { Location: { required: true, schema: { type: 'string' } } },
      },
      400: {
        description: 'An unknown client, a missing or unregistered `redirect_uri`, a request over 4 KiB: an HTML error page, no redirect.',
        content: { 'text/html': { schema: { type: 'string' } } },
      },
      429: { description: 'Too many authorization requests from one address: an HTML page, with `Retry-After`.', content: { 'text/html': { schema: { type: 'string' } } } },
    },
  };
  const form = {
    type: 'object',
    required: AUTHORIZE_PARAMETERS.filter(([, required]) => required).map(([name]) => name),
    properties: Object.fromEntries(AUTHORIZE_PARAMETERS.map(([name, , schema, description]) => [name, { ...schema, description }])),
  };
  return {
    get: {
      ...common,
      operationId: 'authorize',
      parameters: AUTHORIZE_PARAMETERS.map(([name, required, schema, description]) => ({ name, in: 'query', required, schema, description })),
    },
    post: {
      ...common,
      operationId: 'authorizeWithPost',
      requestBody: { required: true, content: { 'application/x-www-form-urlencoded': { schema: form } } },
    },
  };
}

/** RFC 9126: the authorization request pushed by the app, answered with the `request_uri` that stands for it. */
function pushedAuthorizationOperation(): Json {
  const form = {
    type: 'object',
    required: AUTHORIZE_PARAMETERS.filter(([, required]) => required).map(([name]) => name),
    properties: {
      ...Object.fromEntries(AUTHORIZE_PARAMETERS.map(([name, , schema, description]) => [name, { ...schema, description }])),
      client_assertion_type: { type: 'string', const: 'urn:ietf:params:oauth:client-assertion-type:jwt-bearer', description: 'A private_key_jwt app (RFC 7523), with `client_assertion`; never with Basic.' },
      client_assertion: { type: 'string', description: 'The app\'s signed assertion: `aud` the issuer, the token endpoint or this endpoint; `exp` within 300 s; its `jti` used once.' },
      dpop_jkt: { type: 'string', description: 'RFC 9449 §10: the thumbprint of the DPoP key the code is bound to (the exchange needs a proof of that key). A `DPoP` proof on the push binds the code to its key as well.' },
    },
  };
  return {
    post: {
      operationId: 'pushAuthorizationRequest',
      tags: ['oauth2'],
      summary: 'Pushed authorization request (RFC 9126)',
      description:
        'The app\'s back end sends the parameters of an authorization request and gets a `request_uri`; the browser '
        + 'is then sent to `/authorize?client_id=...&request_uri=...`. The `request_uri` lives 60 seconds and is used up '
        + 'by the authorization response it leads to. Client authentication as at the token endpoint: HTTP Basic for an '
        + 'app with a secret, a client assertion for a private_key_jwt app, `client_id` in the body for a public app. '
        + 'A `DPoP` header (a proof for this endpoint) or `dpop_jkt` binds the code to a DPoP key. The body is limited to `limits.authorizeQueryBytes`; '
        + 'requests per address to `rateLimits.authorize` (counted apart from `/authorize`).',
      security: [{ basicAuth: [] }, {}],
      requestBody: { required: true, content: { 'application/x-www-form-urlencoded': { schema: form } } },
      responses: {
        201: {
          description: 'The request is stored.',
          headers: NO_STORE,
          content: json({
            type: 'object',
            required: ['request_uri', 'expires_in'],
            properties: {
              request_uri: { type: 'string', pattern: '^urn:ietf:params:oauth:request_uri:' },
              expires_in: { type: 'integer', maximum: 60 },
            },
          }),
        },
        400: errorResponse(
          'A parameter the authorization endpoint would refuse (`invalid_request`, `invalid_scope`, `invalid_target`), '
            + 'an unregistered `redirect_uri` (`invalid_request`), a `request_uri` in the push; Basic and an assertion at once '
            + '(`invalid_request`); a DPoP proof that does not check out (`invalid_dpop_proof`; replayed, or for another key '
            + 'than `dpop_jkt`: `invalid_request`), or without a current nonce (`use_dpop_nonce`, with `DPoP-Nonce`).',
          ['invalid_request', 'invalid_scope', 'invalid_target', 'unauthorized_client', 'invalid_dpop_proof', 'use_dpop_nonce'],
        ),
        401: errorResponse('Client authentication failed, as at the token endpoint.', ['invalid_client']),
        413: errorResponse('The body exceeds the limit.', ['invalid_request']),
        429: errorResponse('Too many pushed requests from one address, or failed client authentications; with `Retry-After`.', ['temporarily_unavailable']),
        500: response('ServerError'),
      },
    },
  };
}

/** The authorization endpoint's operation of the OpenAPI document (the pages it leads to are not an API), and the pushed request's. */
export function signInOperations(): Record<'authorize' | 'pushedAuthorization', Json> {
  return { authorize: authorizeOperation(), pushedAuthorization: pushedAuthorizationOperation() };
}
