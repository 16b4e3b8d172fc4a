import { randomUUID } from 'node:crypto';
import { createServer, type IncomingMessage, type Server, type ServerResponse } from 'node:http';
import type { AddressInfo } from 'node:net';
import { jest } from '@jest/globals';
import { SignJWT, exportJWK, generateKeyPair, type CryptoKey } from 'jose';
import * as oauth from 'oauth4webapi';
import { JWT_BEARER_ASSERTION } from '../../../policies/client-authentication.js';
import { JWKS_URI_KEYS_SECONDS, JWKS_URI_RETRY_SECONDS, type ClientJwk } from '../../../policies/client-keys.js';
import { postToken, startServer, type RunningServer } from '../../support/server.js';
import { STORE_KINDS, useStore } from '../../support/stores.js';

interface KeyPair {
  privateKey: CryptoKey;
  jwk: ClientJwk;
  /** The public key with its private member, as a careless client would publish it. */
  privateJwk: ClientJwk;
}

async function keyPair(kid: string): Promise<KeyPair> {
  const { privateKey, publicKey } = await generateKeyPair('ES256', { extractable: true });
  return {
    privateKey,
    jwk: { ...(await exportJWK(publicKey)), kid, alg: 'ES256' } as ClientJwk,
    privateJwk: { ...(await exportJWK(privateKey)), kid, alg: 'ES256' } as ClientJwk,
  };
}

/** What the client's key server answers next. */
type Answer = (request: IncomingMessage, response: ServerResponse) => void;

/**
 * A private_key_jwt client's keys at its jwksUri, when the key server misbehaves or the client
 * rotates its keys (policies/client-keys.ts, src/engine/patches.ts): every broken key set is a
 * clean 401 invalid_client within the fetch timeout and a margin (never a 500 or a hang), a key
 * removed from the key set stops working at most JWKS_URI_KEYS_SECONDS after the server last read
 * the set (whatever Cache-Control says), and a rotation that publishes the new key that long before
 * using it loses no request. The time bound is checked by moving the clock (Date.now) forward.
 */
