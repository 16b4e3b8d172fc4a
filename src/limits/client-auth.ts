import type { Context, Next } from 'koa';
import type { Counters } from '../../adapters/types.js';
import { InvalidClient, TooManyRequests } from '../../policies/errors.js';
import type { Logger } from '../logger.js';
import { WindowLimits, type Watched, type WindowLimit } from './window-limits.js';
import { decodeJwt } from 'jose';
import { claimedClientId, clientIdShapedLikeOurs } from '../../policies/client-authentication.js';
import { basicCredentialsOf, formParamsOf } from '../http/oauth-request.js';

/**
 * The addresses held past their failed-authentication limit, known to every instance (a FedMarks
 * of kind `held-address`: src/records/fed-marks.ts), so that asking costs no store round trip.
 */
export interface HeldAddresses {
  /** Until when (epoch ms) `address` is held: at once from memory, a promise while it must ask the store. */
  until(address: string): number | undefined | Promise<number | undefined>;
  /** Holds `address` until `until` on every instance. */
  mark(address: string, until: number): Promise<void>;
}

export type { WindowLimit };

export interface FailedClientAuthLimits {
  perClient: WindowLimit;
  perAddress: WindowLimit;
}

/**
 * The client ID a request's Basic header claims (decoded as the engine decodes it, RFC 6749
 * §2.3.1, so that no spelling of an ID escapes its counter), when it is shaped like ours.
 */
function claimedClientIdOf(ctx: Context): string | undefined {
  try {
    return claimedClientId(basicCredentialsOf(ctx));
  } catch {
    return undefined;
  }
}

/**
 * The client a request without Basic credentials names in its body, read WITHOUT trusting it (it
 * is only counted): the `sub` of its client assertion, decoded but not verified (RFC 7523 §3: the
 * subject is the client), else its `client_id`; when shaped like ours. Undefined before the body
 * was read.
 */
function bodyClientIdOf(ctx: Context): string | undefined {
  const params = formParamsOf(ctx);
  if (!params) return undefined;
  let subject: unknown;
  const assertion = params.get('client_assertion');
  if (assertion !== undefined) {
    try {
      subject = decodeJwt(assertion).sub;
    } catch {
      // Not a JWT: no subject, so the client_id is what the body names.
    }
  }
  const claimed = typeof subject === 'string' ? subject : params.get('client_id');
  return claimed === undefined ? undefined : clientIdShapedLikeOurs(claimed);
}

/** At the token endpoint every 401 is a failed client authentication, whatever body it has. */
function failedToAuthenticate(ctx: Context): boolean {
  return ctx.status === 401;
}

/**
 * Rate limit of failed client authentications at the token endpoint, per client ID and per source
 * address, in the store's counters (shared by every instance).
 *
 * - Every failure is counted, atomically, and a failure past either limit is answered 429 with
 *   Retry-After instead of 401 (so parallel guesses cannot slip past a read-then-count check).
 * - An address past its limit is refused before its credentials are checked: cheap for us. Which
 *   addresses are past it is known in memory (HeldAddresses, fed by the store's change feed: the
 *   failure that reaches the limit holds its address on every instance), so a request costs no
 *   store round trip for it. While a hold is on its way to another instance (milliseconds), that
 *   instance still checks the credentials of the address's requests: its failures are counted
 *   and refused as before (the first one past the limit holds the address there too), and a
 *   correct secret goes through, as it would from any address not yet held.
 * - A client ID past its limit is not: its credentials are still checked and a correct secret goes
 *   through. Client IDs are public (they travel in /authorize URLs), so refusing a correct secret
 *   would let anyone lock any app out; our secrets are 256-bit random, so the guesses that the
 *   limit answers with 429 could never succeed anyway.
 * - The client ID counted is the one the Basic header claims; without Basic, the one the body
 *   names (a client assertion's `sub`, else `client_id`), read without trusting it, and counted
 *   only when `knownClient` says such a client exists: anyone can write any ID in a body, and
 *   only existing clients may get a counter, so that failures cannot create keys without bound.
 *   A correct assertion, as a correct secret, goes through past the client's limit.
 * A successful authentication costs nothing in the store.
 */
