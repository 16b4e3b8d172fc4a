import { randomUUID } from 'node:crypto';
import { exportJWK, generateKeyPair, SignJWT, type CryptoKey } from 'jose';
import * as oauth from 'oauth4webapi';
import { JWT_BEARER_ASSERTION } from '../../../policies/client-authentication.js';
import type { ClientJwk } from '../../../policies/client-keys.js';
import { testJwks } from '../../support/keys.js';
import { postToken, startServer, basic, type RunningServer } from '../../support/server.js';
import { STORE_KINDS, useStore } from '../../support/stores.js';

const WEB = 'https://portal.example.com/cb';
const insecure = { [oauth.allowInsecureRequests]: true } as const;

interface KeyPair {
  privateKey: CryptoKey;
  jwk: ClientJwk;
}

async function keyPair(alg: 'ES256' | 'EdDSA', kid: string): Promise<KeyPair> {
  const { privateKey, publicKey } = await generateKeyPair(alg, { extractable: true });
  return { privateKey, jwk: { ...(await exportJWK(publicKey)), kid, alg } as ClientJwk };
}

/**
 * KEYS REGISTERED BY VALUE (`jwks`), ROTATED WITHOUT DOWNTIME AND RETIRED AT ONCE: a client
 * configuration (token endpoint) and a confidential app (introspection) switch from key A to key B
 * through a key set with both, with oauth4webapi, and not one request fails; once A is dropped from
 * the record, the next assertion signed with A is refused, on this instance and (Redis) on another
 * instance sharing the store (the client cache forgets a changed client: src/engine/client-cache.ts).
 */
