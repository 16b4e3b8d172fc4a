import { randomUUID } from 'node:crypto';
import { createServer, type Server } from 'node:http';
import type { AddressInfo } from 'node:net';
import { SignJWT, exportJWK, generateKeyPair, type CryptoKey } from 'jose';
import * as oauth from 'oauth4webapi';
import * as client from 'openid-client';
import { JWT_BEARER_ASSERTION } from '../../../policies/client-authentication.js';
import type { ClientJwk } from '../../../policies/client-keys.js';
import { clientConfigurationMetadata, engineKeysOwner } from '../../../src/engine/client-directory.js';
import { alice, testAccounts } from '../../support/accounts.js';
import { testJwks } from '../../support/keys.js';
import { basic, postToken, startServer, type RunningServer } from '../../support/server.js';
import { signInForCode } from '../../support/sign-in.js';
import { STORE_KINDS, useStore } from '../../support/stores.js';

const WEB = 'https://portal.example.com/cb';
const insecure = { [oauth.allowInsecureRequests]: true };

interface KeyPair {
  privateKey: CryptoKey;
  jwk: ClientJwk;
}

async function keyPair(alg: 'ES256' | 'RS256' | 'EdDSA', kid: string): Promise<KeyPair> {
  const { privateKey, publicKey } = await generateKeyPair(alg, { extractable: true });
  return { privateKey, jwk: { ...(await exportJWK(publicKey)), kid, alg } as ClientJwk };
}

/**
 * PRIVATE_KEY_JWT AT THE TOKEN ENDPOINT (RFC 7523; policies/client-authentication.ts, the engine's
 * client authentication with our records' keys), on both stores, Redis with two instances sharing
 * it: a client configuration gets tokens with oauth4webapi and openid-client, a confidential app
 * exchanges its code (oauth4webapi, and by hand on the other instance); every assertion the rules refuse is refused (replayed, also on the other
 * instance; wrong audience; expired; living too long; unknown key; an algorithm not allowed; HS256
 * with a secret), and the request shapes the guard refuses.
 */
