import { randomUUID, createHash } from 'node:crypto';
import express from 'express';
import * as oauth from 'oauth4webapi';
import { calculateJwkThumbprint, exportJWK, generateKeyPair, SignJWT, type CryptoKey, type JWK } from 'jose';
import { jest } from '@jest/globals';
import { createTokenVerifier, expressAuthenticate, type TokenVerifier } from '../../src/resource-server/index.js';
import { InvalidDpopProof } from '../../policies/errors.js';
import { DpopNonces, DpopProofs } from '../../src/resource-server/dpop.js';
import { payslipApis, servePayslips, type PayslipsApi } from '../support/payslips-api.js';
import { basic, postToken, startServer, type RunningServer } from '../support/server.js';

/** A client's DPoP key, and proofs made with it by hand. */
async function dpopKey() {
  const { privateKey, publicKey } = await generateKeyPair('ES256', { extractable: true });
  const jwk: JWK = await exportJWK(publicKey);
  return {
    privateKey,
    jwk,
    async proof(claims: { htm?: string; htu: string; iat?: number; jti?: string; ath?: string }, key: CryptoKey = privateKey) {
      const { iat = Math.floor(Date.now() / 1000), jti = randomUUID(), htm = 'GET', ...rest } = claims;
      return new SignJWT({ htm, jti, ...rest }).setProtectedHeader({ alg: 'ES256', typ: 'dpop+jwt', jwk }).setIssuedAt(iat).sign(key);
    },
  };
}

const ath = (token: string) => createHash('sha256').update(token).digest('base64url');

/**
 * The resource-server kit with `dpop: true` (src/resource-server/dpop.ts): DPoP-bound tokens of the
 * real authorization server accepted with their proofs, every wrong proof refused with a DPoP
 * challenge, a bound token presented as Bearer refused; in Koa and in Express over real sockets.
 */
