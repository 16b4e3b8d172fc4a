import { createHash, randomUUID } from 'node:crypto';
import * as oauth from 'oauth4webapi';
import * as client from 'openid-client';
import { calculateJwkThumbprint, decodeJwt, exportJWK, generateKeyPair, SignJWT, type CryptoKey, type JWK } from 'jose';
import { alice, testAccounts } from '../support/accounts.js';
import { basic, postToken, startServer, type RunningServer } from '../support/server.js';
import { signInForCode } from '../support/sign-in.js';
import { STORE_KINDS, useStore } from '../support/stores.js';

const WEB = 'https://app.example.com/cb';
const insecure = { [oauth.allowInsecureRequests]: true } as const;

/** A DPoP key of a client, and proofs made with it by hand (for the proofs a library would not make). */
async function dpopKey(alg: 'ES256' | 'EdDSA' | 'RS256' = 'ES256') {
  const { privateKey, publicKey } = await generateKeyPair(alg, { extractable: true });
  const jwk: JWK = await exportJWK(publicKey);
  return {
    jkt: await calculateJwkThumbprint(jwk),
    async proof(claims: { htm?: string; htu: string; iat?: number; jti?: string; nonce?: string; ath?: string }, key: CryptoKey = privateKey) {
      const { iat = Math.floor(Date.now() / 1000), jti = randomUUID(), htm = 'POST', ...rest } = claims;
      return new SignJWT({ htm, jti, ...rest }).setProtectedHeader({ alg, typ: 'dpop+jwt', jwk }).setIssuedAt(iat).sign(key);
    },
  };
}

/**
 * DPoP at the token endpoint (RFC 9449): tokens bound to the client's key, proofs checked by the
 * engine with our settings (src/engine/configuration.ts), `dpop: 'required'` per client
 * (src/engine/client-directory.ts), proofs used once in the shared store
 * (src/engine/replay-detection.ts); with oauth4webapi and openid-client, on both stores.
 */
