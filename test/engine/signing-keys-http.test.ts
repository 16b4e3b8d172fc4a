import { createRemoteJWKSet, decodeProtectedHeader, jwtVerify } from 'jose';
import { createAuthServer, type SigningAlgorithm } from '../../src/index.js';
import { demoApis, capturingLogger } from '../support/fixtures.js';
import { testJwks } from '../support/keys.js';
import { basic, postToken, startServer } from '../support/server.js';

describe.each<SigningAlgorithm>(['ES256', 'RS256', 'PS256', 'EdDSA'])('access tokens signed with %s', (alg) => {
  it('verify against the published JWKS', async () => {
    const server = await startServer({ accessTokenAlgorithm: alg });
    try {
      const { clientId, clientSecret } = await server.auth.clientConfigurations.create({
        tenant: 'acme', name: 'n', category: 'c', resources: { users: { scopes: ['user.read'] } },
      });
      const response = await postToken(server.oauthUrl, 'grant_type=client_credentials', { authorization: basic(clientId, clientSecret) });
      const token = response.body.access_token as string;
      expect(decodeProtectedHeader(token).alg).toBe(alg);
      const { payload } = await jwtVerify(token, createRemoteJWKSet(new URL(`${server.oauthUrl}/jwks`)), {
        algorithms: [alg],
        issuer: server.auth.issuer,
        typ: 'at+jwt',
      });
      expect(payload.tenant).toBe('acme');
    } finally {
      await server.stop();
    }
  });
});

describe('signing keys', () => {
  it('uses the configured keys and publishes their public halves', async () => {
    const keys = await testJwks(['ES256', 'RS256']);
    const server = await startServer({ keys });
    try {
      const { clientId, clientSecret } = await server.auth.clientConfigurations.create({
        tenant: 'acme', name: 'n', category: 'c', resources: { users: { scopes: ['user.read'] } },
      });
      const response = await postToken(server.oauthUrl, 'grant_type=client_credentials', { authorization: basic(clientId, clientSecret) });
      expect(decodeProtectedHeader(response.body.access_token as string).kid).toBe(keys.jwks.keys[0]!.kid);
      const published = (await (await fetch(`${server.oauthUrl}/jwks`)).json()) as { keys: Array<Record<string, unknown>> };
      expect(published.keys.map((key) => key.kid).sort()).toEqual(keys.jwks.keys.map((key) => key.kid).sort());
      expect(published.keys.every((key) => !('d' in key))).toBe(true);
      expect(server.logLines.join('\n')).not.toContain('NO SIGNING KEYS');
    } finally {
      await server.stop();
    }
  });

  it('warns loudly when it has to generate keys', async () => {
    const server = await startServer();
    await server.stop();
    expect(server.logLines.some((line) => line.includes('NO SIGNING KEYS CONFIGURED'))).toBe(true);
  });

  it('refuses a key set without a key for the access-token algorithm or for RS256 ID tokens', async () => {
    const { logger } = capturingLogger();
    const base = { baseUrl: 'http://127.0.0.1:1', apis: demoApis, logger };
    await expect(createAuthServer({ ...base, keys: await testJwks(['RS256']) })).rejects.toThrow(/no private key for ES256/);
    await expect(createAuthServer({ ...base, keys: await testJwks(['ES256']) })).rejects.toThrow(/no private key for RS256/);
  });

  it('refuses an RSA key without alg when both RS256 and PS256 are used, and accepts it otherwise', async () => {
    const { logger } = capturingLogger();
    const base = { baseUrl: 'http://127.0.0.1:1', apis: demoApis, logger };
    const { jwks } = await testJwks(['ES256', 'RS256']);
    const withoutAlg = { keys: jwks.keys.map(({ alg, ...rest }) => (rest.kty === 'RSA' ? rest : { ...rest, alg })) };
    // One RSA key cannot be both the PS256 access-token key and the RS256 ID-token key.
    await expect(createAuthServer({ ...base, accessTokenAlgorithm: 'PS256', keys: { jwks: withoutAlg } }))
      .rejects.toThrow(/keys\.jwks\.keys\[1\]: an RSA key without alg is ambiguous when both RS256 and PS256 are used; give each key an alg/);
    // With one key per algorithm, each naming its alg, PS256 access tokens and RS256 ID tokens both have a key.
    const both = await testJwks(['PS256', 'RS256']);
    const psServer = await startServer({ accessTokenAlgorithm: 'PS256', keys: both });
    try {
      await expect(psServer.auth.appRegistrations.create({ name: 'Web', redirectUris: ['https://web.example/cb'], clientType: 'confidential' }))
        .resolves.toHaveProperty('clientId');
    } finally {
      await psServer.stop();
    }
    // With ES256 access tokens the RSA key can only be for RS256 ID tokens: no ambiguity.
    const esServer = await startServer({ keys: { jwks: withoutAlg } });
    try {
      await expect(esServer.auth.appRegistrations.create({ name: 'Web', redirectUris: ['https://web.example/cb'], clientType: 'confidential' }))
        .resolves.toHaveProperty('clientId');
    } finally {
      await esServer.stop();
    }
  });

  it('refuses public keys', async () => {
    const { jwks } = await testJwks(['ES256', 'RS256']);
    const publicOnly = { keys: jwks.keys.map(({ d: _d, p: _p, q: _q, dp: _dp, dq: _dq, qi: _qi, ...rest }) => rest) };
    await expect(
      createAuthServer({ baseUrl: 'http://127.0.0.1:1', apis: demoApis, keys: { jwks: publicOnly }, logger: capturingLogger().logger }),
    ).rejects.toThrow(/not a private key/);
  });
});
