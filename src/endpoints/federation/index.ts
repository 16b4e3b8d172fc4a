import { row, type EndpointModule } from '../endpoint.js';

/**
 * ENTERPRISE SIGN-IN'S CALLBACK: where a tenant's identity provider sends the browser back with
 * its answer (`{oauth}/federation/callback`, the one redirect URI every provider registers for
 * us). GET only: a HEAD must not spend the provider's code. Its handler is the sign-in pages'
 * (src/endpoints/sign-in/federation-steps.ts): the answer finishes their pending sign-in, or
 * leads on to their second factor.
 */
export const federationEndpoints: EndpointModule<'federationCallback'> = {
  routes: ({ oauth }) => [
    row({ name: 'federationCallback', path: `${oauth}/federation/callback`, methods: ['GET'], group: 'interaction', store: true, refuse: 'page' }),
  ],
  operations: () => ({}),
  audits: ['sign_in.federation_failed', 'sign_in.succeeded'],
  // The sign-in module serves it (see above).
  handlers: () => ({}),
};
