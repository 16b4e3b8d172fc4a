import { createHash, timingSafeEqual } from 'node:crypto';

/**
 * Whether two secrets (or values that prove something: a CSRF token, a MAC) are equal, in a time
 * that tells nothing about where they differ nor how long the expected one is: both are hashed to
 * the same length first, so that the comparison itself never returns early.
 */
export function constantTimeEqual(actual: string | Buffer, expected: string | Buffer): boolean {
  const digest = (value: string | Buffer) => createHash('sha256').update(value).digest();
  return timingSafeEqual(digest(actual), digest(expected));
}
