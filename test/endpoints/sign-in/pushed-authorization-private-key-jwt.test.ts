import { randomUUID } from 'node:crypto';
import { SignJWT, exportJWK, generateKeyPair, type CryptoKey } from 'jose';
import * as oauth from 'oauth4webapi';
import * as client from 'openid-client';
import { JWT_BEARER_ASSERTION } from '../../../policies/client-authentication.js';
import type { ClientJwk } from '../../../policies/client-keys.js';
import { alice, testAccounts } from '../../support/accounts.js';
import { basic, postToken, startServer, type RunningServer } from '../../support/server.js';
import { STORE_KINDS, useStore } from '../../support/stores.js';
import { pkcePair, UserAgent, type Step } from '../../support/user-agent.js';

const WEB = 'https://payroll.example.com/cb';
const insecure = { [oauth.allowInsecureRequests]: true };

/**
 * PUSHED AUTHORIZATION REQUESTS OF A PRIVATE_KEY_JWT APP (RFC 9126 §2: the push authenticates the
 * client as the token endpoint does; src/endpoints/sign-in/pushed-authorization.ts and the engine's
 * assertion check): the app pushes with a client assertion (oauth4webapi, openid-client, by hand),
 * the user goes through our sign-in and consent pages, the code is exchanged with another
 * assertion; and every assertion rule of the token endpoint holds at the push (one method only,
 * audience, expiry, single use in the shared store, the client's own keys). Both stores; on Redis
 * two instances share it (an assertion used at one is refused at the other).
 */
