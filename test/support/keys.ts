import { randomUUID } from 'node:crypto';
import { SignJWT, calculateJwkThumbprint, exportJWK, generateKeyPair, type CryptoKey, type JWK } from 'jose';
import type { ClientJwk } from '../../policies/client-keys.js';
import { generateSigningKey } from '../../src/engine/keys.js';
import type { SigningAlgorithm } from '../../src/index.js';

/** Private signing keys for the given algorithms, as a JWKS for the `keys` option. */
export async function testJwks(algorithms: SigningAlgorithm[] = ['ES256', 'RS256']): Promise<{ jwks: { keys: Array<JWK & { kid: string }> } }> {
  const keys = await Promise.all(algorithms.map(generateSigningKey));
  return { jwks: { keys: keys as Array<JWK & { kid: string }> } };
}

/** A private_key_jwt client's ES256 key: to sign with, its public JWK to register, its private JWK, its thumbprint. */
export interface ClientKeyPair {
  privateKey: CryptoKey;
  /** The public key with `kid` and `alg`. */
  jwk: ClientJwk;
  /** The private key as a JWK with `kid` (what must never be registered). */
  privateJwk: JWK;
  /** The public key's RFC 7638 thumbprint. */
  thumbprint: string;
}

/** A new ES256 {@link ClientKeyPair} named `kid`. */
export async function clientKeyPair(kid: string): Promise<ClientKeyPair> {
  const { privateKey, publicKey } = await generateKeyPair('ES256', { extractable: true });
  const jwk = { ...(await exportJWK(publicKey)), kid, alg: 'ES256' } as ClientJwk;
  return { privateKey, jwk, privateJwk: { ...(await exportJWK(privateKey)), kid }, thumbprint: await calculateJwkThumbprint(jwk) };
}

/** A client assertion of `clientId` for `audience`, signed with `key` (its `kid` in the header), good for 60 seconds, a new jti. */
export function clientAssertion(clientId: string, key: Pick<ClientKeyPair, 'privateKey' | 'jwk'>, audience: string): Promise<string> {
  const now = Math.floor(Date.now() / 1000);
  return new SignJWT({})
    .setProtectedHeader({ alg: 'ES256', kid: key.jwk.kid! })
    .setIssuer(clientId).setSubject(clientId).setAudience(audience)
    .setIssuedAt(now).setExpirationTime(now + 60).setJti(randomUUID())
    .sign(key.privateKey);
}
