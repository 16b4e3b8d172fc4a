import type { Context, Next } from 'koa';
import { z } from 'zod';
import { errorResponse, json, NO_STORE, oauthError, ref, BEARER_CHALLENGE, type Json } from './openapi-parts.js';
import type { RouteHandler } from './router.js';
import type { RouteDefinition } from './routes.js';
import { authorizationServerMetadata, WIRE_SCHEMAS } from './wire.js';

/*
 * The OpenAPI 3.1 description of every HTTP endpoint we serve, from the same sources as the server:
 * its paths and methods are the documented rows of the route table (src/endpoints: each endpoint
 * module's rows), its schemas the wire's zod schemas (src/http/wire.ts), its operations each
 * endpoint module's (src/endpoints/<module>/openapi.ts). This is the frame: what the document says of
 * itself, its components, and the paths the modules' operations are put at. The sign-in pages
 * (`/oauth2/interaction/...`) are browser pages and are left out on purpose.
 */

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

/**
 * The OpenAPI 3.1 document of a server with this issuer and path prefix: its frame, and at each
 * documented row of `routes` the operations written for it (src/endpoints composes both).
 */
export function openApiDocument(
  { issuer, baseUrl, apiBodyLimit = 64 * 1024 }: OpenApiSetup,
  routes: readonly RouteDefinition[],
  operations: Readonly<Record<string, Json>>,
): Record<string, unknown> {
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
        'Not described here: the login, second-factor and consent pages that `GET /oauth2/authorize` sends the browser to '
          + '(`/oauth2/interaction/{uid}`, `/oauth2/interaction/{uid}/login`, `/oauth2/interaction/{uid}/second-factor`, '
          + '`/oauth2/interaction/{uid}/confirm`, the enrolment after the password `/oauth2/interaction/{uid}/enrol` and '
          + '`/oauth2/interaction/{uid}/enrolled`, '
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
      { name: 'factors', description: 'The second factors of the caller\'s tenant\'s users.' },
      { name: 'tenant-settings', description: 'The caller\'s tenant\'s own settings: who signs in with a second factor, passkey-only sign-in.' },
    ],
    paths: documentedPaths(routes, operations),
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
function documentedPaths(routes: readonly RouteDefinition[], operations: Readonly<Record<string, Json>>): Json {
  const paths: Json = {};
  for (const route of routes) {
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
