import type { SecurityProfile } from './high-security.js';
import { holdsIntegrationSetup } from './management.js';
import { DEFAULT_SECOND_FACTOR_RULE, SECOND_FACTOR_RULES, type SecondFactorRule, type SsoRule, type TenantPolicy } from './tenant-policy.js';

/**
 * THE SECOND-FACTOR RULE OF A TENANT: who signs in with a second factor, and whether a passkey alone
 * signs in, from two sources: the host's `tenantPolicy` (the operator's word) and the tenant's own
 * settings (what its admin set through the management API).
 *
 * - `secondFactor`: the stricter of the two wins (optional < required_for_permissions < required).
 *   The host's unset rule is the default (`required_for_permissions`); the tenant's unset rule says
 *   nothing. So a tenant admin can ask for more than the host, never for less: a stolen admin
 *   token must not be able to switch the second factor off for the tenant. Only the host can make
 *   it `optional`.
 * - `passkeyOnlySignIn`: off unless enabled; the host's `false` forbids it whatever the tenant says;
 *   otherwise the tenant's choice, else the host's.
 * - `sso` (enterprise sign-in): `required` when either says so: the host's `required` is not undone
 *   by the tenant, and a tenant's admin may require it for her tenant. It refuses passwords only
 *   while the tenant has a connection (src/federation/), so that no tenant is locked out by it.
 * - `profile` (the tenant's own choice, kept with these settings): combined with the host's by
 *   policies/high-security.ts (tenantProfile).
 * - Who must have a factor: under `required` everyone, under `required_for_permissions` a user who
 *   holds a management permission (`integration_setup`), under `optional` nobody (a user who holds
 *   one still gives it at sign-in). Such a user who has none enrols right after the password, and
 *   her tokens carry `manage.integrations` only when the sign-in used a second factor (`amr` holds
 *   `mfa`).
 */

/** A tenant's own choices (absent: none made). */
export interface TenantSecondFactorSettings {
  secondFactor?: SecondFactorRule | undefined;
  passkeyOnlySignIn?: boolean | undefined;
  sso?: SsoRule | undefined;
  /** The security profile of the tenant's clients (policies/high-security.ts). */
  profile?: SecurityProfile | undefined;
}

/** What applies to a tenant's sign-ins. */
export interface SecondFactorRuling {
  secondFactor: SecondFactorRule;
  passkeyOnlySignIn: boolean;
  sso: SsoRule;
}

const rank = (rule: SecondFactorRule) => SECOND_FACTOR_RULES.indexOf(rule);

/** The rule of a tenant from the host's policy and the tenant's settings (see above). */
export function combineSecondFactorRules(host: Pick<TenantPolicy, 'secondFactor' | 'passkeyOnlySignIn' | 'sso'>, tenant: TenantSecondFactorSettings): SecondFactorRuling {
  const hostRule = host.secondFactor ?? DEFAULT_SECOND_FACTOR_RULE;
  const secondFactor = tenant.secondFactor !== undefined && rank(tenant.secondFactor) > rank(hostRule) ? tenant.secondFactor : hostRule;
  const passkeyOnlySignIn = host.passkeyOnlySignIn === false ? false : (tenant.passkeyOnlySignIn ?? host.passkeyOnlySignIn ?? false);
  const sso: SsoRule = host.sso === 'required' || tenant.sso === 'required' ? 'required' : 'optional';
  return { secondFactor, passkeyOnlySignIn, sso };
}

/** Whether a user must have (and give) a second factor under `rule`. */
export function mustHaveSecondFactor(rule: SecondFactorRule, account: { permissions?: readonly string[] | undefined }): boolean {
  if (rule === 'required') return true;
  if (rule === 'required_for_permissions') return holdsIntegrationSetup(account.permissions);
  return false;
}

/** Whether a sign-in with these `amr` values used a second factor. */
export function usedSecondFactor(amr: unknown): boolean {
  return Array.isArray(amr) && amr.includes('mfa');
}

/**
 * Whether a token of this user may carry the management right after a sign-in with these `amr`
 * values: always when the rule does not make her have a second factor, else only after one.
 */
export function mayCarryManagement(rule: SecondFactorRule, account: { permissions?: readonly string[] | undefined }, amr: unknown): boolean {
  return !mustHaveSecondFactor(rule, account) || usedSecondFactor(amr);
}
