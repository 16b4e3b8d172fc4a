import type { JWK } from 'jose';
import { keyAlgorithm, keyStates, signingKid, type SigningAlgorithm } from '../../src/engine/keys.js';
import { engineKeys } from '../../src/engine/signing-keys.js';
import { testJwks } from '../support/keys.js';

/** The rotation rule (engine/keys.ts): the first key of each algorithm signs; later keys are only published. */
describe('which key signs', () => {
  const needed: SigningAlgorithm[] = ['ES256', 'RS256'];
  let es1: JWK & { kid: string };
  let es2: JWK & { kid: string };
  let rs1: JWK & { kid: string };
  let rs2: JWK & { kid: string };
  let ed: JWK & { kid: string };

  beforeAll(async () => {
    const { keys } = (await testJwks(['ES256', 'ES256', 'RS256', 'RS256', 'EdDSA'])).jwks;
    [es1, es2, rs1, rs2, ed] = keys as [typeof es1, typeof es1, typeof es1, typeof es1, typeof es1];
  });

  it('is the first key of each algorithm, whatever the order of the algorithms', async () => {
    const keys = [rs2, es2, ed, rs1, es1];
    expect((await keyStates(keys, needed)).map(({ kid, alg, state, index }) => [index, kid, alg, state])).toEqual([
      [0, rs2.kid, 'RS256', 'signing'],
      [1, es2.kid, 'ES256', 'signing'],
      [2, ed.kid, 'EdDSA', 'signing'],
      [3, rs1.kid, 'RS256', 'published'],
      [4, es1.kid, 'ES256', 'published'],
    ]);
    expect(signingKid({ keys }, 'ES256', needed)).toBe(es2.kid);
    expect(signingKid({ keys }, 'RS256', needed)).toBe(rs2.kid);
    expect(signingKid({ keys }, 'PS256', needed)).toBeUndefined();
  });

  it('a key set with one key per algorithm (keys generate) signs with each of them', async () => {
    expect((await keyStates([es1, rs1])).map((status) => status.state)).toEqual(['signing', 'signing']);
  });

  it('counts a key by the algorithm it signs with: alg, else its type; keys that sign none of ours are only published', async () => {
    const { alg: _alg, kid: _kid, ...bareEs } = es1;
    const { alg: _rsAlg, ...bareRs } = rs1;
    expect(keyAlgorithm(bareEs, 0, needed)).toBe('ES256');
    expect(keyAlgorithm(bareRs, 0, needed)).toBe('RS256');
    expect(keyAlgorithm(bareRs, 0, ['PS256'])).toBe('PS256');
    expect(() => keyAlgorithm(bareRs, 3, ['PS256', 'RS256'])).toThrow(/keys\.jwks\.keys\[3\]: an RSA key without alg is ambiguous/);
    expect(keyAlgorithm({ ...rs1, alg: 'PS256' }, 0, needed)).toBe('PS256');
    expect(keyAlgorithm({ ...ed, alg: 'Ed25519' }, 0, needed)).toBe('EdDSA');
    expect(keyAlgorithm({ ...es1, use: 'enc' }, 0, needed)).toBeUndefined();
    expect(keyAlgorithm({ ...es1, alg: 'ES384' }, 0, needed)).toBeUndefined();
    expect(keyAlgorithm({ ...rs1, alg: 'ES256' }, 0, needed)).toBeUndefined();

    // An RS256 key named so and one known by its type are the same algorithm: the first signs.
    const states = await keyStates([{ ...es1, use: 'enc' }, bareRs, rs2, es2]);
    expect(states.map((status) => [status.alg, status.state])).toEqual([
      [undefined, 'published'], ['RS256', 'signing'], ['RS256', 'published'], ['ES256', 'signing'],
    ]);
    // Without kid a key is known by its RFC 7638 thumbprint, as the server names it.
    expect((await keyStates([bareEs]))[0]!.kid).toBe(es1.kid);
  });

  it('the engine gets the keys in the same order, each naming its alg and use (it signs with the first that fits)', () => {
    const keys = engineKeys({ keys: [rs2, es2, rs1, es1] }, needed) as Array<{ kid: string; alg: string; use: string }>;
    expect(keys.map((key) => [key.kid, key.alg, key.use])).toEqual([
      [rs2.kid, 'RS256', 'sig'], [es2.kid, 'ES256', 'sig'], [rs1.kid, 'RS256', 'sig'], [es1.kid, 'ES256', 'sig'],
    ]);
  });
});
