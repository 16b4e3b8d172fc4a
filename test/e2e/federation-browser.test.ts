import { afterAll, beforeAll, beforeEach, afterEach, describe, expect, it } from '@jest/globals';
import * as client from 'openid-client';
import { decodeJwt } from 'jose';
import type { Browser, BrowserContext, Page } from 'playwright-core';
import { accessibilityViolations } from '../support/axe.js';
import { launchChromium } from '../support/chromium.js';
import { APP_REDIRECT, startFederationRig, type FederationRig } from '../support/federation.js';
import { pkcePair } from '../support/user-agent.js';

/*
 * Enterprise sign-in in headless Chromium (src/endpoints/sign-in/federation-steps.ts): the login
 * page's email field (home-realm discovery) and "Continue with" button, the upstream provider's
 * own sign-in (a real node-oidc-provider), our consent, the code and tokens through openid-client;
 * a platform app sent on to another tenant's provider; axe on every new page state; keyboard only.
 */

const SLOW = 120_000;
const STEP = 20_000;

const ACCOUNTS = [{ sub: 'ada@acme.example', password: 'ada-password-1', tenant: 'acme', claims: { name: 'Ada', email: 'ada@acme.example' } }];
const USERS = [{ sub: 'up-ada', email: 'ada@acme.example', email_verified: true, name: 'Ada Upstream' }];

describe('enterprise sign-in in Chromium', () => {
  let launching: Promise<Browser> | undefined;
  let browser: Browser;
  let rig: FederationRig;
  let platform: FederationRig;
  let context: BrowserContext;
  let page: Page;

  beforeAll(async () => {
    launching = launchChromium(SLOW);
    rig = await startFederationRig({ accounts: ACCOUNTS, users: USERS });
    platform = await startFederationRig({ accounts: ACCOUNTS, users: USERS, appTenant: null });
    browser = await launching;
  }, SLOW);
  afterAll(async () => {
    await (await launching?.catch(() => undefined))?.close();
    await rig?.stop();
    await platform?.stop();
  }, SLOW);

  beforeEach(async () => {
    context = await browser.newContext();
    context.setDefaultTimeout(STEP);
    context.setDefaultNavigationTimeout(STEP);
    page = await context.newPage();
  });
  afterEach(async () => context.close());

  async function expectAccessible(name: string) {
    expect({ page: name, violations: await accessibilityViolations(page) }).toEqual({ page: name, violations: [] });
  }

  /** The app's authorization request; returns what the code exchange needs. */
  async function start(on: FederationRig, extra: Record<string, string> = {}) {
    const { verifier, challenge } = pkcePair();
    const state = client.randomState();
    const url = client.buildAuthorizationUrl(on.app.config, { redirect_uri: APP_REDIRECT, scope: 'openid', state, code_challenge: challenge, code_challenge_method: 'S256', ...extra });
    await page.goto(url.href);
    return { verifier, state };
  }

  /** The provider's page: the username typed, Enter; then our consent (Allow, by keyboard); back at the app: its tokens. */
  async function upstreamThenConsent(on: FederationRig, started: { verifier: string; state: string }) {
    // The app's redirect URI is not served: the request the browser makes to it is what the app gets.
    const toApp = page.waitForRequest((request) => request.url().startsWith(APP_REDIRECT));
    await page.waitForURL((url) => url.origin === on.upstream.issuer);
    await page.locator('#username').fill('up-ada');
    await page.locator('#username').press('Enter');
    const ours = new URL(on.server.baseUrl).origin;
    await Promise.race([page.waitForURL((url) => url.origin === ours && url.pathname.includes('/interaction/')), toApp]);
    if (new URL(page.url()).origin === ours) {
      await page.getByRole('button', { name: 'Allow' }).waitFor();
      await expectAccessible('consent after a federated sign-in');
      await page.getByRole('button', { name: 'Allow' }).focus();
      await page.keyboard.press('Enter');
    }
    const back = new URL((await toApp).url());
    return client.authorizationCodeGrant(on.app.config, back, { pkceCodeVerifier: started.verifier, expectedState: started.state });
  }

  it('home-realm discovery: the work email, Continue, the provider, consent, tokens of her account and tenant', async () => {
    const started = await start(rig);
    await expectAccessible('login page with enterprise sign-in');
    const email = page.getByLabel('Work email');
    expect(await email.getAttribute('autocomplete')).toBe('email');
    await email.fill('ada@acme.example');
    await email.press('Enter');
    const tokens = await upstreamThenConsent(rig, started);
    expect(tokens.claims()).toMatchObject({ sub: 'ada@acme.example', amr: ['fed', 'pwd'] });
    expect(decodeJwt(tokens.access_token)).toMatchObject({ sub: 'ada@acme.example', tenant: 'acme' });
  }, SLOW);

  it('the "Continue with" button, by keyboard', async () => {
    const started = await start(rig);
    const button = page.getByRole('button', { name: `Continue with ${rig.connection.name}` });
    await button.focus();
    await page.keyboard.press('Enter');
    const tokens = await upstreamThenConsent(rig, started);
    expect(tokens.claims()!.sub).toBe('ada@acme.example');
  }, SLOW);

  it('login_hint skips the page', async () => {
    const started = await start(rig, { login_hint: 'ada@acme.example' });
    expect(new URL(page.url()).origin).toBe(rig.upstream.issuer);
    expect(await page.locator('#username').inputValue()).toBe('ada@acme.example');
    const tokens = await upstreamThenConsent(rig, started);
    expect(tokens.claims()!.sub).toBe('ada@acme.example');
  }, SLOW);

  it('an address no connection owns: the login page again (accessible), the address as username, the message', async () => {
    await start(rig);
    await page.getByLabel('Work email').fill('someone@elsewhere.example');
    await page.getByLabel('Work email').press('Enter');
    await page.getByText('There is no organisation sign-in for this address').waitFor();
    expect(await page.locator('#username').inputValue()).toBe('someone@elsewhere.example');
    await expectAccessible('login page: no connection for the address');
  }, SLOW);

  it('a platform app: discovery across tenants (no buttons), sent on to the tenant\'s provider past the login page\'s CSP', async () => {
    const started = await start(platform);
    expect(await page.getByRole('button', { name: /Continue with/ }).count()).toBe(0);
    await page.getByLabel('Work email').fill('ada@acme.example');
    await page.getByLabel('Work email').press('Enter');
    const tokens = await upstreamThenConsent(platform, started);
    expect(tokens.claims()!.sub).toBe('ada@acme.example');
  }, SLOW);

  it('a failure page: accessible, in the sign-in\'s language, with the way back', async () => {
    await start(rig, { ui_locales: 'de' });
    await page.getByRole('button', { name: `Weiter mit ${rig.connection.name}` }).click();
    await page.waitForURL((url) => url.origin === rig.upstream.issuer);
    // Another browser's answer: this context's binding cookie is dropped first.
    await context.clearCookies({ name: 'talent_auth_federation' });
    await page.locator('#username').fill('up-ada');
    await page.locator('#username').press('Enter');
    await page.getByText('Die Anmeldung über Ihre Organisation ist fehlgeschlagen').waitFor();
    expect(await page.locator('html').getAttribute('lang')).toBe('de');
    await expectAccessible('federation failure page');
    await page.getByRole('link', { name: 'Zurück zur Anmeldung' }).click();
    await page.locator('#password').waitFor();
  }, SLOW);
});
