import { randomUUID } from 'node:crypto';
import { SignJWT, exportJWK, generateKeyPair, type CryptoKey } from 'jose';
import { JWT_BEARER_ASSERTION } from '../../../policies/client-authentication.js';
import type { ClientJwk } from '../../../policies/client-keys.js';
import { postToken, startServer, type RunningServer } from '../../support/server.js';
import { STORE_KINDS, useStore } from '../../support/stores.js';

const b64 = (value: unknown) => Buffer.from(typeof value === 'string' ? value : JSON.stringify(value)).toString('base64url');

/**
 * BAD CLIENT ASSERTIONS KEEP THEIR SHAPE (RFC 7523 §3, policies/client-authentication.ts and the
 * engine): an assertion that is not a JWT, unsigned (alg none), with a payload that is no JSON,
 * without a jti, iss, sub, exp or aud (401 invalid_client, RFC 7523 §3.2, the same at every
 * endpoint); given twice, with its type twice or a wrong type, or for another client than the
 * `client_id` sent (400 invalid_request): never a 500, no token, and nothing stored: its `jti` is not
 * used up (a good assertion with the same `jti` then works) and, on Redis, no replay record is
 * written. At the token endpoint, introspection and revocation, on both stores.
 */
describe.each(STORE_KINDS)('malformed client assertions (%s store)', (kind) => {
  const store = useStore(kind);
  let server: RunningServer;
  let privateKey: CryptoKey;
  let clientId: string;
  let otherId: string;

  beforeAll(async () => {
    // Refused assertions count against their client (src/limits/client-auth.ts, its own tests):
    // this suite refuses many of one client's, so its limit is set out of the way.
    const failedClientAuth = { perClient: { max: 1000, windowSeconds: 60 }, perAddress: { max: 1000, windowSeconds: 60 } };
    server = await startServer({ store: store.option(), rateLimits: { failedClientAuth } });
    const pair = await generateKeyPair('ES256', { extractable: true });
    privateKey = pair.privateKey;
    const jwk = { ...(await exportJWK(pair.publicKey)), kid: 'k1', alg: 'ES256' } as ClientJwk;
    const register = async () => (await server.auth.clientConfigurations.create({
      tenant: 'acme', name: 'Sync', category: 'hr', resources: { scim: { scopes: ['scim.read'] } }, tokenEndpointAuthMethod: 'private_key_jwt', jwks: { keys: [jwk] },
    })).clientId;
    clientId = await register();
    otherId = await register();
  });
  afterAll(() => server.stop());

  const claimsFor = (jti: string, who = clientId) => {
    const now = Math.floor(Date.now() / 1000);
    return { iss: who, sub: who, aud: server.auth.issuer, iat: now, exp: now + 60, jti };
  };
  const signed = (claims: Record<string, unknown>) => new SignJWT(claims).setProtectedHeader({ alg: 'ES256', kid: 'k1' }).sign(privateKey);
  const without = (jti: string, name: string) => {
    const claims: Record<string, unknown> = claimsFor(jti);
    delete claims[name];
    return signed(claims);
  };

  const replayRecords = async () => kind === 'redis' ? (await store.redis!.client().keys('*ReplayDetection:*')).length : 0;

  /** Each malformed request: its form fields beyond grant_type and scope, and the error it gets. */
  const CASES: Array<[string, 400 | 401, string, (jti: string) => Promise<Array<[string, string]>>]> = [
    ['not a JWT', 401, 'invalid_client', async () => [['client_assertion_type', JWT_BEARER_ASSERTION], ['client_assertion', 'not-a-jwt']]],
    ['three empty parts', 401, 'invalid_client', async () => [['client_assertion_type', JWT_BEARER_ASSERTION], ['client_assertion', '..']]],
    ['unsigned (alg none)', 401, 'invalid_client', async (jti) => [['client_assertion_type', JWT_BEARER_ASSERTION], ['client_assertion', `${b64({ alg: 'none' })}.${b64(claimsFor(jti))}.`]]],
    ['a payload that is not JSON', 401, 'invalid_client', async () => [['client_assertion_type', JWT_BEARER_ASSERTION], ['client_assertion', `${b64({ alg: 'ES256', kid: 'k1' })}.${b64('not json')}.AAAA`]]],
    ['a signature cut off', 401, 'invalid_client', async (jti) => [['client_assertion_type', JWT_BEARER_ASSERTION], ['client_assertion', (await signed(claimsFor(jti))).replace(/\.[^.]+$/, '.')]]],
    ...(['jti', 'iss', 'sub', 'exp', 'aud'] as const).map((claim): (typeof CASES)[number] => [
      `without ${claim}`, 401, 'invalid_client', async (jti) => [['client_id', clientId], ['client_assertion_type', JWT_BEARER_ASSERTION], ['client_assertion', await without(jti, claim)]],
    ]),
    ['for another client than the client_id sent', 400, 'invalid_request', async (jti) => [['client_id', otherId], ['client_assertion_type', JWT_BEARER_ASSERTION], ['client_assertion', await signed(claimsFor(jti))]]],
    ['given twice', 400, 'invalid_request', async (jti) => [['client_assertion_type', JWT_BEARER_ASSERTION], ['client_assertion', await signed(claimsFor(jti))], ['client_assertion', await signed(claimsFor(randomUUID()))]]],
    ['with its type twice', 400, 'invalid_request', async (jti) => [['client_assertion_type', JWT_BEARER_ASSERTION], ['client_assertion_type', JWT_BEARER_ASSERTION], ['client_assertion', await signed(claimsFor(jti))]]],
    ['with a wrong type (SAML)', 400, 'invalid_request', async (jti) => [['client_assertion_type', 'urn:ietf:params:oauth:client-assertion-type:saml2-bearer'], ['client_assertion', await signed(claimsFor(jti))]]],
    ['with an empty type', 400, 'invalid_request', async (jti) => [['client_assertion_type', ''], ['client_assertion', await signed(claimsFor(jti))]]],
    ['empty, with its type', 400, 'invalid_request', async () => [['client_assertion_type', JWT_BEARER_ASSERTION], ['client_assertion', '']]],
  ];

  async function call(path: 'token' | 'introspect' | 'revoke', fields: Array<[string, string]>) {
    const body = new URLSearchParams(path === 'token' ? [['grant_type', 'client_credentials'], ['scope', 'scim.read'], ...fields] : [['token', 'x'], ...fields]);
    const response = await fetch(`${server.oauthUrl}/${path}`, { method: 'POST', headers: { 'content-type': 'application/x-www-form-urlencoded' }, body });
    // A revocation's success has an empty body.
    const text = await response.text();
    return { status: response.status, body: (text ? JSON.parse(text) : {}) as Record<string, unknown> };
  }

  describe.each(['token', 'introspect', 'revoke'] as const)('at %s', (path) => {
    it.each(CASES)('an assertion %s: %i %s, nothing stored', async (_name, status, error, fields) => {
      const jti = randomUUID();
      const before = await replayRecords();
      const answer = await call(path, await fields(jti));
      expect({ status: answer.status, error: answer.body.error }).toEqual({ status, error });
      expect(answer.body).not.toHaveProperty('access_token');
      expect(await replayRecords()).toBe(before);
      // The jti was not used up: a good assertion with it works (and only then is it kept).
      const good = await call(path, [['client_assertion_type', JWT_BEARER_ASSERTION], ['client_assertion', await signed({ ...claimsFor(jti), aud: path === 'token' ? server.auth.issuer : `${server.oauthUrl}/${path}` })]]);
      expect(good.status).toBe(200);
      if (kind === 'redis') expect(await replayRecords()).toBe(before + 1);
    });
  });

  it('a good assertion replayed: refused, the first use kept (on Redis: one replay record)', async () => {
    const jwt = await signed(claimsFor(randomUUID()));
    const fields: Array<[string, string]> = [['client_assertion_type', JWT_BEARER_ASSERTION], ['client_assertion', jwt]];
    expect((await call('token', fields)).status).toBe(200);
    const again = await postToken(server.oauthUrl, Object.fromEntries([['grant_type', 'client_credentials'], ...fields]));
    expect({ status: again.status, error: again.body.error }).toEqual({ status: 401, error: 'invalid_client' });
  });
});
