import { randomUUID } from 'node:crypto';
import * as oauth from 'oauth4webapi';
import { calculateJwkThumbprint, decodeJwt, exportJWK, generateKeyPair, SignJWT, type JWK } from 'jose';
import { alice, testAccounts } from '../support/accounts.js';
import { basic, postToken, startServer, type RunningServer } from '../support/server.js';
import { STORE_KINDS, useStore } from '../support/stores.js';
import { pkcePair, UserAgent } from '../support/user-agent.js';

const WEB = 'https://app.example.com/cb';
const SPA = 'http://127.0.0.1:5173/callback';
const insecure = { [oauth.allowInsecureRequests]: true } as const;

/** A DPoP key, and proofs made with it by hand (for the proofs a library would not make). */
async function dpopKey() {
  const { privateKey, publicKey } = await generateKeyPair('ES256', { extractable: true });
  const jwk: JWK = await exportJWK(publicKey);
  return {
    jkt: await calculateJwkThumbprint(jwk),
    proof(htu: string, claims: { iat?: number; jti?: string; nonce?: string } = {}) {
      const { iat = Math.floor(Date.now() / 1000), jti = randomUUID(), ...rest } = claims;
      return new SignJWT({ htm: 'POST', htu, jti, ...rest }).setProtectedHeader({ alg: 'ES256', typ: 'dpop+jwt', jwk }).setIssuedAt(iat).sign(privateKey);
    },
  };
}

/**
 * PUSHED AUTHORIZATION REQUESTS WITH DPoP (RFC 9449 §10): an app binds the authorization code to
 * its DPoP key at the push, by `dpop_jkt` or by a DPoP proof on the push itself (the engine's
 * pushed authorization endpoint behind our guard, src/endpoints/sign-in/pushed-authorization.ts);
 * the code is then exchanged only with a proof of that key, and the tokens are bound to it.
 * With oauth4webapi's DPoP handle through the server nonce round trip (use_dpop_nonce), and the
 * refusals: another key, no proof, a `dpop_jkt` other than the proof's key, a replayed or
 * misdirected proof at the push. Both stores.
 */
