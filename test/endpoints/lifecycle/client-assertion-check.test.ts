import { createPublicKey, randomUUID, type JsonWebKey } from 'node:crypto';
import { exportJWK, generateKeyPair, SignJWT, type CryptoKey, type JWK } from 'jose';
import type Provider from 'oidc-provider';
import { PROFILE_METADATA } from '../../../policies/high-security.js';
import type { EngineClient } from '../../../src/engine/client-cache.js';
import { clientAssertionCheck } from '../../../src/endpoints/lifecycle/client-assertion.js';

const ISSUER = 'https://auth.example.com/oauth2';
const ENDPOINT = `${ISSUER}/introspect`;

interface Key {
  privateKey: CryptoKey;
  jwk: JWK;
}

async function key(kid: string): Promise<Key> {
  const { privateKey, publicKey } = await generateKeyPair('ES256', { extractable: true });
  return { privateKey, jwk: { ...(await exportJWK(publicKey)), kid, alg: 'ES256' } };
}

/**
 * The lifecycle endpoints' private_key_jwt check (src/endpoints/lifecycle/client-assertion.ts) on
 * its own, its engine parts stood in for: a client's key set (as the engine's: refreshed, then
 * asked for the keys of an algorithm and kid) and the single-use store. The HTTP paths are in
 * test/endpoints/token/private-key-jwt.test.ts; these rows are the ones HTTP cannot reach.
 */
describe('the lifecycle endpoints\' client assertion check', () => {
  let a: Key;
  let b: Key;
  beforeAll(async () => {
    [a, b] = await Promise.all([key('a'), key('b')]);
  });

  const provider = { issuer: ISSUER, ReplayDetection: { unique: async () => true } } as unknown as Provider;
  const check = clientAssertionCheck(provider);

  /** A client as the engine has it, with `keys` (refreshed by `refresh`). */
  function client(keys: JWK[], extra: Record<string, unknown> = {}, refresh: () => Promise<void> = async () => undefined): EngineClient {
    return {
      clientId: 'client-1',
      clientAuthMethod: 'private_key_jwt',
      asymmetricKeyStore: {
        refresh,
        selectForVerify: ({ alg, kid }: { alg: string; kid?: string }) => keys.filter((jwk) => jwk.alg === alg && (kid === undefined || jwk.kid === kid)),
        getKeyObject: (jwk: JWK) => createPublicKey({ key: jwk as JsonWebKey, format: 'jwk' }),
      },
      ...extra,
    } as unknown as EngineClient;
  }
  const finds = (found: EngineClient | undefined) => async () => found;

  async function assertion(signer: Key, { kid = true, aud = ISSUER as string | string[] } = {}): Promise<string> {
    const now = Math.floor(Date.now() / 1000);
    return new SignJWT({}).setProtectedHeader({ alg: 'ES256', ...(kid ? { kid: signer.jwk.kid! } : {}) })
      .setIssuer('client-1').setSubject('client-1').setAudience(aud).setIssuedAt(now).setExpirationTime(now + 60).setJti(randomUUID()).sign(signer.privateKey);
  }

  it('without a kid, every key of the algorithm is tried: an assertion signed by either key of a rotation passes', async () => {
    const rotating = client([a.jwk, b.jwk]);
    await expect(check(await assertion(a, { kid: false }), ENDPOINT, finds(rotating))).resolves.toBe(rotating);
    await expect(check(await assertion(b, { kid: false }), ENDPOINT, finds(rotating))).resolves.toBe(rotating);
    await expect(check(await assertion(b), ENDPOINT, finds(client([a.jwk])))).rejects.toMatchObject({ error: 'invalid_client' });
  });

  it('a client not registered for private_key_jwt is refused, even with keys that would verify', async () => {
    const other = client([a.jwk], { clientAuthMethod: 'client_secret_basic' });
    await expect(check(await assertion(a), ENDPOINT, finds(other))).rejects.toMatchObject({ error: 'invalid_client', status: 401 });
    await expect(check(await assertion(a), ENDPOINT, finds(undefined))).rejects.toMatchObject({ error: 'invalid_client' });
  });

  it('a key set that cannot be refreshed (its jwks_uri down) is invalid_client, not a 500', async () => {
    const unreachable = client([a.jwk], {}, () => Promise.reject(new Error('connect ECONNREFUSED')));
    await expect(check(await assertion(a), ENDPOINT, finds(unreachable))).rejects.toMatchObject({ error: 'invalid_client', status: 401 });
  });

  it('text that is not a JWT is refused with its words', async () => {
    await expect(check('not-a-jwt', ENDPOINT, finds(client([a.jwk])))).rejects.toMatchObject({ error: 'invalid_client', description: 'the client assertion is not a JWT' });
  });

  it('under the high-security profile, an audience other than the issuer alone is refused with its words', async () => {
    const strict = client([a.jwk], { [PROFILE_METADATA]: 'high-security' });
    await expect(check(await assertion(a), ENDPOINT, finds(strict))).resolves.toBe(strict);
    await expect(check(await assertion(a, { aud: ENDPOINT }), ENDPOINT, finds(strict)))
      .rejects.toMatchObject({ error: 'invalid_client', description: 'the client assertion audience must be the issuer identifier' });
  });
});
