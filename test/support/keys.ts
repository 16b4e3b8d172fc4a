import { calculateJwkThumbprint, exportJWK, generateKeyPair, type JWK } from 'jose';
import type { SigningAlgorithm } from '../../src/index.js';

/** Private signing keys for the given algorithms, as a JWKS for the `keys` option. */
export async function testJwks(algorithms: SigningAlgorithm[] = ['ES256', 'RS256']): Promise<{ jwks: { keys: JWK[] } }> {
  const keys = await Promise.all(
    algorithms.map(async (alg) => {
      const { privateKey } = await generateKeyPair(alg, { extractable: true, ...(alg === 'EdDSA' ? { crv: 'Ed25519' } : {}) });
      const jwk = await exportJWK(privateKey);
      return { ...jwk, alg, use: 'sig', kid: await calculateJwkThumbprint(jwk) };
    }),
  );
  return { jwks: { keys } };
}
