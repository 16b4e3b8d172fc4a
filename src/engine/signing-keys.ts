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
import { StoreUnavailable } from '../../adapters/types.js';
import { keyAlgorithm, type PrivateJwks, type SigningAlgorithm } from './keys.js';

/** How long an external signer may take for one signature. */
export const EXTERNAL_SIGN_TIMEOUT_MS = 5000;

/**
 * A signing key whose private part stays outside the server (`keys.signers`): a KMS, an HSM, a
 * signing service. The server publishes `publicKey` at `/jwks` and asks `sign` for every signature
 * the key makes.
 */
export interface ExternalSigner {
  /** The key's id (the `kid` of the tokens it signs, and of its entry at `/jwks`). */
  kid: string;
  /** The algorithm it signs with. */
  alg: SigningAlgorithm;
  /** The public key, as a JWK (no private members). */
  publicKey: JWK;
  /**
   * A signature of `data` (the JWS signing input) with the private key: for ES256 the 64-byte
   * r||s form, for RS256 and PS256 the RSA signature, for EdDSA the Ed25519 signature.
   */
  sign(data: Uint8Array): Promise<Uint8Array>;
}

/** An external signer failed or did not answer in time: the request is answered 503, as in a store outage. */
export class SignerUnavailable extends StoreUnavailable {
  constructor(reason: string) {
    super(`external signer: ${reason}`);
    this.name = 'SignerUnavailable';
  }
}

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
 * A signing key the host holds outside the process (a KMS, an HSM, another process): the host
 * gives its public key and an async function that signs (`keys.signers`). The engine asks it for
 * a signature over the JWS signing input and puts the answer in the token as it is: an ES256
 * signature must be the 64-byte r||s form (IEEE P1363), not DER. A signer that fails or does not
 * answer within EXTERNAL_SIGN_TIMEOUT_MS fails the request with 503 temporarily_unavailable, as a
 * store outage does: the client tries again, and a code it sent can be sent again.
 */
export class HostSigningKey extends ExternalSigningKey {
  readonly #publicKey: KeyObject;
  readonly #signer: ExternalSigner;

  constructor(signer: ExternalSigner) {
    super();
    this.#signer = signer;
    this.#publicKey = createPublicKey({ key: signer.publicKey as JsonWebKey, format: 'jwk' });
  }

  override get kid(): string {
    return this.#signer.kid;
  }

  override get alg(): string {
    return this.#signer.alg;
  }

  override keyObject(): KeyObject {
    return this.#publicKey;
  }

  override async sign(data: Uint8Array): Promise<Uint8Array> {
    let timer: NodeJS.Timeout | undefined;
    const late = new Promise<never>((_, reject) => {
      timer = setTimeout(() => reject(new SignerUnavailable('timeout')), EXTERNAL_SIGN_TIMEOUT_MS);
    });
    try {
      const signature = await Promise.race([this.#signer.sign(data), late]);
      if (!(signature instanceof Uint8Array) || signature.length === 0) throw new SignerUnavailable('no signature');
      return signature;
    } catch (error) {
      // The host's error could quote anything; the reason only.
      throw error instanceof SignerUnavailable ? error : new SignerUnavailable('failed');
    } finally {
      clearTimeout(timer);
    }
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
