import type { Context, Next } from 'koa';

/*
 * The OpenAPI 3.1 description of every HTTP endpoint we serve, built from the same facts as the
 * routes: server.ts (which paths), token-endpoint.ts (grants, Basic), oauth-errors.ts (error body),
 * consent-api.ts, management-api.ts and management-wire.ts (snake_case wire shapes).
 * The sign-in pages (`/oauth2/interaction/...`) are browser pages and are left out on purpose.
 */

type Json = Record<string, unknown>;

export interface OpenApiSetup {
  /** `{baseUrl}{pathPrefix}/oauth2` */
  issuer: string;
  /** The public base address: the document's only server. */
  baseUrl: string;
  /** `''` or e.g. `/auth2`: the prefix of every path. */
  pathPrefix: string;
}

const ref = (name: string) => ({ $ref: `#/components/schemas/${name}` });
const response = (name: string) => ({ $ref: `#/components/responses/${name}` });
const json = (schema: Json) => ({ 'application/json': { schema } });

const NO_STORE = {
  'Cache-Control': { description: 'Always `no-store`.', schema: { type: 'string', const: 'no-store' } },
};
const TOKEN_HEADERS = {
  ...NO_STORE,
  Pragma: { description: 'Always `no-cache`.', schema: { type: 'string', const: 'no-cache' } },
};
const BEARER_CHALLENGE = {
  'WWW-Authenticate': {
    description:
      'RFC 6750 §3 challenge: `Bearer realm="{issuer}"` without an error code when no token was sent, '
      + 'else with `error` and `error_description`.',
    schema: { type: 'string', pattern: '^Bearer realm=' },
  },
};

/** `{ error, error_description }` whose `error` is one of `codes`. */
function oauthError(codes: string[], description?: string): Json {
  return {
    allOf: [ref('OAuthError'), { properties: { error: { enum: codes } } }],
    ...(description ? { description } : {}),
  };
}

function errorResponse(description: string, codes: string[], headers: Json = NO_STORE): Json {
  return { description, headers, content: json(oauthError(codes)) };
}

const uuid = { type: 'string', format: 'uuid' };
const timestamp = { type: 'string', format: 'date-time', description: 'ISO 8601, UTC.' };
const text = (max: number, words: string) => ({ type: 'string', minLength: 1, maxLength: max, description: words });

