/*
 * The pieces every endpoint module's OpenAPI operations are made of (src/endpoints/<module>/openapi.ts):
 * references to the document's components, the error answers, the headers our answers carry.
 */

/** A piece of the OpenAPI document. */
export type Json = Record<string, unknown>;

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

export const ref = (name: string) => ({ $ref: `#/components/schemas/${name}` });
export const response = (name: string) => ({ $ref: `#/components/responses/${name}` });
export const json = (schema: Json) => ({ 'application/json': { schema } });

export const NO_STORE = {
  'Cache-Control': { description: 'Always `no-store`.', schema: { type: 'string', const: 'no-store' } },
};
export const TOKEN_HEADERS = {
  ...NO_STORE,
  Pragma: { description: 'Always `no-cache`.', schema: { type: 'string', const: 'no-cache' } },
};
export const BEARER_CHALLENGE = {
  'WWW-Authenticate': {
    description:
      'RFC 6750 §3 challenge: `Bearer realm="{issuer}"` without an error code when no token was sent, '
      + 'else with `error` and `error_description`.',
    schema: { type: 'string', pattern: '^Bearer realm=' },
  },
};

/** `{ error, error_description }` whose `error` is one of `codes`. */
export function oauthError(codes: string[], description?: string): Json {
  return {
    allOf: [ref('OAuthError'), { properties: { error: { enum: codes } } }],
    ...(description ? { description } : {}),
  };
}

export function errorResponse(description: string, codes: string[], headers: Json = NO_STORE): Json {
  return { description, headers, content: json(oauthError(codes)) };
}

export const uuid = { type: 'string', format: 'uuid' };


export const clientIdParameter = (description: string) => ({
  name: 'clientId',
  in: 'path',
  required: true,
  schema: uuid,
  description,
});

export const authFailures = {
  401: response('BearerUnauthorized'),
  403: response('BearerForbidden'),
  500: response('ServerError'),
};
