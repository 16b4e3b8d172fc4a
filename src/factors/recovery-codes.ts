import { createHmac, randomInt } from 'node:crypto';
import { constantTimeEqual } from '../../policies/constant-time.js';

/*
 * RECOVERY CODES: the rule of a code.
 *
 * - A set is ten codes of 16 characters each from a 32-letter alphabet without look-alikes
 *   (80 random bits: no guessing), shown as four groups of four.
 * - Kept as HMAC-SHA-256 under a key derived from the factor keys, never in clear: the store alone
 *   cannot tell whether a string is a code. Every factor key is tried, so that a set made before a
 *   key rotation still works.
 * - As typed: letters of any case, spaces and hyphens anywhere; anything else is refused unread.
 * - Each matches at most once: the one used is taken out of the set (the caller's compare-and-set).
 */

/** How many codes a set has. */
export const RECOVERY_CODE_COUNT = 10;
/** Crockford's base32 alphabet: no I, L, O, U. */
const ALPHABET = '0123456789ABCDEFGHJKMNPQRSTVWXYZ';
const CODE_LENGTH = 16;
const GROUP = 4;

/** The HMAC keys of the recovery codes, one per factor key (the first makes, every one matches). */
export function recoveryCodeKeys(factorKeys: readonly string[]): Buffer[] {
  return factorKeys.map((key) => createHmac('sha256', key).update('talent-auth recovery codes').digest());
}

/** A new set of codes, as shown to the user once. */
export function newRecoveryCodes(): string[] {
  return Array.from({ length: RECOVERY_CODE_COUNT }, () => {
    const chars = Array.from({ length: CODE_LENGTH }, () => ALPHABET[randomInt(ALPHABET.length)]!).join('');
    return chars.match(new RegExp(`.{${GROUP}}`, 'g'))!.join('-');
  });
}

/** A code as typed, normalised (upper case, no separators); undefined when it cannot be one. */
function typedCode(code: unknown): string | undefined {
  if (typeof code !== 'string' || code.length > 64) return undefined;
  const chars = code.replace(/[\s-]/g, '').toUpperCase();
  return chars.length === CODE_LENGTH && [...chars].every((char) => ALPHABET.includes(char)) ? chars : undefined;
}

/** Whether `code` has the shape of a recovery code as typed (any case, spaces and hyphens anywhere). */
export function isRecoveryCodeShape(code: unknown): boolean {
  return typedCode(code) !== undefined;
}

/** What is stored of a code: its HMAC under `key` (base64url). */
export function recoveryCodeHash(code: string, key: Buffer): string {
  return createHmac('sha256', key).update(typedCode(code) ?? code).digest('base64url');
}

/**
 * The index in `hashes` of the code typed, or -1 (malformed, or none of them): every stored hash
 * compared under every key, in constant time, without stopping at a match.
 */
export function matchRecoveryCode(code: unknown, hashes: readonly string[], keys: readonly Buffer[]): number {
  const typed = typedCode(code);
  if (typed === undefined) return -1;
  let found = -1;
  for (const key of keys) {
    const hash = recoveryCodeHash(typed, key);
    hashes.forEach((stored, index) => {
      if (constantTimeEqual(hash, stored) && found === -1) found = index;
    });
  }
  return found;
}
