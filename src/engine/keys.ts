import { createPrivateKey, createPublicKey, sign, verify, type JsonWebKey } from 'node:crypto';
import { calculateJwkThumbprint, exportJWK, generateKeyPair, type JWK } from 'jose';
import type { Logger } from '../logger.js';

/** The JWS algorithms the server signs with. */
export type SigningAlgorithm = 'ES256' | 'RS256' | 'PS256' | 'EdDSA';

/** A JSON Web Key Set with private keys (`keys.jwks`); the first key of each algorithm signs. */
export interface PrivateJwks {
  keys: JWK[];
}

const OUR_ALGORITHMS: readonly string[] = ['ES256', 'RS256', 'PS256', 'EdDSA'] satisfies SigningAlgorithm[];

/**
 * An RSA key can sign RS256 and PS256 alike; without `alg` we could not tell which one it is for
 * (and must not use one key for both), so when both are needed every RSA key must name its alg.
 */
function ambiguousRsaKey(index: number): string {
  return `keys.jwks.keys[${index}]: an RSA key without alg is ambiguous when both RS256 and PS256 are used; give each key an alg`;
}

/**
 * The algorithm a key signs with, or undefined when it signs none of ours (`use` other than
 * "sig", an `alg` we do not sign with, or an `alg` its type cannot do; the engine then publishes
 * it or refuses it, as it would). Without `alg` the type decides: EC P-256 is ES256, OKP Ed25519
 * is EdDSA, RSA is the RSA algorithm among those `needed` (RS256, which ID tokens always need,
 * unless only PS256 is); an RSA key without `alg` while both RS256 and PS256 are needed is refused.
 */
export function keyAlgorithm(jwk: JWK, index: number, needed: readonly SigningAlgorithm[]): SigningAlgorithm | undefined {
  if (jwk.use !== undefined && jwk.use !== 'sig') return undefined;
  const fits = (alg: SigningAlgorithm): boolean => {
    switch (alg) {
      case 'ES256':
        return jwk.kty === 'EC' && jwk.crv === 'P-256';
      case 'RS256':
      case 'PS256':
        return jwk.kty === 'RSA';
      case 'EdDSA':
        return jwk.kty === 'OKP' && jwk.crv === 'Ed25519';
    }
  };
  if (jwk.alg !== undefined) {
    const alg = jwk.alg === 'Ed25519' ? 'EdDSA' : jwk.alg;
    return OUR_ALGORITHMS.includes(alg) && fits(alg as SigningAlgorithm) ? (alg as SigningAlgorithm) : undefined;
  }
  if (jwk.kty === 'RSA') {
    if (needed.includes('RS256') && needed.includes('PS256')) throw new Error(ambiguousRsaKey(index));
    return needed.includes('PS256') && !needed.includes('RS256') ? 'PS256' : 'RS256';
  }
  return (['ES256', 'EdDSA'] as const).find(fits);
}

/**
 * KEY ROTATION RULE: the signing key of an algorithm is the FIRST key of that algorithm in the key
 * set (file order); every later key of the same algorithm is only published: it verifies tokens,
 * it signs none. A key set with one key per algorithm (what `keys generate` writes) thus signs with
 * each of its keys. Appending a key publishes it (`keys add`), moving it before the other keys of
 * its algorithm makes it sign (`keys promote`), removing a later key retires it (`keys retire`).
 * The engine follows the same rule on its own (it signs with the first key of the algorithm in
 * its key list, all of ours scoring alike); engineConfiguration also names the access-token key
 * by kid.
 */
export type KeyState = 'signing' | 'published';

export interface KeyStatus {
  /** Index in the key set. */
  index: number;
  kid: string;
  /** The algorithm the key signs with (undefined: it signs none of ours, it is only published). */
  alg: SigningAlgorithm | undefined;
  state: KeyState;
}

/** The state of each key under the rotation rule (keys without kid: their RFC 7638 thumbprint). */
export async function keyStates(
  keys: readonly JWK[],
  needed: readonly SigningAlgorithm[] = ['RS256'],
): Promise<KeyStatus[]> {
  const seen = new Set<SigningAlgorithm>();
  return Promise.all(
    keys.map(async (jwk, index) => {
      const alg = keyAlgorithm(jwk, index, needed);
      const signing = alg !== undefined && !seen.has(alg);
      if (alg) seen.add(alg);
      return { index, kid: jwk.kid ?? (await calculateJwkThumbprint(jwk)), alg, state: signing ? 'signing' : 'published' } as KeyStatus;
    }),
  );
}

/** The kid of the key that signs `alg` under the rotation rule (keys with kids, as resolved). */
export function signingKid(jwks: PrivateJwks, alg: SigningAlgorithm, needed: readonly SigningAlgorithm[]): string | undefined {
  const index = jwks.keys.findIndex((jwk, position) => keyAlgorithm(jwk, position, needed) === alg);
  return index < 0 ? undefined : jwks.keys[index]!.kid;
}

/**
 * The algorithms a key set signs with (those of its keys under the rotation rule), in our order:
 * what discovery lists for ID tokens, since the engine offers every algorithm it has a key for.
 */
