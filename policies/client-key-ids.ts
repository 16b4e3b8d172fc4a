import { createHash } from 'node:crypto';
import type { ClientJwk, ClientJwks } from './client-keys.js';

/**
 * HOW A CLIENT'S KEYS ARE NAMED TO ADMINISTRATORS (the CLI, the portal): by key ID and RFC 7638
 * thumbprint, never by their members. A thumbprint names a key whatever its `kid` (a client may
 * register one key without `kid`) and is what the client's own tooling prints (jose's
 * calculateJwkThumbprint, `openssl`-based scripts), so an administrator can tell which key is which
 * during a rotation without reading key material.
 */

/** The members a key's thumbprint is computed over, per key type (RFC 7638 §3.2). */
const THUMBPRINT_MEMBERS: Record<ClientJwk['kty'], readonly string[]> = {
  EC: ['crv', 'kty', 'x', 'y'],
  OKP: ['crv', 'kty', 'x'],
  RSA: ['e', 'kty', 'n'],
};

/** A key's RFC 7638 SHA-256 thumbprint (base64url), from its required members in lexicographic order. */
export function jwkThumbprint(key: ClientJwk): string {
  const members = THUMBPRINT_MEMBERS[key.kty];
  // RFC 7638 §3.3: the required members only, sorted, no whitespace; JSON.stringify keeps insertion order.
  const canonical = JSON.stringify(Object.fromEntries(members.map((member) => [member, key[member]])));
  return createHash('sha256').update(canonical).digest('base64url');
}

/** What an administrator sees of one registered key. */
export interface ClientKeyId {
  /** The key ID, when the key has one. */
  kid?: string;
  /** Its RFC 7638 thumbprint (SHA-256, base64url). */
  thumbprint: string;
  kty: ClientJwk['kty'];
  alg?: string;
}

/** The registered keys as administrators see them: ID, thumbprint, type and algorithm, in order. */
export function clientKeyIds(jwks: ClientJwks): ClientKeyId[] {
  return jwks.keys.map((key) => ({
    ...(key.kid !== undefined ? { kid: key.kid } : {}),
    thumbprint: jwkThumbprint(key),
    kty: key.kty,
    ...(key.alg !== undefined ? { alg: key.alg } : {}),
  }));
}
