import { createHash, randomBytes } from 'node:crypto';
import { constantTimeEqual } from '../../policies/constant-time.js';

/** A new client secret: 256 random bits, base64url (43 characters). Shown to its owner once. */
export function generateSecret(): string {
  return randomBytes(32).toString('base64url');
}

/**
 * What we store instead of the secret. A fast digest is enough for 256-bit random secrets (no
 * dictionary to guess from), and keeps the token endpoint free of a slow KDF.
 */
export function digestSecret(secret: string): string {
  return createHash('sha256').update(secret, 'utf8').digest('base64url');
}

/** Constant-time comparison of a presented secret with a stored digest. */
export function secretMatches(presented: string, storedDigest: string): boolean {
  return constantTimeEqual(digestSecret(presented), storedDigest);
}
