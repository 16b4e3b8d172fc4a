import { createHmac } from 'node:crypto';
import type { Counters, WindowCount } from '../../adapters/types.js';
import type { Logger } from '../logger.js';
import { RefusalLog } from '../observability/refusal-log.js';

/** A fixed-window limit: `max` events per `windowSeconds`. */
export interface WindowLimit {
  max: number;
  windowSeconds: number;
}

/** The option `rateLimits.failedSignIn`. */
export interface SignInLimits {
  perUsername: WindowLimit;
  perAddress: WindowLimit;
}

/** Metrics hooks: every failed sign-in, every refused attempt. */
export interface SignInEvents {
  failed(): void;
  refused(): void;
}

/** A username as the throttle counts it: the same person whatever the letter case or width. */
export function foldUsername(username: string): string {
  return username.normalize('NFKC').toLowerCase();
}

/**
 * SIGN-IN THROTTLING: failed sign-ins are counted per username (case-folded) and per source
 * address, in the store (so every instance shares them), in fixed windows (defaults: 10 per
 * username and 100 per address per 15 minutes). Past a limit, further attempts get a 429 page with
 * Retry-After until the window ends, without the password being checked: guessing stops.
 *
 * The balance against lockout: anyone can type a username, so the username limit alone would let
 * anyone lock any user out. A browser that has signed in as that user before carries a signed
 * device cookie (HttpOnly, 180 days) naming the user's hint; such a browser is not held by the
 * username limit, only by its address's. So an attacker who guesses one user's password locks out
 * the user's new devices for at most one window after the last guess, never the devices she uses.
 *
 * Usernames are never written in clear, neither in the store nor in logs: both use a hint, an
 * HMAC of the folded username under a key derived from the cookie keys (the same on every
 * instance, not reversible without the key, unlike a plain hash of a guessable name).
 */
export class SignInThrottle {
  private readonly key: Buffer;
  private readonly refusals: RefusalLog;

  constructor(
    private readonly counters: Counters,
    /** false: nothing is counted (the failures are still logged). */
    private readonly limits: SignInLimits | false,
    cookieKeys: readonly string[],
    private readonly logger: Logger,
    private readonly events: SignInEvents,
  ) {
    this.key = createHmac('sha256', cookieKeys[0] ?? '').update('talent-auth sign-in username hint').digest();
    this.refusals = new RefusalLog(logger, 'sign-in refused: too many failures');
  }

  /** The non-reversible hint of a username, for counters, logs and the device cookie. */
  hint(username: string): string {
    return createHmac('sha256', this.key).update(foldUsername(username)).digest('base64url').slice(0, 22);
  }

  private keys(hint: string, address: string): [string, string] {
    return [`signin:user:${hint}`, `signin:addr:${address}`];
  }

  /**
   * Before the password is checked: the seconds to wait when a limit is reached (a browser known
   * to this user escapes the username limit), else undefined.
   */
  async wait(hint: string, address: string, knownDevice: boolean): Promise<number | undefined> {
    const { limits } = this;
    if (!limits) return undefined;
    const [byUser, byAddress] = await this.counters.peek(this.keys(hint, address));
    const addressOver = byAddress!.count >= limits.perAddress.max;
    const over: WindowCount[] = [];
    if (addressOver) over.push(byAddress!);
    if (!knownDevice && byUser!.count >= limits.perUsername.max) over.push(byUser!);
    if (over.length === 0) return undefined;
    const wait = Math.max(1, ...over.map(({ resetsIn }) => resetsIn));
    this.events.refused();
    this.refusals.refused(addressOver ? `addr:${address}` : `user:${hint}`, wait, {
      address, user_hint: hint, failures: [byUser!.count, byAddress!.count],
    });
    return wait;
  }

  /** A failed sign-in: counted (atomically, both counters) and logged with the address and the hint. */
  async failed(hint: string, address: string, clientId: string): Promise<void> {
    this.events.failed();
    const { limits } = this;
    if (!limits) {
      this.logger.info('sign-in failed', { client_id: clientId, address, user_hint: hint });
      return;
    }
    const [userKey, addressKey] = this.keys(hint, address);
    const [byUser] = await this.counters.increment([userKey], limits.perUsername.windowSeconds);
    const [byAddress] = await this.counters.increment([addressKey], limits.perAddress.windowSeconds);
    this.logger.info('sign-in failed', { client_id: clientId, address, user_hint: hint, failures: [byUser!.count, byAddress!.count] });
  }
}

/** "N seconds" or "N minutes": how long to wait, in words. */
export function waitInWords(seconds: number): string {
  if (seconds < 90) return `${seconds} second${seconds === 1 ? '' : 's'}`;
  const minutes = Math.ceil(seconds / 60);
  return `${minutes} minutes`;
}
