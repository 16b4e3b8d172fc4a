import { createRemoteJWKSet, decodeProtectedHeader, jwtVerify } from 'jose';
import * as client from 'openid-client';
import { createAuthServer, ValidationError, type SigningAlgorithm } from '../../../src/index.js';
import { alice, testAccounts } from '../../support/accounts.js';
import { capturingLogger, demoApis } from '../../support/fixtures.js';
import { testJwks } from '../../support/keys.js';
import { callManagementApi, managementToken } from '../../support/management.js';
import { startServer, type RunningServer } from '../../support/server.js';
import { STORE_KINDS, useStore } from '../../support/stores.js';
import { pkcePair, UserAgent } from '../../support/user-agent.js';

const WEB = 'https://app.example.com/cb';
const admin = { sub: 'admin', password: 'admin-password', tenant: 'acme', permissions: ['integration_setup'] };

/** The ID-token algorithms discovery lists (sorted, the engine's order is its own). */
async function listed(server: RunningServer): Promise<string[]> {
  const metadata = (await (await fetch(`${server.oauthUrl}/.well-known/openid-configuration`)).json()) as { id_token_signing_alg_values_supported: string[] };
  return [...metadata.id_token_signing_alg_values_supported].sort();
}

/**
 * A sign-in of `app` as alice through openid-client (metadata: the algorithm the app registered,
 * ID-token signatures checked against the server's JWKS: enableNonRepudiationChecks), and the
 * refresh of its tokens.
 */
async function signInWithOpenidClient(server: RunningServer, app: { clientId: string; clientSecret: string }, alg: string) {
  const config = await client.discovery(
    new URL(server.oauthUrl),
    app.clientId,
    { id_token_signed_response_alg: alg },
    client.ClientSecretBasic(app.clientSecret),
    { execute: [client.allowInsecureRequests, client.enableNonRepudiationChecks] },
  );
  const agent = new UserAgent(server.baseUrl);
  const { verifier, challenge } = pkcePair();
  const state = client.randomState();
  const url = client.buildAuthorizationUrl(config, { redirect_uri: WEB, scope: 'openid scim.read', state, code_challenge: challenge, code_challenge_method: 'S256' });
  let step = await agent.request(url.href);
  step = await agent.submit(step, { username: alice.sub, password: alice.password });
  if (step.html.includes('value="allow"')) step = await agent.submit(step, { decision: 'allow' });
  if (!step.location) throw new Error(`no redirect back to the app: ${step.status} ${step.html.slice(0, 3000)}`);
  const tokens = await client.authorizationCodeGrant(config, new URL(step.location!), { pkceCodeVerifier: verifier, expectedState: state });
  const refreshed = await client.refreshTokenGrant(config, tokens.refresh_token!);
  return { tokens, refreshed };
}

/**
 * ID TOKEN ALGORITHM PER APP (the `idTokenAlgorithms` option, docs/keys.md "ID-token algorithms"):
 * the server holds a key for each algorithm listed, discovery lists them, and an app that
 * registered one of them gets ID tokens signed with it, which openid-client verifies with the
 * published JWKS; an algorithm without a key is refused at registration, in the API and over HTTP.
 */
