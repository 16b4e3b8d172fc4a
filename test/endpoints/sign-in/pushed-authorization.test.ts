import * as oauth from 'oauth4webapi';
import * as client from 'openid-client';
import { alice, bob, testAccounts } from '../../support/accounts.js';
import { basic, postToken, startServer, type RunningServer } from '../../support/server.js';
import { STORE_KINDS, useStore } from '../../support/stores.js';
import { pkcePair, UserAgent, type Step } from '../../support/user-agent.js';

const SPA = 'http://127.0.0.1:5173/callback';
const WEB = 'https://app.example.com/oauth/callback';

/**
 * Pushed authorization requests (RFC 9126, src/endpoints/sign-in/pushed-authorization.ts): the
 * app pushes its request, the browser brings the `request_uri` to /authorize and goes through our
 * sign-in and consent pages; every guard of the push, and the request_uri's life.
 */
describe.each(STORE_KINDS)('pushed authorization requests (%s store)', (kind) => {
  const store = useStore(kind);
  let server: RunningServer;
  let spa: { clientId: string };
  let web: { clientId: string; clientSecret: string };
  let other: { clientId: string; clientSecret: string };

  beforeAll(async () => {
    server = await startServer({ store: store.option(), accounts: testAccounts([alice, bob]) });
    spa = await server.auth.appRegistrations.create({ name: 'Team SPA', redirectUris: [SPA], clientType: 'public' });
    const created = await server.auth.appRegistrations.create({ name: 'HR Portal', redirectUris: [WEB], clientType: 'confidential' });
    web = { clientId: created.clientId, clientSecret: created.clientSecret! };
    const second = await server.auth.appRegistrations.create({ name: 'Payroll', redirectUris: [WEB], clientType: 'confidential' });
    other = { clientId: second.clientId, clientSecret: second.clientSecret! };
  });
  afterAll(() => server.stop());

  function push(params: Record<string, string>, headers: Record<string, string> = {}): Promise<Response> {
    return fetch(`${server.oauthUrl}/par`, {
      method: 'POST',
      headers: { 'content-type': 'application/x-www-form-urlencoded', ...headers },
      body: new URLSearchParams(params).toString(),
    });
  }

  function webRequest(challenge: string, clientId = web.clientId): Record<string, string> {
    return {
      response_type: 'code', client_id: clientId, redirect_uri: WEB, scope: 'openid scim.read',
      state: 'st-par', code_challenge: challenge, code_challenge_method: 'S256',
    };
  }

  async function pushedUri(client = web, challenge = pkcePair().challenge): Promise<string> {
    const response = await push(webRequest(challenge, client.clientId), { authorization: basic(client.clientId, client.clientSecret) });
    expect(response.status).toBe(201);
    return ((await response.json()) as { request_uri: string }).request_uri;
  }

  /** The browser at /authorize with the request by reference, through login and consent. */
  async function signIn(agent: UserAgent, clientId: string, requestUri: string): Promise<Step> {
    let step = await agent.request(`${server.oauthUrl}/authorize?${new URLSearchParams({ client_id: clientId, request_uri: requestUri })}`);
    if (step.html.includes('name="password"')) step = await agent.submit(step, { username: alice.sub, password: alice.password });
    if (step.html.includes('value="allow"')) step = await agent.submit(step, { decision: 'allow' });
    return step;
  }

  it('discovery names the endpoint, and requires no push of every app', async () => {
    const metadata = (await (await fetch(`${server.oauthUrl}/.well-known/openid-configuration`)).json()) as Record<string, unknown>;
    expect(metadata.pushed_authorization_request_endpoint).toBe(`${server.oauthUrl}/par`);
    expect(metadata.require_pushed_authorization_requests).toBeUndefined();
  });

  it('a confidential app pushes with Basic; the request by reference signs the user in through our pages; the code is redeemed', async () => {
    const { verifier, challenge } = pkcePair();
    const response = await push(webRequest(challenge), { authorization: basic(web.clientId, web.clientSecret) });
    expect(response.status).toBe(201);
    expect(response.headers.get('cache-control')).toBe('no-store');
    const body = (await response.json()) as { request_uri: string; expires_in: number };
    expect(body.expires_in).toBe(60);
    expect(body.request_uri).toMatch(/^urn:ietf:params:oauth:request_uri:/);

    const back = await signIn(new UserAgent(server.baseUrl), web.clientId, body.request_uri);
    const redirect = new URL(back.location!);
    expect(redirect.origin + redirect.pathname).toBe(WEB);
    expect(redirect.searchParams.get('state')).toBe('st-par');
    const token = await postToken(server.oauthUrl, {
      grant_type: 'authorization_code', code: redirect.searchParams.get('code')!, redirect_uri: WEB, code_verifier: verifier,
    }, { authorization: basic(web.clientId, web.clientSecret) });
    expect(token.status).toBe(200);
    expect(token.body.scope).toContain('scim.read');
  });

  it('oauth4webapi: pushedAuthorizationRequest with ClientSecretBasic, the code redeemed with the library', async () => {
    const insecure = { [oauth.allowInsecureRequests]: true };
    const issuer = new URL(server.oauthUrl);
    const as = await oauth.processDiscoveryResponse(issuer, await oauth.discoveryRequest(issuer, insecure));
    const app = { client_id: web.clientId };
    const auth = oauth.ClientSecretBasic(web.clientSecret);
    const verifier = oauth.generateRandomCodeVerifier();
    const pushed = await oauth.processPushedAuthorizationResponse(as, app, await oauth.pushedAuthorizationRequest(as, app, auth, {
      response_type: 'code', redirect_uri: WEB, scope: 'openid scim.read', state: 'st-lib',
      code_challenge: await oauth.calculatePKCECodeChallenge(verifier), code_challenge_method: 'S256',
    }, insecure));
    expect(pushed.expires_in).toBe(60);
    const back = await signIn(new UserAgent(server.baseUrl), web.clientId, pushed.request_uri);
    const params = oauth.validateAuthResponse(as, app, new URL(back.location!), 'st-lib');
    const tokens = await oauth.processAuthorizationCodeResponse(as, app,
      await oauth.authorizationCodeGrantRequest(as, app, auth, params, WEB, verifier, insecure));
    expect(tokens.access_token).toBeTruthy();
    expect(tokens.id_token).toBeTruthy();
  });

  it('openid-client: buildAuthorizationUrlWithPAR for a public app, the code redeemed with the library', async () => {
    const config = await client.discovery(new URL(server.oauthUrl), spa.clientId, undefined, client.None(), { execute: [client.allowInsecureRequests] });
    const verifier = client.randomPKCECodeVerifier();
    const url = await client.buildAuthorizationUrlWithPAR(config, {
      redirect_uri: SPA, scope: 'openid', state: 'st-oc',
      code_challenge: await client.calculatePKCECodeChallenge(verifier), code_challenge_method: 'S256',
    });
    expect([...url.searchParams.keys()].sort()).toEqual(['client_id', 'request_uri']);
    const back = await signIn(new UserAgent(server.baseUrl), spa.clientId, url.searchParams.get('request_uri')!);
    const tokens = await client.authorizationCodeGrant(config, new URL(back.location!), { pkceCodeVerifier: verifier, expectedState: 'st-oc' });
    expect(tokens.access_token).toBeTruthy();
  });

  it("the tenant rules apply to the request by reference: another tenant's user is sent back with access_denied", async () => {
    const acme = await server.auth.appRegistrations.create({ name: 'Acme HR', redirectUris: [WEB], clientType: 'confidential', tenant: 'acme' });
    const requestUri = await pushedUri({ clientId: acme.clientId, clientSecret: acme.clientSecret! });
    const agent = new UserAgent(server.baseUrl);
    let step = await agent.request(`${server.oauthUrl}/authorize?${new URLSearchParams({ client_id: acme.clientId, request_uri: requestUri })}`);
    step = await agent.submit(step, { username: bob.sub, password: bob.password });
    const back = new URL(step.location!);
    expect(back.searchParams.get('error')).toBe('access_denied');
    expect(back.searchParams.get('error_description')).toBe('this application belongs to another organization');
  });

  it('a public app pushes with its client_id alone', async () => {
    const { challenge } = pkcePair();
    const response = await push({
      response_type: 'code', client_id: spa.clientId, redirect_uri: SPA, scope: 'openid', state: 's',
      code_challenge: challenge, code_challenge_method: 'S256',
    });
    expect(response.status).toBe(201);
    const step = await new UserAgent(server.baseUrl).request(
      `${server.oauthUrl}/authorize?${new URLSearchParams({ client_id: spa.clientId, request_uri: ((await response.json()) as { request_uri: string }).request_uri })}`,
    );
    expect(step.html).toContain('name="password"');
  });

  it('a used request_uri is refused', async () => {
    const requestUri = await pushedUri();
    const agent = new UserAgent(server.baseUrl);
    const first = await signIn(agent, web.clientId, requestUri);
    expect(new URL(first.location!).searchParams.get('code')).toBeTruthy();
    const again = await agent.request(`${server.oauthUrl}/authorize?${new URLSearchParams({ client_id: web.clientId, request_uri: requestUri })}`);
    expect(again.status).toBe(400);
    expect(again.html).toContain('request_uri is invalid, expired, or was already used');
  });

  it('an expired request_uri is refused', async () => {
    const requestUri = await pushedUri();
    const realNow = Date.now;
    Date.now = () => realNow() + 61_000;
    try {
      const step = await new UserAgent(server.baseUrl).request(`${server.oauthUrl}/authorize?${new URLSearchParams({ client_id: web.clientId, request_uri: requestUri })}`);
      expect(step.status).toBe(400);
      expect(step.html).toContain('request_uri is invalid, expired, or was already used');
    } finally {
      Date.now = realNow;
    }
  });

  it("another client's request_uri is refused", async () => {
    const requestUri = await pushedUri(other);
    const step = await new UserAgent(server.baseUrl).request(`${server.oauthUrl}/authorize?${new URLSearchParams({ client_id: web.clientId, request_uri: requestUri })}`);
    expect(step.location).toBeUndefined();
    expect(step.status).toBe(400);
    expect(step.html).toMatch(/request_uri|client_id/);
    // Its own client still can use it: the refusal did not use it up.
    const own = await new UserAgent(server.baseUrl).request(`${server.oauthUrl}/authorize?${new URLSearchParams({ client_id: other.clientId, request_uri: requestUri })}`);
    expect(own.html).toContain('name="password"');
  });

  it.each([
    ['a wrong secret', () => ({ authorization: basic(web.clientId, 'wrong') }), {}],
    ['no Basic for a confidential app', () => ({}), {}],
    ['the secret in the body', () => ({}), { client_secret: 'x' }],
    ['a malformed Basic header', () => ({ authorization: 'Basic !!!' }), {}],
  ] as const)('bad client authentication: %s is 401 invalid_client', async (_name, headers, extra) => {
    const response = await push({ ...webRequest(pkcePair().challenge), ...extra }, headers());
    expect(response.status).toBe(401);
    expect(await response.json()).toMatchObject({ error: 'invalid_client' });
  });

  it("a public app's push with a secret in the body is 401 invalid_client (credentials never in the body)", async () => {
    const response = await push({
      response_type: 'code', client_id: spa.clientId, client_secret: 'x', redirect_uri: SPA, scope: 'openid', state: 's',
      code_challenge: pkcePair().challenge, code_challenge_method: 'S256',
    });
    expect(response.status).toBe(401);
    expect(await response.json()).toMatchObject({ error: 'invalid_client' });
  });

  it('a client_id in the body other than the Basic one is 400 invalid_request', async () => {
    const response = await push(webRequest(pkcePair().challenge, other.clientId), { authorization: basic(web.clientId, web.clientSecret) });
    expect(response.status).toBe(400);
    expect(await response.json()).toMatchObject({ error: 'invalid_request', error_description: 'client_id in the body differs from the authenticated client' });
  });

  it('a push over limits.authorizeQueryBytes is 413 invalid_request', async () => {
    const response = await push({ ...webRequest(pkcePair().challenge), nonce: 'n'.repeat(5000) }, { authorization: basic(web.clientId, web.clientSecret) });
    expect(response.status).toBe(413);
    expect(await response.json()).toMatchObject({ error: 'invalid_request' });
  });

  it('a request the authorization endpoint would refuse is refused at the push (JSON)', async () => {
    // A caller that prefers HTML (a browser's Accept) still gets the JSON error.
    const response = await push({ ...webRequest(pkcePair().challenge), redirect_uri: 'https://evil.example/cb' }, { authorization: basic(web.clientId, web.clientSecret), accept: 'text/html' });
    expect(response.status).toBe(400);
    expect(response.headers.get('content-type')).toMatch(/json/);
    expect(await response.json()).toMatchObject({ error: 'invalid_request' });
  });
});

