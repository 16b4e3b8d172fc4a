import type { Context } from 'koa';
import type { Account, AccountStore } from '../accounts.js';
import { InsufficientScope, InvalidToken, TenantMoved } from '../../policies/errors.js';
import type { AccessTokenContext, TokenVerifier } from '../resource-server/verifier.js';

export interface NamedUserCaller {
  auth: AccessTokenContext & { tenant: string };
  account: Account;
}

/**
 * The user behind a request to our own APIs (consents, management): a named-user access token of
 * ours, whose account still exists and still belongs to the token's tenant.
 */
export async function namedUserCaller(
  ctx: Context,
  verifier: TokenVerifier,
  accounts: AccountStore | undefined,
): Promise<NamedUserCaller> {
  const auth = await verifier.verifyAuthorization(ctx.get('authorization') || undefined);
  if (!auth.isNamedUser || !auth.tenant) {
    throw new InsufficientScope('a named-user access token is required', verifier.realm);
  }
  const account = accounts ? await accounts.findAccount(auth.sub) : undefined;
  if (!account) throw new InvalidToken('the user of this token no longer exists', verifier.realm);
  if (account.tenant !== auth.tenant) {
    throw new TenantMoved(verifier.realm);
  }
  return { auth: { ...auth, tenant: auth.tenant }, account };
}
