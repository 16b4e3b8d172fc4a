import { calculateJwkThumbprint, exportJWK, generateKeyPair } from 'jose';
import { clientKeyIds, jwkThumbprint } from '../../policies/client-key-ids.js';
import type { ClientJwk } from '../../policies/client-keys.js';

/** Key IDs and RFC 7638 thumbprints as administrators see them: the same thumbprint jose computes, for each key type. */
describe('client key IDs', () => {
  it.each([['ES256'], ['RS256'], ['EdDSA']] as const)('the thumbprint of a %s key is the RFC 7638 one', async (alg) => {
    const { publicKey } = await generateKeyPair(alg, { extractable: true });
    // Members in another order and extra members do not change it.
    const jwk = { use: 'sig', alg, ...(await exportJWK(publicKey)) } as ClientJwk;
    expect(jwkThumbprint(jwk)).toBe(await calculateJwkThumbprint(jwk));
  });

  it('lists kid, thumbprint, type and algorithm, in order; a key without kid by its thumbprint alone', async () => {
    const a = (await exportJWK((await generateKeyPair('ES256', { extractable: true })).publicKey)) as ClientJwk;
    const b = { ...(await exportJWK((await generateKeyPair('EdDSA', { extractable: true })).publicKey)), kid: 'b', alg: 'EdDSA' } as ClientJwk;
    // Strictly: a key without a kid or an alg has no such member, not one that is undefined.
    expect(clientKeyIds({ keys: [a, b] })).toStrictEqual([
      { thumbprint: await calculateJwkThumbprint(a), kty: 'EC' },
      { kid: 'b', thumbprint: await calculateJwkThumbprint(b), kty: 'OKP', alg: 'EdDSA' },
    ]);
  });
});
