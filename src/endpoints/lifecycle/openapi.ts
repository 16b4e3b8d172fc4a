import { errorResponse, json, NO_STORE, ref, response, type Json } from '../../http/openapi-parts.js';

/** Userinfo, introspection and revocation: ours beside the engine's endpoints. */
export function lifecycleOperations(): Record<'userinfo' | 'introspection' | 'revocation', Json> {
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