describe.each(STORE_KINDS)('DPoP at the token endpoint (%s store)', (kind) => {
  const store = useStore(kind);
  let server: RunningServer;
  let machine: { clientId: string; clientSecret: string };
  let strict: { clientId: string; clientSecret: string };
  let app: { clientId: string; clientSecret: string };
  let strictApp: { clientId: string; clientSecret: string };
  let tokenUrl: string;

  beforeAll(async () => {
    server = await startServer({ store: store.option(), accounts: testAccounts([alice]) });
    tokenUrl = `${server.oauthUrl}/token`;
    const resources = { scim: { scopes: ['scim.read'] } };
    machine = await server.auth.clientConfigurations.create({ tenant: 'acme', name: 'Sync', category: 'hr', resources });
    strict = await server.auth.clientConfigurations.create({ tenant: 'acme', name: 'Payroll', category: 'hr', resources, dpop: 'required' });
    const web = await server.auth.appRegistrations.create({ name: 'Web', redirectUris: [WEB], clientType: 'confidential' });
    app = { clientId: web.clientId, clientSecret: web.clientSecret! };
    const strictWeb = await server.auth.appRegistrations.create({ name: 'Strict', redirectUris: [WEB], clientType: 'confidential', dpop: 'required' });
    strictApp = { clientId: strictWeb.clientId, clientSecret: strictWeb.clientSecret! };
  });
  afterAll(() => server.stop());

  const machineToken = (caller: { clientId: string; clientSecret: string }, headers: Record<string, string> = {}) =>
    postToken(server.oauthUrl, 'grant_type=client_credentials', { authorization: basic(caller.clientId, caller.clientSecret), ...headers });

  it('discovery lists the DPoP proof algorithms', async () => {
    const metadata = await (await fetch(`${server.oauthUrl}/.well-known/openid-configuration`)).json() as Record<string, unknown>;
    expect(metadata.dpop_signing_alg_values_supported).toEqual(['ES256', 'EdDSA', 'Ed25519', 'RS256', 'PS256']);
  });

  it('oauth4webapi: client_credentials with DPoP and a server nonce gives a token bound to the key', async () => {
    const issuer = new URL(server.oauthUrl);
    const as = await oauth.processDiscoveryResponse(issuer, await oauth.discoveryRequest(issuer, insecure));
    const keyPair = await oauth.generateKeyPair('ES256');
    const DPoP = oauth.DPoP({}, keyPair);
    const request = () => oauth.clientCredentialsGrantRequest(as, { client_id: machine.clientId }, oauth.ClientSecretBasic(machine.clientSecret), new URLSearchParams(), { ...insecure, DPoP });
    // The first answer carries a nonce (DPoP-Nonce); the library keeps it and puts it in its next proofs.
    const first = await oauth.processClientCredentialsResponse(as, { client_id: machine.clientId }, await request());
    const second = await oauth.processClientCredentialsResponse(as, { client_id: machine.clientId }, await request());
    const jkt = await calculateJwkThumbprint(await exportJWK(keyPair.publicKey));
    for (const tokens of [first, second]) {
      expect(tokens.token_type).toBe('dpop');
      expect(decodeJwt(tokens.access_token)).toMatchObject({ cnf: { jkt }, client_id: machine.clientId, tenant: 'acme' });
    }
  });

  it('answers a nonce and takes proofs that carry it, from any time, while the nonce is current', async () => {
    const key = await dpopKey();
    const first = await machineToken(machine, { dpop: await key.proof({ htu: tokenUrl }) });
    expect(first.status).toBe(200);
    const nonce = first.headers.get('dpop-nonce');
    expect(nonce).toMatch(/^[A-Za-z0-9_-]+$/);
    // An old iat is fine with a current nonce: the nonce says the proof is recent.
    const withNonce = await machineToken(machine, { dpop: await key.proof({ htu: tokenUrl, nonce: nonce!, iat: Math.floor(Date.now() / 1000) - 3600 }) });
    expect(withNonce.status).toBe(200);
    const forged = await machineToken(machine, { dpop: await key.proof({ htu: tokenUrl, nonce: 'not-a-nonce-of-ours' }) });
    expect(forged.status).toBe(400);
    expect(forged.body.error).toBe('use_dpop_nonce');
    expect(forged.headers.get('dpop-nonce')).toBeTruthy();
  });

  it('openid-client: client_credentials with DPoP', async () => {
    const config = await client.discovery(new URL(server.oauthUrl), machine.clientId, undefined, client.ClientSecretBasic(machine.clientSecret), { execute: [client.allowInsecureRequests] });
    const DPoP = client.getDPoPHandle(config, await client.randomDPoPKeyPair('ES256'));
    const tokens = await client.clientCredentialsGrant(config, { scope: 'scim.read' }, { DPoP }).catch(async (error: unknown) => {
      // A client retries once with the nonce the server named.
      if (error instanceof client.ResponseBodyError && error.error === 'use_dpop_nonce') return client.clientCredentialsGrant(config, { scope: 'scim.read' }, { DPoP });
      throw error;
    });
    expect(tokens.token_type).toBe('dpop');
    expect(decodeJwt(tokens.access_token).cnf).toHaveProperty('jkt');
  });

  it('without a proof, an optional client gets a Bearer token with no cnf', async () => {
    const answer = await machineToken(machine);
    expect(answer.status).toBe(200);
    expect(answer.body.token_type).toBe('Bearer');
    expect(decodeJwt(answer.body.access_token as string).cnf).toBeUndefined();
  });

  it("a client with dpop: 'required' gets no token without a proof, and a bound one with", async () => {
    const refused = await machineToken(strict);
    expect(refused.status).toBe(400);
    // The engine keeps an invalid_grant's reason to itself ("grant request is invalid").
    expect(refused.body.error).toBe('invalid_grant');
    const key = await dpopKey('EdDSA');
    const bound = await machineToken(strict, { dpop: await key.proof({ htu: tokenUrl }) });
    expect(bound.status).toBe(200);
    expect(bound.body.token_type).toBe('DPoP');
    expect(decodeJwt(bound.body.access_token as string).cnf).toEqual({ jkt: key.jkt });
  });

  it('a proof is used once: the same proof again is refused', async () => {
    const key = await dpopKey();
    const proof = await key.proof({ htu: tokenUrl });
    expect((await machineToken(machine, { dpop: proof })).status).toBe(200);
    const again = await machineToken(machine, { dpop: proof });
    expect(again.status).toBe(400);
    expect(again.body.error).toBe('invalid_grant');
  });

  it('a proof is used once even when both requests arrive at the same moment', async () => {
    const key = await dpopKey();
    const proof = await key.proof({ htu: tokenUrl });
    const answers = await Promise.all(Array.from({ length: 5 }, () => machineToken(machine, { dpop: proof })));
    expect(answers.map((answer) => answer.status).sort()).toEqual([200, 400, 400, 400, 400]);
  });

  it.each([
    ['another method (htm)', { htm: 'GET' }, /htm/],
    ['another URL (htu)', { htu: 'https://elsewhere.example/oauth2/token' }, /htu/],
    ['an expired proof (iat ten minutes ago, no nonce)', { iat: Math.floor(Date.now() / 1000) - 600 }, /iat/],
    ['a proof from the future (iat ten minutes ahead)', { iat: Math.floor(Date.now() / 1000) + 600 }, /iat/],
  ])('refuses a proof for %s', async (_name, claims, description) => {
    const key = await dpopKey();
    const answer = await machineToken(machine, { dpop: await key.proof({ htu: tokenUrl, ...claims }) });
    expect(answer.status).toBe(400);
    expect(['invalid_dpop_proof', 'use_dpop_nonce']).toContain(answer.body.error);
    expect(answer.body.error_description).toMatch(description);
  });

  it('refuses a proof that is not a signed JWT of its embedded key', async () => {
    const key = await dpopKey();
    const other = await generateKeyPair('ES256');
    const answer = await machineToken(machine, { dpop: await key.proof({ htu: tokenUrl }, other.privateKey) });
    expect(answer.status).toBe(400);
    expect(answer.body.error).toBe('invalid_dpop_proof');
    const garbage = await machineToken(machine, { dpop: 'not.a.jwt' });
    expect(garbage.status).toBe(400);
    expect(garbage.body.error).toBe('invalid_dpop_proof');
  });

  async function codeExchange(target: { clientId: string; clientSecret: string }, headers: Record<string, string>) {
    const { code, verifier } = await signInForCode(server, { clientId: target.clientId, redirectUri: WEB }, alice, 'openid scim.read');
    return postToken(server.oauthUrl, { grant_type: 'authorization_code', code, redirect_uri: WEB, code_verifier: verifier }, { authorization: basic(target.clientId, target.clientSecret), ...headers });
  }

  it('authorization code: the access token and the refresh token of a confidential app are bound to the proof key; the rotated one stays bound', async () => {
    const key = await dpopKey();
    const tokens = await codeExchange(app, { dpop: await key.proof({ htu: tokenUrl }) });
    expect(tokens.status).toBe(200);
    expect(tokens.body.token_type).toBe('DPoP');
    expect(decodeJwt(tokens.body.access_token as string)).toMatchObject({ cnf: { jkt: key.jkt }, sub: alice.sub });
    const refresh = (refreshToken: string, headers: Record<string, string>) =>
      postToken(server.oauthUrl, { grant_type: 'refresh_token', refresh_token: refreshToken }, { authorization: basic(app.clientId, app.clientSecret), ...headers });
    // Stricter than the engine (src/engine/patches.ts, bindToProofKey): even with the client's
    // secret, a refresh token issued with a proof needs a proof of the same key.
    const other = await dpopKey();
    const otherKey = await refresh(tokens.body.refresh_token as string, { dpop: await other.proof({ htu: tokenUrl }) });
    expect(otherKey.status).toBe(400);
    expect(otherKey.body).toMatchObject({ error: 'invalid_grant' });
    const noProof = await refresh(tokens.body.refresh_token as string, {});
    expect(noProof.status).toBe(400);
    expect(noProof.body).toMatchObject({ error: 'invalid_grant' });
    const refreshed = await refresh(tokens.body.refresh_token as string, { dpop: await key.proof({ htu: tokenUrl }) });
    expect(refreshed.status).toBe(200);
    expect(refreshed.body.token_type).toBe('DPoP');
    expect(decodeJwt(refreshed.body.access_token as string).cnf).toEqual({ jkt: key.jkt });
    const rotatedOther = await refresh(refreshed.body.refresh_token as string, { dpop: await other.proof({ htu: tokenUrl }) });
    expect(rotatedOther.status).toBe(400);
    expect(rotatedOther.body).toMatchObject({ error: 'invalid_grant' });
  });

  it.each(['EdDSA', 'RS256'] as const)('a refresh token bound to a %s key refreshes with that key, not with another', async (alg) => {
    const key = await dpopKey(alg);
    const tokens = await codeExchange(app, { dpop: await key.proof({ htu: tokenUrl }) });
    expect(tokens.status).toBe(200);
    const refresh = async (proofKey: Awaited<ReturnType<typeof dpopKey>>) => postToken(server.oauthUrl, { grant_type: 'refresh_token', refresh_token: tokens.body.refresh_token as string }, {
      authorization: basic(app.clientId, app.clientSecret), dpop: await proofKey.proof({ htu: tokenUrl }),
    });
    expect((await refresh(await dpopKey())).status).toBe(400);
    const refreshed = await refresh(key);
    expect(refreshed.status).toBe(200);
    expect(decodeJwt(refreshed.body.access_token as string).cnf).toEqual({ jkt: key.jkt });
  });

  it('a refresh token issued without a proof stays usable as a bearer exchange (the app did not use DPoP)', async () => {
    const tokens = await codeExchange(app, {});
    expect(tokens.status).toBe(200);
    expect(tokens.body.token_type).toBe('Bearer');
    const refreshed = await postToken(server.oauthUrl, { grant_type: 'refresh_token', refresh_token: tokens.body.refresh_token as string }, {
      authorization: basic(app.clientId, app.clientSecret),
    });
    expect(refreshed.status).toBe(200);
    expect(refreshed.body.token_type).toBe('Bearer');
  });

  it("an app with dpop: 'required' needs a proof at the code exchange and at each refresh", async () => {
    const refused = await codeExchange(strictApp, {});
    expect(refused.status).toBe(400);
    expect(refused.body.error).toBe('invalid_grant');
    const key = await dpopKey();
    const tokens = await codeExchange(strictApp, { dpop: await key.proof({ htu: tokenUrl }) });
    expect(tokens.status).toBe(200);
    const refresh = { grant_type: 'refresh_token', refresh_token: tokens.body.refresh_token as string };
    const noProof = await postToken(server.oauthUrl, refresh, { authorization: basic(strictApp.clientId, strictApp.clientSecret) });
    expect(noProof.status).toBe(400);
    expect(noProof.body.error).toBe('invalid_grant');
    const refreshed = await postToken(server.oauthUrl, refresh, { authorization: basic(strictApp.clientId, strictApp.clientSecret), dpop: await key.proof({ htu: tokenUrl }) });
    expect(refreshed.status).toBe(200);
    expect(refreshed.body.token_type).toBe('DPoP');
  });

  it('userinfo refuses a DPoP-bound token presented as Bearer, and answers a Bearer token of the same app', async () => {
    const key = await dpopKey();
    const bound = await codeExchange(app, { dpop: await key.proof({ htu: tokenUrl }) });
    const asBearer = await fetch(`${server.oauthUrl}/userinfo`, { headers: { authorization: `Bearer ${bound.body.access_token as string}` } });
    expect(asBearer.status).toBe(401);
    expect(asBearer.headers.get('www-authenticate')).toContain('error="invalid_token"');
    expect(((await asBearer.json()) as { error_description: string }).error_description).toMatch(/bound to a DPoP key/);
    const plain = await codeExchange(app, {});
    const answer = await fetch(`${server.oauthUrl}/userinfo`, { headers: { authorization: `Bearer ${plain.body.access_token as string}` } });
    expect(answer.status).toBe(200);
    expect(await answer.json()).toMatchObject({ sub: alice.sub });
  });

  describe('userinfo with a DPoP-bound token', () => {
    const ath = (token: string) => createHash('sha256').update(token).digest('base64url');
    const userinfo = (headers: Record<string, string>) => fetch(`${server.oauthUrl}/userinfo`, { headers });

    it('oauth4webapi: the code exchange and userinfo with the same DPoP key', async () => {
      const issuer = new URL(server.oauthUrl);
      const as = await oauth.processDiscoveryResponse(issuer, await oauth.discoveryRequest(issuer, insecure));
      const DPoP = oauth.DPoP({}, await oauth.generateKeyPair('ES256'));
      const { code, verifier } = await signInForCode(server, { clientId: app.clientId, redirectUri: WEB }, alice, 'openid scim.read');
      const params = new URLSearchParams({ code, state: 's', iss: server.auth.issuer });
      const callback = oauth.validateAuthResponse(as, { client_id: app.clientId }, params, 's');
      const exchange = () => oauth.authorizationCodeGrantRequest(as, { client_id: app.clientId }, oauth.ClientSecretBasic(app.clientSecret), callback, WEB, verifier, { ...insecure, DPoP });
      const response = await exchange();
      const tokens = await oauth.processAuthorizationCodeResponse(as, { client_id: app.clientId }, response);
      expect(tokens.token_type).toBe('dpop');
      const claims = oauth.getValidatedIdTokenClaims(tokens)!;
      const info = await oauth.userInfoRequest(as, { client_id: app.clientId }, tokens.access_token, { ...insecure, DPoP });
      expect(await oauth.processUserInfoResponse(as, { client_id: app.clientId }, claims.sub, info)).toMatchObject({ sub: alice.sub });
    });

    it('refuses a proof for another token (ath), a replayed proof, another key, and no proof, with a DPoP challenge', async () => {
      const key = await dpopKey();
      const token = (await codeExchange(app, { dpop: await key.proof({ htu: tokenUrl }) })).body.access_token as string;
      const other = (await codeExchange(app, { dpop: await key.proof({ htu: tokenUrl }) })).body.access_token as string;
      const url = `${server.oauthUrl}/userinfo`;
      const expectRefused = async (response: Response, description: RegExp) => {
        expect(response.status).toBe(401);
        expect(response.headers.get('www-authenticate')).toMatch(/^DPoP realm="[^"]+", error="invalid_(dpop_proof|token)".*algs="ES256 EdDSA Ed25519 RS256 PS256"$/);
        expect(((await response.json()) as { error_description: string }).error_description).toMatch(description);
      };
      await expectRefused(await userinfo({ authorization: `DPoP ${token}`, dpop: await key.proof({ htm: 'GET', htu: url, ath: ath(other) }) }), /ath/);
      const proof = await key.proof({ htm: 'GET', htu: url, ath: ath(token) });
      expect((await userinfo({ authorization: `DPoP ${token}`, dpop: proof })).status).toBe(200);
      await expectRefused(await userinfo({ authorization: `DPoP ${token}`, dpop: proof }), /used before/);
      const thief = await dpopKey();
      await expectRefused(await userinfo({ authorization: `DPoP ${token}`, dpop: await thief.proof({ htm: 'GET', htu: url, ath: ath(token) }) }), /another key/);
      await expectRefused(await userinfo({ authorization: `DPoP ${token}` }), /proof is required/);
      await expectRefused(await userinfo({ authorization: `DPoP ${token}`, dpop: await key.proof({ htm: 'POST', htu: url, ath: ath(token) }) }), /htm/);
      const bearer = (await codeExchange(app, {})).body.access_token as string;
      await expectRefused(await userinfo({ authorization: `DPoP ${bearer}`, dpop: await key.proof({ htm: 'GET', htu: url, ath: ath(bearer) }) }), /not bound/);
    });
  });

  it('introspection says a bound token is DPoP, with its key thumbprint (RFC 9449 §6.2)', async () => {
    const key = await dpopKey();
    const bound = (await machineToken(machine, { dpop: await key.proof({ htu: tokenUrl }) })).body.access_token as string;
    const plain = (await machineToken(machine)).body.access_token as string;
    const introspect = async (token: string) => (await fetch(`${server.oauthUrl}/introspect`, {
      method: 'POST', headers: { authorization: basic(machine.clientId, machine.clientSecret), 'content-type': 'application/x-www-form-urlencoded' }, body: new URLSearchParams({ token }).toString(),
    })).json() as Promise<Record<string, unknown>>;
    expect(await introspect(bound)).toMatchObject({ active: true, token_type: 'DPoP', cnf: { jkt: key.jkt } });
    const answer = await introspect(plain);
    expect(answer).toMatchObject({ active: true, token_type: 'Bearer' });
    expect(answer).not.toHaveProperty('cnf');
  });
});