function schemas(issuer: string): Json {
  const resources = {
    type: 'object',
    description:
      'The APIs the client may call, by API id of the catalog: the scopes assigned (at least one, only '
      + 'scopes that API defines) and optional data filters (`constraints`: per dimension the API '
      + 'declares, a non-empty list of allowed values). At least one API.',
    minProperties: 1,
    additionalProperties: {
      type: 'object',
      required: ['scopes'],
      properties: {
        scopes: { type: 'array', minItems: 1, items: { type: 'string' } },
        constraints: {
          type: 'object',
          additionalProperties: { type: 'array', minItems: 1, items: { type: 'string', minLength: 1 } },
        },
      },
      additionalProperties: false,
    },
    examples: [{ scim: { scopes: ['scim.read'], constraints: { group: ['engineering'] } } }],
  };
  const clientFields = {
    name: text(200, 'Shown to administrators.'),
    category: text(200, 'Free-form grouping, e.g. `payroll`.'),
    description: { type: 'string', maxLength: 2000 },
    resources,
  };
  const idTokenAlg = { type: 'string', enum: ['RS256', 'PS256', 'ES256', 'EdDSA'] };
  const appFields = {
    name: text(200, 'Shown to users on the consent page.'),
    description: { type: 'string', maxLength: 2000 },
    redirect_uris: {
      type: 'array',
      minItems: 1,
      maxItems: 20,
      items: { type: 'string' },
      description:
        'Exact redirect URIs: no fragment, wildcard, whitespace, backslash, `.`/`..` segment; https, or '
        + 'http only for loopback hosts; never `javascript:`, `data:`, `file:`, `blob:`, `vbscript:`. At use '
        + 'a URI must equal one of these strings exactly.',
    },
    client_type: { type: 'string', enum: ['public', 'confidential'] },
    pkce_enabled: {
      type: 'boolean',
      description:
        'Always true for public apps. A confidential app may turn PKCE off only when every redirect URI is '
        + 'https. Default true.',
    },
    id_token_signed_response_alg: { ...idTokenAlg, description: 'Default RS256.' },
  };
  const clientRequired = ['client_id', 'tenant', 'name', 'category', 'resources', 'created_at', 'updated_at'];
  const clientProperties = {
    client_id: uuid,
    tenant: { type: 'string' },
    name: { type: 'string' },
    category: { type: 'string' },
    description: { type: 'string', description: 'Absent when empty.' },
    resources: ref('Resources'),
    created_at: timestamp,
    updated_at: timestamp,
  };
  const grantType = (value: string) => ({ type: 'string', const: value });
  const clientIdParam = {
    type: 'string',
    description: 'Optional with HTTP Basic (then it must equal the Basic client ID).',
  };
  const resource = {
    type: 'string',
    format: 'uri',
    description: 'RFC 8707. The only resource is the audience of the platform APIs; any other is `invalid_target`.',
  };

  return {
    OAuthError: {
      type: 'object',
      description:
        'RFC 6749 §5.2 error body. `error_description` is for humans and may change: match on `error`.',
      required: ['error', 'error_description'],
      properties: {
        error: { type: 'string' },
        error_description: { type: 'string' },
      },
    },
    ManagementError: {
      type: 'object',
      description: 'An error of the management API; a validation failure names the offending wire field.',
      required: ['error', 'error_description'],
      properties: {
        error: { type: 'string' },
        error_description: { type: 'string' },
        field: {
          type: 'string',
          description: 'Dotted wire path of the invalid field, e.g. `resources.scim.scopes` or `redirect_uris.1`.',
        },
      },
    },
    ClientCredentialsRequest: {
      type: 'object',
      description: 'Machine-to-machine token. The client authenticates with HTTP Basic (required).',
      required: ['grant_type'],
      properties: {
        grant_type: grantType('client_credentials'),
        scope: {
          type: 'string',
          description:
            'Space-separated scopes, each assigned to the client (else `invalid_scope`). Omitted: every assigned scope.',
        },
        resource,
        client_id: clientIdParam,
      },
    },
    AuthorizationCodeRequest: {
      type: 'object',
      description:
        'Code exchange. A confidential app authenticates with HTTP Basic; a public app sends `client_id` '
        + 'and `code_verifier` and no Authorization header.',
      required: ['grant_type', 'code', 'redirect_uri'],
      properties: {
        grant_type: grantType('authorization_code'),
        code: { type: 'string' },
        redirect_uri: { type: 'string', description: 'Exactly the one of the authorization request.' },
        code_verifier: {
          type: 'string',
          pattern: '^[A-Za-z0-9._~-]{43,128}$',
          description: 'PKCE (RFC 7636); required for public apps and when the code was issued with a challenge.',
        },
        client_id: { type: 'string', description: 'Required without HTTP Basic (public apps).' },
        resource,
      },
    },
    RefreshTokenRequest: {
      type: 'object',
      description:
        'Refresh (confidential apps only, HTTP Basic required). The answer carries the next refresh token; '
        + 'a spent one presented again revokes the whole grant.',
      required: ['grant_type', 'refresh_token'],
      properties: {
        grant_type: grantType('refresh_token'),
        refresh_token: { type: 'string' },
        scope: { type: 'string', description: 'May narrow the granted scopes, never widen them (`invalid_scope`).' },
        client_id: clientIdParam,
        resource,
      },
    },
    TokenRequest: {
      description:
        'The three grants. A parameter sent twice is `invalid_request`; one sent empty counts as omitted; '
        + 'a parameter of another grant (e.g. `refresh_token` with `authorization_code`) is `invalid_request`; '
        + '`client_secret` in the body is `invalid_client` (credentials go only in the Basic header).',
      oneOf: [ref('ClientCredentialsRequest'), ref('AuthorizationCodeRequest'), ref('RefreshTokenRequest')],
      discriminator: {
        propertyName: 'grant_type',
        mapping: {
          client_credentials: '#/components/schemas/ClientCredentialsRequest',
          authorization_code: '#/components/schemas/AuthorizationCodeRequest',
          refresh_token: '#/components/schemas/RefreshTokenRequest',
        },
      },
    },
    TokenResponse: {
      type: 'object',
      description: 'RFC 6749 §5.1. `access_token` is an RFC 9068 JWT (`typ: at+jwt`) signed with a key of the JWKS.',
      required: ['access_token', 'token_type', 'expires_in', 'scope'],
      properties: {
        access_token: { type: 'string' },
        token_type: { type: 'string', const: 'Bearer' },
        expires_in: {
          type: 'integer',
          minimum: 1,
          description:
            '3600 for `client_credentials`; otherwise the named-user lifetime (the tenant policy\'s `accessTokenTtl`, '
            + 'else `namedUserAccessTokenTtl`, 300 by default).',
        },
        scope: { type: 'string', description: 'The granted scopes, space-separated. Always present.' },
        refresh_token: {
          type: 'string',
          description: 'Confidential apps, `authorization_code` and `refresh_token` grants only. Never for `client_credentials`.',
        },
        id_token: { type: 'string', description: 'When `openid` was granted (named users only).' },
      },
    },
    JsonWebKey: {
      type: 'object',
      description: 'A public signing key: public members only.',
      required: ['kty', 'kid', 'alg', 'use'],
      properties: {
        kty: { type: 'string', enum: ['EC', 'RSA', 'OKP'] },
        kid: { type: 'string' },
        alg: { type: 'string', enum: ['ES256', 'RS256', 'PS256', 'EdDSA'] },
        use: { type: 'string', const: 'sig' },
        crv: { type: 'string' },
        x: { type: 'string' },
        y: { type: 'string' },
        n: { type: 'string' },
        e: { type: 'string' },
      },
      not: { anyOf: ['d', 'p', 'q', 'dp', 'dq', 'qi', 'k'].map((member) => ({ required: [member] })) },
    },
    JsonWebKeySet: {
      type: 'object',
      description: 'RFC 7517 JWK Set: the access-token key and the RS256 ID-token key.',
      required: ['keys'],
      properties: { keys: { type: 'array', minItems: 1, items: ref('JsonWebKey') } },
    },
    AuthorizationServerMetadata: {
      type: 'object',
      description:
        'OpenID Connect Discovery 1.0 / RFC 8414 metadata. The members listed here are always present; '
        + 'others may be added. Endpoints not listed (userinfo, introspection, revocation, registration) are not served.',
      required: [
        'issuer',
        'authorization_endpoint',
        'token_endpoint',
        'jwks_uri',
        'response_types_supported',
        'subject_types_supported',
        'id_token_signing_alg_values_supported',
        'grant_types_supported',
        'scopes_supported',
        'token_endpoint_auth_methods_supported',
        'code_challenge_methods_supported',
      ],
      properties: {
        issuer: { type: 'string', const: issuer },
        authorization_endpoint: { type: 'string', const: `${issuer}/authorize` },
        token_endpoint: { type: 'string', const: `${issuer}/token` },
        jwks_uri: { type: 'string', const: `${issuer}/jwks` },
        response_types_supported: { type: 'array', items: { type: 'string', const: 'code' } },
        response_modes_supported: { type: 'array', items: { type: 'string', enum: ['query', 'fragment', 'form_post'] } },
        grant_types_supported: {
          type: 'array',
          items: { type: 'string', enum: ['authorization_code', 'refresh_token', 'client_credentials'] },
        },
        token_endpoint_auth_methods_supported: {
          type: 'array',
          items: { type: 'string', enum: ['client_secret_basic', 'none'] },
        },
        code_challenge_methods_supported: { type: 'array', items: { type: 'string', const: 'S256' } },
        scopes_supported: {
          type: 'array',
          items: { type: 'string' },
          description: '`openid`, `offline_access`, `profile`, `email` and every scope of the API catalog.',
        },
        subject_types_supported: { type: 'array', items: { type: 'string' } },
        id_token_signing_alg_values_supported: { type: 'array', items: { type: 'string' } },
        claims_supported: { type: 'array', items: { type: 'string' } },
        authorization_response_iss_parameter_supported: { type: 'boolean' },
      },
    },
    ConsentScope: {
      type: 'object',
      required: ['scope', 'description'],
      properties: {
        scope: { type: 'string' },
        description: { type: 'string', description: "The catalog's words for the scope." },
        api: { type: 'string', description: 'The name of the API the scope belongs to (absent for OIDC scopes).' },
      },
      additionalProperties: false,
    },
    Consent: {
      type: 'object',
      required: ['client_id', 'app_name', 'scopes', 'created_at', 'updated_at'],
      properties: {
        client_id: uuid,
        app_name: { type: ['string', 'null'], description: '`null` once the app has been deleted.' },
        scopes: { type: 'array', items: ref('ConsentScope') },
        created_at: timestamp,
        updated_at: timestamp,
      },
      additionalProperties: false,
    },
    ConsentList: {
      type: 'object',
      required: ['consents'],
      properties: {
        consents: {
          type: 'array',
          description:
            "Newest first. A first-party app's token sees all the caller's consents in the token's tenant; "
            + "any other app's token sees only its own.",
          items: ref('Consent'),
        },
      },
      additionalProperties: false,
    },
    Resources: resources,
    ClientConfigurationCreate: {
      type: 'object',
      description: 'The tenant is the caller\'s and cannot be chosen (`tenant` is an unknown field).',
      required: ['name', 'category', 'resources'],
      properties: { ...clientFields, resources: ref('Resources') },
      additionalProperties: false,
    },
    ClientConfigurationPatch: {
      type: 'object',
      description: 'Changes the fields sent; `description: ""` removes the description. The tenant never changes.',
      properties: { ...clientFields, resources: ref('Resources') },
      additionalProperties: false,
    },
    ClientConfiguration: {
      type: 'object',
      required: clientRequired,
      properties: clientProperties,
      additionalProperties: false,
    },
    ClientConfigurationCreated: {
      type: 'object',
      description: 'The new record and its secret: the only time the secret is shown.',
      required: [...clientRequired, 'client_secret'],
      properties: { ...clientProperties, client_secret: ref('ClientSecret') },
      additionalProperties: false,
    },
    ClientConfigurationList: {
      type: 'object',
      required: ['client_configurations'],
      properties: {
        client_configurations: { type: 'array', description: 'Oldest first.', items: ref('ClientConfiguration') },
      },
      additionalProperties: false,
    },
    AppRegistrationCreate: {
      type: 'object',
      description: '`first_party` and `open_to_all_tenants` can be set only by the platform operator (400 with `field`).',
      required: ['name', 'redirect_uris', 'client_type'],
      properties: appFields,
      additionalProperties: false,
    },
    AppRegistrationPatch: {
      type: 'object',
      description:
        'Changes the fields sent; `description: ""` removes it. A type change starts from the new type\'s '
        + 'defaults (PKCE back on); public → confidential answers a new `client_secret`, confidential → public '
        + 'deletes the secret.',
      properties: appFields,
      additionalProperties: false,
    },
    AppRegistration: {
      type: 'object',
      required: [
        'client_id',
        'name',
        'redirect_uris',
        'client_type',
        'pkce_enabled',
        'id_token_signed_response_alg',
        'first_party',
        'open_to_all_tenants',
        'created_at',
        'updated_at',
      ],
      properties: {
        client_id: uuid,
        name: { type: 'string' },
        description: { type: 'string', description: 'Absent when empty.' },
        redirect_uris: { type: 'array', items: { type: 'string' } },
        client_type: { type: 'string', enum: ['public', 'confidential'] },
        pkce_enabled: { type: 'boolean' },
        id_token_signed_response_alg: idTokenAlg,
        first_party: {
          type: 'boolean',
          description: "A platform-owned app: its users' tokens may list and revoke all of their consents.",
        },
        tenant: { type: 'string', description: 'The tenant that registered the app (apps registered through this API): only its users may authorize it.' },
        open_to_all_tenants: {
          type: 'boolean',
          description: "Set by the platform operator only: users of every tenant may authorize this tenant's app.",
        },
        created_at: timestamp,
        updated_at: timestamp,
        client_secret: {
          ...ref('ClientSecret'),
          description:
            'Only in the answer that creates a confidential app or turns a public one confidential: the only time it is shown.',
        },
      },
      additionalProperties: false,
    },
    AppRegistrationList: {
      type: 'object',
      required: ['app_registrations'],
      properties: {
        app_registrations: {
          type: 'array',
          description: "The apps registered by the caller's tenant, oldest first.",
          items: ref('AppRegistration'),
        },
      },
      additionalProperties: false,
    },
    ClientSecret: {
      type: 'string',
      pattern: '^[A-Za-z0-9_-]{43}$',
      description: '256 random bits, base64url. Stored only as a digest: it can never be read back.',
    },
    NewSecret: {
      type: 'object',
      description: 'The new secret; the previous one stops working at once, on every instance.',
      required: ['client_id', 'client_secret'],
      properties: { client_id: uuid, client_secret: ref('ClientSecret') },
      additionalProperties: false,
    },
  };
}

