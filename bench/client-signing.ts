/**
 * What a client signs for each token request of the client-authentication workloads: a
 * private_key_jwt assertion (RFC 7523) and a DPoP proof (RFC 9449), both with a fresh `jti`, so
 * that no request repeats one the server has seen (both sides refuse a replay). Signed in the load
 * generator process, never in a server process, with node:crypto (ES256, synchronous: about 40 µs
 * a signature); that cost shows in the table's "load CPU µs", not in the servers' CPU per token.
 */
import { createPrivateKey, randomUUID, sign, type JsonWebKey, type KeyObject } from 'node:crypto';
import type { JWK } from 'jose';

export const CLIENT_ASSERTION_TYPE = 'urn:ietf:params:oauth:client-assertion-type:jwt-bearer';
/** An assertion's lifetime: well under the 300 s our server accepts. */
const ASSERTION_SECONDS = 60;

const encode = (value: object) => Buffer.from(JSON.stringify(value)).toString('base64url');

export class ClientSigner {
  private readonly key: KeyObject;
  private readonly publicJwk: JWK;
  private readonly kid: string | undefined;

  constructor(privateJwk: JWK) {
    if (privateJwk.kty !== 'EC' || privateJwk.crv !== 'P-256') throw new Error('the bench client key must be an EC P-256 key (ES256)');
    this.key = createPrivateKey({ key: privateJwk as JsonWebKey, format: 'jwk' });
    const { kty, crv, x, y } = privateJwk;
    this.publicJwk = { kty, crv, x, y };
    this.kid = privateJwk.kid;
  }

  private jws(header: object, payload: object): string {
    const input = `${encode(header)}.${encode(payload)}`;
    const signature = sign('sha256', Buffer.from(input), { key: this.key, dsaEncoding: 'ieee-p1363' });
    return `${input}.${signature.toString('base64url')}`;
  }

  /** A client assertion for `audience` (the token endpoint URL), used once. */
  assertion(clientId: string, audience: string): string {
    const now = Math.floor(Date.now() / 1000);
    return this.jws(
      { alg: 'ES256', typ: 'JWT', ...(this.kid ? { kid: this.kid } : {}) },
      { iss: clientId, sub: clientId, aud: audience, jti: randomUUID(), iat: now, exp: now + ASSERTION_SECONDS },
    );
  }

  /** A DPoP proof of a request, with the server's latest nonce when it gave one. */
  proof(htm: string, htu: string, nonce: string | undefined): string {
    return this.jws(
      { alg: 'ES256', typ: 'dpop+jwt', jwk: this.publicJwk },
      { jti: randomUUID(), htm, htu, iat: Math.floor(Date.now() / 1000), ...(nonce ? { nonce } : {}) },
    );
  }
}
