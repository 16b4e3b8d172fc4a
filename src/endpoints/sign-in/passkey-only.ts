import { tenantPolicy, type TenantPolicyFunction } from '../../../policies/tenant-policy.js';

/**
 * Whether the users of `tenant` may sign in with a passkey alone (TenantPolicy.passkeyOnlySignIn,
 * default false). The one place the sign-in reads that rule: a platform app (no tenant) never
 * offers it, since a passkey alone finds its user within one tenant only.
 */
export async function passkeyOnlyAllowed(policyOf: TenantPolicyFunction | undefined, tenant: string | undefined): Promise<boolean> {
  if (tenant === undefined) return false;
  return (await tenantPolicy(policyOf, tenant)).passkeyOnlySignIn === true;
}
