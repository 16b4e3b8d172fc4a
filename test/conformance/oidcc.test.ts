import { createLocalJWKSet, decodeJwt, jwtVerify, type JSONWebKeySet } from 'jose';
import { alice, testAccounts } from '../support/accounts.js';
import { testJwks } from '../support/keys.js';
import { basic, postToken, startServer, type RunningServer } from '../support/server.js';
import { pkcePair, UserAgent, type Step } from '../support/user-agent.js';

/**
 * The behaviours the OpenID Foundation's conformance test plans check, one test per module, named
 * after it: the Basic OP plan (`oidcc-*`) and the RP-Initiated Logout plan
 * (`oidcc-rp-initiated-logout-*`). Over HTTP with a minimal browser (cookies, redirects, forms).
 */
describe('OpenID Connect conformance (Basic OP, RP-Initiated Logout)', () => {
  const REDIRECT = 'https://rp.example/cb';
  const REDIRECT_WITH_QUERY = 'https://rp.example/cb?foo=bar';
  const POST_LOGOUT = 'https://rp.example/logged-out';
  const POST_LOGOUT_WITH_QUERY = 'https://rp.example/logged-out?foo=bar';
  let server: RunningServer;
  let rp: { clientId: string; clientSecret: string };
  let jwks: JSONWebKeySet;

  beforeAll(async () => {
    server = await startServer({ accounts: testAccounts([alice]), keys: await testJwks(['ES256', 'RS256']) });
    const app = await server.auth.appRegistrations.create({
      name: 'Conformance RP',
      redirectUris: [REDIRECT, REDIRECT_WITH_QUERY],
      postLogoutRedirectUris: [POST_LOGOUT, POST_LOGOUT_WITH_QUERY],
      clientType: 'confidential',
    });
    rp = { clientId: app.clientId, clientSecret: app.clientSecret! };
    jwks = (await (await fetch(`${server.oauthUrl}/jwks`)).json()) as JSONWebKeySet;
  });
  afterAll(() => server.stop());

  interface Flow {
    agent: UserAgent;
    verifier: string;
    /** Where the browser came back to the RP, or the page it stopped at. */
    back: URL | undefined;
    page: Step;
    pages: string[];
  }

  /** An authorization request; signs in and allows when asked (unless told not to). */
  async function authorize(params: Record<string, string>, agent = new UserAgent(server.baseUrl), options: { signIn?: boolean; method?: 'GET' | 'POST' } = {}): Promise<Flow> {
    const { verifier, challenge } = pkcePair();
    const query = new URLSearchParams({
      response_type: 'code', client_id: rp.clientId, redirect_uri: REDIRECT, scope: 'openid', state: 'st-1',
      code_challenge: challenge, code_challenge_method: 'S256', ...params,
    });
    for (const [name, value] of Object.entries(params)) if (value === '') query.delete(name);
    const pages: string[] = [];
    let page = options.method === 'POST'
      ? await agent.request(`${server.oauthUrl}/authorize`, { method: 'POST', body: query.toString() })
      : await agent.request(`${server.oauthUrl}/authorize?${query}`);
    if (options.signIn !== false && page.html.includes('name="password"')) {
      pages.push('login');
      page = await agent.submit(page, { username: alice.sub, password: alice.password });
    }
    if (options.signIn !== false && page.html.includes('value="allow"')) {
      pages.push('consent');
      page = await agent.submit(page, { decision: 'allow' });
    }
    return { agent, verifier, back: page.location ? new URL(page.location) : undefined, page, pages };
  }

  async function exchange(flow: Flow, redirectUri = REDIRECT) {
    const code = flow.back?.searchParams.get('code');
    if (!code) throw new Error(`no code: ${flow.back?.href ?? flow.page.html}`);
    return postToken(server.oauthUrl, { grant_type: 'authorization_code', code, redirect_uri: redirectUri, code_verifier: flow.verifier }, { authorization: basic(rp.clientId, rp.clientSecret) });
  }

  async function idTokenOf(tokens: { body: Record<string, unknown> }) {
    const { payload } = await jwtVerify(tokens.body.id_token as string, createLocalJWKSet(jwks), { issuer: server.auth.issuer, audience: rp.clientId });
    return payload;
  }

  const userinfo = (token: string, method = 'GET') =>
    fetch(`${server.oauthUrl}/userinfo`, { method, headers: { authorization: `Bearer ${token}` } });

  describe('Basic OP', () => {
    it('oidcc-server: code flow, a signed ID token for the RP, an access token', async () => {
      const flow = await authorize({ nonce: 'n-1' });
      expect(flow.back?.searchParams.get('state')).toBe('st-1');
      expect(flow.back?.searchParams.get('iss')).toBe(server.auth.issuer);
      const tokens = await exchange(flow);
      expect(tokens.status).toBe(200);
      const idToken = await idTokenOf(tokens);
      expect(idToken).toMatchObject({ sub: 'alice', nonce: 'n-1', aud: rp.clientId, iss: server.auth.issuer });
      expect(typeof idToken.iat).toBe('number');
      expect(typeof idToken.exp).toBe('number');
    });

    it('oidcc-ensure-request-without-nonce-succeeds-for-code-flow', async () => {
      const tokens = await exchange(await authorize({}));
      expect(tokens.status).toBe(200);
      expect(await idTokenOf(tokens)).not.toHaveProperty('nonce');
    });

    it('oidcc-response-type-missing: an error back to the RP (its redirect URI is registered)', async () => {
      const flow = await authorize({ response_type: '' }, undefined, { signIn: false });
      expect(flow.back?.searchParams.get('error')).toBe('invalid_request');
      expect(flow.back?.searchParams.get('state')).toBe('st-1');
    });

    it.each([
      ['oidcc-scope-profile', 'openid profile', { sub: 'alice', name: 'Alice Example' }],
      ['oidcc-scope-email', 'openid email', { sub: 'alice', email: 'alice@acme.example' }],
      ['oidcc-scope-all', 'openid profile email', { sub: 'alice', name: 'Alice Example', email: 'alice@acme.example' }],
      ['oidcc-ensure-other-scope-order-succeeds', 'email openid', { sub: 'alice', email: 'alice@acme.example' }],
    ])('%s: userinfo answers the claims of %s', async (_module, scope, claims) => {
      const tokens = await exchange(await authorize({ scope }));
      const response = await userinfo(tokens.body.access_token as string);
      expect(response.status).toBe(200);
      expect(await response.json()).toEqual(claims);
    });

    it('oidcc-userinfo-get', async () => {
      const tokens = await exchange(await authorize({ scope: 'openid profile' }));
      const response = await userinfo(tokens.body.access_token as string);
      expect(response.status).toBe(200);
      expect(((await response.json()) as { sub: string }).sub).toBe((await idTokenOf(tokens)).sub);
    });

    it('oidcc-userinfo-post-header', async () => {
      const tokens = await exchange(await authorize({ scope: 'openid profile' }));
      const response = await userinfo(tokens.body.access_token as string, 'POST');
      expect(response.status).toBe(200);
      expect(((await response.json()) as { sub: string }).sub).toBe('alice');
    });

    it('oidcc-userinfo-post-body: not offered (a token in a body ends up in logs): 400 invalid_request', async () => {
      const tokens = await exchange(await authorize({}));
      const response = await fetch(`${server.oauthUrl}/userinfo`, {
        method: 'POST', headers: { 'content-type': 'application/x-www-form-urlencoded' }, body: `access_token=${tokens.body.access_token as string}`,
      });
      expect(response.status).toBe(400);
    });

    it.each([
      ['oidcc-ensure-request-with-unknown-parameter-succeeds', { extra: 'foobar' }],
      ['oidcc-display-page', { display: 'page' }],
      ['oidcc-display-popup', { display: 'popup' }],
      ['oidcc-ui-locales', { ui_locales: 'se' }],
      ['oidcc-claims-locales', { claims_locales: 'se' }],
      ['oidcc-ensure-request-with-acr-values-succeeds', { acr_values: '1 2' }],
      ['oidcc-login-hint', { login_hint: 'alice' }],
      ['oidcc-ensure-request-with-valid-pkce-succeeds', {}],
    ])('%s', async (_module, params: Record<string, string>) => {
      const tokens = await exchange(await authorize(params));
      expect(tokens.status).toBe(200);
    });

    it('oidcc-ensure-post-request-succeeds: POST to the authorization endpoint (Core §3.1.2.1) gives a code', async () => {
      const flow = await authorize({}, undefined, { method: 'POST' });
      expect(flow.back?.searchParams.get('state')).toBe('st-1');
      expect((await exchange(flow)).status).toBe(200);
    });

    it('oidcc-prompt-login: the password again, though signed in', async () => {
      const first = await authorize({});
      const again = await authorize({ prompt: 'login' }, first.agent);
      expect(again.pages).toEqual(['login']);
      expect((await exchange(again)).status).toBe(200);
    });

    it('oidcc-prompt-none-not-logged-in: login_required back to the RP, no page', async () => {
      const flow = await authorize({ prompt: 'none' }, undefined, { signIn: false });
      expect(flow.back?.searchParams.get('error')).toBe('login_required');
      expect(flow.back?.searchParams.get('state')).toBe('st-1');
    });

    it('oidcc-prompt-none-logged-in: a code with no page', async () => {
      const first = await authorize({});
      const silent = await authorize({ prompt: 'none' }, first.agent, { signIn: false });
      expect(silent.pages).toEqual([]);
      expect((await exchange(silent)).status).toBe(200);
    });

    it('oidcc-max-age-1: after more than a second, the password again, and auth_time in the ID token', async () => {
      const first = await authorize({});
      const signedInAt = Math.floor(Date.now() / 1000);
      await new Promise((resolve) => setTimeout(resolve, 2100));
      const again = await authorize({ max_age: '1' }, first.agent);
      expect(again.pages).toEqual(['login']);
      const idToken = await idTokenOf(await exchange(again));
      expect(idToken.auth_time).toBeGreaterThan(signedInAt);
    });

    it('oidcc-max-age-10000: no page, and auth_time in the ID token', async () => {
      const first = await authorize({});
      const again = await authorize({ max_age: '10000' }, first.agent);
      expect(again.pages).toEqual([]);
      expect(typeof (await idTokenOf(await exchange(again))).auth_time).toBe('number');
    });

    it('oidcc-id-token-hint: prompt=none with the ID token of the signed-in user gives a code', async () => {
      const first = await authorize({});
      const idToken = (await exchange(first)).body.id_token as string;
      const silent = await authorize({ prompt: 'none', id_token_hint: idToken }, first.agent, { signIn: false });
      expect(silent.back?.searchParams.get('code')).toEqual(expect.any(String));
    });

    it('oidcc-codereuse: the second exchange is invalid_grant, and the first access token stops working', async () => {
      const flow = await authorize({ scope: 'openid profile' });
      const first = await exchange(flow);
      expect((await userinfo(first.body.access_token as string)).status).toBe(200);
      const second = await exchange(flow);
      expect(second.status).toBe(400);
      expect(second.body.error).toBe('invalid_grant');
      expect((await userinfo(first.body.access_token as string)).status).toBe(401);
    });

    it('oidcc-ensure-registered-redirect-uri: an unregistered redirect URI gets an error page, never a redirect', async () => {
      const flow = await authorize({ redirect_uri: 'https://attacker.example/cb' }, undefined, { signIn: false });
      expect(flow.back).toBeUndefined();
      expect(flow.page.status).toBe(400);
    });

    it('oidcc-ensure-redirect-uri-in-authorization-request: a request without redirect_uri gets an error page', async () => {
      const flow = await authorize({ redirect_uri: '' }, undefined, { signIn: false });
      expect(flow.back).toBeUndefined();
      expect(flow.page.status).toBe(400);
    });

    it('oidcc-redirect-uri-query-OK: a registered URI with a query comes back with it', async () => {
      const flow = await authorize({ redirect_uri: REDIRECT_WITH_QUERY });
      expect(flow.back?.searchParams.get('foo')).toBe('bar');
      expect((await exchange(flow, REDIRECT_WITH_QUERY)).status).toBe(200);
    });

    it.each([
      ['oidcc-redirect-uri-query-mismatch', 'https://rp.example/cb?foo=baz'],
      ['oidcc-redirect-uri-query-added', 'https://rp.example/cb?foo=bar&extra=1'],
    ])('%s: an error page, no redirect', async (_module, redirectUri) => {
      const flow = await authorize({ redirect_uri: redirectUri }, undefined, { signIn: false });
      expect(flow.back).toBeUndefined();
      expect(flow.page.status).toBe(400);
    });

    it('oidcc-unsigned-request-object-supported-correctly-or-rejected-as-unsupported: rejected, back to the RP', async () => {
      const flow = await authorize({ request: 'eyJhbGciOiJub25lIn0.eyJzY29wZSI6Im9wZW5pZCJ9.' }, undefined, { signIn: false });
      expect(flow.back?.searchParams.get('error')).toBe('request_not_supported');
    });

    it('oidcc-refresh-token: a refresh gives new tokens; the spent refresh token is refused after its successor is used', async () => {
      const tokens = await exchange(await authorize({ scope: 'openid offline_access' }));
      const refresh = (token: string) => postToken(server.oauthUrl, { grant_type: 'refresh_token', refresh_token: token }, { authorization: basic(rp.clientId, rp.clientSecret) });
      const next = await refresh(tokens.body.refresh_token as string);
      expect(next.status).toBe(200);
      expect(decodeJwt(next.body.id_token as string).sub).toBe('alice');
      expect((await refresh(next.body.refresh_token as string)).status).toBe(200);
      expect((await refresh(tokens.body.refresh_token as string)).status).toBe(400);
    });
  });

  describe('RP-Initiated Logout', () => {
    async function signedIn(): Promise<{ agent: UserAgent; idToken: string }> {
      const flow = await authorize({});
      return { agent: flow.agent, idToken: (await exchange(flow)).body.id_token as string };
    }

    async function logout(agent: UserAgent, params: Record<string, string>, confirm = true): Promise<{ page: Step; done: Step | undefined }> {
      const page = await agent.request(`${server.oauthUrl}/session/end?${new URLSearchParams(params)}`);
      const done = confirm && page.status === 200 && page.html.includes('name="xsrf"') ? await agent.submit(page, {}) : undefined;
      return { page, done };
    }

    async function stillSignedIn(agent: UserAgent): Promise<boolean> {
      const flow = await authorize({ prompt: 'none' }, agent, { signIn: false });
      return flow.back?.searchParams.has('code') === true;
    }

    it('oidcc-rp-initiated-logout: back to the registered URI with state; the session is over', async () => {
      const { agent, idToken } = await signedIn();
      const { done } = await logout(agent, { id_token_hint: idToken, post_logout_redirect_uri: POST_LOGOUT, state: 'bye' });
      expect(done?.location).toBe(`${POST_LOGOUT}?state=bye`);
      expect(await stillSignedIn(agent)).toBe(false);
    });

    it('oidcc-rp-initiated-logout-bad-post-logout-redirect-uri: an error page, no redirect, still signed in', async () => {
      const { agent, idToken } = await signedIn();
      const { page, done } = await logout(agent, { id_token_hint: idToken, post_logout_redirect_uri: 'https://rp.example/elsewhere', state: 'bye' });
      expect(page.status).toBe(400);
      expect(page.location).toBeUndefined();
      expect(done).toBeUndefined();
      expect(await stillSignedIn(agent)).toBe(true);
    });

    it('oidcc-rp-initiated-logout-modified-id-token-hint: an error page, no redirect, still signed in', async () => {
      const { agent, idToken } = await signedIn();
      const [header, payload, signature] = idToken.split('.');
      const claims = JSON.parse(Buffer.from(payload!, 'base64url').toString()) as Record<string, unknown>;
      const modified = [header, Buffer.from(JSON.stringify({ ...claims, sub: 'mallory' })).toString('base64url'), signature].join('.');
      const { page, done } = await logout(agent, { id_token_hint: modified, post_logout_redirect_uri: POST_LOGOUT, state: 'bye' });
      expect(page.status).toBe(400);
      expect(page.location).toBeUndefined();
      expect(done).toBeUndefined();
      expect(await stillSignedIn(agent)).toBe(true);
    });

    it('oidcc-rp-initiated-logout-no-id-token-hint: a post_logout_redirect_uri alone (no client) is not followed', async () => {
      const { agent } = await signedIn();
      const { done } = await logout(agent, { post_logout_redirect_uri: POST_LOGOUT, state: 'bye' });
      expect(done?.location).toBeUndefined();
      expect(done?.html).toContain('You are signed out');
      expect(await stillSignedIn(agent)).toBe(false);
    });

    it('oidcc-rp-initiated-logout-no-params: the confirmation, then signed out', async () => {
      const { agent } = await signedIn();
      const { page, done } = await logout(agent, {});
      expect(page.html).toContain('Sign out');
      expect(done?.html).toContain('You are signed out');
      expect(await stillSignedIn(agent)).toBe(false);
    });

    it('oidcc-rp-initiated-logout-no-post-logout-redirect-uri: signed out, no redirect', async () => {
      const { agent, idToken } = await signedIn();
      const { done } = await logout(agent, { id_token_hint: idToken });
      expect(done?.location).toBeUndefined();
      expect(done?.html).toContain('You are signed out');
      expect(await stillSignedIn(agent)).toBe(false);
    });

    it('oidcc-rp-initiated-logout-no-state: back to the URI without a state', async () => {
      const { agent, idToken } = await signedIn();
      const { done } = await logout(agent, { id_token_hint: idToken, post_logout_redirect_uri: POST_LOGOUT });
      expect(done?.location).toBe(POST_LOGOUT);
    });

    it('oidcc-rp-initiated-logout-query-added-to-post-logout-redirect-uri: the registered query is kept, state added', async () => {
      const { agent, idToken } = await signedIn();
      const { done } = await logout(agent, { id_token_hint: idToken, post_logout_redirect_uri: POST_LOGOUT_WITH_QUERY, state: 'bye' });
      const back = new URL(done!.location!);
      expect(back.searchParams.get('foo')).toBe('bar');
      expect(back.searchParams.get('state')).toBe('bye');
    });

    it('oidcc-rp-initiated-logout-only-state: no URI to go back to, no redirect', async () => {
      const { agent, idToken } = await signedIn();
      const { done } = await logout(agent, { id_token_hint: idToken, state: 'bye' });
      expect(done?.location).toBeUndefined();
      expect(await stillSignedIn(agent)).toBe(false);
    });

    it('oidcc-rp-initiated-logout-client-id: client_id instead of a hint, back to its registered URI', async () => {
      const { agent } = await signedIn();
      const { done } = await logout(agent, { client_id: rp.clientId, post_logout_redirect_uri: POST_LOGOUT, state: 'bye' });
      expect(done?.location).toBe(`${POST_LOGOUT}?state=bye`);
    });

    it('POST to the end-session endpoint (RP-Initiated Logout §2) works as GET', async () => {
      const { agent, idToken } = await signedIn();
      const page = await agent.request(`${server.oauthUrl}/session/end`, {
        method: 'POST', body: new URLSearchParams({ id_token_hint: idToken, post_logout_redirect_uri: POST_LOGOUT, state: 'bye' }).toString(),
      });
      expect(page.html).toContain('Sign out');
      expect((await agent.submit(page, {})).location).toBe(`${POST_LOGOUT}?state=bye`);
    });

    it('a browser that is not signed in gets a page with a button (no script), then goes back', async () => {
      const agent = new UserAgent(server.baseUrl);
      const { idToken } = await signedIn();
      const page = await agent.request(`${server.oauthUrl}/session/end?${new URLSearchParams({ id_token_hint: idToken, post_logout_redirect_uri: POST_LOGOUT, state: 'x' })}`);
      expect(page.status).toBe(200);
      expect(page.html).toContain('You are not signed in');
      expect(page.html).not.toContain('<script');
      expect((await agent.submit(page, {})).location).toBe(`${POST_LOGOUT}?state=x`);
    });
  });
});
