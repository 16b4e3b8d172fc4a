/**
 * Slow bodies: a request that announces more bytes than it sends is cut with 408 within
 * `limits.bodyTimeoutMs`, and its connection closed, whichever endpoint it was for (token,
 * sign-in form, management API, the engine's own parsers). A body that arrives slowly but in time
 * is served.
 */
import { connect } from 'node:net';
import { testAccounts } from '../support/accounts.js';
import { basic, postToken, startServer, type RunningServer } from '../support/server.js';
import { signInForCode } from '../support/sign-in.js';

const TIMEOUT_MS = 400;

interface Raw {
  head: string;
  /** ms from sending the head to the end of the answer (the connection closing). */
  elapsed: number;
}

/** Sends a head announcing `declared` bytes and then only `sent`, and waits for the answer to end. */
function stall(port: number, path: string, declared: number, sent: string, extraHeaders = '', type = 'application/x-www-form-urlencoded'): Promise<Raw> {
  return new Promise((resolve, reject) => {
    const socket = connect(port, '127.0.0.1');
    const started = Date.now();
    let answer = '';
    socket.setEncoding('utf8');
    socket.on('data', (chunk: string) => (answer += chunk));
    socket.on('close', () => resolve({ head: answer, elapsed: Date.now() - started }));
    socket.on('error', reject);
    socket.write(`POST ${path} HTTP/1.1\r\nHost: 127.0.0.1:${port}\r\nContent-Type: ${type}\r\nContent-Length: ${declared}\r\n${extraHeaders}\r\n${sent}`);
    setTimeout(() => socket.destroy(new Error('no answer within 5 s')), 5000).unref();
  });
}

describe('adversarial: slow bodies', () => {
  let server: RunningServer;
  let port: number;
  let client: { clientId: string; clientSecret: string };
  let adminToken: string;

  beforeAll(async () => {
    const admin = { sub: 'admin', password: 'admin-pw', tenant: 'acme', permissions: ['integration_setup'] };
    server = await startServer({ accounts: testAccounts([admin]), limits: { bodyTimeoutMs: TIMEOUT_MS } });
    port = Number(new URL(server.baseUrl).port);
    client = await server.auth.clientConfigurations.create({ tenant: 'acme', name: 'n', category: 'c', resources: { scim: { scopes: ['scim.read'] } } });
    const portal = await server.auth.appRegistrations.create({ name: 'Portal', redirectUris: ['https://portal.example/cb'], clientType: 'confidential', firstParty: true });
    const { code, verifier } = await signInForCode(server, { clientId: portal.clientId, redirectUri: 'https://portal.example/cb' }, admin, 'openid manage.integrations');
    const tokens = await postToken(server.oauthUrl, { grant_type: 'authorization_code', code, redirect_uri: 'https://portal.example/cb', code_verifier: verifier }, { authorization: basic(portal.clientId, portal.clientSecret!) });
    adminToken = tokens.body.access_token as string;
  });
  afterAll(() => server.stop());

  it.each([
    ['the token endpoint (16,000 bytes announced)', '/oauth2/token', 16_000, () => basic(client.clientId, client.clientSecret), undefined],
    ['a sign-in form (3,000 bytes announced)', '/oauth2/interaction/some-uid/login', 3_000, () => '', undefined],
    ['the management API (3,000 bytes announced)', '/api/oauth2/client-configurations', 3_000, () => `Bearer ${adminToken}`, 'application/json'],
  ])('%s, 11 bytes sent → 408 and the connection closed, in time', async (_name, path, declared, authorization, type) => {
    const header = authorization() ? `Authorization: ${authorization()}\r\n` : '';
    const answer = await stall(port, path, declared, 'grant_type=', header, type);
    expect(answer.head).toMatch(/^HTTP\/1\.1 408 /);
    expect(answer.head).toContain('"error":"invalid_request"');
    expect(answer.head).toMatch(/connection: close/i);
    expect(answer.elapsed).toBeGreaterThanOrEqual(TIMEOUT_MS - 50);
    expect(answer.elapsed).toBeLessThan(TIMEOUT_MS + 1500);
  });

  it('a body that trickles in within the limit is served', async () => {
    const body = 'grant_type=client_credentials';
    const answer = await new Promise<string>((resolve, reject) => {
      const socket = connect(port, '127.0.0.1');
      let text = '';
      socket.setEncoding('utf8').on('data', (chunk: string) => {
        text += chunk;
        if (text.includes('access_token')) {
          socket.destroy();
          resolve(text);
        }
      }).on('error', reject);
      socket.write(`POST /oauth2/token HTTP/1.1\r\nHost: x\r\nAuthorization: ${basic(client.clientId, client.clientSecret)}\r\nContent-Type: application/x-www-form-urlencoded\r\nContent-Length: ${body.length}\r\n\r\n${body.slice(0, 5)}`);
      setTimeout(() => socket.write(body.slice(5)), TIMEOUT_MS / 2);
    });
    expect(answer).toMatch(/^HTTP\/1\.1 200 /);
  });
});