describe.each(STORE_KINDS)('ID-token algorithms per app (%s store)', (kind) => {
  const store = useStore(kind);
  /** Every algorithm listed, keys generated; RS256 access tokens, so that no other option brings an ES256 key. */
  let all: RunningServer;
  /** The defaults but RS256 access tokens: RS256 is the only algorithm with a key. */
  let plain: RunningServer;

  beforeAll(async () => {
    const common = { accounts: testAccounts([alice, admin]), accessTokenAlgorithm: 'RS256' as const };
    all = await startServer({ ...common, store: store.option(), idTokenAlgorithms: ['RS256', 'ES256', 'EdDSA', 'PS256'] });
    plain = await startServer({ ...common, store: store.option() });
  });
  afterAll(async () => {
    await all?.stop();
    await plain?.stop();
  });

  it('discovery lists the algorithms with a key: those of idTokenAlgorithms, and only RS256 when it is alone', async () => {
    expect(await listed(all)).toEqual(['ES256', 'EdDSA', 'PS256', 'RS256']);
    expect(await listed(plain)).toEqual(['RS256']);
    // Each has its key at jwks_uri, generated with the others.
    const published = (await (await fetch(`${all.oauthUrl}/jwks`)).json()) as { keys: Array<{ alg: string }> };
    expect(published.keys.map((key) => key.alg).sort()).toEqual(['ES256', 'EdDSA', 'PS256', 'RS256']);
  });

  it.each<SigningAlgorithm>(['ES256', 'EdDSA', 'PS256', 'RS256'])(
    'an app that registered %s gets ID tokens signed with it, verified by openid-client with the JWKS; a refresh too',
    async (alg) => {
      const app = await all.auth.appRegistrations.create({ name: `App ${alg}`, redirectUris: [WEB], clientType: 'confidential', idTokenSigningAlg: alg });
      expect(app.idTokenSigningAlg).toBe(alg);
      const { tokens, refreshed } = await signInWithOpenidClient(all, { clientId: app.clientId, clientSecret: app.clientSecret! }, alg);
      expect(tokens.claims()).toMatchObject({ sub: alice.sub, aud: app.clientId, iss: all.auth.issuer });
      const jwks = createRemoteJWKSet(new URL(`${all.oauthUrl}/jwks`));
      for (const idToken of [tokens.id_token!, refreshed.id_token!]) {
        expect(decodeProtectedHeader(idToken).alg).toBe(alg);
        await expect(jwtVerify(idToken, jwks, { algorithms: [alg], issuer: all.auth.issuer, audience: app.clientId })).resolves.toBeDefined();
      }
      // The access token keeps the access-token algorithm.
      expect(decodeProtectedHeader(tokens.access_token).alg).toBe('RS256');
    },
  );

  it('an app that names no algorithm gets RS256 ID tokens (OpenID Connect\'s default), whatever else is listed', async () => {
    const app = await all.auth.appRegistrations.create({ name: 'Default', redirectUris: [WEB], clientType: 'confidential' });
    expect(app.idTokenSigningAlg).toBe('RS256');
    const { tokens } = await signInWithOpenidClient(all, { clientId: app.clientId, clientSecret: app.clientSecret! }, 'RS256');
    expect(decodeProtectedHeader(tokens.id_token!).alg).toBe('RS256');
  });

  it.each<SigningAlgorithm>(['ES256', 'EdDSA', 'PS256'])('%s without a key is refused at registration and at a change, naming the field', async (alg) => {
    const refused = await plain.auth.appRegistrations
      .create({ name: 'No key', redirectUris: [WEB], clientType: 'confidential', idTokenSigningAlg: alg })
      .catch((error: unknown) => error);
    expect(refused).toBeInstanceOf(ValidationError);
    expect(refused).toMatchObject({
      field: 'idTokenSigningAlg',
      description: `idTokenSigningAlg: the server has no key for ${alg}: it signs ID tokens with RS256 (the host lists more in its idTokenAlgorithms option)`,
    });
    const app = await plain.auth.appRegistrations.create({ name: 'RS', redirectUris: [WEB], clientType: 'confidential' });
    await expect(plain.auth.appRegistrations.update(app.clientId, { idTokenSigningAlg: alg })).rejects.toMatchObject({ field: 'idTokenSigningAlg' });
    expect((await plain.auth.appRegistrations.get(app.clientId))?.idTokenSigningAlg).toBe('RS256');
  });

  it('over the management API: a 400 invalid_request naming id_token_signed_response_alg; an algorithm with a key is taken', async () => {
    for (const server of [plain, all]) {
      const token = await managementToken(server, admin);
      const answer = await callManagementApi(server, token, 'app-registrations', 'POST', {
        name: 'Ed', redirect_uris: [WEB], client_type: 'confidential', id_token_signed_response_alg: 'EdDSA',
      });
      if (server === plain) {
        expect(answer).toMatchObject({ status: 400, body: { error: 'invalid_request', field: 'id_token_signed_response_alg' } });
        expect(answer.body.error_description).toBe(
          'id_token_signed_response_alg: the server has no key for EdDSA: it signs ID tokens with RS256 (the host lists more in its idTokenAlgorithms option)',
        );
      } else {
        expect(answer).toMatchObject({ status: 201, body: { id_token_signed_response_alg: 'EdDSA' } });
      }
    }
  });
});

