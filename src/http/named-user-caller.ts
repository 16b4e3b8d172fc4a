import type { Context } from 'koa';
import type { Account, AccountStore } from '../accounts.js';
import { TokenError, type AccessTokenContext, type TokenVerifier } from '../resource-server/verifier.js';

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
    throw new TokenError('insufficient_scope', 403, 'a named-user access token is required', verifier.realm);
  }
  const account = accounts ? await accounts.findAccount(auth.sub) : undefined;
  if (!account) throw new TokenError('invalid_token', 401, 'the user of this token no longer exists', verifier.realm);
  if (account.tenant !== auth.tenant) {
    throw new TokenError('invalid_token', 403, 'this token belongs to another tenant of the user', verifier.realm);
  }
  return { auth: { ...auth, tenant: auth.tenant }, account };
}
