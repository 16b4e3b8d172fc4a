import {
  constants,
  createPrivateKey,
  createPublicKey,
  sign as signWith,
  verify as verifyWith,
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
  /** The length every signature of the key has: what is not that long verifies nowhere. */
  readonly #length: number;

  constructor(signer: ExternalSigner) {
    super();
    this.#signer = signer;
    this.#publicKey = createPublicKey({ key: signer.publicKey as JsonWebKey, format: 'jwk' });
    this.#length = signatureLength(signer.alg, this.#publicKey);
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
    // A signer that hangs holds each request for the timeout: beyond this many at once, the
    // requests are answered 503 at once instead of piling up.
    if (signaturesInFlight >= MAX_SIGNATURES_IN_FLIGHT) throw new SignerUnavailable('busy');
    signaturesInFlight += 1;
    let timer: NodeJS.Timeout | undefined;
    const late = new Promise<never>((_, reject) => {
      timer = setTimeout(() => reject(new SignerUnavailable('timeout')), EXTERNAL_SIGN_TIMEOUT_MS);
    });
    try {
      const signature = await Promise.race([this.#signer.sign(data), late]);
      // A DER-encoded ES256 signature, or one of another key size, would make tokens nobody can verify.
      if (!(signature instanceof Uint8Array) || signature.length !== this.#length) throw new SignerUnavailable('a signature of the wrong length');
      return signature;
    } catch (error) {
      // The host's error could quote anything; the reason only.
      throw error instanceof SignerUnavailable ? error : new SignerUnavailable('failed');
    } finally {
      signaturesInFlight -= 1;
      clearTimeout(timer);
    }
  }

  /**
   * Asks the signer for one signature and verifies it with the public key, at start: a signer
   * whose key is not the one given, or that answers in another form (DER), fails the start with
   * the reason instead of signing tokens that verify nowhere.
   */
  async check(): Promise<void> {
    const probe = Buffer.from(`talent-auth signer check ${this.#signer.kid}`);
    let signature: Uint8Array;
    try {
      signature = await this.sign(probe);
    } catch (error) {
      throw new Error(`keys.signers: signer ${this.#signer.kid} did not sign at start (${(error as SignerUnavailable).reason ?? 'failed'})`);
    }
    const input = this.#signer.alg === 'ES256'
      ? { key: this.#publicKey, dsaEncoding: 'ieee-p1363' as const }
      : this.#signer.alg === 'PS256' ? { key: this.#publicKey, padding: constants.RSA_PKCS1_PSS_PADDING, saltLength: 32 } : this.#publicKey;
    if (!verifyWith(this.#signer.alg === 'EdDSA' ? null : 'sha256', probe, input, signature)) {
      throw new Error(`keys.signers: signer ${this.#signer.kid} gave a signature its publicKey does not verify (another key, or ES256 not in the 64-byte r||s form)`);
    }
  }
}

/** How many external signatures may be awaited at once, over every external signer of the process. */
const MAX_SIGNATURES_IN_FLIGHT = 256;
let signaturesInFlight = 0;

/** The length of every signature of `alg` with `publicKey`: 64 bytes for ES256 and EdDSA, the modulus for RSA. */
function signatureLength(alg: SigningAlgorithm, publicKey: KeyObject): number {
  if (alg === 'ES256' || alg === 'EdDSA') return 64;
  return (publicKey.asymmetricKeyDetails?.modulusLength ?? 0) / 8;
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