describe('resource-server kit: DPoP-bound tokens', () => {
  let server: RunningServer;
  let machine: { clientId: string; clientSecret: string };
  let verifier: TokenVerifier;
  const apis: PayslipsApi[] = [];

  beforeAll(async () => {
    server = await startServer();
    machine = await server.auth.clientConfigurations.create({ tenant: 'acme', name: 'Payroll', category: 'hr', resources: { scim: { scopes: ['scim.read'] } } });
    verifier = createTokenVerifier({ issuer: server.auth.issuer, audience: server.auth.audience, jwks: new URL(`${server.oauthUrl}/jwks`), dpop: true });
    apis.push(...await payslipApis(() => verifier));
  });
  afterAll(async () => {
    await Promise.all(apis.map((api) => api.close()));
    await server.stop();
  });

  /** A token of the authorization server bound to `key` (a proof at the token endpoint). */
  async function boundToken(key: Awaited<ReturnType<typeof dpopKey>>): Promise<string> {
    const proof = await key.proof({ htm: 'POST', htu: `${server.oauthUrl}/token` });
    const answer = await postToken(server.oauthUrl, 'grant_type=client_credentials', { authorization: basic(machine.clientId, machine.clientSecret), dpop: proof });
    expect(answer.body.token_type).toBe('DPoP');
    return answer.body.access_token as string;
  }

  const call = (url: string, headers: Record<string, string>, method = 'GET') => fetch(url, { method, headers });

  it.each(['Koa', 'Express'])('%s: oauth4webapi calls the API with its DPoP-bound token', async (name) => {
    const api = apis.find((each) => each.name === name)!;
    const issuer = new URL(server.oauthUrl);
    const as = await oauth.processDiscoveryResponse(issuer, await oauth.discoveryRequest(issuer, { [oauth.allowInsecureRequests]: true }));
    const DPoP = oauth.DPoP({}, await oauth.generateKeyPair('ES256'));
    const grant = () => oauth.clientCredentialsGrantRequest(as, { client_id: machine.clientId }, oauth.ClientSecretBasic(machine.clientSecret), new URLSearchParams(), { [oauth.allowInsecureRequests]: true, DPoP });
    const tokens = await oauth.processClientCredentialsResponse(as, { client_id: machine.clientId }, await grant());
    const response = await oauth.protectedResourceRequest(tokens.access_token, 'GET', new URL(api.url), undefined, undefined, { [oauth.allowInsecureRequests]: true, DPoP });
    expect(response.status).toBe(200);
    expect(await response.json()).toEqual({ sub: machine.clientId });
  });

  describe.each(['Koa', 'Express'])('%s refuses', (name) => {
    const api = () => apis.find((each) => each.name === name)!;

    async function refused(headers: Record<string, string>, description: RegExp, method = 'GET') {
      const response = await call(api().url, headers, method);
      expect(response.status).toBe(401);
      const challenge = response.headers.get('www-authenticate') ?? '';
      expect(challenge).toMatch(/^DPoP realm="[^"]+", error="invalid_(dpop_proof|token)"/);
      expect(challenge).toContain('algs="ES256 EdDSA Ed25519 RS256 PS256"');
      expect(((await response.json()) as { error_description: string }).error_description).toMatch(description);
    }

    it('a replayed proof (the same proof twice)', async () => {
      const key = await dpopKey();
      const token = await boundToken(key);
      const headers = { authorization: `DPoP ${token}`, dpop: await key.proof({ htu: api().url, ath: ath(token) }) };
      expect((await call(api().url, headers)).status).toBe(200);
      await refused(headers, /used before/);
    });

    it('a proof for another method (htm) or another URL (htu)', async () => {
      const key = await dpopKey();
      const token = await boundToken(key);
      await refused({ authorization: `DPoP ${token}`, dpop: await key.proof({ htm: 'POST', htu: api().url, ath: ath(token) }) }, /htm/);
      await refused({ authorization: `DPoP ${token}`, dpop: await key.proof({ htu: `${api().url}/other`, ath: ath(token) }) }, /htu/);
      // The query is not part of htu (RFC 9449 §4.3).
      expect((await call(`${api().url}?page=2`, { authorization: `DPoP ${token}`, dpop: await key.proof({ htu: api().url, ath: ath(token) }) })).status).toBe(200);
    });

    it('an expired proof (iat ten minutes ago) and one from the future', async () => {
      const key = await dpopKey();
      const token = await boundToken(key);
      const now = Math.floor(Date.now() / 1000);
      await refused({ authorization: `DPoP ${token}`, dpop: await key.proof({ htu: api().url, ath: ath(token), iat: now - 600 }) }, /iat/);
      await refused({ authorization: `DPoP ${token}`, dpop: await key.proof({ htu: api().url, ath: ath(token), iat: now + 600 }) }, /iat/);
    });

    it('a proof for another token (ath), and a proof without ath', async () => {
      const key = await dpopKey();
      const token = await boundToken(key);
      const other = await boundToken(key);
      await refused({ authorization: `DPoP ${token}`, dpop: await key.proof({ htu: api().url, ath: ath(other) }) }, /ath/);
      await refused({ authorization: `DPoP ${token}`, dpop: await key.proof({ htu: api().url }) }, /ath/);
    });

    it('a proof by another key than the token is bound to (a thief with the token and a key of her own)', async () => {
      const owner = await dpopKey();
      const thief = await dpopKey();
      const token = await boundToken(owner);
      await refused({ authorization: `DPoP ${token}`, dpop: await thief.proof({ htu: api().url, ath: ath(token) }) }, /another key/);
    });

    it('a bound token without a proof, or with a proof that is no JWT, or two proofs', async () => {
      const key = await dpopKey();
      const token = await boundToken(key);
      await refused({ authorization: `DPoP ${token}` }, /proof is required/);
      await refused({ authorization: `DPoP ${token}`, dpop: 'not-a-jwt' }, /not a JWT/);
      const proof = await key.proof({ htu: api().url, ath: ath(token) });
      await refused({ authorization: `DPoP ${token}`, dpop: `${proof}, ${proof}` }, /proof is required/);
    });

    it('a bound token presented as Bearer; a Bearer token presented as DPoP', async () => {
      const key = await dpopKey();
      const token = await boundToken(key);
      const asBearer = await call(api().url, { authorization: `Bearer ${token}` });
      expect(asBearer.status).toBe(401);
      expect(asBearer.headers.get('www-authenticate')).toMatch(/^Bearer realm="[^"]+", error="invalid_token".*, DPoP realm="[^"]+", algs="ES256 EdDSA Ed25519 RS256 PS256"$/);
      expect(((await asBearer.json()) as { error_description: string }).error_description).toMatch(/bound to a DPoP key/);
      const bearer = (await postToken(server.oauthUrl, 'grant_type=client_credentials', { authorization: basic(machine.clientId, machine.clientSecret) })).body.access_token as string;
      expect((await call(api().url, { authorization: `Bearer ${bearer}` })).status).toBe(200);
      await refused({ authorization: `DPoP ${bearer}`, dpop: await key.proof({ htu: api().url, ath: ath(bearer) }) }, /not bound/);
    });
  });

  it('without the dpop option, a bound token is refused in both forms, and Bearer tokens work as before', async () => {
    const plain = createTokenVerifier({ issuer: server.auth.issuer, audience: server.auth.audience, jwks: new URL(`${server.oauthUrl}/jwks`) });
    const key = await dpopKey();
    const token = await boundToken(key);
    const url = 'http://api.example/payslips';
    await expect(plain.verifyRequest({ authorization: `Bearer ${token}`, dpop: undefined, method: 'GET', url })).rejects.toMatchObject({ status: 401, error: 'invalid_token' });
    await expect(plain.verifyRequest({ authorization: `DPoP ${token}`, dpop: await key.proof({ htu: url, ath: ath(token) }), method: 'GET', url })).rejects.toMatchObject({ status: 400, error: 'invalid_request' });
    await expect(plain.verifyAuthorization(`Bearer ${token}`)).rejects.toMatchObject({ status: 401, error: 'invalid_token' });
    // Introspection-style checks of the token alone still read it.
    await expect(plain.verify(token)).resolves.toMatchObject({ sub: machine.clientId });
  });

  it('keeps at most maxProofs proof identifiers: when all are in their window, a new proof is refused, none forgotten; expired ones make room', async () => {
    const small = createTokenVerifier({ issuer: server.auth.issuer, audience: server.auth.audience, jwks: new URL(`${server.oauthUrl}/jwks`), dpop: { maxProofs: 2 } });
    const key = await dpopKey();
    const token = await boundToken(key);
    const url = 'http://api.example/payslips';
    const proofs = await Promise.all([1, 2, 3].map(() => key.proof({ htu: url, ath: ath(token) })));
    const use = (proof: string) => small.verifyRequest({ authorization: `DPoP ${token}`, dpop: proof, method: 'GET', url });
    await use(proofs[0]!);
    await use(proofs[1]!);
    // Full of proofs still in their window: the third is refused, and the first two stay known.
    await expect(use(proofs[2]!)).rejects.toMatchObject({ error: 'invalid_dpop_proof', description: expect.stringContaining('too many DPoP proofs') });
    await expect(use(proofs[0]!)).rejects.toMatchObject({ error: 'invalid_dpop_proof', description: 'the DPoP proof was used before' });
    await expect(use(proofs[1]!)).rejects.toMatchObject({ error: 'invalid_dpop_proof', description: 'the DPoP proof was used before' });
    // Proofs made ten minutes ago, used then, are out of their window now: they make room.
    const realNow = Date.now;
    const tenMinutes = 10 * 60 * 1000;
    const fresh = await key.proof({ htu: url, ath: ath(token) });
    Date.now = () => realNow() + tenMinutes;
    try {
      const later = await key.proof({ htu: url, ath: ath(token), iat: Math.floor(Date.now() / 1000) });
      await expect(use(later)).resolves.toMatchObject({ sub: machine.clientId });
      await expect(use(fresh)).rejects.toMatchObject({ error: 'invalid_dpop_proof' });
    } finally {
      Date.now = realNow;
    }
  });

  it('dpop.origin: the proof is checked against the API\'s public origin and the request\'s path, whatever Host says', async () => {
    const behindProxy = createTokenVerifier({ issuer: server.auth.issuer, audience: server.auth.audience, jwks: new URL(`${server.oauthUrl}/jwks`), dpop: { origin: 'https://api.example' } });
    const key = await dpopKey();
    const token = await boundToken(key);
    const use = async (htu: string, url: string) => behindProxy.verifyRequest({ authorization: `DPoP ${token}`, dpop: await key.proof({ htu, ath: ath(token) }), method: 'GET', url });
    // The proxy rewrote Host: the framework reads the inner URL; the client called the public one.
    await expect(use('https://api.example/payslips', 'http://10.0.0.7:8080/payslips?page=2')).resolves.toMatchObject({ sub: machine.clientId });
    // A proof for another host, sent with that host in Host, is refused.
    await expect(use('https://evil.example/payslips', 'https://evil.example/payslips')).rejects.toMatchObject({ error: 'invalid_dpop_proof' });
    await expect(use('https://api.example/other', 'http://10.0.0.7:8080/payslips')).rejects.toMatchObject({ error: 'invalid_dpop_proof' });
    for (const origin of ['api.example', 'https://api.example/base', 'ftp://api.example']) {
      expect(() => createTokenVerifier({ issuer: server.auth.issuer, audience: server.auth.audience, jwks: { keys: [] }, dpop: { origin } })).toThrow(TypeError);
    }
  });

  it('Express with trust proxy: the host the proof is checked against is X-Forwarded-Host (req.host), as the scheme is X-Forwarded-Proto', async () => {
    const app = express();
    app.set('trust proxy', true);
    app.get('/payslips', expressAuthenticate(verifier), (req, res) => { res.json({ sub: req.auth?.sub }); });
    const api = await servePayslips(app);
    try {
      const key = await dpopKey();
      const token = await boundToken(key);
      const forwarded = { 'x-forwarded-host': 'api.example', 'x-forwarded-proto': 'https' };
      const ok = await call(api.url, { authorization: `DPoP ${token}`, dpop: await key.proof({ htu: 'https://api.example/payslips', ath: ath(token) }), ...forwarded });
      expect(ok.status).toBe(200);
      const inner = await call(api.url, { authorization: `DPoP ${token}`, dpop: await key.proof({ htu: `https://${new URL(api.url).host}/payslips`, ath: ath(token) }), ...forwarded });
      expect(inner.status).toBe(401);
    } finally {
      await api.close();
    }
  });

  it.each([0, -1, 1.5, Number.NaN])('refuses dpop.maxProofs %p at creation', (maxProofs) => {
    expect(() => createTokenVerifier({ issuer: server.auth.issuer, audience: server.auth.audience, jwks: { keys: [] }, dpop: { maxProofs } })).toThrow(TypeError);
  });
});

