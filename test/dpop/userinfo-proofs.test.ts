import { createHash, randomUUID } from 'node:crypto';
import * as oauth from 'oauth4webapi';
import { exportJWK, SignJWT } from 'jose';
import { alice, testAccounts } from '../support/accounts.js';
import { startServer, type RunningServer } from '../support/server.js';
import { signInForCode } from '../support/sign-in.js';
import { STORE_KINDS, useStore } from '../support/stores.js';

const WEB = 'https://app.example.com/cb';
const insecure = { [oauth.allowInsecureRequests]: true } as const;
const ath = (token: string) => createHash('sha256').update(token).digest('base64url');

/**
 * USERINFO WITH A DPOP-BOUND TOKEN, the proofs the token endpoint's tests do not try there: the
 * code exchange and a good userinfo call by oauth4webapi (its key, its proofs), then proofs made by
 * hand with the same key for another URL (htu, the query aside), another method (htm), an iat out
 * of the five-minute window either way, no ath, another token's ath, no jti: each 401
 * invalid_dpop_proof with a DPoP challenge, on both stores.
 */
describe.each(STORE_KINDS)('userinfo: DPoP proofs refused (%s store)', (kind) => {
  const store = useStore(kind);
  let server: RunningServer;
  let keyPair: Awaited<ReturnType<typeof oauth.generateKeyPair>>;
  let token: string;
  let other: string;
  let url: string;

  beforeAll(async () => {
    server = await startServer({ store: store.option(), accounts: testAccounts([alice]) });
    url = `${server.oauthUrl}/userinfo`;
    const app = await server.auth.appRegistrations.create({ name: 'Web', redirectUris: [WEB], clientType: 'confidential' });
    const issuer = new URL(server.oauthUrl);
    const as = await oauth.processDiscoveryResponse(issuer, await oauth.discoveryRequest(issuer, insecure));
    keyPair = await oauth.generateKeyPair('ES256');
    const DPoP = oauth.DPoP({}, keyPair);
    const client = { client_id: app.clientId };
    const exchange = async () => {
      const { code, verifier } = await signInForCode(server, { clientId: app.clientId, redirectUri: WEB }, alice, 'openid scim.read');
      const params = oauth.validateAuthResponse(as, client, new URLSearchParams({ code, iss: server.auth.issuer }), oauth.expectNoState);
      const response = await oauth.authorizationCodeGrantRequest(as, client, oauth.ClientSecretBasic(app.clientSecret!), params, WEB, verifier, { ...insecure, DPoP });
      return oauth.processAuthorizationCodeResponse(as, client, response);
    };
    const tokens = await exchange();
    token = tokens.access_token;
    other = (await exchange()).access_token;
    const info = await oauth.userInfoRequest(as, client, token, { ...insecure, DPoP });
    expect(await oauth.processUserInfoResponse(as, client, oauth.getValidatedIdTokenClaims(tokens)!.sub, info)).toMatchObject({ sub: alice.sub });
  });
  afterAll(() => server.stop());

  async function proof(change: Record<string, unknown>): Promise<string> {
    const jwk = await exportJWK(keyPair.publicKey);
    const claims: Record<string, unknown> = { htm: 'GET', htu: url, jti: randomUUID(), ath: ath(token), iat: Math.floor(Date.now() / 1000), ...change };
    for (const [name, value] of Object.entries(claims)) if (value === undefined) delete claims[name];
    return new SignJWT(claims).setProtectedHeader({ alg: 'ES256', typ: 'dpop+jwt', jwk }).sign(keyPair.privateKey);
  }

  it('a hand-made proof with the same key and nothing wrong works (the cases below differ in one claim)', async () => {
    const answer = await fetch(`${url}?unused=1`, { headers: { authorization: `DPoP ${token}`, dpop: await proof({}) } });
    expect(answer.status).toBe(200);
  });

  it.each<[string, () => Record<string, unknown>, RegExp]>([
    ['another URL (htu)', () => ({ htu: `${server.oauthUrl}/userinfo/other` }), /htu/],
    ['another host (htu)', () => ({ htu: url.replace('127.0.0.1', 'localhost') }), /htu/],
    ['another method (htm POST for a GET)', () => ({ htm: 'POST' }), /htm/],
    ['an iat ten minutes old (expired)', () => ({ iat: Math.floor(Date.now() / 1000) - 600 }), /iat/],
    ['an iat ten minutes ahead', () => ({ iat: Math.floor(Date.now() / 1000) + 600 }), /iat/],
    ['no iat', () => ({ iat: undefined }), /iat/],
    ['no ath', () => ({ ath: undefined }), /ath/],
    ["another token's ath", () => ({ ath: ath(other) }), /ath/],
    ['no jti', () => ({ jti: undefined }), /jti/],
  ])('a proof with %s: 401 invalid_dpop_proof with a DPoP challenge', async (_name, change, description) => {
    const answer = await fetch(url, { headers: { authorization: `DPoP ${token}`, dpop: await proof(change()) } });
    expect(answer.status).toBe(401);
    expect(answer.headers.get('www-authenticate')).toMatch(/^DPoP realm="[^"]+", error="invalid_dpop_proof".*algs="ES256 EdDSA Ed25519 RS256 PS256"$/);
    const body = (await answer.json()) as { error: string; error_description: string };
    expect(body.error).toBe('invalid_dpop_proof');
    expect(body.error_description).toMatch(description);
  });
});