describe.each(STORE_KINDS)('pushed authorization requests with private_key_jwt (%s store)', (kind) => {
  const store = useStore(kind);
  let a: RunningServer;
  let b: RunningServer;
  let privateKey: CryptoKey;
  let app: string;
  let basicApp: { clientId: string; clientSecret: string };

  beforeAll(async () => {
    const keys = await generateKeyPair('ES256', { extractable: true });
    privateKey = keys.privateKey;
    const jwk = { ...(await exportJWK(keys.publicKey)), kid: 'p1', alg: 'ES256' } as ClientJwk;
    // Refused assertions count against their client (test/limits/client-assertion-auth.test.ts):
    // this suite refuses many of one app's, so its limit is set out of the way.
    const rateLimits = { authorize: false as const, failedClientAuth: { perClient: { max: 1000, windowSeconds: 60 }, perAddress: { max: 1000, windowSeconds: 60 } } };
    const shared = { store: store.option(), cookieKeys: ['p'.repeat(32)], accounts: testAccounts([alice]), rateLimits };
    a = await startServer(shared);
    b = kind === 'redis' ? await startServer({ ...shared, baseUrl: a.baseUrl }) : a;
    app = (await a.auth.appRegistrations.create({
      name: 'Payroll', redirectUris: [WEB], clientType: 'confidential', tokenEndpointAuthMethod: 'private_key_jwt', jwks: { keys: [jwk] },
    })).clientId;
    const created = await a.auth.appRegistrations.create({ name: 'HR Portal', redirectUris: [WEB], clientType: 'confidential' });
    basicApp = { clientId: created.clientId, clientSecret: created.clientSecret! };
  });
  afterAll(async () => {
    if (b !== a) await b.stop();
    await a.stop();
  });

  /** An assertion as a client library makes one, with `change` to break one rule. */
  async function assertion(change: { sub?: string; aud?: string | string[]; exp?: number; jti?: string; signWith?: CryptoKey } = {}): Promise<string> {
    const now = Math.floor(Date.now() / 1000);
    return new SignJWT({})
      .setProtectedHeader({ alg: 'ES256', kid: 'p1' })
      .setIssuer(change.sub ?? app)
      .setSubject(change.sub ?? app)
      .setAudience(change.aud ?? a.auth.issuer)
      .setIssuedAt(now)
      .setExpirationTime(change.exp ?? now + 60)
      .setJti(change.jti ?? randomUUID())
      .sign(change.signWith ?? privateKey);
  }

  function request(challenge: string, state = 'st-pk'): Record<string, string> {
    return {
      response_type: 'code', client_id: app, redirect_uri: WEB, scope: 'openid scim.read', state,
      code_challenge: challenge, code_challenge_method: 'S256',
    };
  }

  async function push(server: RunningServer, params: Record<string, string>, headers: Record<string, string> = {}) {
    const response = await fetch(`${server.oauthUrl}/par`, {
      method: 'POST',
      headers: { 'content-type': 'application/x-www-form-urlencoded', ...headers },
      body: new URLSearchParams(params).toString(),
    });
    return { status: response.status, body: (await response.json()) as Record<string, unknown> };
  }

  const withAssertion = async (params: Record<string, string>, jwt?: string) =>
    ({ ...params, client_assertion_type: JWT_BEARER_ASSERTION, client_assertion: jwt ?? await assertion() });

  /** The browser at /authorize with the request by reference, through login and consent. */
  async function signIn(requestUri: string): Promise<Step> {
    const agent = new UserAgent(a.baseUrl);
    let step = await agent.request(`${a.oauthUrl}/authorize?${new URLSearchParams({ client_id: app, request_uri: requestUri })}`);
    if (step.html.includes('name="password"')) step = await agent.submit(step, { username: alice.sub, password: alice.password });
    if (step.html.includes('value="allow"')) step = await agent.submit(step, { decision: 'allow' });
    return step;
  }

  it('oauth4webapi: pushedAuthorizationRequest with PrivateKeyJwt; sign-in and consent; the code exchanged with the library', async () => {
    const issuer = new URL(a.oauthUrl);
    const as = await oauth.processDiscoveryResponse(issuer, await oauth.discoveryRequest(issuer, insecure));
    const meta = { client_id: app };
    const auth = oauth.PrivateKeyJwt({ key: privateKey, kid: 'p1' });
    const verifier = oauth.generateRandomCodeVerifier();
    const pushed = await oauth.processPushedAuthorizationResponse(as, meta, await oauth.pushedAuthorizationRequest(as, meta, auth, {
      response_type: 'code', redirect_uri: WEB, scope: 'openid scim.read', state: 'st-lib',
      code_challenge: await oauth.calculatePKCECodeChallenge(verifier), code_challenge_method: 'S256',
    }, insecure));
    expect(pushed.request_uri).toMatch(/^urn:ietf:params:oauth:request_uri:/);
    const params = oauth.validateAuthResponse(as, meta, new URL((await signIn(pushed.request_uri)).location!), 'st-lib');
    const tokens = await oauth.processAuthorizationCodeResponse(as, meta,
      await oauth.authorizationCodeGrantRequest(as, meta, auth, params, WEB, verifier, insecure), { requireIdToken: true });
    expect(tokens.access_token).toEqual(expect.any(String));
    expect(tokens.refresh_token).toEqual(expect.any(String));
  });

  it('openid-client: buildAuthorizationUrlWithPAR with PrivateKeyJwt; sign-in and consent; the code exchanged with the library', async () => {
    const config = await client.discovery(new URL(a.oauthUrl), app, undefined, client.PrivateKeyJwt({ key: privateKey, kid: 'p1' }), {
      execute: [client.allowInsecureRequests],
    });
    const verifier = client.randomPKCECodeVerifier();
    const url = await client.buildAuthorizationUrlWithPAR(config, {
      redirect_uri: WEB, scope: 'openid scim.read', state: 'st-oc',
      code_challenge: await client.calculatePKCECodeChallenge(verifier), code_challenge_method: 'S256',
    });
    expect([...url.searchParams.keys()].sort()).toEqual(['client_id', 'request_uri']);
    const back = await signIn(url.searchParams.get('request_uri')!);
    const tokens = await client.authorizationCodeGrant(config, new URL(back.location!), { pkceCodeVerifier: verifier, expectedState: 'st-oc' });
    expect(tokens.access_token).toEqual(expect.any(String));
    expect(tokens.claims()?.sub).toBe(alice.sub);
  });

  it('the issuer, the token endpoint and the push endpoint are each an accepted audience (RFC 9126 §2); on Redis, at the other instance too', async () => {
    for (const server of new Set([a, b])) {
      // Our public endpoint URLs, whichever instance is asked (every instance has the same public
      // origin; the second one's own socket is not it).
      for (const aud of [a.auth.issuer, `${a.auth.issuer}/token`, `${a.auth.issuer}/par`]) {
        const pushed = await push(server, await withAssertion(request(pkcePair().challenge), await assertion({ aud })));
        expect({ aud, status: pushed.status }).toEqual({ aud, status: 201 });
      }
    }
  });

  it('an assertion is good once: replayed at the push (either instance) or at the token endpoint, it is refused', async () => {
    const jwt = await assertion();
    expect((await push(a, await withAssertion(request(pkcePair().challenge), jwt))).status).toBe(201);
    for (const server of [a, b]) {
      const replayed = await push(server, await withAssertion(request(pkcePair().challenge), jwt));
      expect(replayed).toEqual({ status: 401, body: expect.objectContaining({ error: 'invalid_client' }) });
    }
    const atToken = await postToken(b.oauthUrl, { grant_type: 'authorization_code', code: 'x', redirect_uri: WEB, code_verifier: 'v'.repeat(43), client_assertion_type: JWT_BEARER_ASSERTION, client_assertion: jwt });
    expect(atToken.status).toBe(401);
    expect(atToken.body.error).toBe('invalid_client');
  });

  it.each([
    ['another audience', () => ({ aud: 'https://elsewhere.example' })],
    ['the authorization endpoint as its audience', () => ({ aud: `${a.oauthUrl}/authorize` })],
    ['an expired assertion', () => ({ exp: Math.floor(Date.now() / 1000) - 120 })],
    ['an assertion living longer than 300 seconds', () => ({ exp: Math.floor(Date.now() / 1000) + 3600 })],
  ])('refuses %s (401 invalid_client)', async (_name, change) => {
    const jwt = await assertion(change());
    expect(await push(a, await withAssertion(request(pkcePair().challenge), jwt))).toEqual({ status: 401, body: expect.objectContaining({ error: 'invalid_client' }) });
  });

  it('refuses a key the app did not register, and an assertion naming a Basic app (401 invalid_client)', async () => {
    const stranger = await generateKeyPair('ES256');
    expect((await push(a, await withAssertion(request(pkcePair().challenge), await assertion({ signWith: stranger.privateKey })))).status).toBe(401);
    const basicClaim = await push(a, await withAssertion({ ...request(pkcePair().challenge), client_id: basicApp.clientId }, await assertion({ sub: basicApp.clientId })));
    expect(basicClaim).toEqual({ status: 401, body: expect.objectContaining({ error: 'invalid_client' }) });
  });

  it('the app without any authentication, or with Basic (it has no secret), is 401 invalid_client', async () => {
    expect((await push(a, request(pkcePair().challenge))).status).toBe(401);
    const withBasic = await push(a, request(pkcePair().challenge), { authorization: basic(app, 'no-secret-of-it') });
    expect(withBasic).toEqual({ status: 401, body: expect.objectContaining({ error: 'invalid_client' }) });
  });

  it.each([
    ['Basic and an assertion at once', 'basic'],
    ['an assertion without its type', 'no-type'],
    ['another assertion type', 'saml'],
    ['a client_id other than the assertion subject', 'other-id'],
  ] as const)('refuses %s (400 invalid_request)', async (_name, breakIt) => {
    const body: Record<string, string> = await withAssertion(request(pkcePair().challenge));
    let headers: Record<string, string> = {};
    if (breakIt === 'basic') headers = { authorization: basic(basicApp.clientId, basicApp.clientSecret) };
    if (breakIt === 'no-type') delete body.client_assertion_type;
    if (breakIt === 'saml') body.client_assertion_type = 'urn:ietf:params:oauth:client-assertion-type:saml2-bearer';
    if (breakIt === 'other-id') body.client_id = basicApp.clientId;
    const answer = await push(a, body, headers);
    expect({ status: answer.status, error: answer.body.error }).toEqual({ status: 400, error: 'invalid_request' });
  });
});
