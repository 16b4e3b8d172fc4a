import { userSignedOut } from '../audit/events.js';
import { OPERATOR, type AuditContext, type AuditTrail } from '../audit/trail.js';
import { checkedOwner } from '../factors/record.js';
import type { Consents } from './consents.js';
import type { SignedOutUsers } from './signed-out-users.js';

/*
 * "THE USER LEFT": the host says a user left the organisation (its identity provider disabled
 * her, HR ended her contract) and every way she is signed in here ends at once:
 *
 * - Audited first (`user.signed_out`, in her tenant, the operator the actor): not done when the
 *   event cannot be written.
 * - Her browser sessions: marked signed out now (src/records/signed-out-users.ts); a session begun
 *   before the mark no longer signs her in (src/engine/sign-in-policy.ts), on every instance.
 * - Her grants: every consent of hers ends with its grant, and with the grant its refresh tokens,
 *   unused codes and the access tokens' liveness (Consents.endAllOfUser, each `consent.revoked`
 *   with the reason `user_signed_out`).
 * - The provider she last signed in through is forgotten (no sign-out of ours will send a browser
 *   there for her).
 * Keyed by (tenant, sub): the same `sub` in another tenant is another user, untouched. Her account
 * itself is the host's (its AccountStore): this call does not delete or disable it.
 */

/** Whom `auth.users.signOut()` signs out: a user (`sub`) of a tenant. */
export interface UserSignOutRequest {
  tenant: string;
  sub: string;
}

/** What `auth.users.signOut()` ended. */
export interface UserSignOutResult {
  /** How many of her grants (consents, with their tokens) ended. */
  grantsEnded: number;
}

/** What a user's sign-out everywhere ends. */
export interface UserSignOutSetup {
  audit: AuditTrail;
  consents: Consents;
  signedOutUsers: SignedOutUsers;
  /** Which provider each user last signed in through (src/federation/signed-in-through.ts). */
  signedInThrough: { forget(user: { tenant: string; sub: string }): Promise<void> };
  now?: () => number;
}

/** Signs users out everywhere (see above). */
export class UserSignOut {
  readonly #now: () => number;

  constructor(private readonly setup: UserSignOutSetup) {
    this.#now = setup.now ?? Date.now;
  }

  /**
   * Ends every session and grant of `user` (see above).
   * @throws ValidationError for an empty or overlong tenant or sub.
   */
  async signOut(user: UserSignOutRequest, by: AuditContext = OPERATOR): Promise<UserSignOutResult> {
    const who = checkedOwner(user);
    await this.setup.audit.record(userSignedOut(by, who));
    // The sessions first: from now on no browser of hers gets a new code or token.
    await this.setup.signedOutUsers.mark(who, this.#now());
    const grantsEnded = await this.setup.consents.endAllOfUser(who, by, 'user_signed_out');
    await this.setup.signedInThrough.forget(who);
    return { grantsEnded };
  }
}
