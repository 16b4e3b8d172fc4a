import { createHash, randomUUID } from 'node:crypto';
import { request } from 'node:http';
import { exportJWK, generateKeyPair, SignJWT, type CryptoKey, type JWK } from 'jose';
import { JWT_BEARER_ASSERTION } from '../../policies/client-authentication.js';
import type { ClientJwk } from '../../policies/client-keys.js';
import { alice, testAccounts } from '../support/accounts.js';
import { testJwks } from '../support/keys.js';
import { basic, startServer, type RunningServer } from '../support/server.js';
import { signInForCode } from '../support/sign-in.js';
import { useStore } from '../support/stores.js';

const WEB = 'https://app.example.com/cb';
const ath = (token: string) => createHash('sha256').update(token).digest('base64url');

interface Answer {
  status: number;
  body: Record<string, unknown>;
}

/** A request to one instance's port that says it is for the shared host (as a load balancer in front of both would). */
function callAt(port: number, host: string, method: string, path: string, headers: Record<string, string>, body?: string): Promise<Answer> {
  return new Promise((resolve, reject) => {
    const length = body === undefined ? {} : { 'content-type': 'application/x-www-form-urlencoded', 'content-length': String(Buffer.byteLength(body)) };
    const call = request({ host: '127.0.0.1', port, path, method, headers: { host, ...length, ...headers } }, (response) => {
      let text = '';
      response.on('data', (chunk: Buffer) => { text += chunk.toString(); });
      response.on('end', () => resolve({ status: response.statusCode!, body: JSON.parse(text) as Record<string, unknown> }));
    });
    call.on('error', reject);
    call.end(body);
  });
}

/**
 * TWO INSTANCES SHARING REDIS: what one instance accepted once, the other refuses. A DPoP proof used
 * at userinfo on one is refused at the other (the shared store keeps its jti, not the process); and
 * the same DPoP proof, or the same client assertion, sent to both instances at the same moment
 * gets exactly one token (the store's atomic single use: src/engine/replay-detection.ts).
 */
describe('replays across two instances sharing Redis', () => {
  const store = useStore('redis');
  let first: RunningServer;
  let second: RunningServer;
  let host: string;
  let ports: number[];
  let machine: { clientId: string; clientSecret: string };
  let signer: { clientId: string; privateKey: CryptoKey };
  let dpop: { privateKey: CryptoKey; jwk: JWK };

  beforeAll(async () => {
    const shared = { store: store.option(), keys: await testJwks(), cookieKeys: ['k'.repeat(32)], accounts: testAccounts([alice]) };
    first = await startServer(shared);
    second = await startServer({ ...shared, baseUrl: first.baseUrl });
    host = new URL(first.baseUrl).host;
    ports = [first, second].map((server) => Number(new URL(server.baseUrl).port));
    machine = await first.auth.clientConfigurations.create({ tenant: 'acme', name: 'Sync', category: 'hr', resources: { scim: { scopes: ['scim.read'] } } });
    const assertionKey = await generateKeyPair('ES256', { extractable: true });
    const { clientId } = await first.auth.clientConfigurations.create({
      tenant: 'acme', name: 'Payroll', category: 'hr', resources: { scim: { scopes: ['scim.read'] } },
      tokenEndpointAuthMethod: 'private_key_jwt', jwks: { keys: [{ ...(await exportJWK(assertionKey.publicKey)), kid: 'k1', alg: 'ES256' } as ClientJwk] },
    });
    signer = { clientId, privateKey: assertionKey.privateKey };
    const key = await generateKeyPair('ES256', { extractable: true });
    dpop = { privateKey: key.privateKey, jwk: await exportJWK(key.publicKey) };
  });
  afterAll(async () => {
    await second?.stop();
    await first?.stop();
  });

  const proof = (claims: Record<string, unknown>) => new SignJWT({ jti: randomUUID(), ...claims })
    .setProtectedHeader({ alg: 'ES256', typ: 'dpop+jwt', jwk: dpop.jwk }).setIssuedAt().sign(dpop.privateKey);

  it('a DPoP proof used at userinfo on one instance is refused on the other', async () => {
    const app = await first.auth.appRegistrations.create({ name: 'Web', redirectUris: [WEB], clientType: 'confidential' });
    const { code, verifier } = await signInForCode(first, { clientId: app.clientId, redirectUri: WEB }, alice, 'openid');
    const tokens = await callAt(ports[0]!, host, 'POST', '/oauth2/token', {
      authorization: basic(app.clientId, app.clientSecret!), dpop: await proof({ htm: 'POST', htu: `${first.oauthUrl}/token` }),
    }, new URLSearchParams({ grant_type: 'authorization_code', code, redirect_uri: WEB, code_verifier: verifier }).toString());
    expect(tokens.body.token_type).toBe('DPoP');
    const token = tokens.body.access_token as string;
    const used = await proof({ htm: 'GET', htu: `${first.oauthUrl}/userinfo`, ath: ath(token) });
    const headers = { authorization: `DPoP ${token}`, dpop: used };
    expect(await callAt(ports[0]!, host, 'GET', '/oauth2/userinfo', headers)).toMatchObject({ status: 200, body: { sub: alice.sub } });
    expect(await callAt(ports[1]!, host, 'GET', '/oauth2/userinfo', headers)).toMatchObject({ status: 401, body: { error: 'invalid_dpop_proof' } });
    // A new proof of the same key is fine on the other instance.
    const fresh = { authorization: `DPoP ${token}`, dpop: await proof({ htm: 'GET', htu: `${first.oauthUrl}/userinfo`, ath: ath(token) }) };
    expect((await callAt(ports[1]!, host, 'GET', '/oauth2/userinfo', fresh)).status).toBe(200);
  });

  it('one DPoP proof sent to both instances at the same moment: exactly one token', async () => {
    const shared = await proof({ htm: 'POST', htu: `${first.oauthUrl}/token` });
    const answers = await Promise.all(Array.from({ length: 6 }, (_, index) => callAt(ports[index % 2]!, host, 'POST', '/oauth2/token', {
      authorization: basic(machine.clientId, machine.clientSecret), dpop: shared,
    }, 'grant_type=client_credentials')));
    expect(answers.map((answer) => answer.status).sort()).toEqual([200, 400, 400, 400, 400, 400]);
    expect(answers.filter((answer) => answer.status === 400).map((answer) => answer.body.error)).toEqual(Array(5).fill('invalid_grant'));
  });

  it('one client assertion sent to both instances at the same moment: exactly one token', async () => {
    const now = Math.floor(Date.now() / 1000);
    const jwt = await new SignJWT({}).setProtectedHeader({ alg: 'ES256', kid: 'k1' }).setIssuer(signer.clientId).setSubject(signer.clientId)
      .setAudience(first.auth.issuer).setIssuedAt(now).setExpirationTime(now + 60).setJti(randomUUID()).sign(signer.privateKey);
    const body = new URLSearchParams({ grant_type: 'client_credentials', client_assertion_type: JWT_BEARER_ASSERTION, client_assertion: jwt }).toString();
    const answers = await Promise.all(Array.from({ length: 6 }, (_, index) => callAt(ports[index % 2]!, host, 'POST', '/oauth2/token', {}, body)));
    expect(answers.map((answer) => answer.status).sort()).toEqual([200, 401, 401, 401, 401, 401]);
    expect(answers.filter((answer) => answer.status === 401).map((answer) => answer.body.error)).toEqual(Array(5).fill('invalid_client'));
  });
});
