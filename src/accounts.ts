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
}

export { INTEGRATION_SETUP } from '../policies/management.js';
