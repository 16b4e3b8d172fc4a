import { createServer, type Server } from 'node:http';
import type { AddressInfo } from 'node:net';
import { randomBytes } from 'node:crypto';
import { createLocalJWKSet, decodeJwt, jwtVerify, type JSONWebKeySet } from 'jose';
import { type Browser, type BrowserContext, type Page, type Request, type Response } from 'playwright-core';
import { alice, bob, testAccounts } from '../support/accounts.js';
import { basic, postToken, startServer, type RunningServer } from '../support/server.js';
import { pkcePair } from '../support/user-agent.js';
import { launchChromium } from '../support/chromium.js';
import { accessibilityViolations } from '../support/axe.js';

/**
 * The named-user flow in a real browser: Debian's headless Chromium driven by playwright-core.
 * The apps' redirect URIs are real pages on a small local server, so the browser really lands on
 * them, through every redirect, cookie and Content-Security-Policy of the sign-in pages.
 */

/** Chromium can take a while to start on a busy machine. */
const SLOW = 120_000;
const TEST_TIMEOUT = 60_000;
/** How long to wait for one page or redirect chain in the browser. */
const STEP = 20_000;

/** The app side: `/callback` shows the query it was given, like an SPA or a web app would. */
async function startCallbackServer(): Promise<{
  origin: string;
  callback: string;
  /** The Referer header of every request to /callback (undefined when none was sent). */
  referers: Array<string | undefined>;
  /** The bodies posted to `/backchannel` (back-channel logout tokens, form-encoded). */
  backchannel: string[];
  stop(): Promise<void>;
}> {
  const referers: Array<string | undefined> = [];
  const backchannel: string[] = [];
  const http: Server = createServer((req, res) => {
    const url = new URL(req.url ?? '/', 'http://127.0.0.1');
    if (url.pathname === '/backchannel' && req.method === 'POST') {
      let body = '';
      req.on('data', (chunk: Buffer) => {
        body += chunk.toString();
      });
      req.on('end', () => {
        backchannel.push(body);
        res.writeHead(200).end();
      });
      return;
    }
    if (url.pathname === '/callback') referers.push(req.headers.referer);
    if (url.pathname !== '/callback') {
      res.writeHead(404, { 'content-type': 'text/plain' }).end('not found');
      return;
    }
    const query = url.search.replace(/[&<>"']/g, (char) => `&#${char.charCodeAt(0)};`);
    res
      .writeHead(200, { 'content-type': 'text/html; charset=utf-8', 'cache-control': 'no-store' })
      .end(`<!doctype html><html lang="en"><head><meta charset="utf-8"><title>Callback</title></head>`
        + `<body><h1>Back at the app</h1><pre id="query">${query}</pre></body></html>`);
  });
  await new Promise<void>((resolve) => http.listen(0, '127.0.0.1', resolve));
  const { port } = http.address() as AddressInfo;
  const origin = `http://127.0.0.1:${port}`;
  return {
    origin,
    callback: `${origin}/callback`,
    referers,
    backchannel,
    async stop() {
      http.closeAllConnections();
      await new Promise((resolve) => http.close(resolve));
    },
  };
}

const randomState = (): string => randomBytes(16).toString('base64url');

/** Runs in the page (tsconfig has no DOM lib): the computed background colour of an element. */
const backgroundOf = (element: unknown): string =>
  (globalThis as unknown as { getComputedStyle(node: unknown): { backgroundColor: string } })
    .getComputedStyle(element).backgroundColor;

describe('named-user flow in headless Chromium', () => {
  /** Kept as the launch promise, so that afterAll closes the browser even if setup failed after launching. */
  let launching: Promise<Browser> | undefined;
  let browser: Browser | undefined;
  let server: RunningServer | undefined;
  let app: Awaited<ReturnType<typeof startCallbackServer>> | undefined;
  let jwks: JSONWebKeySet;
  let spa: { clientId: string };
  let web: { clientId: string; clientSecret: string };
  let context: BrowserContext | undefined;
  let page: Page;
  /** The browser's console for this test, quoted when the browser does not get where expected. */
  let consoleLines: string[];

  beforeAll(async () => {
    // Launched in parallel with the servers: the browser is the slow part.
    launching = launchChromium(SLOW);
    // The apps' pages listen on 127.0.0.1: the operator lets back-channel logout reach it.
    server = await startServer({ accounts: testAccounts([alice, bob]), backchannelLogout: { privateHosts: ['127.0.0.1'] } });
    app = await startCallbackServer();
    spa = await server.auth.appRegistrations.create({ name: 'Team SPA', redirectUris: [app.callback], clientType: 'public' });
    const created = await server.auth.appRegistrations.create({
      name: 'HR Portal', description: 'The HR portal', redirectUris: [app.callback], clientType: 'confidential',
    });
    web = { clientId: created.clientId, clientSecret: created.clientSecret! };
    jwks = (await (await fetch(`${server.oauthUrl}/jwks`)).json()) as JSONWebKeySet;
    browser = await launching;
  }, SLOW);

  afterAll(async () => {
    await (await launching?.catch(() => undefined))?.close();
    await server?.stop();
    await app?.stop();
  }, SLOW);

  beforeEach(async () => {
    context = await browser!.newContext();
    context.setDefaultTimeout(STEP);
    context.setDefaultNavigationTimeout(STEP);
    page = await context.newPage();
    consoleLines = [];
    page.on('console', (message) => consoleLines.push(`${message.type()}: ${message.text()}`));
  }, SLOW);

  afterEach(async () => {
    await context?.close();
    context = undefined;
  }, SLOW);

  function authorizeUrl(params: Record<string, string>): string {
    return `${server!.oauthUrl}/authorize?${new URLSearchParams(params)}`;
  }

  function authorizeParams(clientId: string, scope: string) {
    const { verifier, challenge } = pkcePair();
    const state = randomState();
    const params = {
      response_type: 'code', client_id: clientId, redirect_uri: app!.callback, scope, state,
      code_challenge: challenge, code_challenge_method: 'S256',
    };
    return { params, verifier, state };
  }

  const isInteraction = (url: string): boolean => new URL(url).pathname.startsWith('/oauth2/interaction/');
  const isCallback = (url: URL): boolean => url.origin === app!.origin && url.pathname === '/callback';

  /** Waits until the browser has landed on the app's callback page and returns its URL. */
  async function landedOnCallback(): Promise<URL> {
    try {
      await page.waitForURL(isCallback, { waitUntil: 'load' });
    } catch (error) {
      const text = await page.locator('body').innerText().catch(() => '');
      throw new Error(
        `the browser did not get back to the app: ${(error as Error).message}\nat ${page.url()}\n${text}\n`
          + `console:\n${consoleLines.join('\n')}`,
      );
    }
    await expect(page.locator('h1').textContent()).resolves.toBe('Back at the app');
    return new URL(page.url());
  }

  async function expectLoginPage(appName: string): Promise<void> {
    expect(isInteraction(page.url())).toBe(true);
    await expect(page.locator('h1').textContent()).resolves.toBe('Sign in');
    await expect(page.locator('main p strong').first().textContent()).resolves.toBe(appName);
    expect(await page.getByLabel('Password').count()).toBe(1);
  }

  /**
   * Waits for the consent page (the login page before it has the same kind of URL, so the URL
   * alone does not tell that the browser got there) and returns its list of scopes in words.
   */
  async function expectConsentPage(appName: string): Promise<string[]> {
    await page.getByRole('button', { name: 'Allow' }).waitFor({ state: 'visible' });
    expect(isInteraction(page.url())).toBe(true);
    await expect(page.getByRole('heading', { level: 1 }).textContent())
      .resolves.toBe(`Allow ${appName} to access your account?`);
    expect(await page.getByRole('button', { name: 'Allow' }).count()).toBe(1);
    expect(await page.getByRole('button', { name: 'Deny' }).count()).toBe(1);
    return (await page.getByRole('list').getByRole('listitem').allTextContents()).map((text) => text.trim());
  }

  /** Fills in the login form and clicks "Sign in"; returns the response to the form's POST. */
  async function submitLogin(username: string, password: string): Promise<Response> {
    await page.getByLabel('Username').fill(username);
    await page.getByLabel('Password').fill(password);
    const [response] = await Promise.all([
      page.waitForResponse((r) => r.request().method() === 'POST' && new URL(r.url()).pathname.endsWith('/login')),
      page.getByRole('button', { name: 'Sign in' }).click(),
    ]);
    return response;
  }

  /** Signs in with the right password: the POST must redirect (303), not render an error page. */
  async function signIn(username: string, password: string): Promise<void> {
    const response = await submitLogin(username, password);
    if (response.status() !== 303) {
      await page.waitForLoadState('load');
      throw new Error(`sign-in answered ${response.status()}, not 303: ${await page.locator('main').innerText()}`);
    }
  }

  async function decide(decision: 'Allow' | 'Deny'): Promise<URL> {
    await page.getByRole('button', { name: decision }).click();
    return landedOnCallback();
  }

  async function accessTokenClaims(token: string) {
    const { payload } = await jwtVerify(token, createLocalJWKSet(jwks), { typ: 'at+jwt', issuer: server!.auth.issuer });
    return payload;
  }

  const scopesOf = (value: unknown): string[] => String(value ?? '').split(' ').filter(Boolean).sort();

  it('public app: wrong password shows an error, then sign-in, consent in words, code + PKCE → JWT and no refresh token', async () => {
    const { params, verifier, state } = authorizeParams(spa.clientId, 'openid profile scim.read scim.write');
    await page.goto(authorizeUrl(params));
    await expectLoginPage('Team SPA');

    const failed = await submitLogin('alice', 'not-her-password');
    expect(failed.status()).toBe(401);
    // Waiting for the alert waits for the new page (the one before it has the same form).
    await expect(page.getByRole('alert').textContent()).resolves.toBe('Wrong username or password.');
    expect(new URL(page.url()).pathname).toMatch(/^\/oauth2\/interaction\/[^/]+\/login$/);
    await expectLoginPage('Team SPA');
    // The username is kept, the password is not.
    await expect(page.getByLabel('Username').inputValue()).resolves.toBe('alice');
    await expect(page.getByLabel('Password').inputValue()).resolves.toBe('');

    await signIn('alice', alice.password);
    const items = await expectConsentPage('Team SPA');
    expect(await page.getByRole('alert').count()).toBe(0);
    expect(items).toEqual([
      'Know who you are (your user ID)',
      'See your name',
      // scim.write was asked for, but alice does not hold it: not listed (she cannot give it).
      'User provisioning: Read users and groups',
    ]);

    const back = await decide('Allow');
    expect(back.searchParams.get('state')).toBe(state);
    expect(back.searchParams.get('error')).toBeNull();
    const code = back.searchParams.get('code');
    expect(code).toEqual(expect.any(String));

    const response = await postToken(server!.oauthUrl, {
      grant_type: 'authorization_code', client_id: spa.clientId, code: code!, redirect_uri: app!.callback, code_verifier: verifier,
    });
    expect(response.status).toBe(200);
    expect(response.body).toMatchObject({ token_type: 'Bearer' });
    expect(response.body).not.toHaveProperty('refresh_token');
    expect(await accessTokenClaims(response.body.access_token as string)).toMatchObject({
      sub: 'alice', tenant: 'acme', client_id: spa.clientId, scope: 'openid profile scim.read',
    });

    // The code was spent.
    const again = await postToken(server!.oauthUrl, {
      grant_type: 'authorization_code', client_id: spa.clientId, code: code!, redirect_uri: app!.callback, code_verifier: verifier,
    });
    expect(again.status).toBe(400);
    expect(again.body.error).toBe('invalid_grant');
  }, TEST_TIMEOUT);

  it('confidential app: sign-in and consent in the browser, code with Basic → access and refresh token; refresh works', async () => {
    const { params, verifier, state } = authorizeParams(web.clientId, 'openid user.read');
    await page.goto(authorizeUrl(params));
    await expectLoginPage('HR Portal');
    await signIn('alice', alice.password);
    expect(await expectConsentPage('HR Portal')).toEqual(['Know who you are (your user ID)', 'Users: Read user profiles']);
    await expect(page.getByText('The HR portal').count()).resolves.toBe(1);

    const back = await decide('Allow');
    expect(back.searchParams.get('state')).toBe(state);
    const code = back.searchParams.get('code')!;
    expect(code).toEqual(expect.any(String));

    const auth = { authorization: basic(web.clientId, web.clientSecret) };
    const first = await postToken(
      server!.oauthUrl,
      { grant_type: 'authorization_code', code, redirect_uri: app!.callback, code_verifier: verifier },
      auth,
    );
    expect(first.status).toBe(200);
    // The response's scope is the access token's (resource scopes); openid gave an ID token.
    expect(first.body.scope).toBe('openid user.read');
    expect(first.body.id_token).toEqual(expect.any(String));
    expect(await accessTokenClaims(first.body.access_token as string)).toMatchObject({
      sub: 'alice', tenant: 'acme', client_id: web.clientId, scope: 'openid user.read',
    });
    const refreshToken = first.body.refresh_token;
    expect(refreshToken).toEqual(expect.any(String));

    const refreshed = await postToken(server!.oauthUrl, { grant_type: 'refresh_token', refresh_token: refreshToken as string }, auth);
    expect(refreshed.status).toBe(200);
    expect(refreshed.body.refresh_token).toEqual(expect.any(String));
    expect(refreshed.body.refresh_token).not.toBe(refreshToken);
    expect(refreshed.body.access_token).not.toBe(first.body.access_token);
    expect(await accessTokenClaims(refreshed.body.access_token as string)).toMatchObject({
      sub: 'alice', tenant: 'acme', client_id: web.clientId, scope: 'openid user.read',
    });
  }, TEST_TIMEOUT);

  it('Deny: back at the app with access_denied and the same state, no code; nothing is remembered', async () => {
    const { params, state } = authorizeParams(spa.clientId, 'openid scim.read');
    await page.goto(authorizeUrl(params));
    await signIn('bob', bob.password);
    await expectConsentPage('Team SPA');

    const back = await decide('Deny');
    expect(back.searchParams.get('error')).toBe('access_denied');
    expect(back.searchParams.get('state')).toBe(state);
    expect(back.searchParams.has('code')).toBe(false);

    // Signed in still (no login page), but the denied request was not consented to.
    const retry = authorizeParams(spa.clientId, 'openid scim.read');
    await page.goto(authorizeUrl(retry.params));
    expect(await page.getByLabel('Password').count()).toBe(0);
    await expectConsentPage('Team SPA');
  }, TEST_TIMEOUT);

  it('consent is remembered: same or narrower scopes go straight back with a code; a wider scope asks again', async () => {
    // A fresh registration: consent is per (tenant, user, app) across browsers, and alice has
    // consented to the other apps in earlier tests.
    const fresh = await server!.auth.appRegistrations.create({ name: 'Team SPA', redirectUris: [app!.callback], clientType: 'public' });
    const first = authorizeParams(fresh.clientId, 'openid profile scim.read');
    await page.goto(authorizeUrl(first.params));
    await signIn('alice', alice.password);
    await expectConsentPage('Team SPA');
    expect((await decide('Allow')).searchParams.get('code')).toEqual(expect.any(String));

    const interactionPages: string[] = [];
    page.on('request', (request) => {
      if (request.isNavigationRequest() && isInteraction(request.url())) interactionPages.push(request.url());
    });
    const exchange = async (back: URL, verifier: string) => postToken(server!.oauthUrl, {
      grant_type: 'authorization_code', client_id: fresh.clientId, code: back.searchParams.get('code')!,
      redirect_uri: app!.callback, code_verifier: verifier,
    });

    for (const scope of ['openid profile scim.read', 'openid scim.read']) {
      const next = authorizeParams(fresh.clientId, scope);
      await page.goto(authorizeUrl(next.params));
      const back = await landedOnCallback();
      expect(back.searchParams.get('state')).toBe(next.state);
      expect(back.searchParams.get('code')).toEqual(expect.any(String));
      const token = await exchange(back, next.verifier);
      expect(token.status).toBe(200);
      expect(await accessTokenClaims(token.body.access_token as string)).toMatchObject({ sub: 'alice', scope });
    }
    expect(interactionPages).toEqual([]);

    const wider = authorizeParams(fresh.clientId, 'openid profile scim.read user.read');
    await page.goto(authorizeUrl(wider.params));
    expect(await page.getByLabel('Password').count()).toBe(0);
    const items = await expectConsentPage('Team SPA');
    expect(items).toContain('Users: Read user profiles');
    expect(interactionPages).toHaveLength(1);
    const back = await decide('Allow');
    expect(back.searchParams.get('state')).toBe(wider.state);
    const token = await exchange(back, wider.verifier);
    expect(token.status).toBe(200);
    expect(scopesOf((await accessTokenClaims(token.body.access_token as string)).scope)).toEqual(['openid', 'profile', 'scim.read', 'user.read']);
  }, TEST_TIMEOUT);

  it('the login and consent pages load nothing from elsewhere, send a Content-Security-Policy, and it blocks nothing of theirs', async () => {
    const allowed = new Set([new URL(server!.baseUrl).origin, app!.origin]);
    const requests: Request[] = [];
    const consoleErrors: string[] = [];
    page.on('request', (request) => requests.push(request));
    page.on('console', (message) => {
      if (message.type() === 'error' || /Content Security Policy/i.test(message.text())) consoleErrors.push(message.text());
    });
    page.on('pageerror', (error) => consoleErrors.push(String(error)));

    const { params, state } = authorizeParams(web.clientId, 'openid profile user.read');
    const callbacksBefore = app!.referers.length;
    const loginResponse = await page.goto(authorizeUrl(params));
    expect(loginResponse).not.toBeNull();
    expect(loginResponse!.status()).toBe(200);
    expect(isInteraction(loginResponse!.url())).toBe(true);
    await expectLoginPage('HR Portal');
    const loginCsp = loginResponse!.headers()['content-security-policy'];
    expect(loginCsp).toContain("default-src 'none'");
    expect(loginCsp).toContain("frame-ancestors 'none'");
    expect(loginCsp).toMatch(/form-action 'self'/);
    // The inline stylesheet is allowed by its nonce: the button is styled.
    await expect(page.getByRole('button', { name: 'Sign in' }).evaluate(backgroundOf))
      .resolves.toBe('rgb(31, 95, 207)');

    const consentPage = page.waitForResponse((r) => r.request().isNavigationRequest() && r.request().method() === 'GET'
      && isInteraction(r.url()) && r.status() === 200);
    consentPage.catch(() => undefined); // awaited below, unless sign-in fails first
    await signIn('alice', alice.password);
    const consentResponse = await consentPage;
    await expectConsentPage('HR Portal');
    const consentCsp = consentResponse.headers()['content-security-policy'];
    expect(consentCsp).toContain("default-src 'none'");
    expect(consentCsp).toContain("frame-ancestors 'none'");
    // The consent form ends at the app: form-action must allow the app's origin (or Allow would be blocked).
    expect(consentCsp).toContain(`form-action 'self' ${app!.origin}`);
    await expect(page.getByRole('button', { name: 'Allow' }).evaluate(backgroundOf))
      .resolves.toBe('rgb(31, 95, 207)');

    const back = await decide('Allow');
    expect(back.searchParams.get('state')).toBe(state);
    expect(back.searchParams.get('code')).toEqual(expect.any(String));

    expect(requests.length).toBeGreaterThanOrEqual(4);
    const elsewhere = requests.map((request) => request.url()).filter((url) => !allowed.has(new URL(url).origin));
    expect(elsewhere).toEqual([]);
    expect(consoleErrors).toEqual([]);
    // The sign-in pages' URLs (they carry the interaction id) are not passed on to the app.
    expect(app!.referers.slice(callbacksBefore)).toEqual([undefined]);
  }, TEST_TIMEOUT);

  it('sign-out: an accessible confirmation, Enter signs out, back at the app with state; the app is told by back channel; the next sign-in asks for the password', async () => {
    // An app of its own: the other tests' consents must not skip the consent page here.
    const created = await server!.auth.appRegistrations.create({
      name: 'Sign-out app', redirectUris: [app!.callback], clientType: 'confidential',
      postLogoutRedirectUris: [app!.callback], backchannelLogoutUri: `${app!.origin}/backchannel`,
    });
    const web = { clientId: created.clientId, clientSecret: created.clientSecret! };
    const { params, verifier } = authorizeParams(web.clientId, 'openid profile user.read');
    await page.goto(authorizeUrl(params));
    expect(await accessibilityViolations(page)).toEqual([]);
    await signIn('alice', alice.password);
    await expectConsentPage('Sign-out app');
    expect(await accessibilityViolations(page)).toEqual([]);
    const back = await decide('Allow');
    const tokens = await postToken(server!.oauthUrl, {
      grant_type: 'authorization_code', code: back.searchParams.get('code')!, redirect_uri: app!.callback, code_verifier: verifier,
    }, { authorization: basic(web.clientId, web.clientSecret) });
    const idToken = tokens.body.id_token as string;

    const confirmation = await page.goto(`${server!.oauthUrl}/session/end?${new URLSearchParams({ id_token_hint: idToken, post_logout_redirect_uri: app!.callback, state: 'bye' })}`);
    expect(confirmation!.status()).toBe(200);
    await expect(page.getByRole('heading', { level: 1 }).textContent()).resolves.toBe('Sign out');
    expect(confirmation!.headers()['content-security-policy']).toContain(`form-action 'self' ${app!.origin}`);
    expect(await page.locator('script').count()).toBe(0);
    expect(await accessibilityViolations(page)).toEqual([]);
    // Keyboard only: the button has the focus; Enter submits.
    await expect(page.evaluate(() => (globalThis as unknown as { document: { activeElement: { textContent: string } } }).document.activeElement.textContent)).resolves.toBe('Sign out');
    const backchannelBefore = app!.backchannel.length;
    await page.keyboard.press('Enter');
    const afterSignOut = await landedOnCallback();
    expect(afterSignOut.searchParams.get('state')).toBe('bye');

    // OpenID Connect Back-Channel Logout 1.0: a logout token signed like the ID token, for this app.
    expect(app!.backchannel.length).toBe(backchannelBefore + 1);
    const logoutToken = new URLSearchParams(app!.backchannel.at(-1)!).get('logout_token')!;
    const { payload } = await jwtVerify(logoutToken, createLocalJWKSet(jwks), { issuer: server!.auth.issuer, audience: web.clientId, typ: 'logout+jwt' });
    expect(payload.events).toEqual({ 'http://schemas.openid.net/event/backchannel-logout': {} });
    expect(payload).not.toHaveProperty('nonce');
    // The ID token names the session, and the logout token the same one (a string on both sides).
    const sid = decodeJwt(idToken).sid;
    expect(typeof sid).toBe('string');
    expect((sid as string).length).toBeGreaterThan(0);
    expect(payload.sid).toBe(sid);
    expect(payload.sub).toBe(decodeJwt(idToken).sub);

    // Signed out: the next sign-in asks for the password again.
    await page.goto(authorizeUrl(authorizeParams(web.clientId, 'openid profile user.read').params));
    await expectLoginPage('Sign-out app');

    // Asked again with no session left: a page with a button, accessible too.
    await page.goto(`${server!.oauthUrl}/session/end?${new URLSearchParams({ id_token_hint: idToken, post_logout_redirect_uri: app!.callback, state: 'again' })}`);
    await expect(page.getByRole('heading', { level: 1 }).textContent()).resolves.toBe('You are not signed in');
    expect(await accessibilityViolations(page)).toEqual([]);
    await page.getByRole('button', { name: 'Continue' }).click();
    expect((await landedOnCallback()).searchParams.get('state')).toBe('again');
  }, TEST_TIMEOUT);
});
