import { createHash } from 'node:crypto';
import { InvalidRequest, ValidationError } from './errors.js';
import { allHttps } from './redirect-uris.js';

/**
 * PKCE (RFC 7636), the whole rule:
 *
 * - Registration: PKCE is always on for a public app (an SPA or a mobile app has no secret, so the
 *   challenge is what binds the code to the app instance that asked for it). A confidential app has
 *   it on by default and may turn it off only when every redirect URI is https (a legacy server
 *   that cannot send a verifier, whose code can only travel over TLS to its own host).
 * - Authorization request: an app with PKCE on must send `code_challenge` with method `S256`
 *   (`plain` is refused: it protects nothing once the request is seen); the challenge must have the
 *   shape of an S256 challenge.
 * - Token request: the code exchange of an app with PKCE on must send the `code_verifier` whose
 *   S256 is the challenge (the engine checks it; a mismatch is invalid_grant); a public app's
 *   exchange without `code_verifier` is refused before the engine sees it (src/grants/authorization-code.ts).
 */

/**
 * Registration time: whether an app has PKCE on, from its type, what it asked for and its redirect URIs.
 * @throws ValidationError for a public app asking for it off, or a confidential one with a non-https redirect URI.
 */
export function pkceAtRegistration(clientType: 'public' | 'confidential', requested: boolean | undefined, redirectUris: readonly string[]): boolean {
  if (clientType === 'public') {
    if (requested === false) throw new ValidationError('pkceEnabled', 'PKCE is always on for public apps');
    return true;
  }
  const enabled = requested ?? true;
  if (!enabled && !allHttps(redirectUris)) {
    throw new ValidationError('pkceEnabled', 'PKCE may be turned off only when every redirect URI is https');
  }
  return enabled;
}

/**
 * Authorization time: whether the request must carry a PKCE challenge: always for public apps
 * (they authenticate with `none`), and for confidential apps unless their registration turned PKCE
 * off. Synchronous: the engine calls it as `pkce.required(ctx, client)`.
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
    throw new InvalidRequest('code_challenge must be the S256 challenge: 43 base64url characters (RFC 7636 section 4.2)');
  }
}
