import { randomUUID } from 'node:crypto';
import { request } from 'node:http';
import { exportJWK, generateKeyPair, SignJWT, type CryptoKey, type JWK } from 'jose';
import { JWT_BEARER_ASSERTION } from '../../policies/client-authentication.js';
import type { ClientJwk } from '../../policies/client-keys.js';
import { startServer, type RunningServer } from '../support/server.js';

/** A POST over a real socket with headers fetch would not send as given (`Host`). */
function post(url: string, form: Record<string, string>, headers: Record<string, string>): Promise<{ status: number; body: Record<string, unknown> }> {
  const target = new URL(url);
  const body = new URLSearchParams(form).toString();
  return new Promise((resolve, reject) => {
    const outgoing = request({
      host: target.hostname, port: target.port, path: target.pathname, method: 'POST',
      headers: { 'content-type': 'application/x-www-form-urlencoded', 'content-length': Buffer.byteLength(body), ...headers },
    }, (response) => {
      const chunks: Buffer[] = [];
      response.on('data', (chunk: Buffer) => chunks.push(chunk));
      response.on('end', () => resolve({ status: response.statusCode ?? 0, body: JSON.parse(Buffer.concat(chunks).toString('utf8') || '{}') as Record<string, unknown> }));
    });
    outgoing.on('error', reject);
    outgoing.end(body);
  });
}

/**
 * A CLIENT ASSERTION OR DPOP PROOF MADE FOR ANOTHER SERVER, presented with that server's name in
 * `Host` (or `X-Forwarded-Host` behind a trusted proxy): refused. The engine checks an assertion's
 * audience and a proof's `htu` against the request's URL; src/endpoints/ops/discovery.ts
 * (pinPublicOrigin) makes that URL ours whatever the request says, at every OAuth endpoint,
 * including the token and pushed authorization endpoints that our routes hand to the engine.
 */
describe.each([false, true])('an assertion or a proof made for another host (proxy: %s)', (proxy) => {
  let server: RunningServer;
  let key: { privateKey: CryptoKey; jwk: JWK };
  let machine: string;
  let app: string;
  const evil = 'evil.example';
  const hostHeaders: Record<string, string> = proxy ? { 'x-forwarded-host': evil, 'x-forwarded-proto': 'http' } : { host: evil };

  beforeAll(async () => {
    server = await startServer({ proxy });
    const pair = await generateKeyPair('ES256', { extractable: true });
    key = { privateKey: pair.privateKey, jwk: { ...(await exportJWK(pair.publicKey)), kid: 'k1' } };
    const jwks = { keys: [key.jwk as ClientJwk] };
    machine = (await server.auth.clientConfigurations.create({
      tenant: 'acme', name: 'Sync', category: 'hr', resources: { scim: { scopes: ['scim.read'] } }, tokenEndpointAuthMethod: 'private_key_jwt', jwks,
    })).clientId;
    app = (await server.auth.appRegistrations.create({
      name: 'Web', redirectUris: ['https://app.example.com/cb'], clientType: 'confidential', tokenEndpointAuthMethod: 'private_key_jwt', jwks,
    })).clientId;
  });
  afterAll(() => server.stop());

  /** Our OAuth URL with another host: what the attacker's assertion or proof names. */
  const elsewhere = (path: string) => {
    const url = new URL(`${server.oauthUrl}${path}`);
    url.host = evil;
    return url.href;
  };
  const assertion = (clientId: string, aud: string) => new SignJWT({})
    .setProtectedHeader({ alg: 'ES256', kid: 'k1' }).setIssuer(clientId).setSubject(clientId).setAudience(aud)
    .setIssuedAt().setExpirationTime('60s').setJti(randomUUID()).sign(key.privateKey);
  const proof = async (htu: string) => {
    const dpop = await generateKeyPair('ES256');
    return new SignJWT({ htm: 'POST', htu, jti: randomUUID() })
      .setProtectedHeader({ alg: 'ES256', typ: 'dpop+jwt', jwk: await exportJWK(dpop.publicKey) }).setIssuedAt().sign(dpop.privateKey);
  };
  const machineToken = async (aud: string, headers: Record<string, string>) => post(`${server.oauthUrl}/token`, {
    grant_type: 'client_credentials', client_assertion_type: JWT_BEARER_ASSERTION, client_assertion: await assertion(machine, aud),
  }, headers);
  const push = async (aud: string, headers: Record<string, string>) => post(`${server.oauthUrl}/par`, {
    client_id: app, response_type: 'code', scope: 'openid', state: 'st', redirect_uri: 'https://app.example.com/cb',
    code_challenge: 'E9Melhoa2OwvFrEMTJguCHaoeK1t8URWbuGJSstw-cM', code_challenge_method: 'S256',
    client_assertion_type: JWT_BEARER_ASSERTION, client_assertion: await assertion(app, aud),
  }, headers);

  it('the token endpoint: an assertion for the other host is invalid_client; ours works under any Host', async () => {
    const refused = await machineToken(elsewhere('/token'), hostHeaders);
    expect(refused).toMatchObject({ status: 401, body: { error: 'invalid_client' } });
    expect(refused.body).not.toHaveProperty('access_token');
    expect((await machineToken(`${server.oauthUrl}/token`, hostHeaders)).status).toBe(200);
  });

  it('the pushed authorization endpoint: an assertion for the other host is invalid_client; ours works', async () => {
    const refused = await push(elsewhere('/par'), hostHeaders);
    expect(refused).toMatchObject({ status: 401, body: { error: 'invalid_client' } });
    expect(refused.body).not.toHaveProperty('request_uri');
    const pushed = await push(`${server.oauthUrl}/par`, hostHeaders);
    expect(pushed).toMatchObject({ status: 201, body: { request_uri: expect.any(String) } });
  });

  it('a DPoP proof whose htu names the other host is invalid_dpop_proof; one for our URL works', async () => {
    const refused = await machineToken(`${server.oauthUrl}/token`, { ...hostHeaders, dpop: await proof(elsewhere('/token')) });
    expect(refused).toMatchObject({ status: 400, body: { error: 'invalid_dpop_proof' } });
    const bound = await machineToken(`${server.oauthUrl}/token`, { ...hostHeaders, dpop: await proof(`${server.oauthUrl}/token`) });
    expect(bound).toMatchObject({ status: 200, body: { token_type: 'DPoP' } });
  });
});
