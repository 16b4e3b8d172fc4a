import { json, ref, type Json } from '../../http/openapi-parts.js';

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

/** The keys', metadata's and this document's operations of the OpenAPI document. */
export function opsOperations(): Record<'jwks' | 'openidConfiguration' | 'metadataAlias' | 'openapi', Json> {
  return {
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
}