describe('ID-token algorithms and configured keys', () => {
  const base = { baseUrl: 'http://127.0.0.1:1', apis: demoApis };

  it('a listed algorithm without a key in keys.jwks fails the start, naming the algorithm and the option', async () => {
    const { logger } = capturingLogger();
    await expect(createAuthServer({ ...base, logger, keys: await testJwks(['ES256', 'RS256']), idTokenAlgorithms: ['RS256', 'EdDSA'] }))
      .rejects.toThrow('keys.jwks has no private key for EdDSA (needed by idTokenAlgorithms)');
    await expect(createAuthServer({ ...base, logger, accessTokenAlgorithm: 'RS256', keys: await testJwks(['RS256']), idTokenAlgorithms: ['RS256', 'ES256'] }))
      .rejects.toThrow('keys.jwks has no private key for ES256 (needed by idTokenAlgorithms)');
    await expect(createAuthServer({ ...base, logger, keys: await testJwks(['ES256']) }))
      .rejects.toThrow("keys.jwks has no private key for RS256 (needed by OpenID Connect's default ID tokens)");
    await expect(createAuthServer({ ...base, logger, accessTokenAlgorithm: 'RS256', keys: await testJwks(['ES256']) }))
      .rejects.toThrow("keys.jwks has no private key for RS256 (needed by accessTokenAlgorithm and OpenID Connect's default ID tokens)");
    await expect(createAuthServer({ ...base, logger, keys: await testJwks(['RS256', 'EdDSA']), idTokenAlgorithms: ['RS256', 'ES256'] }))
      .rejects.toThrow('keys.jwks has no private key for ES256 (needed by accessTokenAlgorithm and idTokenAlgorithms)');
  });

  it('the refusal names what discovery lists: with ES256 access tokens (the default) an ES256 key is there, and ES256 is offered', async () => {
    const server = await startServer({ keys: await testJwks(['ES256', 'RS256']) });
    try {
      expect(await listed(server)).toEqual(['ES256', 'RS256']);
      await expect(server.auth.appRegistrations.create({ name: 'Ed', redirectUris: [WEB], clientType: 'public', idTokenSigningAlg: 'EdDSA' }))
        .rejects.toThrow(new ValidationError('idTokenSigningAlg', 'the server has no key for EdDSA: it signs ID tokens with RS256, ES256 (the host lists more in its idTokenAlgorithms option)'));
      await expect(server.auth.appRegistrations.create({ name: 'ES', redirectUris: [WEB], clientType: 'public', idTokenSigningAlg: 'ES256' }))
        .resolves.toMatchObject({ idTokenSigningAlg: 'ES256' });
    } finally {
      await server.stop();
    }
  });

  it('PS256 beside RS256 needs RSA keys that name their alg (one RSA key cannot serve both)', async () => {
    const { logger } = capturingLogger();
    const { jwks } = await testJwks(['ES256', 'RS256']);
    const withoutAlg = { keys: jwks.keys.map(({ alg, ...rest }) => (rest.kty === 'RSA' ? rest : { ...rest, alg })) };
    await expect(createAuthServer({ ...base, logger, keys: { jwks: withoutAlg }, idTokenAlgorithms: ['RS256', 'PS256'] }))
      .rejects.toThrow(/an RSA key without alg is ambiguous when both RS256 and PS256 are used/);
  });
});
