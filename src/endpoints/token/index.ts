import { row, type EndpointModule } from '../endpoint.js';
import { clientEndpoints } from '../client-endpoints.js';
import { tokenOperations } from './openapi.js';
import { tokenEndpointGuard } from './token-endpoint.js';

/**
 * THE TOKEN ENDPOINT (`POST {issuer}/token`): the request guard (body, grant rules: src/grants),
 * the engine, then what the grant does after issuing; behind the failed-authentication limit, with
 * CORS for public apps. Straight on to the engine: nothing between the router and it concerns a
 * token request.
 */
export const tokenEndpoint: EndpointModule<'token'> = {
  routes: ({ oauth }) => [
    row({ name: 'token', path: `${oauth}/token`, methods: ['POST'], group: 'token', store: true, match: 'engine', preflight: true, documented: ['POST'] }),
  ],
  operations: tokenOperations,
  audits: ['client_auth.rate_limited'],
  handlers(parts) {
    const guard = tokenEndpointGuard(parts.settings.limits.tokenRequestBytes, parts.engine.grants, parts.tracing);
    const client = clientEndpoints(parts);
    return {
      token: client.cors(client.limited((ctx, _params, next) => guard(ctx, () => parts.engine.serve(ctx, next)))),
    };
  },
};
