import { randomUUID } from 'node:crypto';
import { SignJWT, exportJWK, generateKeyPair, type CryptoKey } from 'jose';
import { JWT_BEARER_ASSERTION } from '../../policies/client-authentication.js';
import type { ClientJwk } from '../../policies/client-keys.js';
import { postToken, startServer, type RunningServer } from '../support/server.js';
import { STORE_KINDS, useStore } from '../support/stores.js';

const resources = { scim: { scopes: ['scim.read'] } };
const WEB = 'https://payroll.example.com/cb';

/**
 * The failed client authentication limit (src/limits/client-auth.ts) for requests without Basic:
 * a failed client assertion is counted against the client its `sub` names, a failed body-only
 * request against its `client_id`, both read without trusting them and counted only for clients
 * that exist; from any address, at every endpoint that takes client credentials (token, PAR,
 * introspection). A correct assertion still goes through past the client's limit. Both stores.
 */
describe.each(STORE_KINDS)('failed client assertions counted per client (%s store)', (kind) => {
  const store = useStore(kind);
  let server: RunningServer;
  let privateKey: CryptoKey;
  let stranger: CryptoKey;
  let nextAddress = 0;

  beforeAll(async () => {
    server = await startServer({
      store: store.option(),
      proxy: true,
      rateLimits: { authorize: false, failedClientAuth: { perClient: { max: 3, windowSeconds: 60 }, perAddress: { max: 1000, windowSeconds: 60 } } },
    });
    const keys = await generateKeyPair('ES256', { extractable: true });
    privateKey = keys.privateKey;
    stranger = (await generateKeyPair('ES256')).privateKey;
    jwk = { ...(await exportJWK(keys.publicKey)), kid: 'c1', alg: 'ES256' } as ClientJwk;
  });
  afterAll(() => server.stop());

  let jwk: ClientJwk;
  const newMachine = async () => (await server.auth.clientConfigurations.create({
    tenant: 'acme', name: 'Sync', category: 'hr', resources, tokenEndpointAuthMethod: 'private_key_jwt', jwks: { keys: [jwk] },
  })).clientId;

  /** Each request from an address of its own: what is refused is refused per client, not per address. */
  const fromNewAddress = () => ({ 'x-forwarded-for': `198.51.100.${(nextAddress += 1) % 250}` });

  async function assertion(sub: string, key: CryptoKey = privateKey, aud = server.auth.issuer): Promise<string> {
    const now = Math.floor(Date.now() / 1000);
    return new SignJWT({}).setProtectedHeader({ alg: 'ES256', kid: 'c1' }).setIssuer(sub).setSubject(sub)
      .setAudience(aud).setIssuedAt(now).setExpirationTime(now + 60).setJti(randomUUID()).sign(key);
  }

  const tokenWith = async (jwt: string, extra: Record<string, string> = {}) =>
    postToken(server.oauthUrl, { grant_type: 'client_credentials', scope: 'scim.read', client_assertion_type: JWT_BEARER_ASSERTION, client_assertion: jwt, ...extra }, fromNewAddress());

  async function post(path: string, body: Record<string, string>): Promise<{ status: number; error: unknown }> {
    const response = await fetch(`${server.oauthUrl}/${path}`, {
      method: 'POST',
      headers: { 'content-type': 'application/x-www-form-urlencoded', ...fromNewAddress() },
      body: new URLSearchParams(body).toString(),
    });
    return { status: response.status, error: ((await response.json().catch(() => ({}))) as { error?: unknown }).error };
  }

  it('failed assertions of one client from many addresses: 401 up to the limit, then 429; a correct assertion still gets its token', async () => {
    const machine = await newMachine();
    for (let attempt = 0; attempt < 3; attempt += 1) {
      const failed = await tokenWith(await assertion(machine, stranger));
      expect({ status: failed.status, error: failed.body.error }).toEqual({ status: 401, error: 'invalid_client' });
    }
    const refused = await tokenWith(await assertion(machine, stranger));
    expect({ status: refused.status, error: refused.body.error }).toEqual({ status: 429, error: 'temporarily_unavailable' });
    expect(Number(refused.headers.get('retry-after'))).toBeGreaterThan(0);
    // The subject is read without trust: its limit never refuses the client's own correct assertion.
    expect((await tokenWith(await assertion(machine))).status).toBe(200);
    expect((await tokenWith(await assertion(machine, stranger))).status).toBe(429);
    // Another client is not touched.
    expect((await tokenWith(await assertion(await newMachine(), stranger))).status).toBe(401);
  });

  it('the push, the token endpoint and introspection count against the same client', async () => {
    const app = (await server.auth.appRegistrations.create({
      name: 'Payroll', redirectUris: [WEB], clientType: 'confidential', tokenEndpointAuthMethod: 'private_key_jwt', jwks: { keys: [jwk] },
    })).clientId;
    const pushRequest = { response_type: 'code', client_id: app, redirect_uri: WEB, scope: 'openid', state: 's' };
    const assertionBody = async () => ({ client_assertion_type: JWT_BEARER_ASSERTION, client_assertion: await assertion(app, stranger) });
    expect(await post('par', { ...pushRequest, ...await assertionBody() })).toEqual({ status: 401, error: 'invalid_client' });
    expect((await tokenWith(await assertion(app, stranger), { grant_type: 'authorization_code', code: 'c', redirect_uri: WEB })).status).toBe(401);
    expect(await post('introspect', { token: 'x', ...await assertionBody() })).toEqual({ status: 401, error: 'invalid_client' });
    expect(await post('par', { ...pushRequest, ...await assertionBody() })).toEqual({ status: 429, error: 'temporarily_unavailable' });
    // A correct one still pushes.
    const pushed = await post('par', {
      ...pushRequest, code_challenge: 'E9Melhoa2OwvFrEMTJguCHaoeK1t8URWbuGJSstw-cM', code_challenge_method: 'S256',
      client_assertion_type: JWT_BEARER_ASSERTION, client_assertion: await assertion(app, privateKey, `${server.oauthUrl}/par`),
    });
    expect(pushed.status).toBe(201);
  });

  it("a body's client_id without credentials, for a client that has some, is counted against that client", async () => {
    const machine = await newMachine();
    for (let attempt = 0; attempt < 3; attempt += 1) {
      expect((await postToken(server.oauthUrl, { grant_type: 'client_credentials', client_id: machine }, fromNewAddress())).status).toBe(401);
    }
    expect((await postToken(server.oauthUrl, { grant_type: 'client_credentials', client_id: machine }, fromNewAddress())).status).toBe(429);
  });

  it("an undecodable assertion is counted against the body's client_id (introspection refuses it as a failed authentication)", async () => {
    const machine = await newMachine();
    const body = { token: 'x', client_id: machine, client_assertion_type: JWT_BEARER_ASSERTION, client_assertion: 'not-a-jwt' };
    for (let attempt = 0; attempt < 3; attempt += 1) expect(await post('introspect', body)).toEqual({ status: 401, error: 'invalid_client' });
    expect(await post('introspect', body)).toEqual({ status: 429, error: 'temporarily_unavailable' });
  });

  it("an assertion's subject in any letter case counts as the same client", async () => {
    const machine = await newMachine();
    for (let attempt = 0; attempt < 3; attempt += 1) {
      expect((await tokenWith(await assertion(attempt % 2 ? machine.toUpperCase() : machine, stranger))).status).toBe(401);
    }
    expect((await tokenWith(await assertion(machine, stranger))).status).toBe(429);
  });

  it('an ID no client has gets no counter of its own: its failures are never refused per client (nothing stored for it)', async () => {
    const nobody = randomUUID();
    for (let attempt = 0; attempt < 6; attempt += 1) {
      const failed = await tokenWith(await assertion(nobody, stranger));
      expect({ status: failed.status, error: failed.body.error }).toEqual({ status: 401, error: 'invalid_client' });
      expect((await postToken(server.oauthUrl, { grant_type: 'client_credentials', client_id: randomUUID() }, fromNewAddress())).status).toBe(401);
    }
    if (kind === 'redis') {
      const redis = store.redis!.client();
      expect(await redis.keys(`*${nobody}*`)).toEqual([]);
    }
  });
});