describe.each(STORE_KINDS)('pushed authorization requests with DPoP (%s store)', (kind) => {
  const store = useStore(kind);
  let server: RunningServer;
  let app: { clientId: string; clientSecret: string };
  let spa: string;
  let parUrl: string;
  let tokenUrl: string;

  beforeAll(async () => {
    server = await startServer({ store: store.option(), accounts: testAccounts([alice]) });
    parUrl = `${server.oauthUrl}/par`;
    tokenUrl = `${server.oauthUrl}/token`;
    const web = await server.auth.appRegistrations.create({ name: 'Web', redirectUris: [WEB], clientType: 'confidential' });
    app = { clientId: web.clientId, clientSecret: web.clientSecret! };
    spa = (await server.auth.appRegistrations.create({ name: 'SPA', redirectUris: [SPA], clientType: 'public' })).clientId;
  });
  afterAll(() => server.stop());

  async function push(params: Record<string, string>, headers: Record<string, string> = {}) {
    const response = await fetch(parUrl, {
      method: 'POST',
      headers: { 'content-type': 'application/x-www-form-urlencoded', authorization: basic(app.clientId, app.clientSecret), ...headers },
      body: new URLSearchParams(params).toString(),
    });
    return { status: response.status, headers: response.headers, body: (await response.json()) as Record<string, string> };
  }

  const request = (challenge: string, extra: Record<string, string> = {}) => ({
    response_type: 'code', client_id: app.clientId, redirect_uri: WEB, scope: 'openid scim.read', state: 'st-dpop',
    code_challenge: challenge, code_challenge_method: 'S256', ...extra,
  });

  /** The browser with the request by reference through login and consent: the code back at the app. */
  async function codeFor(requestUri: string, clientId = app.clientId): Promise<string> {
    const agent = new UserAgent(server.baseUrl);
    let step = await agent.request(`${server.oauthUrl}/authorize?${new URLSearchParams({ client_id: clientId, request_uri: requestUri })}`);
    if (step.html.includes('name="password"')) step = await agent.submit(step, { username: alice.sub, password: alice.password });
    if (step.html.includes('value="allow"')) step = await agent.submit(step, { decision: 'allow' });
    const code = new URL(step.location!).searchParams.get('code');
    expect(code).toBeTruthy();
    return code!;
  }

  /** A pushed request bound by `extra`/`headers`, signed in: its code and PKCE verifier. */
  async function boundCode(extra: Record<string, string>, headers: Record<string, string> = {}) {
    const { verifier, challenge } = pkcePair();
    const pushed = await push(request(challenge, extra), headers);
    expect(pushed.status).toBe(201);
    return { code: await codeFor(pushed.body.request_uri!), verifier };
  }

  const exchange = (code: string, verifier: string, headers: Record<string, string> = {}) =>
    postToken(server.oauthUrl, { grant_type: 'authorization_code', code, redirect_uri: WEB, code_verifier: verifier }, { authorization: basic(app.clientId, app.clientSecret), ...headers });

  it('oauth4webapi: the DPoP handle at the push through use_dpop_nonce, the code exchanged with the same key, the tokens bound to it', async () => {
    const issuer = new URL(server.oauthUrl);
    const as = await oauth.processDiscoveryResponse(issuer, await oauth.discoveryRequest(issuer, insecure));
    const meta = { client_id: app.clientId };
    const auth = oauth.ClientSecretBasic(app.clientSecret);
    const keyPair = await oauth.generateKeyPair('ES256');
    // A client whose clock is ten minutes behind: its first proof is not recent, so the server
    // answers use_dpop_nonce with a DPoP-Nonce; the handle keeps the nonce, the retry carries it.
    const DPoP = oauth.DPoP({ [oauth.clockSkew]: -600 }, keyPair);
    const verifier = oauth.generateRandomCodeVerifier();
    const parameters = {
      response_type: 'code', redirect_uri: WEB, scope: 'openid scim.read', state: 'st-lib',
      code_challenge: await oauth.calculatePKCECodeChallenge(verifier), code_challenge_method: 'S256',
    };
    const pushRequest = async () => oauth.processPushedAuthorizationResponse(as, meta, await oauth.pushedAuthorizationRequest(as, meta, auth, parameters, { ...insecure, DPoP }));
    let nonceErrors = 0;
    const pushed = await pushRequest().catch((error: unknown) => {
      if (!oauth.isDPoPNonceError(error)) throw error;
      nonceErrors += 1;
      return pushRequest();
    });
    expect(nonceErrors).toBe(1);
    const code = await codeFor(pushed.request_uri);
    const params = oauth.validateAuthResponse(as, meta, new URLSearchParams({ code, state: 'st-lib', iss: server.auth.issuer }), 'st-lib');
    const tokens = await oauth.processAuthorizationCodeResponse(as, meta, await oauth.authorizationCodeGrantRequest(as, meta, auth, params, WEB, verifier, { ...insecure, DPoP }));
    expect(tokens.token_type).toBe('dpop');
    expect(decodeJwt(tokens.access_token).cnf).toEqual({ jkt: await DPoP.calculateThumbprint() });
  });

  it('oauth4webapi: a code bound at the push is not exchanged with another DPoP key (400 invalid_grant)', async () => {
    const issuer = new URL(server.oauthUrl);
    const as = await oauth.processDiscoveryResponse(issuer, await oauth.discoveryRequest(issuer, insecure));
    const meta = { client_id: app.clientId };
    const auth = oauth.ClientSecretBasic(app.clientSecret);
    const DPoP = oauth.DPoP({}, await oauth.generateKeyPair('ES256'));
    const verifier = oauth.generateRandomCodeVerifier();
    const pushed = await oauth.processPushedAuthorizationResponse(as, meta, await oauth.pushedAuthorizationRequest(as, meta, auth, {
      response_type: 'code', redirect_uri: WEB, scope: 'openid', state: 'st-x',
      code_challenge: await oauth.calculatePKCECodeChallenge(verifier), code_challenge_method: 'S256',
    }, { ...insecure, DPoP }));
    const code = await codeFor(pushed.request_uri);
    const params = oauth.validateAuthResponse(as, meta, new URLSearchParams({ code, state: 'st-x', iss: server.auth.issuer }), 'st-x');
    const thief = oauth.DPoP({}, await oauth.generateKeyPair('ES256'));
    const response = await oauth.authorizationCodeGrantRequest(as, meta, auth, params, WEB, verifier, { ...insecure, DPoP: thief });
    expect(response.status).toBe(400);
    await expect(oauth.processAuthorizationCodeResponse(as, meta, response)).rejects.toMatchObject({ error: 'invalid_grant' });
  });

  it('dpop_jkt in the pushed request binds the code: its key exchanges it; another key, or no proof, is 400 invalid_grant', async () => {
    const key = await dpopKey();
    const thief = await dpopKey();
    const first = await boundCode({ dpop_jkt: key.jkt });
    const stolen = await exchange(first.code, first.verifier, { dpop: await thief.proof(tokenUrl) });
    expect(stolen.status).toBe(400);
    expect(stolen.body.error).toBe('invalid_grant');
    const second = await boundCode({ dpop_jkt: key.jkt });
    const bare = await exchange(second.code, second.verifier);
    expect(bare.status).toBe(400);
    expect(bare.body.error).toBe('invalid_grant');
    const third = await boundCode({ dpop_jkt: key.jkt });
    const own = await exchange(third.code, third.verifier, { dpop: await key.proof(tokenUrl) });
    expect(own.status).toBe(200);
    expect(own.body.token_type).toBe('DPoP');
    expect(decodeJwt(own.body.access_token as string).cnf).toEqual({ jkt: key.jkt });
  });

  it('a DPoP proof on the push binds the code to its key (no dpop_jkt needed)', async () => {
    const key = await dpopKey();
    const thief = await dpopKey();
    const first = await boundCode({}, { dpop: await key.proof(parUrl) });
    const stolen = await exchange(first.code, first.verifier, { dpop: await thief.proof(tokenUrl) });
    expect(stolen.status).toBe(400);
    expect(stolen.body.error).toBe('invalid_grant');
    const second = await boundCode({}, { dpop: await key.proof(parUrl) });
    const own = await exchange(second.code, second.verifier, { dpop: await key.proof(tokenUrl) });
    expect(own.status).toBe(200);
    expect(decodeJwt(own.body.access_token as string).cnf).toEqual({ jkt: key.jkt });
  });

  it('a public app binds its code with a proof on its push as well: another key is refused, and the attempt spends the code', async () => {
    const key = await dpopKey();
    const { verifier, challenge } = pkcePair();
    const response = await fetch(parUrl, {
      method: 'POST',
      headers: { 'content-type': 'application/x-www-form-urlencoded', dpop: await key.proof(parUrl) },
      body: new URLSearchParams({ response_type: 'code', client_id: spa, redirect_uri: SPA, scope: 'openid', state: 's', code_challenge: challenge, code_challenge_method: 'S256' }).toString(),
    });
    expect(response.status).toBe(201);
    const code = await codeFor(((await response.json()) as { request_uri: string }).request_uri, spa);
    const body = { grant_type: 'authorization_code', code, redirect_uri: SPA, code_verifier: verifier, client_id: spa };
    const stolen = await postToken(server.oauthUrl, body, { dpop: await (await dpopKey()).proof(tokenUrl) });
    expect(stolen.status).toBe(400);
    expect(stolen.body.error).toBe('invalid_grant');
    // A code is presented once: the thief's attempt used it up, as any failed exchange does.
    const own = await postToken(server.oauthUrl, body, { dpop: await key.proof(tokenUrl) });
    expect({ status: own.status, error: own.body.error }).toEqual({ status: 400, error: 'invalid_grant' });
  });

  it("a dpop_jkt other than the push proof's key is 400 invalid_request, and nothing is stored", async () => {
    const key = await dpopKey();
    const other = await dpopKey();
    const pushed = await push(request(pkcePair().challenge, { dpop_jkt: other.jkt }), { dpop: await key.proof(parUrl) });
    expect(pushed.status).toBe(400);
    expect(pushed.body).toMatchObject({ error: 'invalid_request', error_description: expect.stringMatching(/dpop_jkt/) });
    expect(pushed.body.request_uri).toBeUndefined();
  });

  it.each([
    ['a proof for another URL (the token endpoint)', 'token'],
    ['a replayed proof', 'replay'],
    ['a proof with a nonce the server never gave', 'nonce'],
    ['a proof that is not a JWT', 'garbage'],
  ] as const)('refuses at the push %s (400, a clear error)', async (_name, breakIt) => {
    const key = await dpopKey();
    let proof: string;
    if (breakIt === 'token') proof = await key.proof(tokenUrl);
    else if (breakIt === 'nonce') proof = await key.proof(parUrl, { nonce: 'not-a-nonce-of-ours' });
    else if (breakIt === 'garbage') proof = 'not.a.jwt';
    else {
      proof = await key.proof(parUrl);
      expect((await push(request(pkcePair().challenge), { dpop: proof })).status).toBe(201);
    }
    const pushed = await push(request(pkcePair().challenge), { dpop: proof });
    expect(pushed.status).toBe(400);
    const expected = { token: 'invalid_dpop_proof', replay: 'invalid_request', nonce: 'use_dpop_nonce', garbage: 'invalid_dpop_proof' }[breakIt];
    expect(pushed.body).toMatchObject({ error: expected, error_description: expect.any(String) });
    if (breakIt === 'nonce') expect(pushed.headers.get('dpop-nonce')).toMatch(/^[A-Za-z0-9_-]+$/);
  });
});