describe('pushed authorization requests: requests per address', () => {
  let server: RunningServer;
  afterEach(() => server.stop());

  it('failed client authentications at the push count toward the failed-authentication limit (429)', async () => {
    server = await startServer({ rateLimits: { authorize: false, failedClientAuth: { perClient: { max: 2, windowSeconds: 60 }, perAddress: { max: 100, windowSeconds: 60 } } } });
    const app = await server.auth.appRegistrations.create({ name: 'Web', redirectUris: [WEB], clientType: 'confidential' });
    const guess = () => fetch(`${server.oauthUrl}/par`, {
      method: 'POST',
      headers: { 'content-type': 'application/x-www-form-urlencoded', authorization: basic(app.clientId, 'guess') },
      body: new URLSearchParams({ response_type: 'code', client_id: app.clientId, redirect_uri: WEB, scope: 'openid', state: 's' }).toString(),
    });
    expect((await guess()).status).toBe(401);
    expect((await guess()).status).toBe(401);
    const refused = await guess();
    expect(refused.status).toBe(429);
    expect(await refused.json()).toMatchObject({ error: 'temporarily_unavailable' });
  });

  it('past rateLimits.authorize pushes per address are 429 with Retry-After, counted apart from /authorize', async () => {
    server = await startServer({ rateLimits: { authorize: { max: 2, windowSeconds: 60 } } });
    const spa = await server.auth.appRegistrations.create({ name: 'SPA', redirectUris: [SPA], clientType: 'public' });
    const push = () => fetch(`${server.oauthUrl}/par`, {
      method: 'POST',
      headers: { 'content-type': 'application/x-www-form-urlencoded' },
      body: new URLSearchParams({
        response_type: 'code', client_id: spa.clientId, redirect_uri: SPA, scope: 'openid', state: 's',
        code_challenge: pkcePair().challenge, code_challenge_method: 'S256',
      }).toString(),
    });
    expect((await push()).status).toBe(201);
    expect((await push()).status).toBe(201);
    const refused = await push();
    expect(refused.status).toBe(429);
    expect(Number(refused.headers.get('retry-after'))).toBeGreaterThan(0);
    expect(await refused.json()).toMatchObject({ error: 'temporarily_unavailable' });
    // /authorize has a counter of its own.
    const step = await new UserAgent(server.baseUrl).request(`${server.oauthUrl}/authorize?${new URLSearchParams({
      response_type: 'code', client_id: spa.clientId, redirect_uri: SPA, scope: 'openid', state: 's',
      code_challenge: pkcePair().challenge, code_challenge_method: 'S256',
    })}`);
    expect(step.status).toBe(200);
  });
});