function responses(): Json {
  const bearer = (description: string, codes: string[]) => ({
    description,
    headers: { ...NO_STORE, ...BEARER_CHALLENGE },
    content: json(oauthError(codes)),
  });
  const management = (description: string, codes: string[]) => ({
    description,
    headers: NO_STORE,
    content: json({ allOf: [ref('ManagementError'), { properties: { error: { enum: codes } } }] }),
  });
  return {
    BearerUnauthorized: bearer(
      'No token, or a token that is invalid, expired, signed by a foreign key, or whose user no longer exists '
        + '(or is no longer a user of its tenant).',
      ['invalid_token'],
    ),
    BearerForbidden: bearer(
      'A machine (`client_credentials`) token, a missing permission, or (403 `invalid_token`) a user now in '
        + 'another tenant than the token\'s.',
      ['insufficient_scope', 'invalid_token'],
    ),
    BearerBadRequest: bearer('An Authorization header that is not `Bearer <token>`.', ['invalid_request']),
    ServerError: errorResponse('Anything unexpected; the description reveals nothing of the cause.', ['server_error']),
    NotFound: management(
      'No such record in the caller\'s tenant (another tenant\'s record is answered exactly like a missing one).',
      ['not_found'],
    ),
    ManagementBadRequest: management(
      'Invalid input (`field` names the wire field), a body that is not JSON or not an object, or a header that is '
        + 'not `Bearer <token>`.',
      ['invalid_request'],
    ),
    UnsupportedMediaType: management('The body is not `application/json`.', ['invalid_request']),
    PayloadTooLarge: management('The body exceeds 64 KiB.', ['invalid_request']),
    Conflict: management('A concurrent change kept winning the race; try again.', ['conflict']),
  };
}

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
        + '`limits.tokenRequestBytes` (16 KiB by default).',
      security: [{ basicAuth: [] }, {}],
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
            + 'grant type (`unsupported_grant_type`); a foreign `resource` (`invalid_target`).',
          ['invalid_request', 'invalid_scope', 'invalid_grant', 'unsupported_grant_type', 'invalid_target'],
          TOKEN_HEADERS,
        ),
        401: errorResponse(
          'Client authentication failed: wrong secret, unknown client, missing or malformed credentials, a secret '
            + 'in the body, Basic with a public app or a confidential app without it.',
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

function authorizeOperation(): Json {
  const query = (name: string, required: boolean, schema: Json, description: string) => ({
    name,
    in: 'query',
    required,
    schema,
    description,
  });
  return {
    get: {
      operationId: 'authorize',
      tags: ['oauth2'],
      summary: 'Starts a user sign-in (browser redirect)',
      description:
        'Authorization code flow with PKCE. The browser is sent to the login and consent pages (browser pages, '
        + 'not described here) and then back to the app. Errors before the client and `redirect_uri` are '
        + 'verified give an HTML error page and never a redirect; every later error goes back to the app with '
        + '`error`, `error_description`, the unchanged `state` and `iss` (`access_denied` when the user denies or the '
        + 'user\'s tenant policy does not allow the app).',
      security: [],
      parameters: [
        query('response_type', true, { type: 'string', const: 'code' }, 'Anything else: `unsupported_response_type` back to the app.'),
        query('client_id', true, uuid, 'The app registration\'s client ID.'),
        query('redirect_uri', true, { type: 'string' }, 'Exactly one of the registered redirect URIs.'),
        query('scope', true, { type: 'string' }, 'Space-separated: API scopes of the catalog and `openid`, `profile`, `email`, `offline_access`.'),
        query('state', true, { type: 'string', minLength: 1 }, 'Returned unchanged.'),
        query('code_challenge', false, { type: 'string', pattern: '^[A-Za-z0-9_-]{43}$' }, 'PKCE S256 challenge: required for public and PKCE-enabled apps.'),
        query('code_challenge_method', false, { type: 'string', const: 'S256' }, '`plain` is refused.'),
        query('nonce', false, { type: 'string' }, 'Echoed in the ID token.'),
        query('response_mode', false, { type: 'string', enum: ['query', 'fragment', 'form_post'] }, 'Default `query`.'),
        query('prompt', false, { type: 'string' }, 'OpenID Connect `prompt` (`none`, `login`, `consent`).'),
      ],
      responses: {
        200: {
          description: 'With `response_mode=form_post`: a page that posts the answer to the redirect URI.',
          content: { 'text/html': { schema: { type: 'string' } } },
        },
        303: {
          description:
            'To the login or consent page (`{pathPrefix}/oauth2/interaction/{uid}`), or back to the app\'s '
            + 'redirect URI with `code`, `state`, `iss` or with `error`, `error_description`, `state`, `iss`.',
          headers: { Location: { required: true, schema: { type: 'string' } } },
        },
        400: {
          description: 'An unknown client, a missing or unregistered `redirect_uri`: an HTML error page, no redirect.',
          content: { 'text/html': { schema: { type: 'string' } } },
        },
      },
    },
  };
}

function discoveryOperation(operationId: string, summary: string): Json {
  return {
    get: {
      operationId,
      tags: ['discovery'],
      summary,
      security: [],
      responses: { 200: { description: 'The metadata.', content: json(ref('AuthorizationServerMetadata')) } },
    },
  };
}

const clientIdParameter = (description: string) => ({
  name: 'clientId',
  in: 'path',
  required: true,
  schema: uuid,
  description,
});

const authFailures = {
  401: response('BearerUnauthorized'),
  403: response('BearerForbidden'),
  500: response('ServerError'),
};

function consentOperations(): Json {
  return {
    list: {
      get: {
        operationId: 'listConsents',
        tags: ['consents'],
        summary: "The caller's consents in the token's tenant",
        security: [{ bearerAuth: [] }],
        responses: {
          200: { description: 'The consents.', headers: NO_STORE, content: json(ref('ConsentList')) },
          400: response('BearerBadRequest'),
          ...authFailures,
        },
      },
    },
    one: {
      parameters: [clientIdParameter('The app whose consent is revoked.')],
      delete: {
        operationId: 'revokeConsent',
        tags: ['consents'],
        summary: "Revokes the caller's consent for an app",
        description:
          'Deletes the grant, its refresh tokens and unused codes at once; JWT access tokens already out live '
          + 'until their `exp`. The next sign-in asks for consent again. Only a first-party app\'s token may '
          + 'revoke another app\'s consent (else 403 `insufficient_scope`).',
        security: [{ bearerAuth: [] }],
        responses: {
          204: { description: 'Revoked.', headers: NO_STORE },
          400: response('BearerBadRequest'),
          ...authFailures,
          404: errorResponse('The caller has no consent for that app in that tenant.', ['not_found']),
        },
      },
    },
  };
}

interface RecordKind {
  tag: string;
  plural: string;
  singular: string;
  schema: string;
  id: string;
  /** What creating or patching answers (with the secret when there is one). */
  created: Json;
  patched: Json;
  secretNote: string;
}

function managementOperations(kind: RecordKind): Record<string, Json> {
  const security = [{ bearerAuth: [] }];
  const common = { tags: [kind.tag], security };
  const body = (schema: string) => ({ required: true, content: json(ref(schema)) });
  const id = clientIdParameter(`The ${kind.singular}'s client ID.`);
  const input = {
    400: response('ManagementBadRequest'),
    413: response('PayloadTooLarge'),
    415: response('UnsupportedMediaType'),
  };
  return {
    collection: {
      get: {
        ...common,
        operationId: `list${kind.id}s`,
        summary: `The ${kind.plural} of the caller's tenant`,
        responses: {
          200: { description: `The ${kind.plural}.`, headers: NO_STORE, content: json(ref(`${kind.schema}List`)) },
          ...authFailures,
        },
      },
      post: {
        ...common,
        operationId: `create${kind.id}`,
        summary: `Creates a ${kind.singular} in the caller's tenant`,
        requestBody: body(`${kind.schema}Create`),
        responses: {
          201: { description: `The new ${kind.singular}.`, headers: NO_STORE, content: json(kind.created) },
          ...input,
          ...authFailures,
        },
      },
    },
    item: {
      parameters: [id],
      get: {
        ...common,
        operationId: `get${kind.id}`,
        summary: `One ${kind.singular}`,
        responses: {
          200: { description: `The ${kind.singular}.`, headers: NO_STORE, content: json(ref(kind.schema)) },
          ...authFailures,
          404: response('NotFound'),
        },
      },
      patch: {
        ...common,
        operationId: `update${kind.id}`,
        summary: `Changes a ${kind.singular}`,
        requestBody: body(`${kind.schema}Patch`),
        responses: {
          200: { description: `The changed ${kind.singular}.`, headers: NO_STORE, content: json(kind.patched) },
          ...input,
          ...authFailures,
          404: response('NotFound'),
          409: response('Conflict'),
        },
      },
      delete: {
        ...common,
        operationId: `delete${kind.id}`,
        summary: `Deletes a ${kind.singular}`,
        responses: {
          204: { description: 'Deleted.', headers: NO_STORE },
          ...authFailures,
          404: response('NotFound'),
        },
      },
    },
    secret: {
      parameters: [id],
      post: {
        ...common,
        operationId: `rotate${kind.id}Secret`,
        summary: `A new secret for a ${kind.singular}`,
        description: kind.secretNote,
        responses: {
          200: { description: 'The new secret, shown once.', headers: NO_STORE, content: json(ref('NewSecret')) },
          ...(kind.tag === 'app-registrations' ? { 400: response('ManagementBadRequest') } : {}),
          ...authFailures,
          404: response('NotFound'),
          409: response('Conflict'),
        },
      },
    },
  };
}

/** The OpenAPI 3.1 document of every HTTP endpoint of a server with this issuer and path prefix. */
export function openApiDocument({ issuer, baseUrl, pathPrefix }: OpenApiSetup): Record<string, unknown> {
  const oauth = `${pathPrefix}/oauth2`;
  const api = `${pathPrefix}/api/oauth2`;
  const consents = consentOperations();
  const clients = managementOperations({
    tag: 'client-configurations',
    plural: 'client configurations',
    singular: 'client configuration',
    schema: 'ClientConfiguration',
    id: 'ClientConfiguration',
    created: ref('ClientConfigurationCreated'),
    patched: ref('ClientConfiguration'),
    secretNote: 'The previous secret stops working at once, on every instance.',
  });
  const apps = managementOperations({
    tag: 'app-registrations',
    plural: 'app registrations',
    singular: 'app registration',
    schema: 'AppRegistration',
    id: 'AppRegistration',
    created: ref('AppRegistration'),
    patched: ref('AppRegistration'),
    secretNote: 'Confidential apps only: a public app has no secret (400, `field: client_type`).',
  });

  // A fresh tree per call: parts are shared constants, and callers (validators, bundlers) may mutate.
  return structuredClone({
    openapi: '3.1.0',
    info: {
      title: 'talent-auth',
      version: '0.1.0',
      summary: 'OAuth 2.0 authorization server of the talent and HR platform',
      description: [
        `Issuer: \`${issuer}\`. Access tokens are RFC 9068 JWTs for the platform APIs; verify them with the keys at `
          + '`/oauth2/jwks`.',
        'Not described here: the login and consent pages that `GET /oauth2/authorize` sends the browser to '
          + '(`/oauth2/interaction/{uid}`, `/oauth2/interaction/{uid}/login`, `/oauth2/interaction/{uid}/confirm`, '
          + 'and the engine\'s resume step `/oauth2/authorize/{uid}`): they are browser pages with CSRF-protected forms, '
          + 'not an API.',
        'Errors are RFC 6749 §5.2 JSON `{ "error", "error_description" }` with `Cache-Control: no-store`; match on '
          + '`error`, the description is for humans. The consent and management APIs take a named-user access token '
          + 'of this server (Bearer) and answer RFC 6750 challenges; the management API also requires the user\'s '
          + '"Create and update integration setup" permission, checked on every call.',
        'On the token endpoint, the consent API and the management API, a method that a path does not list gets 405 '
          + '`invalid_request` with an `Allow` header.',
      ].join('\n\n'),
      license: { name: 'MIT', identifier: 'MIT' },
    },
    servers: [{ url: baseUrl }],
    tags: [
      { name: 'oauth2', description: 'Token and authorization endpoints.' },
      { name: 'discovery', description: 'Keys and metadata.' },
      { name: 'consents', description: 'The caller\'s consents (named-user tokens).' },
      { name: 'client-configurations', description: 'Machine-to-machine clients of the caller\'s tenant.' },
      { name: 'app-registrations', description: 'Named-user applications of the caller\'s tenant.' },
    ],
    paths: {
      [`${oauth}/token`]: tokenOperation(),
      [`${oauth}/jwks`]: {
        get: {
          operationId: 'jwks',
          tags: ['discovery'],
          summary: 'Public signing keys (RFC 7517 JWK Set)',
          security: [],
          responses: {
            200: { description: 'The key set.', content: { 'application/jwk-set+json': { schema: ref('JsonWebKeySet') } } },
          },
        },
      },
      [`${oauth}/.well-known/openid-configuration`]: discoveryOperation('openidConfiguration', 'OpenID Connect discovery'),
      [`/.well-known/oauth-authorization-server${oauth}`]: discoveryOperation(
        'authorizationServerMetadata',
        'RFC 8414 form of the same document',
      ),
      [`${oauth}/authorize`]: authorizeOperation(),
      [`${api}/consents`]: consents.list,
      [`${api}/consents/{clientId}`]: consents.one,
      [`${api}/client-configurations`]: clients.collection,
      [`${api}/client-configurations/{clientId}`]: clients.item,
      [`${api}/client-configurations/{clientId}/secret`]: clients.secret,
      [`${api}/app-registrations`]: apps.collection,
      [`${api}/app-registrations/{clientId}`]: apps.item,
      [`${api}/app-registrations/{clientId}/secret`]: apps.secret,
      [`${api}/openapi.json`]: {
        get: {
          operationId: 'openApiDocument',
          tags: ['discovery'],
          summary: 'This document',
          security: [],
          responses: { 200: { description: 'The OpenAPI 3.1 document.', content: { 'application/json': { schema: { type: 'object' } } } } },
        },
      },
    },
    components: {
      securitySchemes: {
        basicAuth: {
          type: 'http',
          scheme: 'basic',
          description: 'Client ID and secret, each form-urlencoded (RFC 6749 §2.3.1), then Base64.',
        },
        bearerAuth: {
          type: 'http',
          scheme: 'bearer',
          bearerFormat: 'JWT',
          description:
            'A named-user access token issued by this server. The management API (client configurations, app '
            + 'registrations) needs one that carries the scope `manage.integrations`, which only a first-party app '
            + 'gets, by asking for it, for a user holding "Create and update integration setup"; without it: 403 '
            + '`insufficient_scope` with `scope="manage.integrations"`.',
        },
      },
      schemas: schemas(issuer),
      responses: responses(),
    },
  });
}

/** Serves `document` as JSON at `path` (GET only); every other request goes on. */
export function openApiRoute(path: string, document: Record<string, unknown>) {
  const body = JSON.stringify(document);
  return async function serveOpenApi(ctx: Context, next: Next): Promise<void> {
    if (ctx.path !== path || ctx.method !== 'GET') return next();
    ctx.set('Cache-Control', 'public, max-age=300');
    ctx.type = 'application/json';
    ctx.body = body;
  };
}
