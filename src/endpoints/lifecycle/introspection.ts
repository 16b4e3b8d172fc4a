import { InvalidRequest, TokenError } from '../../../policies/errors.js';
import type { EngineClient } from '../../engine/client-cache.js';
import type { LiveTokens } from '../../engine/live-tokens.js';
import { mayIntrospect, type Introspector } from '../../../policies/introspection.js';
import type { ClientAssertionCheck } from './client-assertion.js';
import { callingClient, tenantOfClient } from './calling-client.js';
import type { RouteHandler } from '../../http/router.js';
import { readForm } from '../../http/oauth-request.js';

/**
 * TOKEN INTROSPECTION (RFC 7662), `POST {issuer}/introspect`, for resource servers that must see a
 * revocation within seconds rather than at a token's `exp`.
 *
 * - The caller authenticates with HTTP Basic as a client configuration or a confidential app (a
 *   public app has no secret to prove who it is); a failure is 401 invalid_client.
 * - `{ "active": true, ... }` with `sub`, `client_id`, `scope`, `exp`, `iat`, `iss`, `aud`,
 *   `token_type` (`DPoP` with `cnf.jkt` for a DPoP-bound token), `tenant` and (machine tokens) `constraints`, for a live access token of ours
 *   (src/engine/live-tokens.ts) that the caller may see (policies/introspection.ts): a tenant's
 *   client sees its tenant's tokens, any client the tokens issued to it; an app of the operator (no tenant) sees every tenant's only
 *   when it is first-party or marked a resource server (`resourceServer`).
 * - `{ "active": false }` and nothing more for anything else: expired, unknown, malformed, revoked,
 *   another tenant's, any token for a caller that may not see it, a refresh or ID token, or a
 *   named-user token whose grant has ended (§2.2: nothing about why).
 */
/** The calling client as the introspection rule reads it (its engine metadata). */
function introspectorOf(client: EngineClient): Introspector {
  const { first_party: firstParty, resource_server: resourceServer } = client as unknown as { first_party?: unknown; resource_server?: unknown };
  return { clientId: client.clientId, tenant: tenantOfClient(client), firstParty: firstParty === true, resourceServer: resourceServer === true };
}

export function introspectionHandler(setup: {
  liveTokens: LiveTokens;
  findClient: (clientId: string) => Promise<EngineClient | undefined>;
  bodyLimit: number;
  /** How a private_key_jwt caller's assertion is checked, and this endpoint's URL (an audience). */
  assertions?: { check: ClientAssertionCheck; endpointUrl: string };
}): RouteHandler {
  const { liveTokens, findClient, bodyLimit, assertions } = setup;
  const inactive = { active: false };
  return async (ctx) => {
    ctx.set('Cache-Control', 'no-store');
    const { params } = await readForm(ctx, bodyLimit);
    const caller = await callingClient(ctx, params, 'basic', findClient, assertions);
    const token = params.get('token');
    if (token === undefined) throw new InvalidRequest(`missing required parameter 'token'`);
    const verified = await liveTokens.verify(token).catch((error: unknown) => {
      if (error instanceof TokenError) return undefined;
      throw error;
    });
    const live = verified && mayIntrospect(introspectorOf(caller), verified) ? await liveTokens.live(verified) : undefined;
    if (!live) {
      ctx.body = inactive;
      return;
    }
    const { claims } = live;
    // RFC 9449 §6.2: a bound token says so, with its key's thumbprint, for the resource server to match the proof.
    const jkt = (claims.cnf as { jkt?: unknown } | undefined)?.jkt;
    ctx.body = {
      active: true,
      iss: claims.iss,
      sub: live.sub,
      client_id: live.clientId,
      scope: [...live.scopes].join(' '),
      exp: live.exp,
      iat: live.iat,
      aud: claims.aud,
      token_type: typeof jkt === 'string' ? 'DPoP' : 'Bearer',
      ...(typeof jkt === 'string' ? { cnf: { jkt } } : {}),
      ...(live.tenant !== undefined ? { tenant: live.tenant } : {}),
      ...(Object.keys(live.constraints).length ? { constraints: live.constraints } : {}),
    };
  };
}
