import { createHash } from 'node:crypto';
import { InvalidRequest } from './errors.js';

/**
 * When an authorization request must carry a PKCE challenge (spec, "Client types and PKCE"):
 * always for public apps (they authenticate with `none`), and for confidential apps unless their
 * registration turned PKCE off. Synchronous: the engine calls it as `pkce.required(ctx, client)`.
 */
export function pkceRequired(client: { clientAuthMethod: string; pkce_enabled?: unknown }): boolean {
  return client.clientAuthMethod === 'none' || client.pkce_enabled !== false;
}

/** RFC 7636 §4.2: code_challenge = BASE64URL(SHA256(ASCII(code_verifier))), method S256 only. */
export function s256Challenge(verifier: string): string {
  return createHash('sha256').update(verifier, 'ascii').digest('base64url');
}

/** What an S256 challenge is: BASE64URL of a SHA-256 digest, 43 characters without padding. */
const S256_CHALLENGE = /^[A-Za-z0-9_-]{43}$/;

/**
 * Authorization request: a `code_challenge`, when sent, must have the shape of an S256 challenge
 * (the only method). The engine accepts any 43..128 unreserved characters, so a 44-character or
 * padded value would pass sign-in and consent and give a code that no verifier can ever redeem.
 */
export function checkCodeChallenge(challenge: unknown): void {
  if (challenge === undefined) return;
  if (typeof challenge !== 'string' || !S256_CHALLENGE.test(challenge)) {
    throw new InvalidRequest('code_challenge must be the S256 challenge: 43 base64url characters (RFC 7636 §4.2)');
  }
}
