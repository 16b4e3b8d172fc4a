import { createLocalJWKSet, decodeProtectedHeader, jwtVerify, type JSONWebKeySet } from 'jose';
import { alice, bob, testAccounts } from '../../support/accounts.js';
import { basic, postToken, startServer, type RunningServer } from '../../support/server.js';
import { STORE_KINDS, useStore } from '../../support/stores.js';
import { pkcePair, UserAgent, type Step } from '../../support/user-agent.js';

const SPA = 'http://127.0.0.1:5173/callback';
const WEB = 'https://app.example.com/oauth/callback';

describe.each(STORE_KINDS)('named-user flow over HTTP (%s store)', (kind) => {
  const store = useStore(kind);
  let server: RunningServer;
  let jwks: JSONWebKeySet;
  let spa: { clientId: string };
  let web: { clientId: string; clientSecret: string };

  beforeAll(async () => {
    server = await startServer({ store: store.option(), accounts: testAccounts([alice, bob]), pathPrefix: '/auth2' });
    spa = await server.auth.appRegistrations.create({ name: 'Team SPA', redirectUris: [SPA], clientType: 'public' });
    const created = await server.auth.appRegistrations.create({
      name: 'HR Portal', description: 'The HR portal', redirectUris: [WEB], clientType: 'confidential',
    });
    web = { clientId: created.clientId, clientSecret: created.clientSecret! };
    jwks = (await (await fetch(`${server.oauthUrl}/jwks`)).json()) as JSONWebKeySet;
  });
  afterAll(async () => {
    await server.stop();
  });

  function authorizeUrl(params: Record<string, string>): string {
    return `${server.oauthUrl}/authorize?${new URLSearchParams(params)}`;
  }

  /** Runs authorize → login → consent and returns the app's redirect. */
  async function signIn(
    agent: UserAgent,
    params: Record<string, string>,
    user = alice,
    decision: 'allow' | 'deny' = 'allow',
  ): Promise<URL> {
    let step: Step = await agent.request(authorizeUrl(params));
    if (step.html.includes('name="password"')) step = await agent.submit(step, { username: user.sub, password: user.password });
    if (step.html.includes('value="allow"')) step = await agent.submit(step, { decision });
    if (!step.location) throw new Error(`no redirect back to the app (status ${step.status}):\n${step.html}`);
    return new URL(step.location);
  }

  it('public app: code + PKCE, no refresh token, JWT for the user with her tenant and scopes', async () => {
    const agent = new UserAgent(server.baseUrl);
    const { verifier, challenge } = pkcePair();
    const back = await signIn(agent, {
      response_type: 'code', client_id: spa.clientId, redirect_uri: SPA, scope: 'openid profile scim.read scim.write',
      state: 'st-1', code_challenge: challenge, code_challenge_method: 'S256',
    });
    expect(back.origin + back.pathname).toBe(SPA);
    expect(back.searchParams.get('state')).toBe('st-1');
    const code = back.searchParams.get('code')!;
    const response = await postToken(server.oauthUrl, {
      grant_type: 'authorization_code', client_id: spa.clientId, code, redirect_uri: SPA, code_verifier: verifier,
    });
    expect(response.status).toBe(200);
    expect(response.body).toMatchObject({ token_type: 'Bearer', expires_in: 300 });
    expect(response.body).not.toHaveProperty('refresh_token');
    const { payload } = await jwtVerify(response.body.access_token as string, createLocalJWKSet(jwks), { typ: 'at+jwt' });
    expect(payload).toMatchObject({ sub: 'alice', tenant: 'acme', client_id: spa.clientId, scope: 'openid profile scim.read' });
    const idToken = response.body.id_token as string;
    expect(decodeProtectedHeader(idToken).alg).toBe('RS256');
    const { payload: identity } = await jwtVerify(idToken, createLocalJWKSet(jwks), { audience: spa.clientId });
    expect(identity).toMatchObject({ sub: 'alice', name: 'Alice Example' });
    expect(identity).not.toHaveProperty('email');
  });

  it('lets a browser app call the token endpoint from its own origin only (CORS)', async () => {
    const allowed = 'http://127.0.0.1:5173';
    const ask = (origin: string) => fetch(`${server.oauthUrl}/token`, {
      method: 'POST',
      headers: { origin, 'content-type': 'application/x-www-form-urlencoded' },
      body: new URLSearchParams({ grant_type: 'authorization_code', client_id: spa.clientId, code: 'x', redirect_uri: SPA, code_verifier: 'a'.repeat(43) }),
    });
    expect((await ask(allowed)).headers.get('access-control-allow-origin')).toBe(allowed);
    expect((await ask('https://evil.example')).headers.get('access-control-allow-origin')).toBeNull();
    const preflight = (origin: string) => fetch(`${server.oauthUrl}/token`, {
      method: 'OPTIONS',
      headers: { origin, 'access-control-request-method': 'POST', 'access-control-request-headers': 'content-type' },
    });
    const good = await preflight(allowed);
    expect(good.status).toBe(204);
    expect(good.headers.get('access-control-allow-origin')).toBe(allowed);
    expect(good.headers.get('access-control-allow-methods')).toBe('POST');
    expect(good.headers.get('access-control-allow-headers')).toBe('content-type');
    // A preflight from any other origin is not answered with CORS headers (the browser stops there).
    const foreign = await preflight('https://evil.example');
    expect([...foreign.headers.keys()].filter((name) => name.startsWith('access-control-'))).toEqual([]);
  });

  it('gives no CORS header to a caller without an Origin, and Pragma: no-cache with every token answer', async () => {
    const client = await server.auth.clientConfigurations.create({ tenant: 'acme', name: 'M', category: 'c', resources: { scim: { scopes: ['scim.read'] } } });
    const ok = await postToken(server.oauthUrl, 'grant_type=client_credentials', { authorization: basic(client.clientId, client.clientSecret) });
    const failed = await postToken(server.oauthUrl, 'grant_type=client_credentials', { authorization: basic(client.clientId, 'wrong') });
    const refused = await postToken(server.oauthUrl, 'grant_type=nope', { authorization: basic(client.clientId, client.clientSecret) });
    for (const answer of [ok, failed, refused]) {
      expect([...answer.headers.keys()].filter((name) => name.startsWith('access-control-'))).toEqual([]);
      expect(answer.headers.get('pragma')).toBe('no-cache');
      expect(answer.headers.get('cache-control')).toBe('no-store');
    }
    expect([ok.status, failed.status, refused.status]).toEqual([200, 401, 400]);
    // A confidential app's origin never gets CORS: it exchanges its codes on its server.
    const web = await fetch(`${server.oauthUrl}/token`, {
      method: 'OPTIONS', headers: { origin: 'https://app.example.com', 'access-control-request-method': 'POST' },
    });
    expect(web.headers.get('access-control-allow-origin')).toBeNull();
  });

  it('confidential app: Basic, refresh token rotated on use, reuse revokes the grant', async () => {
    const agent = new UserAgent(server.baseUrl);
    const { verifier, challenge } = pkcePair();
    const back = await signIn(agent, {
      response_type: 'code', client_id: web.clientId, redirect_uri: WEB, scope: 'user.read',
      state: 'xyz', code_challenge: challenge, code_challenge_method: 'S256',
    });
    const auth = { authorization: basic(web.clientId, web.clientSecret) };
    const first = await postToken(server.oauthUrl, { grant_type: 'authorization_code', code: back.searchParams.get('code')!, redirect_uri: WEB, code_verifier: verifier }, auth);
    expect(first.status).toBe(200);
    expect(first.body.scope).toBe('user.read');
    const refreshToken = first.body.refresh_token as string;
    expect(typeof refreshToken).toBe('string');
    const second = await postToken(server.oauthUrl, { grant_type: 'refresh_token', refresh_token: refreshToken }, auth);
    expect(second.status).toBe(200);
    expect(second.body.refresh_token).not.toBe(refreshToken);
    // The successor is used: the first token presented again is a reuse, and the grant ends.
    const third = await postToken(server.oauthUrl, { grant_type: 'refresh_token', refresh_token: second.body.refresh_token as string }, auth);
    expect(third.status).toBe(200);
    const reuse = await postToken(server.oauthUrl, { grant_type: 'refresh_token', refresh_token: refreshToken }, auth);
    expect(reuse.status).toBe(400);
    expect(reuse.body.error).toBe('invalid_grant');
    const afterRevoke = await postToken(server.oauthUrl, { grant_type: 'refresh_token', refresh_token: third.body.refresh_token as string }, auth);
    expect(afterRevoke.body.error).toBe('invalid_grant');
  });
});
