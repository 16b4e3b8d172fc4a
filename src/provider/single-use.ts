import Provider, { errors } from 'oidc-provider';
import { AlreadyConsumed, type Store } from '../../adapters/types.js';
import { endGrant } from './end-grant.js';

interface Consumable {
  jti: string;
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
interface EngineContext {
  oidc?: { params?: { resource?: unknown } };
  state?: Record<PropertyKey, unknown>;
}

/** The context of the request the engine is serving now (its AsyncLocalStorage). */
function currentContext(): EngineContext | undefined {
  return (Provider as unknown as { ctx?: EngineContext }).ctx;
}

const CONSUMED = Symbol('consumed in this request');

type Undo = () => Promise<void>;

/**
 * A request that consumed a code or refresh token and then could not finish because the store
 * went away (503) gave the client nothing: the consume is undone, best effort, so that the retry
 * the 503 asks for is not taken for a replay that ends the grant. What the failed request may have
 * saved (a new refresh token, an access token) was never given to anyone and expires unused.
 */
export async function undoConsumptions(state: Record<PropertyKey, unknown>): Promise<void> {
  const undos = state[CONSUMED] as Undo[] | undefined;
  if (!undos) return;
  delete state[CONSUMED];
  await Promise.all(undos.map((undo) => undo().catch(() => undefined)));
}

function refuseForeignResource(token: Consumable): void {
  const requested = currentContext()?.oidc?.params?.resource;
  if (requested === undefined) return;
  // RFC 8707 §2.2: a resource the grant does not cover is invalid_target.
  if (typeof requested !== 'string' || !token.resourceIndicators.has(requested)) throw new errors.InvalidTarget();
}

/**
 * The engine reads a code or refresh token, checks it is unused, then marks it used: two requests
 * racing on one value could both pass the check. Our stores mark it atomically and throw
 * AlreadyConsumed for the loser; here the loser gets what a replay gets: invalid_grant, and the
 * grant with every token issued from it is revoked (RFC 6749 §4.1.2: a code MUST NOT be used more
 * than once and SHOULD revoke what it issued; RFC 9700 §4.14.2 for refresh tokens). A request that is bound to fail (a foreign
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
        const state = currentContext()?.state;
        if (state) ((state[CONSUMED] ??= []) as Undo[]).push(() => store.engine(model).unconsume(this.jti));
      } catch (error) {
        if (!(error instanceof AlreadyConsumed)) throw error;
        if (this.grantId) await endGrant(store, this.grantId);
        throw new errors.InvalidGrant(`${label} already used`);
      }
    };
  }
}
