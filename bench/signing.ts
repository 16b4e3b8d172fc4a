import { generateKeyPairSync, sign, type KeyObject } from 'node:crypto';
import type { Algorithm as AccessTokenAlgorithm, IdTokenAlgorithm } from './protocol.js';

/** The access-token and the ID-token algorithms of the bench. */
type Algorithm = AccessTokenAlgorithm | IdTokenAlgorithm;

function privateKey(alg: Algorithm): KeyObject {
  if (alg === 'EdDSA') return generateKeyPairSync('ed25519').privateKey;
  return alg === 'ES256'
    ? generateKeyPairSync('ec', { namedCurve: 'P-256' }).privateKey
    : generateKeyPairSync('rsa', { modulusLength: 2048 }).privateKey;
}

/** `base64url(header).base64url(payload)` of a client_credentials access token, about 300 bytes. */
function signingInput(alg: Algorithm): Buffer {
  const encode = (value: object) => Buffer.from(JSON.stringify(value)).toString('base64url');
  const now = Math.floor(Date.now() / 1000);
  const header = { alg, typ: 'at+jwt', kid: 'bench' };
  const payload = {
    jti: 'n4bQgYhMfWWaL-qgxVrQFa',
    iat: now,
    exp: now + 3600,
    client_id: '6f1c2a9e-3b7d-4c1e-9a5f',
    iss: 'http://127.0.0.1:40000',
    scope: 'scim.read',
    aud: 'http://127.0.0.1:40000/api',
  };
  return Buffer.from(`${encode(header)}.${encode(payload)}`);
}

function signOnce(alg: Algorithm, key: KeyObject, data: Buffer): Buffer {
  if (alg === 'EdDSA') return sign(null, data, key);
  return alg === 'ES256' ? sign('sha256', data, { key, dsaEncoding: 'ieee-p1363' }) : sign('sha256', data, key);
}

function countSignatures(alg: Algorithm, key: KeyObject, data: Buffer, durationMs: number): { count: number; elapsedMs: number } {
  const start = performance.now();
  let count = 0;
  let elapsedMs = 0;
  while (elapsedMs < durationMs) {
    signOnce(alg, key, data);
    count += 1;
    elapsedMs = performance.now() - start;
  }
  return { count, elapsedMs };
}

/** Synchronous signatures per second on this thread: the ceiling one core puts on token issuance. */
export function signaturesPerSecond(alg: Algorithm, durationMs = 2_000): { perSecond: number; inputBytes: number } {
  const key = privateKey(alg);
  const data = signingInput(alg);
  countSignatures(alg, key, data, 200);
  const { count, elapsedMs } = countSignatures(alg, key, data, durationMs);
  return { perSecond: (count * 1000) / elapsedMs, inputBytes: data.length };
}
