import type { Account, AccountStore } from '../../src/index.js';

/** An in-memory AccountStore for tests: username = sub, fixed passwords. */
export function testAccounts(accounts: Array<Account & { password: string }>): AccountStore {
  const bySub = new Map(accounts.map((account) => [account.sub, account]));
  const strip = ({ password: _password, ...account }: Account & { password: string }): Account => account;
  return {
    async authenticate({ username, password }) {
      const account = bySub.get(username);
      return account && account.password === password ? strip(account) : undefined;
    },
    async findAccount(sub) {
      const account = bySub.get(sub);
      return account && strip(account);
    },
    async findByUsername(username) {
      const account = bySub.get(username);
      return account && strip(account);
    },
  };
}

export const alice = {
  sub: 'alice',
  password: 'alice-password',
  tenant: 'acme',
  claims: { name: 'Alice Example', email: 'alice@acme.example' },
  scopes: ['scim.read', 'user.read'],
};
export const bob = { sub: 'bob', password: 'bob-password', tenant: 'globex', claims: { name: 'Bob' } };
