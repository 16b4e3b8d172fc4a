import { row, type EndpointModule } from '../endpoint.js';
import { clientEndpoints } from '../client-endpoints.js';
import { clientAssertionCheck } from './client-assertion.js';
import { introspectionHandler } from './introspection.js';
import { lifecycleOperations } from './openapi.js';
import { revocationHandler } from './revocation.js';
import { userinfoHandler } from './userinfo.js';
import { DpopProofs } from '../../resource-server/dpop.js';
import { usedOnce } from '../../engine/replay-detection.js';

/**
 * THE TOKEN LIFECYCLE: userinfo, introspection (RFC 7662) and revocation (RFC 7009), ours beside
 * the engine's (its serve only tokens it stores, and refuse any with an audience); introspection
 * and revocation behind the failed-authentication limit, userinfo and revocation with CORS.
 */
export const lifecycleEndpoints: EndpointModule<'userinfo' | 'introspection' | 'revocation'> = {
  routes: ({ oauth }) => [
    row({ name: 'userinfo', path: `${oauth}/userinfo`, methods: ['GET', 'POST'], group: 'userinfo', store: true, match: 'engine', preflight: true, documented: ['GET', 'POST'] }),
    row({ name: 'introspection', path: `${oauth}/introspect`, methods: ['POST'], group: 'introspection', store: true, match: 'engine', documented: ['POST'] }),
    row({ name: 'revocation', path: `${oauth}/revoke`, methods: ['POST'], group: 'revocation', store: true, match: 'engine', preflight: true, documented: ['POST'] }),
  ],
  operations: lifecycleOperations,
  audits: [],
  handlers(parts) {
    const { settings, store, engine } = parts;
    const { liveTokens, findClient } = engine;
    const client = clientEndpoints(parts);
    const bodyLimit = settings.limits.tokenRequestBytes;
    const check = clientAssertionCheck(engine.provider);
    const issuer = engine.provider.issuer;
    return {
      revocation: client.cors(client.limited(revocationHandler({ provider: engine.provider, store, liveTokens, findClient, bodyLimit, assertions: { check, endpointUrl: `${issuer}/revoke` } })), { ownAnswer: true }),
      introspection: client.limited(introspectionHandler({ liveTokens, findClient, bodyLimit, assertions: { check, endpointUrl: `${issuer}/introspect` } })),
      userinfo: client.cors(userinfoHandler({
        liveTokens, accounts: settings.accounts, realm: engine.ownApis.realm, bodyLimit,
        // DPoP-bound tokens: proofs for the URL clients find in discovery, used once in the shared store.
        dpop: {
          url: `${engine.provider.issuer}/userinfo`,
          proofs: new DpopProofs(engine.ownApis.realm, { maxProofs: 0, clockToleranceSeconds: 5, useOnce: usedOnce(store) }),
        },
      }), { methods: ['GET', 'POST'], ownAnswer: true }),
    };
  },
};
