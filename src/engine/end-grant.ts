import type { Store } from '../../adapters/types.js';

/**
 * Removes a grant with every token and code issued from it. The grant index is one per grant,
 * whatever the model, so revoking through one grant-bound model revokes them all.
 */
export async function endGrant(store: Store, grantId: string): Promise<void> {
  await store.engine('RefreshToken').revokeByGrantId(grantId);
  await store.engine('Grant').destroy(grantId);
}
