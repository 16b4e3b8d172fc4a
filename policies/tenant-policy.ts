import { z } from 'zod';

/** What a host may narrow for one tenant (absent fields narrow nothing). */
export interface TenantPolicy {
  /** Client IDs of the apps this tenant's users may authorize. */
  allowedApps?: string[];
  /** The scopes this tenant's tokens (named-user and machine) may carry. */
  allowedScopes?: string[];
  /** Lifetime of this tenant's named-user access tokens, 300..3600 s. */
  accessTokenTtl?: number;
}

/** The host's per-tenant policy (may be async); `undefined` narrows nothing. Read at every use. */
export type TenantPolicyFunction = (tenant: string) => TenantPolicy | undefined | Promise<TenantPolicy | undefined>;

const policySchema = z
  .object({
    allowedApps: z.array(z.string()).optional(),
    allowedScopes: z.array(z.string()).optional(),
    accessTokenTtl: z.number().int().min(300).max(3600).optional(),
  })
  .strict();

/**
 * Runs the host's per-tenant policy function and checks what it returned; a wrong policy is a
 * configuration error of the host, reported with the field, never silently widened.
 */
export async function tenantPolicy(policyOf: TenantPolicyFunction | undefined, tenant: string | undefined): Promise<TenantPolicy> {
  if (!policyOf || tenant === undefined) return {};
  const result = policySchema.safeParse((await policyOf(tenant)) ?? {});
  if (!result.success) {
    const issue = result.error.issues[0];
    throw new Error(`tenantPolicy(${JSON.stringify(tenant)}) returned an invalid policy: ${issue?.path.join('.')}: ${issue?.message}`);
  }
  return result.data;
}

/** The scopes a policy lets through, in their order. */
export function narrowScopes(scopes: readonly string[], policy: TenantPolicy): string[] {
  if (!policy.allowedScopes) return [...scopes];
  const allowed = new Set(policy.allowedScopes);
  return scopes.filter((scope) => allowed.has(scope));
}

export function appAllowed(policy: TenantPolicy, clientId: string): boolean {
  return !policy.allowedApps || policy.allowedApps.includes(clientId);
}
