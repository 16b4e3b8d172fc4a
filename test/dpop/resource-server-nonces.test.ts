import { createHash, randomUUID } from 'node:crypto';
import * as oauth from 'oauth4webapi';
import { exportJWK, generateKeyPair, SignJWT, type JWK } from 'jose';
import * as light from '../../src/resource-server/index.js';
import * as full from '../../src/index.js';
import { DpopNonces } from '../../src/resource-server/dpop.js';
import { payslipApis, type PayslipsApi } from '../support/payslips-api.js';
import { basic, postToken, startServer, type RunningServer } from '../support/server.js';

const SECRET = 'a shared nonce secret of the payslip API instances';
const insecure = { [oauth.allowInsecureRequests]: true } as const;
const ath = (token: string) => createHash('sha256').update(token).digest('base64url');

type Kit = typeof light;
/** The payslip API in Koa and in Express, with a verifier of `kit` (the light or the full entry). */
const apisOf = (kit: Kit, verifierOf: () => light.TokenVerifier, label: string): Promise<PayslipsApi[]> => payslipApis(verifierOf, kit, (framework) => `${framework} (${label})`);

/**
 * Server nonces of the resource-server kit (RFC 9449 §9; option `dpop.nonce`,
 * src/resource-server/dpop.ts DpopNonces): a proof without the API's current nonce is answered 401
 * use_dpop_nonce with a DPoP-Nonce; a proof with it is accepted; nonces are stateless (an HMAC of
 * the time window), so instances sharing the secret accept each other's. oauth4webapi's
 * protectedResourceRequest through the round trip; stale and foreign nonces refused. Koa and
 * Express, from the light entry (talent-auth/resource-server) and the full one (talent-auth).
 */