describe.each(STORE_KINDS)('private_key_jwt at the token endpoint (%s store)', (kind) => {
  const store = useStore(kind);
  let a: RunningServer;
  let b: RunningServer;
  let key: KeyPair;
  let machine: string;
  let app: string;
  let basicClient: { clientId: string; clientSecret: string };

  beforeAll(async () => {
    const option = store.option();
    // Refused assertions count against their client (src/limits/client-auth.ts; its own tests):
    // this suite refuses many of one client's, so its limit is set out of the way.
    const rateLimits = { authorize: false as const, failedClientAuth: { perClient: { max: 1000, windowSeconds: 60 }, perAddress: { max: 1000, windowSeconds: 60 } } };
    const shared = { store: option, keys: await testJwks(), cookieKeys: ['k'.repeat(32)], accounts: testAccounts([alice]), rateLimits };
    a = await startServer(shared);
    // The second instance: on Redis, the same store (what one instance saw, the other sees).
    b = kind === 'redis' ? await startServer({ ...shared, baseUrl: a.baseUrl }) : a;
    key = await keyPair('ES256', 'k1');
    const other = await keyPair('RS256', 'k2');
    machine = (await a.auth.clientConfigurations.create({
      tenant: 'acme', name: 'Sync', category: 'hr', resources: { scim: { scopes: ['scim.read'] } },
      tokenEndpointAuthMethod: 'private_key_jwt', jwks: { keys: [key.jwk, other.jwk] },
    })).clientId;
    app = (await a.auth.appRegistrations.create({
      name: 'Web', redirectUris: [WEB], clientType: 'confidential', tokenEndpointAuthMethod: 'private_key_jwt', jwks: { keys: [key.jwk] },
    })).clientId;
    basicClient = await a.auth.clientConfigurations.create({ tenant: 'acme', name: 'Basic', category: 'hr', resources: { scim: { scopes: ['scim.read'] } } });
  });
  afterAll(async () => {
    if (b !== a) await b.stop();
    await a.stop();
  });

  /** An assertion as a client library makes one, with `change` to break one rule. */
  async function assertion(clientId: string, change: { aud?: string; exp?: number; kid?: string; alg?: string; signWith?: CryptoKey | Uint8Array; jti?: string } = {}): Promise<string> {
    const now = Math.floor(Date.now() / 1000);
    return new SignJWT({})
      .setProtectedHeader({ alg: change.alg ?? 'ES256', kid: change.kid ?? 'k1' })
      .setIssuer(clientId)
      .setSubject(clientId)
      .setAudience(change.aud ?? a.auth.issuer)
      .setIssuedAt(now)
      .setExpirationTime(change.exp ?? now + 60)
      .setJti(change.jti ?? randomUUID())
      .sign(change.signWith ?? key.privateKey);
  }

  const tokenWith = (server: RunningServer, jwt: string, extra: Record<string, string> = {}, headers: Record<string, string> = {}) =>
    postToken(server.oauthUrl, { grant_type: 'client_credentials', scope: 'scim.read', client_assertion_type: JWT_BEARER_ASSERTION, client_assertion: jwt, ...extra }, headers);

  it('oauth4webapi PrivateKeyJwt: client_credentials for a client configuration', async () => {
    const issuer = new URL(a.oauthUrl);
    const as = await oauth.processDiscoveryResponse(issuer, await oauth.discoveryRequest(issuer, insecure));
    const response = await oauth.clientCredentialsGrantRequest(
      as, { client_id: machine }, oauth.PrivateKeyJwt({ key: key.privateKey, kid: 'k1' }), new URLSearchParams({ scope: 'scim.read' }), insecure,
    );
    const tokens = await oauth.processClientCredentialsResponse(as, { client_id: machine }, response);
    expect(tokens.scope).toBe('scim.read');
  });

  it('oauth4webapi with Ed25519 keys (alg "Ed25519", the fully specified name it signs with): private_key_jwt and a DPoP proof', async () => {
    const signing = await oauth.generateKeyPair('Ed25519', { extractable: true });
    const jwk = { ...(await exportJWK(signing.publicKey)), kid: 'ed' } as ClientJwk;
    const edClient = (await a.auth.clientConfigurations.create({
      tenant: 'acme', name: 'Ed', category: 'hr', resources: { scim: { scopes: ['scim.read'] } },
      tokenEndpointAuthMethod: 'private_key_jwt', jwks: { keys: [jwk] },
    })).clientId;
    const issuer = new URL(a.oauthUrl);
    const as = await oauth.processDiscoveryResponse(issuer, await oauth.discoveryRequest(issuer, insecure));
    const DPoP = oauth.DPoP({}, await oauth.generateKeyPair('Ed25519'));
    const request = () => oauth.clientCredentialsGrantRequest(
      as, { client_id: edClient }, oauth.PrivateKeyJwt({ key: signing.privateKey, kid: 'ed' }), new URLSearchParams({ scope: 'scim.read' }), { ...insecure, DPoP },
    );
    let response = await request();
    // The first answer may ask for the server's nonce; the library keeps it for the retry.
    if (response.status === 400 && (await response.clone().json() as { error?: string }).error === 'use_dpop_nonce') response = await request();
    const tokens = await oauth.processClientCredentialsResponse(as, { client_id: edClient }, response);
    expect(tokens.token_type).toBe('dpop');
    expect(tokens.scope).toBe('scim.read');
  });

  it('openid-client PrivateKeyJwt: client_credentials for a client configuration', async () => {
    const config = await client.discovery(new URL(a.oauthUrl), machine, undefined, client.PrivateKeyJwt({ key: key.privateKey, kid: 'k1' }), {
      execute: [client.allowInsecureRequests],
    });
    const tokens = await client.clientCredentialsGrant(config, { scope: 'scim.read' });
    expect(tokens).toMatchObject({ token_type: 'bearer', scope: 'scim.read' });
  });

  it('a confidential app exchanges its code with an assertion (authorization_code)', async () => {
    const { code, verifier } = await signInForCode(a, { clientId: app, redirectUri: WEB }, alice, 'openid scim.read');
    const answer = await postToken(b.oauthUrl, {
      grant_type: 'authorization_code', code, redirect_uri: WEB, code_verifier: verifier,
      client_assertion_type: JWT_BEARER_ASSERTION, client_assertion: await assertion(app),
    });
    expect(answer.status).toBe(200);
    expect(answer.body).toEqual(expect.objectContaining({ token_type: 'Bearer', id_token: expect.any(String), refresh_token: expect.any(String) }));
  });

  it('oauth4webapi PrivateKeyJwt: authorization_code for a confidential app', async () => {
    const issuer = new URL(a.oauthUrl);
    const as = await oauth.processDiscoveryResponse(issuer, await oauth.discoveryRequest(issuer, insecure));
    const { code, state, verifier } = await signInForCode(a, { clientId: app, redirectUri: WEB }, alice, 'openid scim.read');
    const callback = new URL(WEB);
    callback.searchParams.set('code', code);
    if (state) callback.searchParams.set('state', state);
    callback.searchParams.set('iss', a.auth.issuer);
    const params = oauth.validateAuthResponse(as, { client_id: app }, callback, state ?? oauth.expectNoState);
    const response = await oauth.authorizationCodeGrantRequest(as, { client_id: app }, oauth.PrivateKeyJwt({ key: key.privateKey, kid: 'k1' }), params, WEB, verifier, insecure);
    const tokens = await oauth.processAuthorizationCodeResponse(as, { client_id: app }, response, { requireIdToken: true });
    expect(tokens.refresh_token).toEqual(expect.any(String));
  });

  it('the token endpoint URL is an accepted audience too', async () => {
    expect((await tokenWith(a, await assertion(machine, { aud: `${a.oauthUrl}/token` }))).status).toBe(200);
  });

  it('an assertion is good once: replayed, on this instance or the other, it is refused', async () => {
    const jwt = await assertion(machine);
    expect((await tokenWith(a, jwt)).status).toBe(200);
    for (const server of [a, b]) {
      const replay = await tokenWith(server, jwt);
      expect(replay.status).toBe(401);
      expect(replay.body).toEqual(expect.objectContaining({ error: 'invalid_client' }));
    }
  });

  it('the single-use record of an assertion is kept until its expiry, no longer (Redis: a TTL)', async () => {
    if (kind !== 'redis') return;
    const jti = randomUUID();
    expect((await tokenWith(a, await assertion(machine, { jti, exp: Math.floor(Date.now() / 1000) + 120 }))).status).toBe(200);
    const redis = store.redis!.client();
    const keys = (await redis.keys('*ReplayDetection:*')).filter((name) => !name.includes('{}'));
    expect(keys.length).toBeGreaterThan(0);
    const ttls = await Promise.all(keys.map((name) => redis.ttl(name)));
    // Every assertion of this suite lives at most 300 s, plus the engine's clock tolerance.
    expect(ttls.every((ttl) => ttl > 0 && ttl <= 300 + 15)).toBe(true);
    expect(ttls.some((ttl) => ttl > 100 && ttl <= 120 + 15)).toBe(true);
  });

  it.each([
    ['a wrong audience', { aud: 'https://elsewhere.example' }],
    ['an expired assertion', { exp: Math.floor(Date.now() / 1000) - 120 }],
    ['an assertion living longer than 300 seconds', { exp: Math.floor(Date.now() / 1000) + 3600 }],
    ['an unknown kid', { kid: 'nope' }],
  ])('refuses %s (401 invalid_client)', async (_name, change) => {
    const answer = await tokenWith(a, await assertion(machine, change));
    expect(answer.status).toBe(401);
    expect(answer.body).toEqual(expect.objectContaining({ error: 'invalid_client' }));
  });

  it('refuses a key it does not hold, an algorithm not allowed, and HS256 with a secret', async () => {
    const stranger = await keyPair('ES256', 'k1');
    const refused = [
      await assertion(machine, { signWith: stranger.privateKey }),
      await assertion(machine, { alg: 'ES384', signWith: (await generateKeyPair('ES384')).privateKey }),
      await assertion(machine, { alg: 'HS256', signWith: new TextEncoder().encode(basicClient.clientSecret) }),
      await assertion(basicClient.clientId, { alg: 'HS256', signWith: new TextEncoder().encode(basicClient.clientSecret) }),
    ];
    for (const jwt of refused) {
      const answer = await tokenWith(a, jwt);
      expect({ status: answer.status, error: (answer.body as { error?: string }).error }).toEqual({ status: 401, error: 'invalid_client' });
    }
  });

  it('a Basic client cannot use an assertion, nor a private_key_jwt client Basic', async () => {
    const wrongMethod = await tokenWith(a, await assertion(basicClient.clientId, { signWith: key.privateKey }));
    expect(wrongMethod.status).toBe(401);
    const noSecret = await postToken(a.oauthUrl, { grant_type: 'client_credentials', scope: 'scim.read' }, { authorization: basic(machine, 'anything-at-all') });
    expect(noSecret.status).toBe(401);
  });

  it.each([
    ['Basic and an assertion at once', {}, true, 400, 'invalid_request'],
    ['an assertion without its type', { client_assertion_type: undefined }, false, 400, 'invalid_request'],
    ['another assertion type', { client_assertion_type: 'urn:ietf:params:oauth:client-assertion-type:saml2-bearer' }, false, 400, 'invalid_request'],
    ['a type without an assertion', { client_assertion: undefined }, false, 400, 'invalid_request'],
  ] as const)('refuses %s', async (_name, change, withBasic, status, error) => {
    const body: Record<string, string> = { grant_type: 'client_credentials', scope: 'scim.read', client_assertion_type: JWT_BEARER_ASSERTION, client_assertion: await assertion(machine) };
    for (const [name, value] of Object.entries(change)) if (value === undefined) delete body[name]; else body[name] = value;
    const answer = await postToken(a.oauthUrl, body, withBasic ? { authorization: basic(basicClient.clientId, basicClient.clientSecret) } : {});
    expect({ status: answer.status, error: (answer.body as { error?: string }).error }).toEqual({ status, error });
  });

  /** POST to introspection or revocation with an assertion for that endpoint. */
  const lifecycleCall = async (server: RunningServer, path: 'introspect' | 'revoke', token: string, jwt: string) => {
    const response = await fetch(`${server.oauthUrl}/${path}`, {
      method: 'POST',
      headers: { 'content-type': 'application/x-www-form-urlencoded' },
      body: new URLSearchParams({ token, client_assertion_type: JWT_BEARER_ASSERTION, client_assertion: jwt }),
    });
    return { status: response.status, body: await response.json().catch(() => undefined) as Record<string, unknown> | undefined };
  };

  it('introspection and revocation by a private_key_jwt client (calling-client.ts): its assertion, once', async () => {
    const issued = await tokenWith(a, await assertion(machine));
    const accessToken = (issued.body as { access_token: string }).access_token;
    const introspectJwt = await assertion(machine, { aud: `${a.oauthUrl}/introspect` });
    const introspected = await lifecycleCall(a, 'introspect', accessToken, introspectJwt);
    expect(introspected).toEqual({ status: 200, body: expect.objectContaining({ active: true, client_id: machine }) });
    // Used once, also on the other instance; at every endpoint.
    expect((await lifecycleCall(b, 'introspect', accessToken, introspectJwt)).status).toBe(401);
    expect((await lifecycleCall(a, 'revoke', accessToken, introspectJwt)).status).toBe(401);
    expect((await tokenWith(b, introspectJwt)).status).toBe(401);
    // The issuer is an audience too; another endpoint's URL is not.
    expect((await lifecycleCall(a, 'introspect', accessToken, await assertion(machine))).status).toBe(200);
    expect((await lifecycleCall(a, 'introspect', accessToken, await assertion(machine, { aud: `${a.oauthUrl}/userinfo` }))).status).toBe(401);
    for (const change of [{ exp: Math.floor(Date.now() / 1000) - 120 }, { exp: Math.floor(Date.now() / 1000) + 3600 }, { kid: 'nope' }, { signWith: (await keyPair('ES256', 'k1')).privateKey }]) {
      const answer = await lifecycleCall(a, 'introspect', accessToken, await assertion(machine, change));
      expect({ status: answer.status, error: answer.body?.['error'] }).toEqual({ status: 401, error: 'invalid_client' });
    }
    // A Basic client's ID in an assertion signed with the right-looking key: not its method.
    expect((await lifecycleCall(a, 'introspect', accessToken, await assertion(basicClient.clientId))).status).toBe(401);
    const revoked = await lifecycleCall(a, 'revoke', accessToken, await assertion(machine, { aud: `${a.oauthUrl}/revoke` }));
    expect(revoked.status).toBe(200);
    expect((await lifecycleCall(a, 'introspect', accessToken, await assertion(machine))).body).toEqual({ active: false });
  });

  it('introspection: the token endpoint URL as audience; each refusal says why; iss and sub both the client; a key found without a kid', async () => {
    const accessToken = ((await tokenWith(a, await assertion(machine))).body as { access_token: string }).access_token;
    expect((await lifecycleCall(a, 'introspect', accessToken, await assertion(machine, { aud: `${a.oauthUrl}/token` }))).status).toBe(200);
    const said = async (jwt: string) => {
      const answer = await lifecycleCall(a, 'introspect', accessToken, jwt);
      return [answer.status, answer.body?.['error'], answer.body?.['error_description']];
    };
    expect(await said('not-a-jwt')).toEqual([401, 'invalid_client', 'the client assertion is not a JWT']);
    expect(await said(await assertion(machine, { exp: Math.floor(Date.now() / 1000) + 3600 }))).toEqual([401, 'invalid_client', 'the client assertion must expire within 300 seconds']);
    const once = await assertion(machine);
    expect((await said(once))[0]).toBe(200);
    expect(await said(once)).toEqual([401, 'invalid_client', 'client assertion tokens must only be used once']);
    /** An assertion made by hand: `claims` over the usual ones (undefined drops one), `kid` in the header unless undefined. */
    const byHand = (claims: Record<string, unknown>, kid: string | undefined = 'k1', signWith: CryptoKey = key.privateKey) => {
      const now = Math.floor(Date.now() / 1000);
      const all = { iss: machine, sub: machine, aud: a.auth.issuer, iat: now, exp: now + 60, jti: randomUUID(), ...claims };
      for (const [name, value] of Object.entries(all)) if (value === undefined) delete all[name as keyof typeof all];
      return new SignJWT(all).setProtectedHeader({ alg: 'ES256', ...(kid === undefined ? {} : { kid }) }).sign(signWith);
    };
    expect((await said(await byHand({})))[0]).toBe(200);
    for (const claims of [{ iss: basicClient.clientId }, { jti: 7 }, { jti: undefined }, { exp: undefined }, { aud: [`${a.oauthUrl}/userinfo`] }]) {
      expect([claims, ...(await said(await byHand(claims))).slice(0, 2)]).toEqual([claims, 401, 'invalid_client']);
    }
    // An expiry exactly as far ahead as allowed is accepted.
    expect((await said(await byHand({ exp: Math.floor(Date.now() / 1000) + 300 })))[0]).toBe(200);
    // Its single-use record is kept until its expiry and the clock tolerance (Redis: a TTL), no shorter.
    if (kind === 'redis') {
      // The records are named by a digest of the jti: this assertion's is one more due in 120 to 135 s.
      const redis = store.redis!.client();
      const dueSoon = async () => {
        const names = (await redis.keys('*ReplayDetection:*')).filter((name) => !name.includes('{}'));
        return (await Promise.all(names.map((name) => redis.ttl(name)))).filter((ttl) => ttl > 120 && ttl <= 120 + 15).length;
      };
      const before = await dueSoon();
      expect((await said(await byHand({ exp: Math.floor(Date.now() / 1000) + 120 })))[0]).toBe(200);
      expect(await dueSoon()).toBe(before + 1);
    }
    // No kid: the client's key of the algorithm is found; a key the client does not hold is not.
    expect((await said(await byHand({}, undefined)))[0]).toBe(200);
    expect((await said(await byHand({}, undefined, (await keyPair('ES256', 'k9')).privateKey)))[0]).toBe(401);
  });

  it('discovery lists private_key_jwt and the assertion algorithms', async () => {
    const metadata = await (await fetch(`${a.oauthUrl}/.well-known/openid-configuration`)).json() as Record<string, unknown>;
    expect(metadata['token_endpoint_auth_methods_supported']).toEqual(expect.arrayContaining(['client_secret_basic', 'private_key_jwt']));
    expect(metadata['token_endpoint_auth_methods_supported']).not.toContain('client_secret_post');
    expect(metadata['token_endpoint_auth_signing_alg_values_supported']).toEqual(['RS256', 'PS256', 'ES256', 'EdDSA', 'Ed25519']);
  });
});


