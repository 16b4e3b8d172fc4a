import type Provider from 'oidc-provider';
import { errors } from 'oidc-provider';
import { AlreadyConsumed, type Store } from '../../adapters/types.js';

interface Consumable {
  grantId?: string;
  consume(): Promise<void>;
}

/**
 * The engine reads a code or refresh token, checks it is unused, then marks it used: two requests
 * racing on one value could both pass the check. Our stores mark it atomically and throw
 * AlreadyConsumed for the loser; here the loser gets what a replay gets: invalid_grant, and the
 * grant with every token issued from it is revoked.
 */
export function enforceSingleUse(provider: Provider, store: Store): void {
  for (const [model, label] of [['AuthorizationCode', 'authorization code'], ['RefreshToken', 'refresh token']] as const) {
    const prototype = (provider[model] as unknown as { prototype: Consumable }).prototype;
    const consume = prototype.consume;
    prototype.consume = async function consumeOnce(this: Consumable): Promise<void> {
      try {
        await consume.call(this);
      } catch (error) {
        if (!(error instanceof AlreadyConsumed)) throw error;
        if (this.grantId) {
          await store.engine(model).revokeByGrantId(this.grantId);
          await store.engine('Grant').destroy(this.grantId);
        }
        throw new errors.InvalidGrant(`${label} already used`);
      }
    };
  }
}