describe('resource-server kit: DPoP server nonces', () => {
  let server: RunningServer;
  let machine: { clientId: string; clientSecret: string };
  const apis: PayslipsApi[] = [];
  const options = () => ({ issuer: server.auth.issuer, audience: server.auth.audience, jwks: new URL(`${server.oauthUrl}/jwks`) });

  beforeAll(async () => {
    server = await startServer();
    machine = await server.auth.clientConfigurations.create({ tenant: 'acme', name: 'Payroll', category: 'hr', resources: { scim: { scopes: ['scim.read'] } } });
    // Each middleware has a verifier of its own: two instances of one API, sharing only the secret.
    apis.push(
      ...await apisOf(light, () => light.createTokenVerifier({ ...options(), dpop: { nonce: { secret: SECRET } } }), 'light entry'),
      ...await apisOf(full, () => full.createTokenVerifier({ ...options(), dpop: { nonce: { secret: SECRET } } }), 'full entry'),
    );
  });
  afterAll(async () => {
    await Promise.all(apis.map((api) => api.close()));
    await server.stop();
  });

  /** A token bound to a new key of a client (its proof at the token endpoint made by hand). */
  async function tokenAndKey() {
    const { privateKey, publicKey } = await generateKeyPair('ES256', { extractable: true });
    const jwk: JWK = await exportJWK(publicKey);
    const tokenProof = await new SignJWT({ htm: 'POST', htu: `${server.oauthUrl}/token`, jti: randomUUID() })
      .setProtectedHeader({ alg: 'ES256', typ: 'dpop+jwt', jwk }).setIssuedAt().sign(privateKey);
    const answer = await postToken(server.oauthUrl, 'grant_type=client_credentials', { authorization: basic(machine.clientId, machine.clientSecret), dpop: tokenProof });
    expect(answer.body.token_type).toBe('DPoP');
    const token = answer.body.access_token as string;
    const proof = (url: string, nonce?: string) => new SignJWT({ htm: 'GET', htu: url, jti: randomUUID(), ath: ath(token), ...(nonce === undefined ? {} : { nonce }) })
      .setProtectedHeader({ alg: 'ES256', typ: 'dpop+jwt', jwk }).setIssuedAt().sign(privateKey);
    return { token, proof };
  }

  const get = (url: string, token: string, proof: string) => fetch(url, { headers: { authorization: `DPoP ${token}`, dpop: proof } });

  async function expectNonceRefusal(response: Response, description: RegExp): Promise<string> {
    expect(response.status).toBe(401);
    expect(response.headers.get('www-authenticate')).toMatch(/^DPoP realm="[^"]+", error="use_dpop_nonce", error_description="[^"]+", algs="ES256 EdDSA Ed25519 RS256 PS256"$/);
    expect(response.headers.get('cache-control')).toBe('no-store');
    const nonce = response.headers.get('dpop-nonce');
    expect(nonce).toMatch(/^[A-Za-z0-9_-]{43}$/);
    expect(await response.json()).toEqual({ error: 'use_dpop_nonce', error_description: expect.stringMatching(description) });
    return nonce!;
  }

  it.each(['Koa (light entry)', 'Express (light entry)', 'Koa (full entry)', 'Express (full entry)'])('%s: oauth4webapi goes through use_dpop_nonce and is then served', async (name) => {
    const api = apis.find((each) => each.name === name)!;
    const issuer = new URL(server.oauthUrl);
    const as = await oauth.processDiscoveryResponse(issuer, await oauth.discoveryRequest(issuer, insecure));
    const DPoP = oauth.DPoP({}, await oauth.generateKeyPair('ES256'));
    const tokens = await oauth.processClientCredentialsResponse(as, { client_id: machine.clientId },
      await oauth.clientCredentialsGrantRequest(as, { client_id: machine.clientId }, oauth.ClientSecretBasic(machine.clientSecret), new URLSearchParams(), { ...insecure, DPoP }));
    const call = () => oauth.protectedResourceRequest(tokens.access_token, 'GET', new URL(api.url), undefined, undefined, { ...insecure, DPoP });
    let challenged = 0;
    const response = await call().catch((error: unknown) => {
      // The library keeps the DPoP-Nonce of the refusal; the application retries once.
      if (!oauth.isDPoPNonceError(error)) throw error;
      challenged += 1;
      return call();
    });
    expect(challenged).toBe(1);
    expect(response.status).toBe(200);
    expect(await response.json()).toEqual({ sub: machine.clientId });
    expect(response.headers.get('dpop-nonce')).toMatch(/^[A-Za-z0-9_-]{43}$/);
    // The nonce kept, the next call goes through at once.
    expect((await call()).status).toBe(200);
  });

  it.each(['Koa (light entry)', 'Express (full entry)'])('%s: a proof without a nonce, with one never given, or a stale one, is 401 use_dpop_nonce with the current nonce', async (name) => {
    const api = apis.find((each) => each.name === name)!;
    const { token, proof } = await tokenAndKey();
    const current = await expectNonceRefusal(await get(api.url, token, await proof(api.url)), /nonce is required/);
    await expectNonceRefusal(await get(api.url, token, await proof(api.url, 'made-up-nonce')), /not current/);
    // A nonce of this API's secret, from three windows (15 minutes) ago.
    const stale = new DpopNonces(server.auth.audience, { secret: SECRET }).current(Date.now() - 15 * 60_000);
    expect(stale).not.toBe(current);
    await expectNonceRefusal(await get(api.url, token, await proof(api.url, stale)), /not current/);
    const served = await get(api.url, token, await proof(api.url, current));
    expect(served.status).toBe(200);
  });

  it('instances sharing the secret accept each other\'s nonces; a verifier with a secret of its own (nonce: true) refuses them', async () => {
    const [koaLight, expressLight, koaFull] = apis;
    const { token, proof } = await tokenAndKey();
    const nonce = await expectNonceRefusal(await get(koaLight!.url, token, await proof(koaLight!.url)), /required/);
    // The other instances (other verifier objects, the same secret): served with the first one's nonce.
    for (const api of [expressLight!, koaFull!]) expect((await get(api.url, token, await proof(api.url, nonce))).status).toBe(200);
    const own = light.createTokenVerifier({ ...options(), dpop: { nonce: true } });
    const url = 'http://api.example/payslips';
    const foreign = own.verifyRequest({ authorization: `DPoP ${token}`, dpop: await proof(url, nonce), method: 'GET', url });
    await expect(foreign).rejects.toMatchObject({ status: 401, error: 'use_dpop_nonce', nonce: own.dpopNonce!() });
    await expect(own.verifyRequest({ authorization: `DPoP ${token}`, dpop: await proof(url, own.dpopNonce!()), method: 'GET', url })).resolves.toMatchObject({ sub: machine.clientId });
  });

  it('a nonce works in its window and the windows beside it, not after', () => {
    const nonces = new DpopNonces('realm', { secret: SECRET, windowSeconds: 60 });
    const t = Date.UTC(2026, 0, 1, 12, 0, 30);
    const nonce = nonces.current(t);
    expect(nonces.accepts(nonce, t)).toBe(true);
    expect(nonces.accepts(nonce, t + 60_000)).toBe(true);
    expect(nonces.accepts(nonce, t - 60_000)).toBe(true);
    expect(nonces.accepts(nonce, t + 120_000)).toBe(false);
    expect(nonces.current(t + 60_000)).not.toBe(nonce);
    // Another realm (another API with the same secret) has other nonces.
    expect(new DpopNonces('other realm', { secret: SECRET, windowSeconds: 60 }).accepts(nonce, t)).toBe(false);
    expect(nonces.accepts(undefined, t)).toBe(false);
    expect(nonces.accepts(12, t)).toBe(false);
  });

  it('without nonce, the verifier hands none out and takes proofs without one', async () => {
    const plain = light.createTokenVerifier({ ...options(), dpop: true });
    expect(plain.dpopNonce!()).toBeUndefined();
    const { token, proof } = await tokenAndKey();
    const url = 'http://api.example/payslips';
    await expect(plain.verifyRequest({ authorization: `DPoP ${token}`, dpop: await proof(url), method: 'GET', url })).resolves.toMatchObject({ sub: machine.clientId });
  });

  it.each([
    ['a secret shorter than 32 characters', { secret: 'short' }],
    ['a window under 10 seconds', { windowSeconds: 5 }],
    ['a window over an hour', { windowSeconds: 7200 }],
    ['a window that is not whole seconds', { windowSeconds: 30.5 }],
  ])('refuses %s at creation (TypeError)', (_name, nonce) => {
    expect(() => light.createTokenVerifier({ issuer: 'https://auth.example/oauth2', audience: 'https://auth.example/api', jwks: { keys: [] }, dpop: { nonce } })).toThrow(TypeError);
  });
});
