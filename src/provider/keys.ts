import { calculateJwkThumbprint, exportJWK, generateKeyPair, type JWK } from 'jose';
import type { Logger } from '../logger.js';

export type SigningAlgorithm = 'ES256' | 'RS256' | 'PS256' | 'EdDSA';

export interface PrivateJwks {
  keys: JWK[];
}

/** Which key types can sign with an algorithm. */
function keyFits(jwk: JWK, alg: SigningAlgorithm): boolean {
  if (jwk.alg && jwk.alg !== alg && !(alg === 'EdDSA' && jwk.alg === 'Ed25519')) return false;
  if (jwk.use && jwk.use !== 'sig') return false;
  switch (alg) {
    case 'ES256':
      return jwk.kty === 'EC' && jwk.crv === 'P-256';
    case 'RS256':
    case 'PS256':
      return jwk.kty === 'RSA';
    case 'EdDSA':
      return jwk.kty === 'OKP' && jwk.crv === 'Ed25519';
  }
}

/** A new private signing key: kid = RFC 7638 thumbprint, alg named, use sig. */
export async function generateSigningKey(alg: SigningAlgorithm): Promise<JWK> {
  const { privateKey } = await generateKeyPair(alg, { extractable: true, ...(alg === 'EdDSA' ? { crv: 'Ed25519' } : {}) });
  const jwk = await exportJWK(privateKey);
  return { ...jwk, alg, use: 'sig', kid: await calculateJwkThumbprint(jwk) };
}

/**
 * An RSA key can sign RS256 and PS256 alike; without `alg` we could not tell which one it is for
 * (and must not use one key for both), so when both are needed every RSA key must name its alg.
 */
export function ambiguousRsaKey(index: number): string {
  return `keys.jwks.keys[${index}]: an RSA key without alg is ambiguous when both RS256 and PS256 are used; give each key an alg`;
}

/**
 * The private signing keys: those configured (each must be private, every RSA key must name its
 * alg when both RS256 and PS256 are used, and one must fit each needed algorithm), or, when none are configured, keys generated for this process with a loud warning
 * (tokens then stop verifying at every restart).
 */
export async function resolveSigningKeys(
  configured: PrivateJwks | undefined,
  needed: readonly SigningAlgorithm[],
  logger: Logger,
): Promise<PrivateJwks> {
  if (configured) {
    configured.keys.forEach((jwk, index) => {
      if (!('d' in jwk) || !jwk.d) throw new Error(`keys.jwks.keys[${index}] is not a private key`);
    });
    if (needed.includes('RS256') && needed.includes('PS256')) {
      configured.keys.forEach((jwk, index) => {
        if (jwk.kty === 'RSA' && !jwk.alg) throw new Error(ambiguousRsaKey(index));
      });
    }
    for (const alg of new Set(needed)) {
      if (!configured.keys.some((jwk) => keyFits(jwk, alg))) {
        throw new Error(`keys.jwks has no private key for ${alg}`);
      }
    }
    return {
      keys: await Promise.all(
        configured.keys.map(async (jwk) => (jwk.kid ? jwk : { ...jwk, kid: await calculateJwkThumbprint(jwk) })),
      ),
    };
  }
  logger.warn(
    'NO SIGNING KEYS CONFIGURED: generated throw-away keys for this process. Tokens will not verify '
      + 'after a restart or on another instance. Configure keys.jwks (or JWKS_FILE) outside development.',
  );
  return { keys: await Promise.all([...new Set(needed)].map(generateSigningKey)) };
}

const PRIVATE_MEMBERS = ['d', 'p', 'q', 'dp', 'dq', 'qi', 'oth', 'k'];

/** The public halves of a key set, for verifying our own tokens. */
export function publicJwks(jwks: PrivateJwks): { keys: JWK[] } {
  return {
    keys: jwks.keys.map((jwk) =>
      Object.fromEntries(Object.entries(jwk).filter(([member]) => !PRIVATE_MEMBERS.includes(member))) as JWK),
  };
}
