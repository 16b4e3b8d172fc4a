import { row, type EndpointModule } from '../endpoint.js';

/**
 * ENTERPRISE SIGN-IN'S CALLBACK: where a tenant's identity provider sends the browser back with
 * its answer (`{oauth}/federation/callback/{connection id}`: each connection has its own redirect
 * URI, so that an answer that comes back at another connection's callback than the one its
 * sign-in was sent to is refused: the defence against a provider mix-up, where a malicious
 * provider of one tenant relays a sign-in to another tenant's provider and receives its code).
 * GET only: a HEAD must not spend the provider's code. Its handler is the sign-in pages'
 * (src/endpoints/sign-in/federation-steps.ts): the answer finishes their pending sign-in, or
 * leads on to their second factor.
 */
export const federationEndpoints: EndpointModule<'federationCallback'> = {
  routes: ({ oauth }) => [
    row({ name: 'federationCallback', path: `${oauth}/federation/callback/{connection}`, methods: ['GET'], group: 'interaction', store: true, refuse: 'page' }),
  ],
  operations: () => ({}),
  audits: ['sign_in.federation_failed', 'sign_in.succeeded'],
  // The sign-in module serves it (see above).
  handlers: () => ({}),
};
