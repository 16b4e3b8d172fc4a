import { z } from 'zod';
import { SECURITY_PROFILES, type SecurityProfile } from './high-security.js';
import { NAMED_USER_ACCESS_TOKEN } from './lifetimes.js';

/**
 * TENANT POLICY: what a host may narrow for one of its tenants, never widen.
 *
 * - `allowedApps`: the apps this tenant's users may authorize (the consent rule, policies/consent.ts).
 * - `allowedScopes`: the scopes this tenant's tokens may carry, named-user and machine alike; a
 *   scope outside it is dropped from what may be granted (an explicitly requested one of a machine
 *   client is refused).
 * - `accessTokenTtl`: the lifetime of this tenant's named-user access tokens, within the server's
 *   bounds (policies/lifetimes.ts).
 * The host's function is called at every use (a change applies at once) and what it returns is
 * checked: a wrong policy is the host's configuration error, reported, never silently widened.
 */

/** What a host may narrow for one tenant (absent fields narrow nothing). */
export interface TenantPolicy {
  /** Client IDs of the apps this tenant's users may authorize. */
  allowedApps?: readonly string[];
  /** The scopes this tenant's tokens (named-user and machine) may carry. */
  allowedScopes?: readonly string[];
  /** Lifetime of this tenant's named-user access tokens, in seconds, within the bounds of `namedUserAccessTokenTtl`. */
  accessTokenTtl?: number;
  /**
   * Who signs in with a second factor: everyone (`required`), nobody is made to (`optional`: a user
   * who has one still gives it), or, the default, the users who hold a management permission
   * (`required_for_permissions`: their tokens carry `manage.integrations` only after one).
   */
  secondFactor?: SecondFactorRule;
  /** Whether this tenant's users may sign in with a passkey alone (default false). */
  passkeyOnlySignIn?: boolean;
  /**
   * Enterprise sign-in (docs/federation.md): `required` refuses the password of this tenant's users
   * while the tenant has a connection (they sign in through their organisation's identity
   * provider); `optional` (the default) offers both.
   */
  sso?: SsoRule;
  /**
   * `high-security` puts every client of this tenant under the high-security profile
   * (policies/high-security.ts, docs/high-security.md): one that does not conform is refused at
   * run time. `standard` (the default) leaves it to each client and the tenant's own settings.
   */
  profile?: SecurityProfile;
}

/** The enterprise sign-in rules of a tenant, weakest first. */
export const SSO_RULES = ['optional', 'required'] as const;
/** Whether a tenant's users must sign in through its identity provider (TenantPolicy.sso). */
export type SsoRule = (typeof SSO_RULES)[number];

/** The second-factor rules of a tenant, weakest first. */
export const SECOND_FACTOR_RULES = ['optional', 'required_for_permissions', 'required'] as const;
/** Who signs in with a second factor (TenantPolicy.secondFactor). */
export type SecondFactorRule = (typeof SECOND_FACTOR_RULES)[number];
/** The rule when neither the host nor the tenant chose one. */
export const DEFAULT_SECOND_FACTOR_RULE: SecondFactorRule = 'required_for_permissions';

/** The host's per-tenant policy (may be async); `undefined` narrows nothing. Read at every use. */
export type TenantPolicyFunction = (tenant: string) => TenantPolicy | undefined | Promise<TenantPolicy | undefined>;

const policySchema = z
  .object({
    allowedApps: z.array(z.string()).optional(),
    allowedScopes: z.array(z.string()).optional(),
    accessTokenTtl: z.number().int().min(NAMED_USER_ACCESS_TOKEN.min).max(NAMED_USER_ACCESS_TOKEN.max).optional(),
    secondFactor: z.enum(SECOND_FACTOR_RULES).optional(),
    passkeyOnlySignIn: z.boolean().optional(),
    sso: z.enum(SSO_RULES).optional(),
    profile: z.enum(SECURITY_PROFILES).optional(),
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