/**
 * A private_key_jwt client's keys at its jwksUri: fetched by the engine through our checked fetch
 * (addresses checked, a timeout, a bounded answer), kept for a while, and only the operator's URL
 * gets the operator's private-host exceptions. The fetch does not touch the store: one store.
 */
describe('private_key_jwt with a jwksUri (the checked fetch)', () => {
  let server: RunningServer;
  let keys: Server;
  let keysUrl: string;
  let key: KeyPair;
  let mode: 'ok' | 'down' | 'slow' | 'huge' = 'ok';
  let fetches = 0;

  beforeAll(async () => {
    key = await keyPair('EdDSA', 'u1');
    keys = createServer((_request, response) => {
      fetches += 1;
      if (mode === 'down') return void response.writeHead(503).end();
      if (mode === 'slow') return void setTimeout(() => response.writeHead(200, { 'content-type': 'application/json' }).end(JSON.stringify({ keys: [key.jwk] })), 4000).unref();
      const body = mode === 'huge' ? JSON.stringify({ keys: [key.jwk], padding: 'x'.repeat(48 * 1024) }) : JSON.stringify({ keys: [key.jwk] });
      response.writeHead(200, { 'content-type': 'application/json' }).end(body);
    });
    await new Promise<void>((resolve) => keys.listen(0, '127.0.0.1', resolve));
    keysUrl = `http://127.0.0.1:${(keys.address() as AddressInfo).port}/jwks`;
    server = await startServer({ backchannelLogout: { privateHosts: ['127.0.0.1'] } });
  });
  afterAll(async () => {
    await server.stop();
    keys.closeAllConnections();
    await new Promise((resolve) => keys.close(resolve));
  });

  async function newClient(): Promise<string> {
    return (await server.auth.clientConfigurations.create({
      tenant: 'acme', name: 'Sync', category: 'hr', resources: { scim: { scopes: ['scim.read'] } },
      tokenEndpointAuthMethod: 'private_key_jwt', jwksUri: keysUrl,
    })).clientId;
  }

  async function token(clientId: string): Promise<{ status: number; error?: string }> {
    const now = Math.floor(Date.now() / 1000);
    const jwt = await new SignJWT({}).setProtectedHeader({ alg: 'EdDSA', kid: 'u1' }).setIssuer(clientId).setSubject(clientId)
      .setAudience(server.auth.issuer).setIssuedAt(now).setExpirationTime(now + 60).setJti(randomUUID()).sign(key.privateKey);
    const answer = await postToken(server.oauthUrl, { grant_type: 'client_credentials', scope: 'scim.read', client_assertion_type: JWT_BEARER_ASSERTION, client_assertion: jwt });
    return { status: answer.status, ...((answer.body as { error?: string }).error ? { error: (answer.body as { error: string }).error } : {}) };
  }

  it("the operator's loopback jwksUri (listed in privateHosts): tokens, the keys fetched once for both requests", async () => {
    mode = 'ok';
    const clientId = await newClient();
    fetches = 0;
    expect(await token(clientId)).toEqual({ status: 200 });
    expect(await token(clientId)).toEqual({ status: 200 });
    expect(fetches).toBe(1);
  });

  it.each([
    ['down (503)', 'down'],
    ['slow (no answer within the timeout)', 'slow'],
    ['huge (48 KiB: over our 32 KiB limit, under the 64 KiB cut of the checked fetch)', 'huge'],
  ] as const)('keys that cannot be read, %s: 401 invalid_client, never a 500 or a hang', async (_name, broken) => {
    mode = broken;
    const clientId = await newClient();
    const started = Date.now();
    expect(await token(clientId)).toEqual({ status: 401, error: 'invalid_client' });
    expect(Date.now() - started).toBeLessThan(3500);
  });

  it('without privateHosts, a loopback jwksUri is not fetched (the checked fetch refuses the address): 401', async () => {
    mode = 'ok';
    const strict = await startServer();
    try {
      const clientId = (await strict.auth.clientConfigurations.create({
        tenant: 'acme', name: 'Sync', category: 'hr', resources: { scim: { scopes: ['scim.read'] } },
        tokenEndpointAuthMethod: 'private_key_jwt', jwksUri: keysUrl,
      })).clientId;
      fetches = 0;
      const now = Math.floor(Date.now() / 1000);
      const jwt = await new SignJWT({}).setProtectedHeader({ alg: 'EdDSA', kid: 'u1' }).setIssuer(clientId).setSubject(clientId)
        .setAudience(strict.auth.issuer).setIssuedAt(now).setExpirationTime(now + 60).setJti(randomUUID()).sign(key.privateKey);
      const answer = await postToken(strict.oauthUrl, { grant_type: 'client_credentials', scope: 'scim.read', client_assertion_type: JWT_BEARER_ASSERTION, client_assertion: jwt });
      expect(answer.status).toBe(401);
      expect(fetches).toBe(0);
    } finally {
      await strict.stop();
    }
  });

  it("a URL a tenant named is fetched without the operator's exceptions (a loopback host refused)", async () => {
    mode = 'ok';
    const clientId = await newClient();
    // As if a tenant had named it (registration refuses a tenant's loopback URL: see the records' tests).
    const stored = await server.auth.clientConfigurations.get(clientId);
    expect(stored?.jwksUri).toBe(keysUrl);
    expect(engineKeysOwner(clientConfigurationMetadata({ ...stored!, jwksUriAuthor: 'tenant' }))).toEqual({ tenant: 'a tenant' });
    expect(engineKeysOwner(clientConfigurationMetadata({ ...stored!, jwksUriAuthor: 'operator' }))).toEqual({});
    expect(engineKeysOwner(clientConfigurationMetadata({ ...stored!, jwksUriAuthor: undefined }))).toEqual({ tenant: 'a tenant' });
  });
});
