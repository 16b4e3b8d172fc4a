import { createHmac } from 'node:crypto';
import type { Counters } from '../../adapters/types.js';
import { NotSupported, ValidationError } from '../../policies/errors.js';
import type { Account, AccountStore } from '../accounts.js';
import type { AuditContext, AuditTrail } from '../audit/trail.js';
import type { Logger } from '../logger.js';
import { WindowLimits, type Watched, type WindowLimit } from './window-limits.js';
import { signInUnlocked } from '../audit/events.js';

export type { WindowLimit };

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

/** The key of the username hints: derived from the first cookie key (the same on every instance and in the CLI). */
function hintKey(cookieKeys: readonly string[]): Buffer {
  return createHmac('sha256', cookieKeys[0] ?? '').update('talent-auth sign-in username hint').digest();
}

function hintOf(key: Buffer, username: string): string {
  return createHmac('sha256', key).update(foldUsername(username)).digest('base64url').slice(0, 22);
}

/** The counter of a username's failed sign-ins (by its hint). */
function usernameCounter(hint: string): string {
  return `signin:user:${hint}`;
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
  private readonly windows: WindowLimits;

  constructor(
    counters: Counters,
    /** false: nothing is counted (the failures are still logged). */
    private readonly limits: SignInLimits | false,
    cookieKeys: readonly string[],
    private readonly logger: Logger,
    private readonly events: SignInEvents,
  ) {
    this.key = hintKey(cookieKeys);
    this.windows = new WindowLimits(counters, logger, 'sign-in refused: too many failures', () => events.refused());
  }

  /** The non-reversible hint of a username, for counters, logs and the device cookie. */
  hint(username: string): string {
    return hintOf(this.key, username);
  }

  private watched(limits: SignInLimits, hint: string, address: string): [Watched, Watched] {
    return [{ key: usernameCounter(hint), limit: limits.perUsername }, { key: `signin:addr:${address}`, limit: limits.perAddress }];
  }

  /**
   * Before the password is checked: the seconds to wait when a limit is reached (a browser known
   * to this user escapes the username limit), else undefined.
   */
  async wait(hint: string, address: string, knownDevice: boolean): Promise<number | undefined> {
    const { limits } = this;
    if (!limits) return undefined;
    const [byUser, byAddress] = await this.windows.peek(this.watched(limits, hint, address));
    const over = [byAddress!, ...(knownDevice ? [] : [byUser!])].filter((counted) => counted.reached);
    if (over.length === 0) return undefined;
    return this.windows.refuse(over, byAddress!.reached ? `addr:${address}` : `user:${hint}`, {
      address, user_hint: hint, failures: [byUser!.count.count, byAddress!.count.count],
    }).wait;
  }

  /** A failed sign-in: counted (atomically, both counters) and logged with the address and the hint. */
  async failed(hint: string, address: string, clientId: string): Promise<void> {
    this.events.failed();
    const { limits } = this;
    if (!limits) {
      this.logger.info('sign-in failed', { client_id: clientId, address, user_hint: hint });
      return;
    }
    const counts = await this.windows.count(this.watched(limits, hint, address));
    this.logger.info('sign-in failed', { client_id: clientId, address, user_hint: hint, failures: counts.map(({ count }) => count.count) });
  }
}

/** "N seconds" or "N minutes": how long to wait, in words. */
export function waitInWords(seconds: number): string {
  if (seconds < 90) return `${seconds} second${seconds === 1 ? '' : 's'}`;
  const minutes = Math.ceil(seconds / 60);
  return `${minutes} minutes`;
}

/** What `auth.signIns.unlock()` takes: the username as the user types it; a tenant's admin gives her tenant. */
export interface SignInUnlockRequest {
  /** Only a user of this tenant is unlocked (needs the AccountStore's `findByUsername`); absent: the operator, any username. */
  tenant?: string;
  username: string;
}

