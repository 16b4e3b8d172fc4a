import Provider, { errors } from 'oidc-provider';
import { AlreadyConsumed, type Store } from '../../adapters/types.js';

interface Consumable {
  grantId?: string;
  /** The resource indicators the code or refresh token was granted for. */
  readonly resourceIndicators: Set<unknown>;
  consume(): Promise<void>;
}

/**
 * The engine checks a requested `resource` only after it has consumed the code or rotated the
 * refresh token, so a request naming another resource would burn the value (400 invalid_target)
 * and the app's retry would count as a replay and end the grant. Checked here, before consuming,
 * with the engine's own rule (the resource must be one the value was granted for) and error.
 */
function refuseForeignResource(token: Consumable): void {
  const requested = (Provider as unknown as { ctx?: { oidc?: { params?: { resource?: unknown } } } }).ctx?.oidc?.params?.resource;
  if (requested === undefined) return;
  if (typeof requested !== 'string' || !token.resourceIndicators.has(requested)) throw new errors.InvalidTarget();
}

/**
 * The engine reads a code or refresh token, checks it is unused, then marks it used: two requests
 * racing on one value could both pass the check. Our stores mark it atomically and throw
 * AlreadyConsumed for the loser; here the loser gets what a replay gets: invalid_grant, and the
 * grant with every token issued from it is revoked. A request that is bound to fail (a foreign
 * resource indicator) is refused before anything is consumed.
 */
export function enforceSingleUse(provider: Provider, store: Store): void {
  for (const [model, label] of [['AuthorizationCode', 'authorization code'], ['RefreshToken', 'refresh token']] as const) {
    const prototype = (provider[model] as unknown as { prototype: Consumable }).prototype;
    const consume = prototype.consume;
    prototype.consume = async function consumeOnce(this: Consumable): Promise<void> {
      refuseForeignResource(this);
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
