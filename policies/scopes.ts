/**
 * SCOPES: what a token may do at the platform's APIs.
 *
 * - Registration: a machine client is assigned scopes per API of the catalog (at least one each).
 * - client_credentials: an omitted `scope` is every assigned scope; one not assigned is refused.
 * - Authorization request: `scope` is required; API scopes of the catalog, the OIDC scopes and the
 *   management right (first-party apps only) are known; anything else is refused (invalid_scope),
 *   never dropped silently.
 * - Named-user tokens: within the app's request, the user's consent, the scopes the user holds
 *   (when her account lists them) and her tenant's policy, all re-read at each refresh.
 */
import type { ApiCatalog } from './catalog.js';
import { InvalidRequest, InvalidScope, ValidationError } from './errors.js';
import { holdsIntegrationSetup, MANAGEMENT_SCOPE, mayRequestManagement } from './management.js';
import type { TenantPolicy } from './tenant-policy.js';
import { narrowScopes } from './tenant-policy.js';

/* RFC 6749 §3.3: scope-token = 1*( %x21 / %x23-5B / %x5D-7E ) */
const SCOPE_TOKEN = /^[\x21\x23-\x5B\x5D-\x7E]+$/;

/**
 * Registration time: the scopes assigned to a client for one API: at least one per API listed (an
 * API with no scope would grant nothing), and each must be a scope that API defines.
 */
export function validateAssignedScopes(
  catalog: ApiCatalog,
  apiId: string,
  scopes: readonly string[],
  field: string,
): string[] {
  const api = catalog.api(apiId);
  if (!api) throw new ValidationError(field, `unknown API '${apiId}'`);
  if (scopes.length === 0) throw new ValidationError(field, `at least one scope is required for API '${apiId}'`);
  for (const scope of scopes) {
    if (!Object.hasOwn(api.scopes, scope)) {
      throw new ValidationError(field, `scope '${scope}' is not defined by API '${apiId}'`);
    }
  }
  return [...new Set(scopes)];
}

/**
 * Request time: the `scope` parameter of a client_credentials request against the client's
 * assigned scopes. Omitted means every assigned scope; any scope not assigned is refused
 * (RFC 6749 §5.2 invalid_scope) rather than dropped silently.
 */
export function resolveRequestedScopes(
  requested: string | undefined,
  assigned: ReadonlySet<string>,
): string[] {
  if (requested === undefined || requested.trim() === '') return [...assigned];
  const scopes = requested.split(' ').filter(Boolean);
  for (const scope of scopes) {
    if (!SCOPE_TOKEN.test(scope)) throw new InvalidScope('scope contains invalid characters');
    if (!assigned.has(scope)) throw new InvalidScope(`scope '${scope}' is not assigned to this client`);
  }
  return [...new Set(scopes)];
}

/** OpenID Connect scopes a named-user app may ask for besides the API scopes. */
export const OIDC_SCOPES: ReadonlySet<string> = new Set(['openid', 'profile', 'email', 'offline_access']);

/** Identity claims per OIDC scope, as the ID token carries them. */
export const IDENTITY_CLAIMS: Readonly<Record<string, readonly string[]>> = {
  openid: ['sub'],
  profile: ['name', 'given_name', 'family_name', 'preferred_username'],
  email: ['email', 'email_verified'],
};


/**
 * Authorization requests: `scope` is required (an app states what it asks for), and every scope must be known: an API scope
 * of the catalog, an OIDC scope, or the management right (for first-party apps only,
 * policies/management.ts). The engine would otherwise drop unknown ones silently; we answer
 * invalid_scope (RFC 6749 §4.1.2.1) so the app learns of its mistake.
 */
export function validateAuthorizationScopes(catalog: ApiCatalog, requested: string | undefined, firstParty: boolean): void {
  if (requested === undefined || requested.trim() === '') {
    throw new InvalidRequest(`missing required parameter 'scope'`);
  }
  for (const scope of requested.split(' ').filter(Boolean)) {
    if (scope === MANAGEMENT_SCOPE) {
      if (!mayRequestManagement(firstParty)) throw new InvalidScope(`the scope '${MANAGEMENT_SCOPE}' is only for the platform's own apps`);
    } else if (!OIDC_SCOPES.has(scope) && !catalog.apiOfScope(scope)) {
      throw new InvalidScope(`unknown scope '${scope}'`);
    }
  }
}

/** Scopes of the one resource (our audience): the catalog's API scopes and the management right. */
export function isResourceScope(catalog: ApiCatalog, scope: string): boolean {
  return scope === MANAGEMENT_SCOPE || catalog.apiOfScope(scope) !== undefined;
}

/**
 * Everything a named-user token of this user, app and tenant may carry at the resource: the API
 * scopes the user holds that the tenant allows, and the management right when the app is
 * first-party and the user holds "Create and update integration setup". The token carries those
 * of them that were asked for and consented.
 */
export function namedUserResourceScopes(
  catalog: ApiCatalog,
  account: { scopes?: readonly string[] | undefined; permissions?: readonly string[] | undefined },
  policy: TenantPolicy,
  firstParty: boolean,
): string[] {
  const scopes = narrowScopes(userGrantableScopes(catalog, account.scopes), policy);
  if (firstParty && holdsIntegrationSetup(account.permissions)) scopes.push(MANAGEMENT_SCOPE);
  return scopes;
}

/**
 * Named-user tokens: the API scopes a user may carry. A named-user token acts within both the
 * application's scopes and the user's own permissions; an account that lists
 * `scopes` bounds them, one that does not is bounded by the catalog only.
 */
export function userGrantableScopes(catalog: ApiCatalog, userScopes: readonly string[] | undefined): string[] {
  if (!userScopes) return catalog.scopes;
  const held = new Set(userScopes);
  return catalog.scopes.filter((scope) => held.has(scope));
}