/** What an unlock did: `unlocked` is true when the user had failed sign-ins counted, now cleared. */
export interface SignInUnlockResult {
  unlocked: boolean;
}

const MAX_USERNAME = 200;

/**
 * LIFTING A SIGN-IN HOLD: clears the failed sign-ins counted for a username (the username limit of
 * SignInThrottle), so that she can sign in from a new browser at once instead of at the end of the
 * window. The address limit is not touched: it holds an address, not a user.
 *
 * - A tenant's admin (`tenant` given) may unlock only users of her tenant: the AccountStore's
 *   `findByUsername` tells whose the username is, and a username unknown or of another tenant is
 *   answered exactly like one that is not held (nothing cleared, `unlocked: false`), so that
 *   nobody learns of another tenant's users. Without the hook a tenant cannot be checked: refused
 *   (NotSupported).
 * - The operator (no tenant: the library, the CLI) may unlock any username. The CLI has no
 *   AccountStore: a tenant it names (`--tenant`) is the operator's word, not checked
 *   (`tenantAsStated`): the event goes to that tenant's trail, with the username's hint.
 * - Audited as a change (`sign_in.unlocked`, written before the counter is cleared) in the user's
 *   tenant, with her `sub` as target when she is known, else with the username's hint: the
 *   username itself is never written, as in every sign-in log line and counter.
 */
export class SignInHolds {
  private readonly key: Buffer;

  constructor(
    private readonly counters: Counters,
    /** The server's cookie keys (the first keys the hints, see SignInThrottle). */
    cookieKeys: readonly string[],
    private readonly accounts: Pick<AccountStore, 'findByUsername'> | undefined,
    private readonly audit: AuditTrail | undefined,
    /**
     * The CLI's (no AccountStore to ask): a tenant given is taken as stated, to record the event
     * in, and the username is unlocked whoever's it is (the operator may unlock any).
     */
    private readonly tenantAsStated = false,
  ) {
    this.key = hintKey(cookieKeys);
  }

  /** Whether a tenant's admin can unlock her users here (the AccountStore has `findByUsername`). */
  get byTenant(): boolean {
    return typeof this.accounts?.findByUsername === 'function';
  }

  /**
   * Clears the username's failed sign-ins. @throws ValidationError for an empty or overlong username,
   * NotSupported for a tenant without `findByUsername`, the store's error when the event cannot be
   * written (nothing is cleared then).
   */
  async unlock(request: SignInUnlockRequest, by: AuditContext): Promise<SignInUnlockResult> {
    const { tenant, username } = request;
    if (typeof username !== 'string' || username.trim() === '') throw new ValidationError('username', 'must not be empty');
    if (username.length > MAX_USERNAME) throw new ValidationError('username', `must be at most ${MAX_USERNAME} characters`);
    if (tenant !== undefined && (typeof tenant !== 'string' || tenant === '')) throw new ValidationError('tenant', 'must not be empty');
    if (tenant !== undefined && !this.byTenant && !this.tenantAsStated) {
      throw new NotSupported("unlocking a user of a tenant needs the AccountStore's findByUsername, which this server's AccountStore does not have");
    }
    const found: Account | undefined = this.byTenant ? await this.accounts!.findByUsername!(username) : undefined;
    // A tenant's admin: another tenant's user is none of hers (answered like a user not held).
    const account = tenant === undefined || found?.tenant === tenant ? found : undefined;
    const mine = tenant === undefined || account !== undefined || (this.tenantAsStated && !this.byTenant);
    const hint = hintOf(this.key, username);
    const counter = usernameCounter(hint);
    const [window] = mine ? await this.counters.peek([counter]) : [{ count: 0, resetsIn: 0 }];
    const failures = window!.count;
    const eventTenant = tenant ?? account?.tenant;
    await this.audit?.record(signInUnlocked(by, eventTenant, account, failures, hint));
    if (failures > 0) await this.counters.clear([counter]);
    return { unlocked: failures > 0 };
  }
}
