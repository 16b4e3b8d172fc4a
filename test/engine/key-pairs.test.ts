import { generateSigningKey, resolveSigningKeys, type SigningAlgorithm } from '../../src/engine/keys.js';

const quiet = { info() {}, warn() {}, error() {} };

/** A key whose private part is `a`'s and whose public part is `b`'s. */
async function mismatched(alg: SigningAlgorithm) {
  const [a, b] = await Promise.all([generateSigningKey(alg), generateSigningKey(alg)]);
  const publicOfB = alg === 'RS256' || alg === 'PS256' ? { n: b.n, e: b.e } : { x: b.x, ...(b.y ? { y: b.y } : {}) };
  return { ...a, ...publicOfB };
}

describe('key pairs are checked at start: each key signs once and verifies with its published half', () => {
  it.each(['ES256', 'RS256', 'EdDSA'] as const)('a %s key whose halves match is taken', async (alg) => {
    const key = await generateSigningKey(alg);
    const needed: SigningAlgorithm[] = alg === 'RS256' ? ['RS256'] : [alg, 'RS256'];
    const keys = alg === 'RS256' ? [key] : [key, await generateSigningKey('RS256')];
    await expect(resolveSigningKeys({ keys }, needed, quiet)).resolves.toMatchObject({ keys: expect.any(Array) });
  });

  it.each(['ES256', 'RS256', 'EdDSA'] as const)('a %s key whose private part is another key\'s refuses the start, naming it', async (alg) => {
    const bad = await mismatched(alg);
    const needed: SigningAlgorithm[] = alg === 'RS256' ? ['RS256'] : [alg, 'RS256'];
    const keys = alg === 'RS256' ? [bad] : [bad, await generateSigningKey('RS256')];
    await expect(resolveSigningKeys({ keys }, needed, quiet)).rejects.toThrow(/^keys\.jwks\.keys\[0\] \(kid [^)]+\)(: its private part does not match its public part| is not a usable key)/);
  });
});
