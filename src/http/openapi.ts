import type { Context, Next } from 'koa';
import { z } from 'zod';
import type { RouteHandler } from './router.js';
import { routeTable, type RouteName } from './routes.js';
import { authorizationServerMetadata, WIRE_SCHEMAS } from './wire.js';

/*
 * The OpenAPI 3.1 description of every HTTP endpoint we serve, from the same sources as the server:
 * its paths and methods are the documented rows of the route table (src/http/routes.ts), its
 * schemas the wire's zod schemas (src/http/wire.ts). What is written here is the prose: what each
 * operation does and answers. The sign-in pages (`/oauth2/interaction/...`) are browser pages and
 * are left out on purpose.
 */

type Json = Record<string, unknown>;

export interface OpenApiSetup {
  /** `{baseUrl}{pathPrefix}/oauth2` */
  issuer: string;
  /** The public base address: the document's only server. */
  baseUrl: string;
  /** `''` or e.g. `/auth2`: the prefix of every path. */
  pathPrefix: string;
  /** The largest JSON body of the management API (`limits.apiRequestBytes`). */
  apiBodyLimit?: number;
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

/** Every schema of the wire (src/http/wire.ts) as JSON Schema 2020-12, refs between them as components. */
function schemas(issuer: string): Json {
  const generated = z.toJSONSchema(WIRE_SCHEMAS, { target: 'draft-2020-12', uri: (id) => `#/components/schemas/${id}` }).schemas;
  const all: Record<string, Json> = { ...generated, AuthorizationServerMetadata: z.toJSONSchema(authorizationServerMetadata(issuer), { target: 'draft-2020-12' }) as Json };
  // In an OpenAPI document a component is named by its key: each schema's own $schema and $id go.
  return Object.fromEntries(Object.entries(all).map(([name, { $schema: _schema, $id: _id, ...schema }]) => [name, schema]));
}

function responses(apiBodyLimit: number): Json {
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
    PayloadTooLarge: management(`The body exceeds ${apiBodyLimit} bytes (\`limits.apiRequestBytes\`).`, ['invalid_request']),
    Conflict: management('A concurrent change kept winning the race; try again.', ['conflict']),
    NotSupported: management(
      'This server is not set up for the request: its AccountStore cannot look users up by username (`findByUsername`).',
      ['not_supported'],
    ),
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
          'To the login or consent page (`{pathPrefix}/oauth2/interaction/{uid}`), or back to the app\'s '
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

/** The Activity of the caller's tenant: its audit events. */
function auditEventsOperation(): Json {
  const query = (name: string, schema: Json, description: string) => ({ name, in: 'query', required: false, schema, description });
  return {
    get: {
      operationId: 'listAuditEvents',
      tags: ['audit'],
      summary: "The audit trail of the caller's tenant, newest first",
      description:
        'Who did what to which client configuration, app, consent or session in the caller\'s tenant (never another '
        + 'tenant\'s: there is no parameter to choose one). The same rights as the rest of the management API. A page '
        + 'with `next` may have more: pass it as `cursor`. An unknown parameter, or one sent twice, is 400.',
      security: [{ bearerAuth: [] }],
      parameters: [
        query('type', { type: 'string' }, 'Only events of this type, e.g. `client_configuration.secret_rotated`.'),
        query('since', { type: 'string', format: 'date-time' }, 'Events at or after this time.'),
        query('until', { type: 'string', format: 'date-time' }, 'Events at or before this time.'),
        query('limit', { type: 'integer', minimum: 1, maximum: 200 }, 'At most this many; default 50.'),
        query('cursor', { type: 'string' }, 'The `next` of the page before.'),
      ],
      responses: {
        200: { description: 'A page of events.', headers: NO_STORE, content: json(ref('AuditEventList')) },
        400: response('ManagementBadRequest'),
        ...authFailures,
      },
    },
  };
}

/** The apps that serve the caller's tenant besides its own (read-only). */
function platformAppsOperation(): Json {
  return {
    get: {
      operationId: 'listPlatformApps',
      tags: ['app-registrations'],
      summary: "The apps the caller's tenant's users may authorize besides its own",
      description:
        'The operator\'s apps (they serve every tenant) and other tenants\' apps the operator opened to all tenants, less '
        + 'those the tenant\'s policy does not allow: exactly the apps other than its own that the authorization endpoint '
        + 'lets the tenant\'s users authorize. Read-only: no secret, and the management API changes none of them. The same '
        + 'rights as the rest of the management API.',
      security: [{ bearerAuth: [] }],
      responses: {
        200: { description: 'The apps.', headers: NO_STORE, content: json(ref('PlatformAppList')) },
        ...authFailures,
      },
    },
  };
}

/** A user of the caller's tenant let in again after failed sign-ins. */
function signInUnlockOperation(): Json {
  return {
    post: {
      operationId: 'unlockSignIn',
      tags: ['sign-ins'],
      summary: "Lifts the sign-in hold of a user of the caller's tenant",
      description:
        'Clears the failed sign-ins counted for the username (sign-in throttling), so that the user can sign in from a new '
        + 'browser at once. The hold of an address is not lifted. Recorded as `sign_in.unlocked` with the user as target '
        + '(never the username). A username unknown or of another tenant is answered `{ "unlocked": false }`, like a user '
        + 'who is not held. Needs the host\'s AccountStore to look users up by username (`findByUsername`): without it, '
        + '501 `not_supported`. The same rights as the rest of the management API.',
      security: [{ bearerAuth: [] }],
      requestBody: { required: true, content: json(ref('SignInUnlockRequest')) },
      responses: {
        200: { description: 'Done.', headers: NO_STORE, content: json(ref('SignInUnlockResponse')) },
        400: response('ManagementBadRequest'),
        ...authFailures,
        413: response('PayloadTooLarge'),
        415: response('UnsupportedMediaType'),
        501: response('NotSupported'),
      },
    },
  };
}

/** Userinfo, introspection and revocation: ours beside the engine's endpoints. */
function lifecycleOperations(): Record<'userinfo' | 'introspection' | 'revocation', Json> {
  const bearer401 = { $ref: '#/components/responses/BearerUnauthorized' };
  const userinfo = (method: 'get' | 'post') => ({
    operationId: method === 'get' ? 'userinfo' : 'userinfoWithPost',
    tags: ['oauth2'],
    summary: 'The signed-in user\'s claims (OpenID Connect Core §5.3)',
    description:
      'For a live named-user access token of this server (Bearer header only; a token in the query or the body is '
      + '400) whose user allowed `openid`: `sub` (the ID token\'s) and the claims of the consented `profile` and '
      + '`email` scopes. A machine token is 403 `insufficient_scope`; an expired, revoked or foreign one, or one whose '
      + 'grant ended, is 401.',
    security: [{ bearerAuth: [] }],
    responses: {
      200: { description: 'The claims.', headers: NO_STORE, content: json(ref('Userinfo')) },
      400: response('BearerBadRequest'),
      401: bearer401,
      403: response('BearerForbidden'),
      500: response('ServerError'),
    },
  });
  const clientAuthFailed = errorResponse('Client authentication failed.', ['invalid_client'], {
    ...NO_STORE,
    'WWW-Authenticate': { description: '`Basic realm="{issuer}", error="invalid_client"`', schema: { type: 'string', pattern: '^Basic realm=' } },
  });
  const form = (schema: string) => ({ required: true, content: { 'application/x-www-form-urlencoded': { schema: ref(schema) } } });
  return {
    userinfo: { get: userinfo('get'), post: userinfo('post') },
    introspection: {
      post: {
        operationId: 'introspect',
        tags: ['oauth2'],
        summary: 'Whether an access token is still live (RFC 7662)',
        description:
          'For resource servers. The caller authenticates with HTTP Basic as a client configuration or a confidential '
          + 'app. `active: true` for a live access token of the caller\'s tenant (an app of the operator sees every '
          + 'tenant); `{ "active": false }` and nothing more for anything else.',
        security: [{ basicAuth: [] }],
        requestBody: form('IntrospectionRequest'),
        responses: {
          200: { description: 'The token\'s state.', headers: NO_STORE, content: json(ref('IntrospectionResponse')) },
          400: errorResponse('No `token`, a parameter sent twice, another content type.', ['invalid_request']),
          401: clientAuthFailed,
          500: response('ServerError'),
        },
      },
    },
    revocation: {
      post: {
        operationId: 'revoke',
        tags: ['oauth2'],
        summary: 'Revokes a refresh or access token (RFC 7009)',
        description:
          'HTTP Basic, or `client_id` alone for a public app. A refresh token ends its grant (its access tokens are no '
          + 'longer live, unused codes die); an access token stops being live for userinfo and introspection. An '
          + 'unknown, expired or other client\'s token is answered 200 as well, with nothing done.',
        security: [{ basicAuth: [] }, {}],
        requestBody: form('RevocationRequest'),
        responses: {
          200: { description: 'Revoked, or nothing to revoke.', headers: NO_STORE },
          400: errorResponse('No `token`, a parameter sent twice, another content type.', ['invalid_request']),
          401: clientAuthFailed,
          500: response('ServerError'),
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
export function openApiDocument({ issuer, baseUrl, pathPrefix, apiBodyLimit = 64 * 1024 }: OpenApiSetup): Record<string, unknown> {
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

  const operations: Partial<Record<RouteName, Json>> = {
    token: tokenOperation(),
    jwks: {
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
    openidConfiguration: discoveryOperation('openidConfiguration', 'OpenID Connect discovery'),
    metadataAlias: discoveryOperation('authorizationServerMetadata', 'RFC 8414 form of the same document'),
    authorize: authorizeOperation(),
    ...lifecycleOperations(),
    consents: consents.list as Json,
    consent: consents.one as Json,
    clientConfigurations: clients.collection,
    clientConfiguration: clients.item,
    clientConfigurationSecret: clients.secret,
    appRegistrations: apps.collection,
    appRegistration: apps.item,
    appRegistrationSecret: apps.secret,
    auditEvents: auditEventsOperation(),
    platformApps: platformAppsOperation(),
    signInUnlock: signInUnlockOperation(),
    openapi: {
      get: {
        operationId: 'openApiDocument',
        tags: ['discovery'],
        summary: 'This document',
        security: [],
        responses: { 200: { description: 'The OpenAPI 3.1 document.', content: { 'application/json': { schema: { type: 'object' } } } } },
      },
    },
  };

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
          + 'the engine\'s resume step `/oauth2/authorize/{uid}`, and the sign-out pages `/oauth2/session/end`, '
          + '`/oauth2/session/end/confirm`, `/oauth2/session/end/success`): they are browser pages with CSRF-protected forms, '
          + 'not an API.',
        'Errors are RFC 6749 §5.2 JSON `{ "error", "error_description" }` with `Cache-Control: no-store`; match on '
          + '`error`, the description is for humans. The consent and management APIs take a named-user access token '
          + 'of this server (Bearer) and answer RFC 6750 challenges; the management API also requires the user\'s '
          + '"Create and update integration setup" permission, checked on every call.',
        'A method that a path does not list gets 405 `invalid_request` with an `Allow` header.',
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
      { name: 'audit', description: 'The audit trail of the caller\'s tenant.' },
      { name: 'sign-ins', description: 'Sign-in throttling of the caller\'s tenant\'s users.' },
    ],
    paths: documentedPaths(pathPrefix, operations),
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
      responses: responses(apiBodyLimit),
    },
  });
}

/**
 * The documented rows of the route table, each with the operations written for it: a row whose
 * operation is missing, or an operation of a method the row does not document, is a programming
 * error caught by the OpenAPI test.
 */
function documentedPaths(pathPrefix: string, operations: Partial<Record<RouteName, Json>>): Json {
  const paths: Json = {};
  for (const route of routeTable(pathPrefix)) {
    if (!route.documented.length) continue;
    const item = operations[route.name];
    if (!item) throw new Error(`the OpenAPI document has no operation for route ${route.name}`);
    const methods = new Set(route.documented.map((method) => method.toLowerCase()));
    paths[route.path] = Object.fromEntries(Object.entries(item).filter(([key]) => key === 'parameters' || methods.has(key)));
  }
  return paths;
}

/** Serves `document` as JSON (GET only); every other request goes on. */
export function openApiHandler(document: Record<string, unknown>): RouteHandler {
  const body = JSON.stringify(document);
  return async (ctx: Context, _params: unknown, next: Next): Promise<void> => {
    if (ctx.method !== 'GET') return next();
    ctx.set('Cache-Control', 'public, max-age=300');
    ctx.type = 'application/json';
    ctx.body = body;
  };
}
