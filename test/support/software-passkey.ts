import { createHash, generateKeyPairSync, randomBytes } from 'node:crypto';
import { isoCBOR } from '@simplewebauthn/server/helpers';

/**
 * A passkey made in Node, for tests over HTTP without a browser: a P-256 key pair and the answer
 * an authenticator gives to `navigator.credentials.create` (attestation `none`), built byte by
 * byte as the WebAuthn Level 2 format lays it out. It is a real credential: the server verifies it
 * with the same library and checks as a browser's. (In Chromium, with the DevTools protocol's
 * virtual authenticator: test/e2e/portal-security.test.ts and test/factors/passkeys.test.ts.)
 */
export class SoftwarePasskey {
  /** The credential ID (base64url), the same at every registration of this passkey. */
  readonly id = randomBytes(16).toString('base64url');
  readonly #key = generateKeyPairSync('ec', { namedCurve: 'P-256' });

  /**
   * The registration answer to `options` (the JSON the server put on its page) from `origin`, as
   * the page's script posts it in the `credential` field.
   */
  register(options: { challenge: string; rp: { id?: string } }, origin: string): string {
    const rpId = options.rp.id ?? new URL(origin).hostname;
    const jwk = this.#key.publicKey.export({ format: 'jwk' });
    // The COSE key (RFC 9053 §7.1.1): kty EC2 (2), alg ES256 (-7), crv P-256 (1), x, y.
    const coseKey = isoCBOR.encode(new Map<number, number | Uint8Array>([
      [1, 2], [3, -7], [-1, 1], [-2, Buffer.from(jwk.x!, 'base64url')], [-3, Buffer.from(jwk.y!, 'base64url')],
    ]));
    const credentialId = Buffer.from(this.id, 'base64url');
    const length = Buffer.alloc(2);
    length.writeUInt16BE(credentialId.length);
    const authData = Buffer.concat([
      createHash('sha256').update(rpId).digest(),
      // Flags: user present (0x01), user verified (0x04), attested credential data (0x40).
      Buffer.from([0x45]),
      Buffer.alloc(4), // signature counter 0
      Buffer.alloc(16), // AAGUID: none
      length, credentialId, Buffer.from(coseKey),
    ]);
    const attestationObject = isoCBOR.encode(new Map<string, Parameters<typeof isoCBOR.encode>[0]>([['fmt', 'none'], ['attStmt', new Map()], ['authData', authData]]));
    const clientDataJSON = JSON.stringify({ type: 'webauthn.create', challenge: options.challenge, origin, crossOrigin: false });
    return JSON.stringify({
      id: this.id,
      rawId: this.id,
      type: 'public-key',
      response: { clientDataJSON: Buffer.from(clientDataJSON).toString('base64url'), attestationObject: Buffer.from(attestationObject).toString('base64url'), transports: ['internal'] },
      clientExtensionResults: {},
      authenticatorAttachment: 'platform',
    });
  }
}
