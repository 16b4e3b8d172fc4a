import { createPublicKey, createSecretKey, type JsonWebKey } from 'node:crypto';
import { decodeJwt, exportJWK, generateKeyPair, SignJWT, type JWK } from 'jose';
import { alice, testAccounts } from '../support/accounts.js';
import { testJwks } from '../support/keys.js';
import { basic, postToken, startServer, type RunningServer } from '../support/server.js';
import { signInForCode } from '../support/sign-in.js';

/**
 * Token confusion at userinfo and introspection: what is not a live access token of ours for the
 * right user and tenant is refused at userinfo (401/403) and inactive at introspection, however it
 * is dressed up. Refused tokens change nothing and are never logged.
 */
describe('adversarial: token confusion at userinfo and introspection', () => {
  const WEB = 'https://app.example.com/cb';
  let server: RunningServer;
  let app: { clientId: string; clientSecret: string };
  let resourceServer: { clientId: string; clientSecret: string };
  let tokens: { access_token: string; id_token: string; refresh_token: string };
  let machineToken: string;
  let ourPublicKey: JWK;

  beforeAll(async () => {
    server = await startServer({ accounts: testAccounts([alice]), keys: await testJwks(['ES256', 'RS256']), accessTokenAlgorithm: 'RS256' });
    const created = await server.auth.appRegistrations.create({ name: 'Web', redirectUris: [WEB], clientType: 'confidential' });
    app = { clientId: created.clientId, clientSecret: created.clientSecret! };
    resourceServer = await server.auth.clientConfigurations.create({ tenant: 'acme', name: 'API', category: 'api', resources: { scim: { scopes: ['scim.read'] } } });
    const { code, verifier } = await signInForCode(server, { clientId: app.clientId, redirectUri: WEB }, alice, 'openid profile scim.read');
    tokens = (await postToken(server.oauthUrl, { grant_type: 'authorization_code', code, redirect_uri: WEB, code_verifier: verifier }, { authorization: basic(app.clientId, app.clientSecret) })).body as typeof tokens;
    machineToken = (await postToken(server.oauthUrl, 'grant_type=client_credentials', { authorization: basic(resourceServer.clientId, resourceServer.clientSecret) })).body.access_token as string;
    const jwks = (await (await fetch(`${server.oauthUrl}/jwks`)).json()) as { keys: JWK[] };
    ourPublicKey = jwks.keys.find((key) => key.alg === 'RS256')!;
  });
  afterAll(() => server.stop());

  /** The claims of our real access token, re-signed (or not) by whoever forges. */
  const claims = () => decodeJwt(tokens.access_token);

  const forgeries: Array<[string, () => Promise<string>]> = [
    ['the ID token (typ JWT, aud the app)', async () => tokens.id_token],
    ['the refresh token', async () => tokens.refresh_token],
    ['alg none, our claims', async () => {
      const header = Buffer.from(JSON.stringify({ alg: 'none', typ: 'at+jwt' })).toString('base64url');
      return `${header}.${Buffer.from(JSON.stringify(claims())).toString('base64url')}.`;
    }],
    ['HS256 signed with our public key as the secret', async () => {
      const secret = createSecretKey(Buffer.from(createPublicKey({ key: ourPublicKey as JsonWebKey, format: 'jwk' }).export({ type: 'spki', format: 'pem' })));
      return new SignJWT(claims()).setProtectedHeader({ alg: 'HS256', typ: 'at+jwt', kid: ourPublicKey.kid! }).sign(secret);
    }],
    ['a foreign issuer\'s key, our kid and claims', async () => {
      const { privateKey } = await generateKeyPair('RS256');
      return new SignJWT(claims()).setProtectedHeader({ alg: 'RS256', typ: 'at+jwt', kid: ourPublicKey.kid! }).sign(privateKey);
    }],
    ['a foreign issuer\'s key and its own JWK in the header', async () => {
      const { privateKey, publicKey } = await generateKeyPair('ES256');
      return new SignJWT(claims()).setProtectedHeader({ alg: 'ES256', typ: 'at+jwt', jwk: await exportJWK(publicKey) }).sign(privateKey);
    }],
    ['our claims with another signature', async () => {
      const [header, payload] = tokens.access_token.split('.');
      return `${header}.${payload}.${Buffer.from('x'.repeat(256)).toString('base64url')}`;
    }],
    ['our token with the payload changed', async () => {
      const [header, , signature] = tokens.access_token.split('.');
      return `${header}.${Buffer.from(JSON.stringify({ ...claims(), sub: 'mallory' })).toString('base64url')}.${signature}`;
    }],
    ['an empty string', async () => ''],
    ['a 4 KB string', async () => 'a'.repeat(4096)],
  ];

  it.each(forgeries)('userinfo refuses %s (401 invalid_token or 400, with a challenge)', async (_name, forge) => {
    const token = await forge();
    const response = await fetch(`${server.oauthUrl}/userinfo`, { headers: { authorization: `Bearer ${token}` } });
    expect([400, 401]).toContain(response.status);
    expect(response.headers.get('www-authenticate')).toMatch(/^Bearer realm=/);
    const body = (await response.json()) as Record<string, unknown>;
    expect(body).not.toHaveProperty('sub');
  });

  it.each(forgeries)('introspection answers { active: false } for %s', async (_name, forge) => {
    const response = await fetch(`${server.oauthUrl}/introspect`, {
      method: 'POST',
      headers: { authorization: basic(resourceServer.clientId, resourceServer.clientSecret), 'content-type': 'application/x-www-form-urlencoded' },
      body: new URLSearchParams({ token: await forge() }).toString(),
    });
    expect(response.status).toBe(forge === forgeries[8]![1] ? 400 : 200);
    if (response.status === 200) expect(await response.json()).toEqual({ active: false });
  });

  it('a machine token: no user for userinfo (403), active at introspection for its own tenant', async () => {
    const userinfo = await fetch(`${server.oauthUrl}/userinfo`, { headers: { authorization: `Bearer ${machineToken}` } });
    expect(userinfo.status).toBe(403);
    expect(userinfo.headers.get('www-authenticate')).toMatch(/error="insufficient_scope"/);
    const introspection = await fetch(`${server.oauthUrl}/introspect`, {
      method: 'POST',
      headers: { authorization: basic(resourceServer.clientId, resourceServer.clientSecret), 'content-type': 'application/x-www-form-urlencoded' },
      body: new URLSearchParams({ token: machineToken }).toString(),
    });
    expect(await introspection.json()).toMatchObject({ active: true, sub: resourceServer.clientId, tenant: 'acme' });
  });

  it('the real token still works after all that, and no token reached the logs', async () => {
    const response = await fetch(`${server.oauthUrl}/userinfo`, { headers: { authorization: `Bearer ${tokens.access_token}` } });
    expect(response.status).toBe(200);
    const logs = server.logLines.join('\n');
    for (const secret of [tokens.access_token, tokens.refresh_token, tokens.id_token, machineToken, app.clientSecret, resourceServer.clientSecret]) {
      expect(logs).not.toContain(secret);
      expect(logs).not.toContain(secret.split('.')[1] ?? secret);
    }
  });
});
