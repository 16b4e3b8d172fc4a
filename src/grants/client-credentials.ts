import type { ApiCatalog } from '../../policies/catalog.js';
import { constraintsForGrantedScopes, type Constraints } from '../../policies/constraints.js';
import { CLIENT_CREDENTIALS_ACCESS_TOKEN_SECONDS } from '../../policies/lifetimes.js';
import { resolveRequestedScopes } from '../../policies/scopes.js';
import { narrowScopes, type TenantPolicy } from '../../policies/tenant-policy.js';
import { tenantPolicy } from '../../policies/tenant-policy.js';
import type { Grant, GrantSetup, TokenRequestRule } from './grant.js';

/**
 * CLIENT CREDENTIALS (RFC 6749 §4.4): a machine client (a client configuration) gets an access
 * token that acts for itself, within its tenant.
 *
 * - Parameters: `grant_type=client_credentials`, an optional `scope`, an optional `resource` (only
 *   the one audience). `code`, `code_verifier`, `redirect_uri` or `refresh_token` make a wrong
 *   parameter set (invalid_request).
 * - Client authentication: HTTP Basic only (policies/client-authentication.ts).
 * - Scopes: an omitted `scope` means every scope assigned to the client that its tenant's policy
 *   allows; each scope asked for must be one of those, or the request is refused with
 *   invalid_scope (never dropped silently: the client would get less than it thinks).
 * - Lifetime: one hour, not configurable. No refresh token: the client can ask again (§4.4.3).
 * - Claims: `sub` and `client_id` are the client, `tenant` its tenant, and `constraints` its data
 *   filters for the APIs whose scopes the token carries (absent when there are none).
 */
export const clientCredentials: TokenRequestRule = {
  grantType: 'client_credentials',
  clientAuthentication: 'basic',
  required: [],
  requiredOfPublicClients: [],
  accepted: ['scope', 'resource', 'client_id'],
  foreign: ['code', 'code_verifier', 'redirect_uri', 'refresh_token'],
};

/** A machine token's lifetime, in seconds. */
export const CLIENT_CREDENTIALS_TOKEN_SECONDS = CLIENT_CREDENTIALS_ACCESS_TOKEN_SECONDS;

/**
 * The scopes a client_credentials token carries.
 * @param requested the request's `scope` parameter, as sent.
 * @param assigned the scopes assigned to the client.
 * @throws InvalidScope for a scope not assigned, or not allowed by the tenant's policy.
 */
export function clientCredentialsScopes(requested: string | undefined, assigned: readonly string[], policy: TenantPolicy): string[] {
  return resolveRequestedScopes(requested, new Set(narrowScopes(assigned, policy)));
}

/** The claims a machine token carries besides the standard ones. */
export interface MachineClaims {
  tenant: string;
  constraints?: Constraints;
}

/** A machine token's own claims: its tenant, and the client's data filters of the APIs its scopes reach. */
export function clientCredentialsClaims(
  catalog: ApiCatalog,
  client: { tenant: string; constraints?: Constraints | undefined },
  scopes: readonly string[],
): MachineClaims {
  const constraints = constraintsForGrantedScopes(catalog, client.constraints ?? {}, scopes);
  return { tenant: client.tenant, ...(constraints ? { constraints } : {}) };
}

/** A client configuration as the engine holds it: its tenant and data filters (src/engine/client-directory.ts). */
interface MachineClient {
  tenant?: string;
  constraints?: Constraints;
}

/**
 * The grant, whole (see above): its scopes and lifetime at the resource (the request's `scope`
 * resolved against the client's and its tenant's, written back for the engine: an omitted scope
 * means all), and its claims.
 */
export function clientCredentialsGrant(setup: GrantSetup): Grant {
  const { catalog, audience, accessTokenFormat } = setup;
  return {
    ...clientCredentials,
    async resource(ctx, client) {
      const policy = await tenantPolicy(setup.tenantPolicy, (client as unknown as MachineClient).tenant);
      const granted = clientCredentialsScopes(ctx.oidc.params?.scope as string | undefined, client.scope?.split(' ') ?? [], policy).join(' ');
      // The engine reads the requested scopes after this call: an omitted scope means all.
      ctx.oidc.params!.scope = granted;
      return { scope: granted, audience, accessTokenTTL: CLIENT_CREDENTIALS_TOKEN_SECONDS, ...accessTokenFormat };
    },
    async claims(_ctx, token) {
      const client = (token as { client?: MachineClient }).client;
      if (!client?.tenant) return undefined;
      return { ...clientCredentialsClaims(catalog, { tenant: client.tenant, constraints: client.constraints }, token.scope?.split(' ') ?? []) };
    },
  };
}
