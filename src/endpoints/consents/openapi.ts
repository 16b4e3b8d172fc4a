import { authFailures, clientIdParameter, errorResponse, json, NO_STORE, ref, response, type Json } from '../../http/openapi-parts.js';

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

/** The consent API's operations of the OpenAPI document. */
export function consentApiOperations(): Record<'consents' | 'consent', Json> {
  const { list, one } = consentOperations() as { list: Json; one: Json };
  return { consents: list, consent: one };
}
