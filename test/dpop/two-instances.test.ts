import { request } from 'node:http';
import { randomUUID } from 'node:crypto';
import { exportJWK, generateKeyPair, SignJWT } from 'jose';
import { testJwks } from '../support/keys.js';
import { basic, startServer, type RunningServer } from '../support/server.js';
import { useStore } from '../support/stores.js';

/** A token request to `port` that says it is for `host` (as a load balancer in front of both would). */
function tokenRequest(port: number, host: string, headers: Record<string, string>): Promise<{ status: number; body: Record<string, unknown>; nonce: string | undefined }> {
  const body = 'grant_type=client_credentials';
  return new Promise((resolve, reject) => {
    const call = request({ host: '127.0.0.1', port, path: '/oauth2/token', method: 'POST', headers: { host, 'content-type': 'application/x-www-form-urlencoded', 'content-length': String(body.length), ...headers } }, (response) => {
      let text = '';
      response.on('data', (chunk: Buffer) => { text += chunk.toString(); });
      response.on('end', () => resolve({ status: response.statusCode!, body: JSON.parse(text) as Record<string, unknown>, nonce: response.headers['dpop-nonce'] as string | undefined }));
    });
    call.on('error', reject);
    call.end(body);
  });
}

/**
 * Two instances on one Redis behind one host name: a DPoP proof used at one is refused at the
 * other (its `jti` is kept in the shared store), and a nonce one gave is honoured by the other
 * (the nonce secret derives from the cookie keys they share).
 */
describe('DPoP across two instances sharing Redis', () => {
  const store = useStore('redis');
  let first: RunningServer;
  let second: RunningServer;
  let client: { clientId: string; clientSecret: string };
  let host: string;

  beforeAll(async () => {
    const option = store.option();
    const keys = await testJwks(['ES256', 'RS256']);
    const cookieKeys = ['a-cookie-key-of-at-least-32-characters-long', 'another-cookie-key-32-characters-long!!'];
    first = await startServer({ store: option, keys, cookieKeys });
    host = new URL(first.baseUrl).host;
    second = await startServer({ store: option, keys, cookieKeys, baseUrl: first.baseUrl });
    client = await first.auth.clientConfigurations.create({ tenant: 'acme', name: 'Payroll', category: 'hr', resources: { scim: { scopes: ['scim.read'] } } });
  });
  afterAll(async () => {
    await second?.stop();
    await first?.stop();
  });

  it('a proof used at one instance is refused at the other; a nonce of one is honoured by the other', async () => {
    const { privateKey, publicKey } = await generateKeyPair('ES256');
    const jwk = await exportJWK(publicKey);
    const proof = (claims: Record<string, unknown> = {}) => new SignJWT({ htm: 'POST', htu: `${first.oauthUrl}/token`, jti: randomUUID(), ...claims })
      .setProtectedHeader({ alg: 'ES256', typ: 'dpop+jwt', jwk }).setIssuedAt().sign(privateKey);
    const authorization = basic(client.clientId, client.clientSecret);
    const ports = [first, second].map((server) => Number(new URL(server.baseUrl).port));
    const used = await proof();
    const atFirst = await tokenRequest(ports[0]!, host, { authorization, dpop: used });
    expect(atFirst.status).toBe(200);
    expect(atFirst.body.token_type).toBe('DPoP');
    const atSecond = await tokenRequest(ports[1]!, host, { authorization, dpop: used });
    expect(atSecond.status).toBe(400);
    expect(atSecond.body.error).toBe('invalid_grant');
    // The nonce the first gave, in an old proof (its iat alone would be refused), at the second.
    const withNonce = await tokenRequest(ports[1]!, host, { authorization, dpop: await proof({ nonce: atFirst.nonce, iat: Math.floor(Date.now() / 1000) - 3600 }) });
    expect(withNonce.status).toBe(200);
  });
});