export function failedClientAuthLimit(
  counters: Counters,
  limits: FailedClientAuthLimits,
  addressOf: (ctx: Context) => string,
  logger: Logger,
  /**
   * Told of each refusal: the client ID claimed, if ours, the address, and whether it is the first
   * refusal of its key in its window (the one that is logged, and audited: a flood of guesses
   * must not become a flood of audit events).
   */
  onRefused: (refused: { clientId: string | undefined; address: string; firstInWindow: boolean }) => void = () => {},
  /** Whether a client of this ID exists (asked only of an ID a failed request's body names). */
  knownClient: (clientId: string) => Promise<boolean>,
  held: HeldAddresses,
  now: () => number = Date.now,
) {
  // At most one line per key and window: the limit bounds the failures, this the refusals' lines.
  const windows = new WindowLimits(counters, logger, 'client authentication refused: too many failures');

  function refuse(ctx: Context, clientId: string | undefined, over: Parameters<WindowLimits['refuse']>[0], fields: Record<string, unknown>): never {
    ctx.remove('WWW-Authenticate');
    const { wait, firstInWindow } = windows.refuse(over, over[0]!.key, fields);
    onRefused({ clientId, address: addressOf(ctx), firstInWindow });
    throw new TooManyRequests(wait);
  }

  /** The client ID a failed request is counted against: Basic's, else the body's if it exists. */
  async function failedClientIdOf(ctx: Context): Promise<string | undefined> {
    const basicClaim = claimedClientIdOf(ctx);
    if (basicClaim) return basicClaim;
    const bodyClaim = bodyClientIdOf(ctx);
    return bodyClaim && (await knownClient(bodyClaim).catch(() => false)) ? bodyClaim : undefined;
  }

  return async function limitFailedClientAuth(ctx: Context, next: Next): Promise<void> {
    if (ctx.method !== 'POST') return next();
    const address = addressOf(ctx);
    const byAddress: Watched = { key: `addr:${address}`, limit: limits.perAddress };

    const asked = held.until(address);
    const heldUntil = asked instanceof Promise ? await asked : asked;
    if (heldUntil !== undefined) {
      const clientId = claimedClientIdOf(ctx);
      // Held means the count has reached its limit (at least max failures, counted in the store).
      const resetsIn = Math.max(1, Math.ceil((heldUntil - now()) / 1000));
      const seen = { ...byAddress, count: { count: limits.perAddress.max, resetsIn }, reached: true, over: false };
      refuse(ctx, clientId, [seen], { client_id: clientId, address, failures: seen.count.count });
    }

    let thrown: InvalidClient | undefined;
    try {
      await next();
      if (!failedToAuthenticate(ctx)) return;
    } catch (error) {
      if (!(error instanceof InvalidClient)) throw error;
      thrown = error;
    }

    // The client ID matters only once something failed: a success never looks for it.
    const clientId = await failedClientIdOf(ctx);
    const watched: Watched[] = [byAddress];
    if (clientId) watched.push({ key: `client:${clientId}`, limit: limits.perClient });
    // A failure that cannot be counted is answered 503 (the store is down): never left uncounted.
    const counts = await windows.count(watched);
    // The failure that reaches the address's limit holds it on every instance; one past it holds
    // it again (this process found it not held: its hold was lost or has not arrived).
    const [byAddressCount] = counts;
    if (byAddressCount!.reached) {
      void held.mark(address, now() + byAddressCount!.count.resetsIn * 1000).catch((error: unknown) => logger.warn('could not hold an address past its limit', { address, error: String(error) }));
    }
    const failures = counts.map(({ count }) => count.count);
    const over = counts.filter((counted) => counted.over);
    if (over.length) refuse(ctx, clientId, over, { client_id: clientId, address, failures });
    // Within the limits only: the failures past them are the refusals', logged as such.
    logger.info('client authentication failed', { client_id: clientId, address, failures });
    if (thrown) throw thrown;
  };
}
