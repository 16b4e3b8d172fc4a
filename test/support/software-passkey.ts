import { createHash, generateKeyPairSync, randomBytes, sign } from 'node:crypto';
import { isoCBOR } from '@simplewebauthn/server/helpers';

/** What the authenticator says of itself and of the user in each answer (the authenticator data's flags). */
export interface SoftwarePasskeyFlags {
  /** The user verified herself (PIN, biometrics): flag UV. */
  userVerified?: boolean;
  /** A synced passkey (flags BE and BS), else one bound to its device. */
  backedUp?: boolean;
}

/**
 * A passkey made in Node, for tests without a browser: a P-256 key pair and the answers an
 * authenticator gives to `navigator.credentials.create` (attestation `none`) and `.get`, built
 * byte by byte as WebAuthn lays them out (the authenticator data: the RP ID's SHA-256, the flags,
 * the signature counter, then at a registration the credential's ID and COSE public key). They are
 * real credentials: the server verifies them with the same library and checks as a browser's. (In
 * Chromium, with the DevTools protocol's virtual authenticator: test/factors/passkeys.test.ts and
 * test/e2e/portal-security.test.ts.)
 */
export class SoftwarePasskey {
  /** The credential ID (base64url), the same at every registration of this passkey. */
  readonly id = randomBytes(16).toString('base64url');
  /** The signature counter: it grows at each answer; set it back to play a cloned authenticator. */
  counter = 0;
  /** The user handle the server gave at the registration (base64url), sent back by `authenticate`. */
  userHandle: string | undefined;
  readonly #key = generateKeyPairSync('ec', { namedCurve: 'P-256' });

  constructor(private readonly flags: SoftwarePasskeyFlags = { userVerified: true }) {}

  /**
   * The registration answer to `options` (the JSON the server made for `navigator.credentials.create`)
   * from `origin`, as the page's script posts it.
   */
  register(options: { challenge: string; rp: { id?: string }; user?: { id: string } }, origin: string): string {
    this.userHandle = options.user?.id;
    const jwk = this.#key.publicKey.export({ format: 'jwk' });
    // The COSE key (RFC 9053 §7.1.1): kty EC2 (2), alg ES256 (-7), crv P-256 (1), x, y.
    const coseKey = isoCBOR.encode(new Map<number, number | Uint8Array>([
      [1, 2], [3, -7], [-1, 1], [-2, Buffer.from(jwk.x!, 'base64url')], [-3, Buffer.from(jwk.y!, 'base64url')],
    ]));
    const credentialId = Buffer.from(this.id, 'base64url');
    const length = Buffer.alloc(2);
    length.writeUInt16BE(credentialId.length);
    const authData = Buffer.concat([
      this.#authenticatorData(options.rp.id ?? new URL(origin).hostname, 0x40),
      Buffer.alloc(16), // AAGUID: none
      length, credentialId, Buffer.from(coseKey),
    ]);
    const attestationObject = isoCBOR.encode(new Map<string, Parameters<typeof isoCBOR.encode>[0]>([['fmt', 'none'], ['attStmt', new Map()], ['authData', authData]]));
    return JSON.stringify({
      id: this.id,
      rawId: this.id,
      type: 'public-key',
      response: { clientDataJSON: this.#clientData('webauthn.create', options.challenge, origin), attestationObject: Buffer.from(attestationObject).toString('base64url'), transports: ['internal'] },
      clientExtensionResults: {},
      authenticatorAttachment: 'platform',
    });
  }

  /**
   * The sign-in answer to `options` (for `navigator.credentials.get`) from `origin`: the
   * authenticator data and the client data signed with the passkey's key, and its user handle
   * (`withUserHandle: false` leaves it out, as an authenticator may for a known user).
   */
  authenticate(options: { challenge: string; rpId?: string }, origin: string, { withUserHandle = true }: { withUserHandle?: boolean } = {}): Record<string, unknown> {
    const authenticatorData = this.#authenticatorData(options.rpId ?? new URL(origin).hostname, 0);
    const clientDataJSON = this.#clientData('webauthn.get', options.challenge, origin);
    const signed = Buffer.concat([authenticatorData, createHash('sha256').update(Buffer.from(clientDataJSON, 'base64url')).digest()]);
    // ES256 as WebAuthn carries it: an ASN.1 DER signature over SHA-256.
    const signature = sign('sha256', signed, { key: this.#key.privateKey, dsaEncoding: 'der' });
    return {
      id: this.id,
      rawId: this.id,
      type: 'public-key',
      response: {
        clientDataJSON,
        authenticatorData: authenticatorData.toString('base64url'),
        signature: signature.toString('base64url'),
        ...(withUserHandle && this.userHandle ? { userHandle: this.userHandle } : {}),
      },
      clientExtensionResults: {},
      authenticatorAttachment: 'platform',
    };
  }

  /** The RP ID's hash, the flags (user present, and `extra`), the counter, grown by one. */
  #authenticatorData(rpId: string, extra: number): Buffer {
    this.counter += 1;
    const counter = Buffer.alloc(4);
    counter.writeUInt32BE(this.counter);
    const flags = 0x01 | (this.flags.userVerified ? 0x04 : 0) | (this.flags.backedUp ? 0x18 : 0) | extra;
    return Buffer.concat([createHash('sha256').update(rpId).digest(), Buffer.from([flags]), counter]);
  }

  #clientData(type: string, challenge: string, origin: string): string {
    return Buffer.from(JSON.stringify({ type, challenge, origin, crossOrigin: false })).toString('base64url');
  }
}
