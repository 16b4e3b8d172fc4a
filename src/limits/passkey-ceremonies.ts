import type { Counters } from '../../adapters/types.js';
import type { Logger } from '../logger.js';
import { WindowLimits, type WindowLimit } from './window-limits.js';

/**
 * PASSKEY CEREMONIES PER ADDRESS (option `rateLimits.passkeySignIn`): every passkey ceremony a
 * sign-in page starts keeps a challenge in the store for PASSKEY_CHALLENGE_SECONDS, and the one of
 * a passkey-only login page is started for anyone who opens it, before anybody is known. So each
 * source address may start `max` of them per window, counted in the store (every instance shares
 * the count); past it the pages offer no passkey until the window ends (the password still
 * works). What an address can keep stored is so bounded: at most `max` challenges per window,
 * each gone after its lifetime (or once used).
 */
export class PasskeyCeremonyLimit {
  readonly #windows: WindowLimits;

  constructor(
    counters: Counters,
    /** false: not limited. */
    private readonly limit: WindowLimit | false,
    logger: Logger,
    /** Told of every refusal (the metrics count them). */
    onRefused: () => void = () => {},
  ) {
    this.#windows = new WindowLimits(counters, logger, 'passkey ceremonies refused: too many from one address', onRefused);
  }

  /** Counts one ceremony of `address`: true when it may start it, false past the limit (logged once per window). */
  async allows(address: string): Promise<boolean> {
    if (!this.limit) return true;
    const [counted] = await this.#windows.count([{ key: `passkey:addr:${address}`, limit: this.limit }]);
    if (!counted!.over) return true;
    this.#windows.refuse([counted!], counted!.key, { address, ceremonies: counted!.count.count });
    return false;
  }
}
