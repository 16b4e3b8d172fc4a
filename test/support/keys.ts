import type { JWK } from 'jose';
import { generateSigningKey } from '../../src/engine/keys.js';
import type { SigningAlgorithm } from '../../src/index.js';

/** Private signing keys for the given algorithms, as a JWKS for the `keys` option. */
export async function testJwks(algorithms: SigningAlgorithm[] = ['ES256', 'RS256']): Promise<{ jwks: { keys: Array<JWK & { kid: string }> } }> {
  const keys = await Promise.all(algorithms.map(generateSigningKey));
  return { jwks: { keys: keys as Array<JWK & { kid: string }> } };
}
