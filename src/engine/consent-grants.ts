import type { KoaContextWithOIDC } from 'oidc-provider';
import { isResourceScope } from '../../policies/scopes.js';
import { checkAppForUser } from '../../policies/consent.js';
import { tenantPolicy, type TenantPolicyFunction } from '../../policies/tenant-policy.js';
import type { ApiCatalog } from '../../policies/catalog.js';
import type { Consents } from '../records/consents.js';
import { engineAppOwner } from './client-directory.js';
import { accountOf } from './accounts.js';

type EngineGrant = InstanceType<KoaContextWithOIDC['oidc']['provider']['Grant']>;

/** Every scope a grant holds: its OIDC scopes and its scopes at the one resource (our audience). */
export function grantScopes(grant: EngineGrant, audience: string): string[] {
  return [...(grant.getOIDCScope()?.split(' ') ?? []), ...(grant.getResourceScope(audience)?.split(' ') ?? [])].filter(Boolean);
}

/**
 * The engine's `loadExistingGrant`: the grant of the user's consent for this app in her tenant,
 * whatever browser session she signs in from, so that consent is asked once per (tenant, user, app)
 * and a new consent updates the one grant instead of piling up grants.
 */
export function consentGrantLoader(consents: Consents, catalog: ApiCatalog, audience: string, policyOf?: TenantPolicyFunction) {
  return async function loadExistingGrant(ctx: KoaContextWithOIDC): Promise<EngineGrant | undefined> {
    const { Grant } = ctx.oidc.provider;
    const account = accountOf(ctx);
    // The first point of the authorization request where the user is known: the consent rule may
    // refuse the app here (back to the app with access_denied; policies/consent.ts).
    if (account) {
      const client = ctx.oidc.client!;
      checkAppForUser({ clientId: client.clientId, ...engineAppOwner(client) }, account.tenant, await tenantPolicy(policyOf, account.tenant), 'authorize');
    }
    const fresh = (ctx.oidc.result as { consent?: { grantId?: string } } | undefined)?.consent?.grantId;
    if (fresh) return Grant.find(fresh);
    if (!account) return undefined;
    const key = { tenant: account.tenant, sub: account.sub, clientId: ctx.oidc.client!.clientId };
    const consent = await consents.find(key);
    if (!consent) return undefined;
    const grant = await Grant.find(consent.grantId);
    if (grant) return grant;
    // A replayed code or refresh token ended the grant (and its tokens), not the user's decision.
    const revived = new Grant({ accountId: account.sub, clientId: key.clientId });
    // As the consent page grants them: every scope is also an OIDC scope to the engine (API scopes
    // are among its declared `scopes`), and API scopes are scopes of the one resource.
    const apiScopes = consent.scopes.filter((scope) => isResourceScope(catalog, scope));
    if (consent.scopes.length) revived.addOIDCScope(consent.scopes.join(' '));
    if (apiScopes.length) revived.addResourceScope(audience, apiScopes.join(' '));
    await consents.record({ ...key, grantId: await revived.save(), scopes: consent.scopes });
    return revived;
  };
}
