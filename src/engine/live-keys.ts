import type { JWK } from 'jose';
import type { ExternalSigningKey } from 'oidc-provider';
import { keyAlgorithm, publicJwks, signedAlgorithms, type PrivateJwks, type SigningAlgorithm } from './keys.js';
import { engineKeys, HostSigningKey, type ExternalSigner } from './signing-keys.js';

/** The engine's form of a key: a key that signs through us, or a JWK it only publishes. */
export type EngineKey = JWK | ExternalSigningKey;

/**
 * THE SERVER'S SIGNING KEYS AS THEY ARE NOW: the host's external signers (`keys.signers`) first,
 * then the key set (`keys.jwks`, generated keys, or the set kept in the store), in that order
 * under the rotation rule (the first key of each algorithm signs, src/engine/keys.ts). Everything
 * that signs or verifies with our keys reads them here when it needs them, not once at start: the
 * engine's key set and its `/jwks` (src/engine/patches.ts), the access-token key's kid, the
 * verifier of our own APIs' tokens, private_key_jwt at the tenants' identity providers. Only the
 * key set kept in the store changes while the server runs (`replace`); every other source is
 * fixed at start.
 */
export class LiveKeys {
  readonly #signers: readonly ExternalSigner[];
  readonly #needed: readonly SigningAlgorithm[];
  #jwks: PrivateJwks;
  #engineKeys: EngineKey[];
  #public: { keys: JWK[] };
  #signingKids: Map<SigningAlgorithm, string | undefined>;
  readonly #listeners: Array<(keys: LiveKeys) => void> = [];

  constructor(signers: readonly ExternalSigner[], jwks: PrivateJwks, needed: readonly SigningAlgorithm[]) {
    this.#signers = signers;
    this.#needed = needed;
    this.#jwks = jwks;
    const built = this.#build(jwks);
    this.#engineKeys = built.engineKeys;
    this.#signingKids = built.signingKids;
    this.#public = built.publicJwks;
  }

  /** The keys in the engine's form, in rotation order. */
  get engineKeys(): readonly EngineKey[] {
    return this.#engineKeys;
  }

  /** The public key set (what `/jwks` publishes and our own APIs verify with). */
  get publicJwks(): { keys: JWK[] } {
    return this.#public;
  }

  /** The algorithms the server signs with (those of its keys), for discovery and app checks. */
  get algorithms(): SigningAlgorithm[] {
    return signedAlgorithms({ keys: [...this.#signers.map((signer) => ({ ...signer.publicKey, alg: signer.alg })), ...this.#jwks.keys] }, this.#needed);
  }

  /** The kid of the key that signs `alg` now (read at every access token: known, not searched). */
  signingKid(alg: SigningAlgorithm): string | undefined {
    return this.#signingKids.get(alg);
  }

  /** The private JWK that signs `alg` now, when it is one of ours (undefined for an external signer's algorithm). */
  signingJwk(alg: SigningAlgorithm): JWK | undefined {
    if (this.#signers.some((signer) => signer.alg === alg)) return undefined;
    return this.#jwks.keys.find((jwk, index) => keyAlgorithm(jwk, index, this.#needed) === alg);
  }

  /**
   * The format of our access tokens at the resource: RFC 9068 JWTs signed by the access-token key,
   * named by kid when the engine reads it (the first key of its algorithm now: the rotation rule).
   */
  accessTokenFormat(alg: SigningAlgorithm): { accessTokenFormat: 'jwt'; jwt: { readonly sign: { alg: SigningAlgorithm; kid: string | undefined } } } {
    const signingKid = (): string | undefined => this.signingKid(alg);
    return {
      accessTokenFormat: 'jwt',
      jwt: {
        get sign() {
          return { alg, kid: signingKid() };
        },
      },
    };
  }

  /** Tells `listener` of every change of the keys (the engine's key set follows through it). */
  onChange(listener: (keys: LiveKeys) => void): void {
    this.#listeners.push(listener);
  }

  /** The key set replaced by a new one (the store's, changed by a rotation step): every reader follows at once. */
  replace(jwks: PrivateJwks): void {
    // Everything built before anything is changed: a key that cannot be used leaves the keys as they were.
    const built = this.#build(jwks);
    this.#jwks = jwks;
    this.#engineKeys = built.engineKeys;
    this.#signingKids = built.signingKids;
    this.#public = built.publicJwks;
    for (const listener of this.#listeners) listener(this);
  }

  #build(jwks: PrivateJwks): { engineKeys: EngineKey[]; signingKids: Map<SigningAlgorithm, string | undefined>; publicJwks: { keys: JWK[] } } {
    const signingKids = new Map((['ES256', 'RS256', 'PS256', 'EdDSA'] as const).map((alg) => [
      alg,
      this.#signers.find((signer) => signer.alg === alg)?.kid ?? jwks.keys.find((jwk, index) => keyAlgorithm(jwk, index, this.#needed) === alg)?.kid,
    ]));
    const hosts = this.#signers.map((signer) => {
      const { d: _d, p: _p, q: _q, dp: _dp, dq: _dq, qi: _qi, ...publicHalf } = signer.publicKey;
      return { ...publicHalf, kid: signer.kid, alg: signer.alg, use: 'sig' };
    });
    return {
      engineKeys: [...this.#signers.map((signer) => new HostSigningKey(signer)), ...engineKeys(jwks, this.#needed)],
      signingKids,
      publicJwks: { keys: [...hosts, ...publicJwks(jwks).keys] },
    };
  }
}
