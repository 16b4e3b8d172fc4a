import {
  constants,
  createPrivateKey,
  createPublicKey,
  sign as signWith,
  type JsonWebKey,
  type KeyObject,
  type SignKeyObjectInput,
  type SignPrivateKeyInput,
} from 'node:crypto';
import type { JWK } from 'jose';
import { ExternalSigningKey } from 'oidc-provider';
import { ambiguousRsaKey, type PrivateJwks, type SigningAlgorithm } from './keys.js';

type SignInput = KeyObject | SignKeyObjectInput | SignPrivateKeyInput;

/**
 * A signing key that signs with node:crypto instead of the engine's default (WebCrypto via jose).
 * Measured here, WebCrypto costs ~79 µs of CPU per ES256 signature and ~1070 µs per RS256 one;
 * node:crypto's callback form ~66 µs and ~990 µs. Signing stays on the libuv threadpool: a
 * synchronous ES256 signature is cheaper still (~47 µs) but holds the event loop, and under load
 * the token endpoint then served fewer tokens per second (bench: 0.83x the bare engine, 0.94x
 * with the threadpool).
 */
class NodeSigningKey extends ExternalSigningKey {
  readonly #publicKey: KeyObject;
  readonly #digest: string | null;
  readonly #input: SignInput;
  readonly #kid: string;
  readonly #alg: SigningAlgorithm;

  constructor(jwk: JWK & { kid: string }, alg: SigningAlgorithm) {
    super();
    this.#kid = jwk.kid;
    this.#alg = alg;
    const privateKey = createPrivateKey({ key: jwk as JsonWebKey, format: 'jwk' });
    this.#publicKey = createPublicKey(privateKey);
    this.#digest = alg === 'EdDSA' ? null : 'sha256';
    this.#input =
      alg === 'ES256'
        ? { key: privateKey, dsaEncoding: 'ieee-p1363' }
        : alg === 'PS256'
          ? { key: privateKey, padding: constants.RSA_PKCS1_PSS_PADDING, saltLength: 32 }
          : privateKey;
  }

  override get kid(): string {
    return this.#kid;
  }

  override get alg(): string {
    return this.#alg;
  }

  override keyObject(): KeyObject {
    return this.#publicKey;
  }

  override sign(data: Uint8Array): Promise<Buffer> {
    return new Promise((resolve, reject) => {
      signWith(this.#digest, data, this.#input, (error, signature) => (error ? reject(error) : resolve(signature)));
    });
  }
}

const SIGNING_ALGORITHMS: readonly string[] = ['ES256', 'RS256', 'PS256', 'EdDSA'] satisfies SigningAlgorithm[];

/**
 * The algorithm a key signs with: its `alg` (when it is one we sign with), else the one its type
 * implies among those needed. An RSA key without `alg` while both RS256 and PS256 are needed is
 * refused by resolveSigningKeys at startup; it is refused here too rather than guessed.
 */
function algorithmOf(jwk: JWK, index: number, needed: readonly SigningAlgorithm[]): SigningAlgorithm | undefined {
  if (jwk.alg) {
    const alg = jwk.alg === 'Ed25519' ? 'EdDSA' : jwk.alg;
    return SIGNING_ALGORITHMS.includes(alg) ? (alg as SigningAlgorithm) : undefined;
  }
  if (jwk.kty === 'EC' && jwk.crv === 'P-256') return 'ES256';
  if (jwk.kty === 'OKP' && jwk.crv === 'Ed25519') return 'EdDSA';
  if (jwk.kty === 'RSA') {
    if (needed.includes('RS256') && needed.includes('PS256')) throw new Error(ambiguousRsaKey(index));
    return needed.includes('PS256') ? 'PS256' : 'RS256';
  }
  return undefined;
}

/**
 * The engine's key set: keys of the algorithms we sign with become NodeSigningKeys; other keys
 * (none today) stay JWKs for the engine to use as it does.
 */
export function engineKeys(jwks: PrivateJwks, needed: readonly SigningAlgorithm[]): Array<JWK | ExternalSigningKey> {
  return jwks.keys.map((jwk, index) => {
    const alg = algorithmOf(jwk, index, needed);
    return alg && jwk.kid ? new NodeSigningKey(jwk as JWK & { kid: string }, alg) : jwk;
  });
}
