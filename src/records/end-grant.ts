import type { Store } from '../../adapters/types.js';

/**
 * Ends a grant, and with it every token and code issued from it: the engine checks a token's grant
 * at every use, so deleting the grant is enough (our stores keep no index of a grant's tokens, and
 * their revokeByGrantId does nothing; the call stays for a store that has one).
 */
export async function endGrant(store: Store, grantId: string): Promise<void> {
  await store.engine('RefreshToken').revokeByGrantId(grantId);
  await store.engine('Grant').destroy(grantId);
}
