/** A user of the host platform. */
export interface Account {
  sub: string;
  tenant: string;
  claims?: { name?: string; email?: string; [claim: string]: unknown };
  /** Platform permissions, e.g. `integration_setup` ("Create and update integration setup"). */
  permissions?: string[];
  /** When present, bounds the scopes a named-user token of this user can carry. */
  scopes?: string[];
}

/** The host platform's users, as the authorization server sees them. */
export interface AccountStore {
  authenticate(credentials: { username: string; password: string }): Promise<Account | undefined>;
  findAccount(sub: string): Promise<Account | undefined>;
  /**
   * Optional: the account a username signs in as (matched as `authenticate` matches it), or
   * undefined. Needed to lift a sign-in hold within a tenant (`auth.signIns.unlock({ tenant,
   * username })`, the management API and the portal: a tenant's admin may unlock only her own
   * tenant's users); without it only the operator can, for any username.
   */
  findByUsername?(username: string): Promise<Account | undefined>;
}

export { INTEGRATION_SETUP } from '../policies/management.js';

/** A tenant's name as people know it, for the consent page's "Registered by ..." (option `tenantDisplayName`; undefined: the tenant ID is shown). */
export type TenantDisplayName = (tenant: string) => string | undefined | Promise<string | undefined>;