describe.each(STORE_KINDS)('an app that requires pushed authorization requests (%s store)', (kind) => {
  const store = useStore(kind);
  let server: RunningServer;
  let app: { clientId: string; clientSecret: string };

  beforeAll(async () => {
    server = await startServer({ store: store.option(), accounts: testAccounts([alice]) });
    const created = await server.auth.appRegistrations.create({ name: 'Bank-grade', redirectUris: [WEB], clientType: 'confidential', requirePushedAuthorizationRequests: true });
    app = { clientId: created.clientId, clientSecret: created.clientSecret! };
  });
  afterAll(() => server.stop());

  const request = (challenge: string) => ({
    response_type: 'code', client_id: app.clientId, redirect_uri: WEB, scope: 'openid', state: 'st-req',
    code_challenge: challenge, code_challenge_method: 'S256',
  });

  it('a plain authorization request of it is refused with a clear error, back to the app', async () => {
    const step = await new UserAgent(server.baseUrl).request(`${server.oauthUrl}/authorize?${new URLSearchParams(request(pkcePair().challenge))}`);
    const refusal = new URL(step.location!);
    expect(refusal.origin + refusal.pathname).toBe(WEB);
    expect(refusal.searchParams.get('error')).toBe('invalid_request');
    expect(refusal.searchParams.get('error_description')).toMatch(/pushed authorization request/i);
    expect(refusal.searchParams.get('state')).toBe('st-req');
  });

  it('its pushed request signs the user in; turned off, its plain request works again', async () => {
    const pushed = await fetch(`${server.oauthUrl}/par`, {
      method: 'POST',
      headers: { 'content-type': 'application/x-www-form-urlencoded', authorization: basic(app.clientId, app.clientSecret) },
      body: new URLSearchParams(request(pkcePair().challenge)).toString(),
    });
    expect(pushed.status).toBe(201);
    const { request_uri: requestUri } = (await pushed.json()) as { request_uri: string };
    const step = await new UserAgent(server.baseUrl).request(`${server.oauthUrl}/authorize?${new URLSearchParams({ client_id: app.clientId, request_uri: requestUri })}`);
    expect(step.html).toContain('name="password"');

    await server.auth.appRegistrations.update(app.clientId, { requirePushedAuthorizationRequests: false });
    const plain = await new UserAgent(server.baseUrl).request(`${server.oauthUrl}/authorize?${new URLSearchParams(request(pkcePair().challenge))}`);
    expect(plain.html).toContain('name="password"');
  });
});
