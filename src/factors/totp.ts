import { HOTP, Secret, TOTP } from 'otpauth';
import { constantTimeEqual } from '../../policies/constant-time.js';

/*
 * AUTHENTICATOR APPS (TOTP): the rule of a code.
 *
 * - The parameters every authenticator app reads: SHA-1, 6 digits, 30-second steps, a secret of
 *   20 random bytes (160 bits, the HMAC-SHA-1 key length).
 * - A code is taken for the current step and one step either side (a phone's clock a little off, a
 *   code typed as its step ended), never further.
 * - A code is accepted once: a code whose step is at or before the last step accepted is refused,
 *   even when it is right, so that a code seen over a shoulder or in a log is worth nothing after.
 * - The code typed is compared with each code of the window in constant time, every one of them,
 *   so that the time taken says nothing of which step matched or how close a guess came.
 * - Anything but six digits (spaces allowed between them) is refused as malformed, unread.
 */

/** The length of a time step, in seconds. */
export const TOTP_PERIOD_SECONDS = 30;
/** How many digits a code has. */
export const TOTP_DIGITS = 6;
/** The HMAC of the codes. */
export const TOTP_ALGORITHM = 'SHA1';
/** How many random bytes a secret has. */
const SECRET_BYTES = 20;
/** Steps taken either side of the current one. */
const WINDOW_STEPS = 1;

/** A new secret, base32 (what the app is given in the URI or to type). */
export function newTotpSecret(): string {
  return new Secret({ size: SECRET_BYTES }).base32;
}

/** The time step of an instant (epoch ms). */
export function totpStep(now: number): number {
  return TOTP.counter({ period: TOTP_PERIOD_SECONDS, timestamp: now });
}

/** The code of one step: for the tests, and for a host's own checks. */
export function totpCode(secret: string, step: number): string {
  return HOTP.generate({ secret: Secret.fromBase32(secret), algorithm: TOTP_ALGORITHM, digits: TOTP_DIGITS, counter: step });
}

/** The `otpauth://` URI an app scans: who issues (`issuer`) and whose it is (`account`). */
export function totpUri(secret: string, issuer: string, account: string): string {
  return new TOTP({
    issuer,
    label: account,
    algorithm: TOTP_ALGORITHM,
    digits: TOTP_DIGITS,
    period: TOTP_PERIOD_SECONDS,
    secret: Secret.fromBase32(secret),
  }).toString();
}

/** The URI as a QR code, an SVG drawn here (no image service sees the secret). */
export async function totpQrSvg(uri: string): Promise<string> {
  // Loaded at the first enrolment, not at start-up.
  const { default: QRCode } = await import('qrcode');
  return QRCode.toString(uri, { type: 'svg', errorCorrectionLevel: 'M', margin: 2 });
}

/** What a code is: accepted (its step), or refused and why. */
export type TotpMatch = { accepted: true; step: number } | { accepted: false; reason: 'malformed' | 'wrong' | 'replayed' };

const CODE_SHAPE = new RegExp(`^\\d{${TOTP_DIGITS}}$`);

/** A code as typed, without the spaces an app shows between its digits; undefined when it is not one. */
function typedCode(code: unknown): string | undefined {
  if (typeof code !== 'string' || code.length > 32) return undefined;
  const digits = code.replace(/\s/g, '');
  return CODE_SHAPE.test(digits) ? digits : undefined;
}

/** Whether `code` has the shape of an authenticator app's code (six digits, spaces allowed between them). */
export function isTotpCodeShape(code: unknown): boolean {
  return typedCode(code) !== undefined;
}

/**
 * Whether `code` is a code of `secret` at `now`, newer than `lastStep` (the step of the last code
 * accepted; -1 when none was).
 */
export function matchTotp(secret: string, code: unknown, now: number, lastStep: number): TotpMatch {
  const typed = typedCode(code);
  if (typed === undefined) return { accepted: false, reason: 'malformed' };
  const current = totpStep(now);
  let matched: number | undefined;
  for (let step = current - WINDOW_STEPS; step <= current + WINDOW_STEPS; step += 1) {
    // Every step compared, none skipped once one matched: the time says nothing of which did.
    if (constantTimeEqual(typed, totpCode(secret, step)) && matched === undefined) matched = step;
  }
  if (matched === undefined) return { accepted: false, reason: 'wrong' };
  // RFC 6238, section 5.2: a code accepted once MUST NOT be accepted again; a code of the step
  // accepted last, or of an earlier one, is such a second attempt.
  if (matched <= lastStep) return { accepted: false, reason: 'replayed' };
  return { accepted: true, step: matched };
}
