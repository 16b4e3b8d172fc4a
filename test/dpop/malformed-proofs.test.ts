import { createHash, randomUUID } from 'node:crypto';
import { request } from 'node:http';
import { exportJWK, generateKeyPair, SignJWT, type CryptoKey, type JWK } from 'jose';
import { createTokenVerifier } from '../../src/resource-server/index.js';
import { alice, testAccounts } from '../support/accounts.js';
import { payslipApis, type PayslipsApi } from '../support/payslips-api.js';
import { basic, postToken, startServer, type RunningServer } from '../support/server.js';
import { signInForCode } from '../support/sign-in.js';
import { STORE_KINDS, useStore } from '../support/stores.js';

const WEB = 'https://app.example.com/cb';
const b64 = (value: unknown) => Buffer.from(JSON.stringify(value)).toString('base64url');
const ath = (token: string) => createHash('sha256').update(token).digest('base64url');

/** The claims of a proof for one request (`jti` chosen by the test, to see it is not used up). */
interface ProofClaims {
  htm: string;
  htu: string;
  jti: string;
  ath?: string;
}

/** A client's DPoP key, and the malformed proofs a library would never send, made by hand. */
async function dpopKey() {
  const { privateKey, publicKey } = await generateKeyPair('ES256', { extractable: true });
  const jwk: JWK = await exportJWK(publicKey);
  const privateJwk: JWK = await exportJWK(privateKey);
  const sign = (claims: ProofClaims, header: Record<string, unknown>, key: CryptoKey | Uint8Array = privateKey) =>
    new SignJWT({ ...claims }).setProtectedHeader({ alg: 'ES256', typ: 'dpop+jwt', jwk, ...header } as never).setIssuedAt().sign(key);
  const now = () => Math.floor(Date.now() / 1000);
  return {
    /** A well-formed proof. */
    good: (claims: ProofClaims) => sign(claims, {}),
    /** Each malformed proof by name: the value(s) of the DPoP header. */
    malformed: {
      'not a JWT': async () => ['not-a-jwt'],
      'three empty parts': async () => ['..'],
      'typ JWT (not dpop+jwt)': async (claims: ProofClaims) => [await sign(claims, { typ: 'JWT' })],
      'no typ': async (claims: ProofClaims) => [await sign(claims, { typ: undefined })],
      'alg none (unsigned)': async (claims: ProofClaims) => [`${b64({ alg: 'none', typ: 'dpop+jwt', jwk })}.${b64({ ...claims, iat: now() })}.`],
      'HS256 with a key of its own choosing': async (claims: ProofClaims) => {
        const secret = new TextEncoder().encode('a-secret-the-attacker-picked-32b');
        return [await sign(claims, { alg: 'HS256', jwk: { kty: 'oct', k: Buffer.from(secret).toString('base64url') } }, secret)];
      },
      'a private key in its jwk header': async (claims: ProofClaims) => [await sign(claims, { jwk: privateJwk })],
      'no jwk header (a kid instead)': async (claims: ProofClaims) => [await sign(claims, { jwk: undefined, kid: 'k1' })],
      'signed by another key than its jwk': async (claims: ProofClaims) => [await sign(claims, {}, (await generateKeyPair('ES256')).privateKey)],
      'a payload that is not JSON': async () => [`${b64({ alg: 'ES256', typ: 'dpop+jwt', jwk })}.${Buffer.from('not json').toString('base64url')}.AAAA`],
      'two DPoP headers (two good proofs)': async (claims: ProofClaims) => [await sign(claims, {}), await sign({ ...claims, jti: randomUUID() }, {})],
    } as Record<string, (claims: ProofClaims) => Promise<string[]>>,
  };
}

type DpopKey = Awaited<ReturnType<typeof dpopKey>>;
const CASES = Object.keys((await dpopKey()).malformed);

/** A request with the DPoP header given once per value (two values: two header lines), over a real socket. */
function send(url: string, method: string, headers: Record<string, string>, dpop: string[], body?: string): Promise<{ status: number; body: Record<string, unknown>; challenge: string | undefined }> {
  return new Promise((resolve, reject) => {
    const call = request(url, { method }, (response) => {
      let text = '';
      response.on('data', (chunk: Buffer) => { text += chunk.toString(); });
      response.on('end', () => {
        let parsed: Record<string, unknown>;
        try { parsed = JSON.parse(text) as Record<string, unknown>; } catch { parsed = { raw: text }; }
        resolve({ status: response.statusCode!, body: parsed, challenge: response.headers['www-authenticate'] });
      });
    });
    call.on('error', reject);
    for (const [name, value] of Object.entries(headers)) call.setHeader(name, value);
    call.setHeader('dpop', dpop.length === 1 ? dpop[0]! : dpop);
    if (body !== undefined) call.setHeader('content-length', Buffer.byteLength(body));
    call.end(body);
  });
}

/**
 * BAD DPOP PROOFS KEEP THEIR SHAPE: a proof that is not a JWT, has the wrong typ, alg none, HS256,
 * a private key or no key in its header, a signature of another key, a payload that is no JSON, or
 * comes twice is refused with the error table's `invalid_dpop_proof` (400 at the token endpoint,
 * 401 with a DPoP challenge at userinfo and in the kit), never a 500, and nothing is stored: its
 * `jti` is not used up (a good proof with the same `jti` then works), and on Redis no replay record
 * is written. Token endpoint and userinfo on both stores; the kit (no store) in Koa and Express.
 */
