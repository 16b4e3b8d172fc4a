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
  /**
   * Optional: second factors the host keeps itself (an authenticator app or a code by text message
   * it already has). A user who holds one and none of ours gives its code on our second-factor page
   * after the password; the host checks it, and a code it accepts counts as a one-time code
   * (`amr` `otp`). See docs/configuration.md#the-hosts-own-second-factors.
   */
  secondFactor?: HostSecondFactor;
  /**
   * Optional: the account a sign-in through a tenant's identity provider signs in as (enterprise
   * sign-in, docs/configuration.md#accounts-of-federated-users), or undefined (none: the sign-in is refused with a page saying so).
   * `claims` are the provider's ID token's, mapped by the connection's `claimMapping` (our claim
   * name ← the provider's), its email at one of the connection's domains. It may create the account
   * just in time (then `findAccount` must find it too: tokens are issued from it). The account
   * returned must belong to `tenant` (the connection's): one of another tenant is refused. Without it: a link remembered at an earlier sign-in (connection and the
   * provider's `sub`), else `findByUsername(email)` in the connection's tenant when the provider
   * does not say the address is unverified; the link is then remembered.
   */
  federate?(request: FederationRequest): Promise<Account | undefined>;
}

/** What `AccountStore.federate` is asked. */
export interface FederationRequest {
  /** The connection's tenant: the account must be one of its users. */
  tenant: string;
  /** The connection the user signed in through. */
  connection: { id: string; name: string; issuer: string };
  /** The provider's claims, mapped (`sub` is the provider's subject). */
  claims: FederatedClaims;
}

/** The claims of an identity a provider vouched for, after the connection's claim mapping. */
export interface FederatedClaims {
  /** The provider's subject identifier (unique at that provider). */
  sub: string;
  email?: string;
  email_verified?: boolean;
  name?: string;
  given_name?: string;
  family_name?: string;
  preferred_username?: string;
  locale?: string;
}

/** Whose second factor: a user (`sub`) of a tenant. */
export interface SecondFactorUser {
  tenant: string;
  sub: string;
}

/**
 * The host's own second factors (`accounts.secondFactor`): whether a user holds one, and whether a
 * code is right. Only `true` counts (anything else is "no"); an error thrown ends the sign-in step
 * with an error page, as one of `authenticate` does.
 */
export interface HostSecondFactor {
  /** Whether the user holds a second factor the host checks. Asked after her password, at every sign-in. */
  has(user: SecondFactorUser): boolean | Promise<boolean>;
  /**
   * Whether `code` (6 to 8 digits, as typed without surrounding spaces) is right for her now. The
   * host refuses a code used before (we cannot see its codes); wrong codes count against our
   * sign-in throttle like wrong passwords.
   */
  check(request: SecondFactorUser & { code: string }): boolean | Promise<boolean>;
}

export { INTEGRATION_SETUP } from '../policies/management.js';

/** A tenant's name as people know it, for the consent page's "Registered by ..." (option `tenantDisplayName`; undefined: the tenant ID is shown). */
export type TenantDisplayName = (tenant: string) => string | undefined | Promise<string | undefined>;