describe.each(STORE_KINDS)('private_key_jwt keys at a jwksUri (%s store)', (kind) => {
  const store = useStore(kind);
  let server: RunningServer;
  let keysServer: Server;
  let keysUrl: string;
  let answer: Answer;
  let fetches = 0;
  let a: KeyPair;
  let b: KeyPair;
  let offsetMs = 0;

  const json = (body: unknown, headers: Record<string, string> = {}): Answer => (_request, response) => {
    response.writeHead(200, { 'content-type': 'application/json', ...headers }).end(JSON.stringify(body));
  };

  beforeAll(async () => {
    [a, b] = await Promise.all([keyPair('a'), keyPair('b')]);
    keysServer = createServer((request, response) => {
      fetches += 1;
      answer(request, response);
    });
    await new Promise<void>((resolve) => keysServer.listen(0, '127.0.0.1', resolve));
    keysUrl = `http://127.0.0.1:${(keysServer.address() as AddressInfo).port}/jwks`;
    server = await startServer({ store: store.option(), backchannelLogout: { privateHosts: ['127.0.0.1'] } });
    const realNow = Date.now.bind(Date);
    jest.spyOn(Date, 'now').mockImplementation(() => realNow() + offsetMs);
  });
  afterAll(async () => {
    jest.restoreAllMocks();
    await server.stop();
    keysServer.closeAllConnections();
    await new Promise((resolve) => keysServer.close(resolve));
  });
  beforeEach(() => {
    answer = json({ keys: [a.jwk] });
    fetches = 0;
  });

  async function newClient(jwksUri = keysUrl): Promise<string> {
    return (await server.auth.clientConfigurations.create({
      tenant: 'acme', name: 'Sync', category: 'hr', resources: { scim: { scopes: ['scim.read'] } },
      tokenEndpointAuthMethod: 'private_key_jwt', jwksUri,
    })).clientId;
  }

  /** A token request with an assertion signed by `key`, as a client library makes it. */
  async function token(clientId: string, key: KeyPair): Promise<{ status: number; error?: string }> {
    const now = Math.floor(Date.now() / 1000);
    const jwt = await new SignJWT({}).setProtectedHeader({ alg: 'ES256', kid: key.jwk.kid! }).setIssuer(clientId).setSubject(clientId)
      .setAudience(server.auth.issuer).setIssuedAt(now).setExpirationTime(now + 60).setJti(randomUUID()).sign(key.privateKey);
    const response = await postToken(server.oauthUrl, { grant_type: 'client_credentials', scope: 'scim.read', client_assertion_type: JWT_BEARER_ASSERTION, client_assertion: jwt });
    const error = (response.body as { error?: string }).error;
    return { status: response.status, ...(error ? { error } : {}) };
  }

  it.each<[string, () => Answer]>([
    ['not JSON', () => (_request, response) => void response.writeHead(200, { 'content-type': 'application/json' }).end('<html>keys</html>')],
    ['JSON without a keys array', () => json({ keys: 'a' })],
    ['a private key in it (d)', () => json({ keys: [a.privateJwk] })],
    ['a symmetric key only', () => json({ keys: [{ kty: 'oct', kid: 'a', k: 'c2VjcmV0LXNlY3JldC1zZWNyZXQ' }] })],
    ['an answer of 404', () => (_request, response) => void response.writeHead(404).end()],
    ['a redirect elsewhere', () => (_request, response) => void response.writeHead(302, { location: 'http://127.0.0.1:9/jwks' }).end()],
    ['huge, streamed without a length (1 MiB)', () => (_request, response) => {
      response.writeHead(200, { 'content-type': 'application/json' });
      response.write(`{"keys":[${JSON.stringify(a.jwk)}],"padding":"`);
      for (let chunk = 0; chunk < 64; chunk += 1) response.write('x'.repeat(16 * 1024));
      response.end('"}');
    }],
  ])(`a key set that is %s: 401 invalid_client, no other read for ${JWKS_URI_RETRY_SECONDS} s, then the next assertion tries again`, async (_name, broken) => {
    answer = broken();
    const clientId = await newClient();
    expect(await token(clientId, a)).toEqual({ status: 401, error: 'invalid_client' });
    const reads = fetches;
    // A broken answer is not kept; but the key server is not asked again at once (whoever names
    // the client would otherwise make us send it one request per assertion).
    answer = json({ keys: [a.jwk] });
    expect(await token(clientId, a)).toEqual({ status: 401, error: 'invalid_client' });
    expect(fetches).toBe(reads);
    // After the wait, the next assertion reads the set again: the client gets tokens.
    offsetMs += (JWKS_URI_RETRY_SECONDS + 1) * 1000;
    expect(await token(clientId, a)).toEqual({ status: 200 });
    expect(fetches).toBe(reads + 1);
  });

  it('an assertion signed by a key not in the set (its kid unknown): 401 invalid_client, the set not read again for it', async () => {
    const clientId = await newClient();
    expect(await token(clientId, a)).toEqual({ status: 200 });
    expect(await token(clientId, b)).toEqual({ status: 401, error: 'invalid_client' });
    expect(await token(clientId, b)).toEqual({ status: 401, error: 'invalid_client' });
    // Unknown kids do not make the server fetch the set again (no amplification by a stranger).
    expect(fetches).toBe(1);
  });

  it('a key server that is down (connection refused): 401 invalid_client at once', async () => {
    const closed = createServer();
    await new Promise<void>((resolve) => closed.listen(0, '127.0.0.1', resolve));
    const { port } = closed.address() as AddressInfo;
    await new Promise((resolve) => closed.close(resolve));
    const clientId = await newClient(`http://127.0.0.1:${port}/jwks`);
    const started = performance.now();
    expect(await token(clientId, a)).toEqual({ status: 401, error: 'invalid_client' });
    expect(performance.now() - started).toBeLessThan(2000);
  });

  it('a key server that sends its headers and then never ends the body: 401 within the 2.5 s timeout and a margin', async () => {
    answer = (_request, response) => {
      response.writeHead(200, { 'content-type': 'application/json' });
      response.write('{"keys":[');
    };
    const clientId = await newClient();
    const started = performance.now();
    expect(await token(clientId, a)).toEqual({ status: 401, error: 'invalid_client' });
    expect(performance.now() - started).toBeLessThan(2500 + 1500);
  });

  it(`a key removed from the key set works at most ${JWKS_URI_KEYS_SECONDS} s more, even when the key server says to keep it an hour`, async () => {
    const cacheForAnHour = { 'cache-control': 'public, max-age=3600', expires: new Date(Date.now() + 3_600_000).toUTCString() };
    answer = json({ keys: [a.jwk, b.jwk] }, cacheForAnHour);
    const clientId = await newClient();
    expect(await token(clientId, a)).toEqual({ status: 200 });
    expect(fetches).toBe(1);
    // Key A retired at the URL: the set read a moment ago is still the server's for now.
    answer = json({ keys: [b.jwk] }, cacheForAnHour);
    offsetMs += (JWKS_URI_KEYS_SECONDS - 5) * 1000;
    expect(await token(clientId, a)).toEqual({ status: 200 });
    expect(fetches).toBe(1);
    // Past the bound, the set is read again before an assertion is checked: A is refused, B works.
    offsetMs += 6 * 1000;
    expect(await token(clientId, a)).toEqual({ status: 401, error: 'invalid_client' });
    expect(fetches).toBe(2);
    expect(await token(clientId, b)).toEqual({ status: 200 });
  });

  it('keys read before are not used once the key server answers an error (fail closed): 401 until it answers well', async () => {
    const clientId = await newClient();
    expect(await token(clientId, a)).toEqual({ status: 200 });
    offsetMs += (JWKS_URI_KEYS_SECONDS + 1) * 1000;
    answer = (_request, response) => void response.writeHead(503, { 'content-type': 'application/json' }).end(JSON.stringify({ keys: [a.jwk] }));
    expect(await token(clientId, a)).toEqual({ status: 401, error: 'invalid_client' });
    expect(await token(clientId, a)).toEqual({ status: 401, error: 'invalid_client' });
    // The second failure did not read the set again (within JWKS_URI_RETRY_SECONDS of the first).
    expect(fetches).toBe(2);
    offsetMs += (JWKS_URI_RETRY_SECONDS + 1) * 1000;
    expect(await token(clientId, a)).toEqual({ status: 401, error: 'invalid_client' });
    expect(fetches).toBe(3);
    answer = json({ keys: [a.jwk] });
    offsetMs += (JWKS_URI_RETRY_SECONDS + 1) * 1000;
    expect(await token(clientId, a)).toEqual({ status: 200 });
  });

  it('a rotation that publishes the new key before using it loses no request (oauth4webapi)', async () => {
    const clientId = await newClient();
    const issuer = new URL(server.oauthUrl);
    const insecure = { [oauth.allowInsecureRequests]: true } as const;
    const as = await oauth.processDiscoveryResponse(issuer, await oauth.discoveryRequest(issuer, insecure));
    const outcomes: string[] = [];
    const call = async (key: KeyPair) => {
      const response = await oauth.clientCredentialsGrantRequest(as, { client_id: clientId }, oauth.PrivateKeyJwt({ key: key.privateKey, kid: key.jwk.kid! }), new URLSearchParams({ scope: 'scim.read' }), insecure);
      outcomes.push(`${key.jwk.kid!}:${response.status}`);
    };
    await call(a);
    answer = json({ keys: [a.jwk, b.jwk] });
    await call(a);
    // The server may hold the old set JWKS_URI_KEYS_SECONDS: the client waits that long before signing with B.
    offsetMs += (JWKS_URI_KEYS_SECONDS + 1) * 1000;
    await call(a);
    await call(b);
    answer = json({ keys: [b.jwk] });
    await call(b);
    offsetMs += (JWKS_URI_KEYS_SECONDS + 1) * 1000;
    await call(b);
    expect(outcomes).toEqual(['a:200', 'a:200', 'a:200', 'b:200', 'b:200', 'b:200']);
    // And A, retired that long ago, is refused.
    expect(await token(clientId, a)).toEqual({ status: 401, error: 'invalid_client' });
  });
});