describe.each(STORE_KINDS)('malformed DPoP proofs (%s store)', (kind) => {
  const store = useStore(kind);
  let server: RunningServer;
  let machine: { clientId: string; clientSecret: string };
  let key: DpopKey;
  let userToken: string;

  beforeAll(async () => {
    server = await startServer({ store: store.option(), accounts: testAccounts([alice]) });
    machine = await server.auth.clientConfigurations.create({ tenant: 'acme', name: 'Payroll', category: 'hr', resources: { scim: { scopes: ['scim.read'] } } });
    const web = await server.auth.appRegistrations.create({ name: 'Web', redirectUris: [WEB], clientType: 'confidential' });
    key = await dpopKey();
    const { code, verifier } = await signInForCode(server, { clientId: web.clientId, redirectUri: WEB }, alice, 'openid scim.read');
    const tokens = await postToken(server.oauthUrl, { grant_type: 'authorization_code', code, redirect_uri: WEB, code_verifier: verifier }, {
      authorization: basic(web.clientId, web.clientSecret!), dpop: await key.good({ htm: 'POST', htu: `${server.oauthUrl}/token`, jti: randomUUID() }),
    });
    expect(tokens.body.token_type).toBe('DPoP');
    userToken = tokens.body.access_token as string;
  });
  afterAll(() => server.stop());

  /** Replay records in Redis (the memory store has no outside view: the jti reuse below tells). */
  const replayRecords = async () => kind === 'redis' ? (await store.redis!.client().keys('*ReplayDetection:*')).length : 0;

  it.each(CASES)('at the token endpoint, a proof that is %s: 400 invalid_dpop_proof, its jti not used up', async (name) => {
    const before = await replayRecords();
    const claims = { htm: 'POST', htu: `${server.oauthUrl}/token`, jti: randomUUID() };
    const answer = await send(`${server.oauthUrl}/token`, 'POST', { authorization: basic(machine.clientId, machine.clientSecret), 'content-type': 'application/x-www-form-urlencoded' }, await key.malformed[name]!(claims), 'grant_type=client_credentials');
    expect({ status: answer.status, error: answer.body.error }).toEqual({ status: 400, error: 'invalid_dpop_proof' });
    expect(answer.body).not.toHaveProperty('access_token');
    expect(await replayRecords()).toBe(before);
    const good = await postToken(server.oauthUrl, 'grant_type=client_credentials', { authorization: basic(machine.clientId, machine.clientSecret), dpop: await key.good(claims) });
    expect(good.status).toBe(200);
    // The good proof's jti is kept: the count above would have seen a refused one.
    if (kind === 'redis') expect(await replayRecords()).toBe(before + 1);
  });

  it.each(CASES)('at userinfo, a proof that is %s: 401 invalid_dpop_proof with a DPoP challenge, its jti not used up', async (name) => {
    const url = `${server.oauthUrl}/userinfo`;
    const before = await replayRecords();
    const claims = { htm: 'GET', htu: url, jti: randomUUID(), ath: ath(userToken) };
    const answer = await send(url, 'GET', { authorization: `DPoP ${userToken}` }, await key.malformed[name]!(claims));
    expect({ status: answer.status, error: answer.body.error }).toEqual({ status: 401, error: 'invalid_dpop_proof' });
    expect(answer.challenge).toMatch(/^DPoP realm="[^"]+", error="invalid_dpop_proof"/);
    expect(await replayRecords()).toBe(before);
    const good = await send(url, 'GET', { authorization: `DPoP ${userToken}` }, [await key.good(claims)]);
    expect(good).toMatchObject({ status: 200, body: { sub: alice.sub } });
    if (kind === 'redis') expect(await replayRecords()).toBe(before + 1);
  });
});

describe('malformed DPoP proofs at the resource-server kit (Koa and Express)', () => {
  let server: RunningServer;
  let key: DpopKey;
  let token: string;
  const apis: PayslipsApi[] = [];

  beforeAll(async () => {
    server = await startServer();
    const machine = await server.auth.clientConfigurations.create({ tenant: 'acme', name: 'Payroll', category: 'hr', resources: { scim: { scopes: ['scim.read'] } } });
    key = await dpopKey();
    const answer = await postToken(server.oauthUrl, 'grant_type=client_credentials', {
      authorization: basic(machine.clientId, machine.clientSecret), dpop: await key.good({ htm: 'POST', htu: `${server.oauthUrl}/token`, jti: randomUUID() }),
    });
    token = answer.body.access_token as string;
    const verifier = createTokenVerifier({ issuer: server.auth.issuer, audience: server.auth.audience, jwks: new URL(`${server.oauthUrl}/jwks`), dpop: true });
    apis.push(...await payslipApis(() => verifier));
  });
  afterAll(async () => {
    await Promise.all(apis.map((api) => api.close()));
    await server.stop();
  });

  describe.each(['Koa', 'Express'])('%s', (name) => {
    it.each(CASES)('a proof that is %s: 401 invalid_dpop_proof with a DPoP challenge, its jti not used up', async (proofCase) => {
      const api = apis.find((each) => each.name === name)!;
      const claims = { htm: 'GET', htu: api.url, jti: randomUUID(), ath: ath(token) };
      const answer = await send(api.url, 'GET', { authorization: `DPoP ${token}` }, await key.malformed[proofCase]!(claims));
      expect({ status: answer.status, error: answer.body.error }).toEqual({ status: 401, error: 'invalid_dpop_proof' });
      expect(answer.challenge).toMatch(/^DPoP realm="[^"]+", error="invalid_dpop_proof"/);
      expect(await send(api.url, 'GET', { authorization: `DPoP ${token}` }, [await key.good(claims)])).toMatchObject({ status: 200 });
    });
  });
});