/** DpopProofs on its own: a token whose confirmation names no JWK thumbprint is not one a proof can be for. */
describe('DpopProofs.check (src/resource-server/dpop.ts)', () => {
  it.each([
    ['a cnf without jkt (another kind of binding)', { cnf: { 'x5t#S256': 'abc' } }],
    ['a jkt that is not a string', { cnf: { jkt: 7 } }],
    ['no cnf', {}],
  ])('refuses %s, before it looks at any proof (401 invalid_dpop_proof)', async (_name, claims) => {
    const key = await dpopKey();
    const proofs = new DpopProofs('https://api.example.com', { maxProofs: 10, clockToleranceSeconds: 5 });
    const request = { proof: await key.proof({ htu: 'https://api.example.com/x' }), method: 'GET', url: 'https://api.example.com/x' };
    const failure = await proofs.check(request, 'token', claims).catch((error: unknown) => error);
    expect(failure).toBeInstanceOf(InvalidDpopProof);
    expect(failure).toMatchObject({ status: 401, error: 'invalid_dpop_proof', description: 'the access token is not bound to a DPoP key' });
  });
});

/** DpopProofs' edges (RFC 9449 §4.3, §11.1), with the clock held still: each bound exactly, and one past it. */
describe('DpopProofs.check: the edges', () => {
  const URL_ = 'https://api.example.com/x';
  const NOW = 1_900_000_000;
  const WINDOW = 300 + 5;
  let clock: ReturnType<typeof jest.spyOn>;
  let key: Awaited<ReturnType<typeof dpopKey>>;
  let claims: { cnf: { jkt: string } };
  beforeAll(async () => {
    key = await dpopKey();
    claims = { cnf: { jkt: await calculateJwkThumbprint(key.jwk) } };
  });
  const at = (seconds: number) => clock.mockReturnValue(seconds * 1000);
  beforeEach(() => {
    clock = jest.spyOn(Date, 'now');
    at(NOW);
  });
  afterEach(() => clock.mockRestore());

  const proofs = (options: Partial<ConstructorParameters<typeof DpopProofs>[1]> = {}) => new DpopProofs('https://api.example.com', { maxProofs: 10, clockToleranceSeconds: 5, ...options });
  const check = async (checker: DpopProofs, proof: Promise<string>) => checker.check({ proof: await proof, method: 'GET', url: URL_ }, 'token', claims);
  const proof = (claims: { iat?: number; jti?: string }) => key.proof({ htu: URL_, ath: ath('token'), iat: NOW, ...claims });

  it.each([
    ['a jti of 256 characters', { jti: 'j'.repeat(256) }, undefined],
    ['a jti of 257 characters', { jti: 'j'.repeat(257) }, 'the DPoP proof has no valid jti'],
    ['an empty jti', { jti: '' }, 'the DPoP proof has no valid jti'],
    ['an iat exactly the window (300 s and the 5 s tolerance) ago', { iat: NOW - WINDOW }, undefined],
    ['an iat a second older', { iat: NOW - WINDOW - 1 }, 'the DPoP proof is too old or from the future (iat)'],
    ['an iat exactly the window ahead', { iat: NOW + WINDOW }, undefined],
    ['an iat a second further ahead', { iat: NOW + WINDOW + 1 }, 'the DPoP proof is too old or from the future (iat)'],
  ])('%s: %s', async (_name, claimsOf, refusal) => {
    const checked = check(proofs(), proof(claimsOf));
    if (refusal === undefined) await expect(checked).resolves.toBeUndefined();
    else await expect(checked).rejects.toMatchObject({ error: 'invalid_dpop_proof', description: refusal });
  });

  it('a proof used is refused until its iat leaves the window, to the last second; the store it is kept in is told that second', async () => {
    const checker = proofs();
    const used = await proof({});
    await check(checker, Promise.resolve(used));
    at(NOW + WINDOW);
    await expect(check(checker, Promise.resolve(used))).rejects.toMatchObject({ description: 'the DPoP proof was used before' });
    const kept: number[] = [];
    await check(proofs({ useOnce: async (_id, until) => (kept.push(until), true) }), proof({ iat: NOW + 7 }));
    expect(kept).toEqual([NOW + 7 + WINDOW]);
  });

  it('when full, a proof whose window ends this very second is not forgotten to make room', async () => {
    const checker = proofs({ maxProofs: 1 });
    await check(checker, proof({}));
    at(NOW + WINDOW);
    await expect(check(checker, proof({ iat: NOW + WINDOW }))).rejects.toMatchObject({ description: expect.stringContaining('too many DPoP proofs') });
    at(NOW + WINDOW + 1);
    await expect(check(checker, proof({ iat: NOW + WINDOW + 1 }))).resolves.toBeUndefined();
  });

  it.each([
    [{ secret: 's'.repeat(31) }, 'dpop.nonce.secret must be a string of at least 32 characters'],
    [{ secret: 7 }, 'dpop.nonce.secret must be a string of at least 32 characters'],
    [{ windowSeconds: 9 }, 'dpop.nonce.windowSeconds must be an integer from 10 to 3600, not 9'],
    [{ windowSeconds: 3601 }, 'dpop.nonce.windowSeconds must be an integer from 10 to 3600, not 3601'],
    [{ windowSeconds: 30.5 }, 'dpop.nonce.windowSeconds must be an integer from 10 to 3600, not 30.5'],
  ])('nonces: %j is refused at creation', (options, words) => {
    expect(() => new DpopNonces('https://api.example.com', options as never)).toThrow(new TypeError(words));
  });

  it.each([{ secret: 's'.repeat(32) }, { windowSeconds: 10 }, { windowSeconds: 3600 }])('nonces: %j is taken', (options) => {
    const nonces = new DpopNonces('https://api.example.com', options);
    expect(nonces.accepts(nonces.current())).toBe(true);
  });
});

