import type { Account as OidcAccount, KoaContextWithOIDC } from 'oidc-provider';
import type { Account } from '../accounts.js';

/** The account oidc-provider holds for a user: ours, under `profile`. */
export interface EngineAccount extends OidcAccount {
  profile: Account;
}

export function engineAccount(account: Account): EngineAccount {
  return {
    accountId: account.sub,
    profile: account,
    claims: async () => ({ ...account.claims, sub: account.sub }),
  };
}

/** The signed-in user of an engine request, once the engine has loaded it. */
export function accountOf(ctx: KoaContextWithOIDC): Account | undefined {
  return (ctx.oidc.account as unknown as EngineAccount | undefined)?.profile;
}
