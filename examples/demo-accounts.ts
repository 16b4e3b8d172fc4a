import { createHash, timingSafeEqual } from 'node:crypto';
import type { Account, AccountStore } from '../src/index.js';

const digest = (password: string) => createHash('sha256').update(password).digest();

/** The demo tenant's users, in memory. A real host platform plugs its own user directory in. */
export function demoAccountStore(users: Array<Account & { password: string }>): AccountStore {
  const byName = new Map(users.map(({ password, ...account }) => [account.sub, { account, digest: digest(password) }]));
  return {
    async authenticate({ username, password }) {
      const user = byName.get(username);
      // Compare digests in constant time; an unknown user costs the same as a wrong password.
      const ok = timingSafeEqual(digest(password), user?.digest ?? digest(`\0${password}`));
      return ok && user ? user.account : undefined;
    },
    async findAccount(sub) {
      return byName.get(sub)?.account;
    },
    // Usernames are the users' IDs here: what lets a tenant's admin lift a sign-in hold of her users.
    async findByUsername(username) {
      return byName.get(username)?.account;
    },
  };
}