export function signedAlgorithms(jwks: PrivateJwks, needed: readonly SigningAlgorithm[]): SigningAlgorithm[] {
  const algorithms = new Set(jwks.keys.map((jwk, index) => keyAlgorithm(jwk, index, needed)));
  return (['RS256', 'PS256', 'ES256', 'EdDSA'] as const).filter((alg) => algorithms.has(alg));
}

/** Private signing keys, one new key per algorithm. */
export async function generateJwks(algorithms: readonly SigningAlgorithm[]): Promise<PrivateJwks> {
  return { keys: await Promise.all(algorithms.map(generateSigningKey)) };
}

/** A new private signing key: kid = RFC 7638 thumbprint, alg named, use sig. */
export async function generateSigningKey(alg: SigningAlgorithm): Promise<JWK> {
  const { privateKey } = await generateKeyPair(alg, { extractable: true, ...(alg === 'EdDSA' ? { crv: 'Ed25519' } : {}) });
  const jwk = await exportJWK(privateKey);
  return { ...jwk, alg, use: 'sig', kid: await calculateJwkThumbprint(jwk) };
}

/**
 * What each needed algorithm signs (`accessTokenAlgorithm`, `idTokenAlgorithms`), for the start-up
 * error that names an algorithm `keys.jwks` has no key for.
 */
export type KeyPurposes = Partial<Record<SigningAlgorithm, string>>;

/**
 * The private signing keys: those configured (each must be private, every RSA key must name its
 * alg when both RS256 and PS256 are used, and one must fit each needed algorithm; the first key
 * of each algorithm signs, see KeyState), or, when none are configured, keys generated for this
 * process with a loud warning (tokens then stop verifying at every restart).
 */
export async function resolveSigningKeys(
  configured: PrivateJwks | undefined,
  needed: readonly SigningAlgorithm[],
  logger: Logger,
  purposes: KeyPurposes = {},
): Promise<PrivateJwks> {
  if (configured) {
    configured.keys.forEach((jwk, index) => {
      if (!('d' in jwk) || !jwk.d) throw new Error(`keys.jwks.keys[${index}] is not a private key`);
      checkKeyPair(jwk, index);
    });
    // Throws for an RSA key without alg when both RS256 and PS256 are needed.
    const algorithms = configured.keys.map((jwk, index) => keyAlgorithm(jwk, index, needed));
    for (const alg of new Set(needed)) {
      if (!algorithms.includes(alg)) {
        throw new Error(`keys.jwks has no private key for ${alg}${purposes[alg] ? ` (needed by ${purposes[alg]})` : ''}`);
      }
    }
    const resolved = {
      keys: await Promise.all(
        configured.keys.map(async (jwk) => (jwk.kid ? jwk : { ...jwk, kid: await calculateJwkThumbprint(jwk) })),
      ),
    };
    // Which key signs is what a rotation changes: say it at every start (kids are public).
    const states = await keyStates(resolved.keys, needed);
    logger.info('signing keys', {
      signing: Object.fromEntries(states.filter((key) => key.state === 'signing').map((key) => [key.alg, key.kid])),
      publishedOnly: states.filter((key) => key.state === 'published').map((key) => key.kid),
    });
    return resolved;
  }
  logger.warn(
    'NO SIGNING KEYS CONFIGURED: generated throw-away keys for this process. Tokens will not verify '
      + 'after a restart or on another instance. Configure keys.jwks (or JWKS_FILE) outside development.',
  );
  return generateJwks([...new Set(needed)]);
}

const PRIVATE_MEMBERS = ['d', 'p', 'q', 'dp', 'dq', 'qi', 'oth', 'k'];

/**
 * Signs with the key's private part and verifies with its public part, once, at start: a key set
 * whose halves do not match (a private part pasted beside another key's public part) would
 * otherwise sign tokens that nobody can verify with the JWKS we publish.
 */
export function checkKeyPair(jwk: JWK, index: number): void {
  const publicHalf = Object.fromEntries(Object.entries(jwk).filter(([member]) => !PRIVATE_MEMBERS.includes(member))) as JsonWebKey;
  const what = `keys.jwks.keys[${index}]${jwk.kid ? ` (kid ${jwk.kid})` : ''}`;
  let matches: boolean;
  try {
    const privateKey = createPrivateKey({ key: jwk as JsonWebKey, format: 'jwk' });
    const publicKey = createPublicKey({ key: publicHalf, format: 'jwk' });
    const digest = jwk.kty === 'OKP' ? null : 'sha256';
    const message = Buffer.from('talent-auth key check');
    matches = verify(digest, message, publicKey, sign(digest, message, privateKey));
  } catch (error) {
    throw new Error(`${what} is not a usable key: ${(error as Error).message}`);
  }
  if (!matches) throw new Error(`${what}: its private part does not match its public part (tokens it signed could not be verified)`);
}


/** The public halves of a key set, for verifying our own tokens. */
export function publicJwks(jwks: PrivateJwks): { keys: JWK[] } {
  return {
    keys: jwks.keys.map((jwk) =>
      Object.fromEntries(Object.entries(jwk).filter(([member]) => !PRIVATE_MEMBERS.includes(member))) as JWK),
  };
}