describe.each(STORE_KINDS)('private_key_jwt key rotation by value (%s store)', (kind) => {
  const store = useStore(kind);
  let first: RunningServer;
  let second: RunningServer;
  let as: oauth.AuthorizationServer;
  let a: KeyPair;
  let b: KeyPair;

  beforeAll(async () => {
    const shared = { store: store.option(), keys: await testJwks(), cookieKeys: ['k'.repeat(32)] };
    first = await startServer(shared);
    second = kind === 'redis' ? await startServer({ ...shared, baseUrl: first.baseUrl }) : first;
    // ES256 both: oauth4webapi signs with an Ed25519 key as alg "Ed25519", which our allow-list does not name.
    [a, b] = await Promise.all([keyPair('ES256', 'a'), keyPair('ES256', 'b')]);
    const issuer = new URL(first.oauthUrl);
    as = await oauth.processDiscoveryResponse(issuer, await oauth.discoveryRequest(issuer, insecure));
  });
  afterAll(async () => {
    if (second !== first) await second.stop();
    await first.stop();
  });

  /** The discovery document of `server`, with its own endpoints (the issuer is the same). */
  const metadataOf = (server: RunningServer): oauth.AuthorizationServer => ({
    ...as,
    token_endpoint: `${server.oauthUrl}/token`,
    introspection_endpoint: `${server.oauthUrl}/introspect`,
  });

  /**
   * Waits until `server`, another instance than the one that wrote, has heard of a change: until
   * `status` (a request signed with the dropped key) is refused. The writer forgets at once; another
   * instance hears through the change feed, in milliseconds, but under load a request of the test
   * can overtake the message. Bounded by 3 s, well under the cache's own 10 s lifetime: without
   * the change feed, the dropped key would still be accepted when the bound passes, and this fails.
   */
  async function heardOn(server: RunningServer, status: () => Promise<number>): Promise<void> {
    if (server === first) return;
    const deadline = Date.now() + 3_000;
    while ((await status()) !== 401) {
      if (Date.now() > deadline) throw new Error('the other instance did not hear of the change within 3 s');
      await new Promise((resolve) => setTimeout(resolve, 20));
    }
  }

  /** A client_credentials request signed with `key`, at `server`: its status. */
  async function tokenStatus(server: RunningServer, clientId: string, key: KeyPair): Promise<number> {
    const auth = oauth.PrivateKeyJwt({ key: key.privateKey, kid: key.jwk.kid! });
    const response = await oauth.clientCredentialsGrantRequest(metadataOf(server), { client_id: clientId }, auth, new URLSearchParams({ scope: 'scim.read' }), insecure);
    return response.status;
  }

  it('a client configuration: A, then A+B, then B; zero failed requests; A refused at once after it is dropped', async () => {
    const { clientId } = await first.auth.clientConfigurations.create({
      tenant: 'acme', name: 'Payroll', category: 'hr', resources: { scim: { scopes: ['scim.read'] } },
      tokenEndpointAuthMethod: 'private_key_jwt', jwks: { keys: [a.jwk] },
    });
    const outcomes: string[] = [];
    const call = async (server: RunningServer, key: KeyPair) => outcomes.push(`${key.jwk.kid!}:${await tokenStatus(server, clientId, key)}`);
    await call(first, a);
    await call(second, a);
    expect(await tokenStatus(first, clientId, b)).toBe(401);
    await first.auth.clientConfigurations.update(clientId, { jwks: { keys: [a.jwk, b.jwk] } });
    // Both keys work at once, on both instances: the signer switches whenever it likes.
    await call(second, a);
    await call(first, b);
    await call(second, b);
    // An assertion signed with A just before A is dropped, sent just after: the key no longer counts.
    const now = Math.floor(Date.now() / 1000);
    const inFlight = await new SignJWT({}).setProtectedHeader({ alg: 'ES256', kid: 'a' }).setIssuer(clientId).setSubject(clientId)
      .setAudience(first.auth.issuer).setIssuedAt(now).setExpirationTime(now + 60).setJti(randomUUID()).sign(a.privateKey);
    const inFlightHere = await new SignJWT({}).setProtectedHeader({ alg: 'ES256', kid: 'a' }).setIssuer(clientId).setSubject(clientId)
      .setAudience(first.auth.issuer).setIssuedAt(now).setExpirationTime(now + 60).setJti(randomUUID()).sign(a.privateKey);
    await first.auth.clientConfigurations.update(clientId, { jwks: { keys: [b.jwk] } });
    // The instance that wrote: at once (it tells its own cache before the update returns).
    const here = await postToken(first.oauthUrl, { grant_type: 'client_credentials', client_assertion_type: JWT_BEARER_ASSERTION, client_assertion: inFlightHere });
    expect({ status: here.status, error: here.body.error }).toEqual({ status: 401, error: 'invalid_client' });
    await heardOn(second, () => tokenStatus(second, clientId, a));
    const late = await postToken(second.oauthUrl, { grant_type: 'client_credentials', client_assertion_type: JWT_BEARER_ASSERTION, client_assertion: inFlight });
    expect({ status: late.status, error: late.body.error }).toEqual({ status: 401, error: 'invalid_client' });
    await call(first, b);
    await call(second, b);
    expect(outcomes).toEqual(['a:200', 'a:200', 'a:200', 'b:200', 'b:200', 'b:200', 'b:200']);
    // A, retired: refused by the next request, wherever it arrives.
    expect(await tokenStatus(first, clientId, a)).toBe(401);
    expect(await tokenStatus(second, clientId, a)).toBe(401);
  });

  it('a confidential app: the same rotation at introspection; A refused at once after it is dropped', async () => {
    const app = await first.auth.appRegistrations.create({
      name: 'Web', redirectUris: [WEB], clientType: 'confidential', tokenEndpointAuthMethod: 'private_key_jwt', jwks: { keys: [a.jwk] },
    });
    const machine = await first.auth.clientConfigurations.create({ tenant: 'acme', name: 'Sync', category: 'hr', resources: { scim: { scopes: ['scim.read'] } } });
    const token = (await postToken(first.oauthUrl, 'grant_type=client_credentials', { authorization: basic(machine.clientId, machine.clientSecret) })).body.access_token as string;
    const introspect = async (server: RunningServer, key: KeyPair) => {
      const auth = oauth.PrivateKeyJwt({ key: key.privateKey, kid: key.jwk.kid! });
      return (await oauth.introspectionRequest(metadataOf(server), { client_id: app.clientId }, auth, token, insecure)).status;
    };
    const outcomes: number[] = [];
    outcomes.push(await introspect(first, a), await introspect(second, a));
    await first.auth.appRegistrations.update(app.clientId, { jwks: { keys: [a.jwk, b.jwk] } });
    outcomes.push(await introspect(second, a), await introspect(first, b));
    await first.auth.appRegistrations.update(app.clientId, { jwks: { keys: [b.jwk] } });
    outcomes.push(await introspect(first, b), await introspect(second, b));
    expect(outcomes).toEqual([200, 200, 200, 200, 200, 200]);
    expect(await introspect(first, a)).toBe(401);
    await heardOn(second, () => introspect(second, a));
    expect(await introspect(second, a)).toBe(401);
  });
});
