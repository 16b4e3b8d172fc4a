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
import { keyAlgorithm, type PrivateJwks, type SigningAlgorithm } from './keys.js';

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

/**
 * The engine's key set, in the key set's order: keys of the algorithms we sign with become
 * NodeSigningKeys; other keys (none today) stay JWKs for the engine to use as it does.
 *
 * The order is the rotation rule (keys.ts): the engine signs with the first key of the algorithm
 * in this list (KeyStore.selectForSign keeps the list order among keys that all name alg and use,
 * as NodeSigningKeys do), which is the first key of that algorithm in the key set. Later keys of
 * the algorithm are only published at /jwks.
 */
export function engineKeys(jwks: PrivateJwks, needed: readonly SigningAlgorithm[]): Array<JWK | ExternalSigningKey> {
  return jwks.keys.map((jwk, index) => {
    const alg = keyAlgorithm(jwk, index, needed);
    return alg && jwk.kid ? new NodeSigningKey(jwk as JWK & { kid: string }, alg) : jwk;
  });
}
