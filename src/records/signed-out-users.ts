import type { Store } from '../../adapters/types.js';

/*
 * USERS SIGNED OUT EVERYWHERE ("the user left": src/records/user-sign-out.ts): when the host
 * signed a user out, so that every browser session of hers begun before then no longer signs her
 * in (src/engine/sign-in-policy.ts). The engine keeps no index of a user's sessions: a mark per
 * user is what ends them all at once, on every instance. One entry per user (tenant, sub), written
 * only by the operator's call, kept as long as a session lives (after that, no session it could
 * end is left).
 */

/** The engine-store model of the entries. */
const MODEL = 'UserSignedOut';

const keyOf = (user: { tenant: string; sub: string }) => `${user.tenant.length}:${user.tenant}:${user.sub}`;

/** When each user was last signed out everywhere (see above). */
export class SignedOutUsers {
  constructor(
    private readonly store: Store,
    /** How long a mark is kept: the longest a session lives, in seconds. */
    private readonly ttlSeconds: number,
  ) {}

  /** Marks `user` signed out at `at` (epoch ms): her sessions begun until then end. */
  async mark(user: { tenant: string; sub: string }, at: number): Promise<void> {
    await this.store.engine(MODEL).upsert(keyOf(user), { at } as never, this.ttlSeconds);
  }

  /** When `user` was last signed out everywhere (epoch ms), or undefined. */
  async at(user: { tenant: string; sub: string }): Promise<number | undefined> {
    const entry = (await this.store.engine(MODEL).find(keyOf(user))) as { at?: unknown } | undefined;
    return typeof entry?.at === 'number' ? entry.at : undefined;
  }
}
