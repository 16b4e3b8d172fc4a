import { mkdirSync } from 'node:fs';
import { randomBytes } from 'node:crypto';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import * as client from 'openid-client';
import { Redis } from 'ioredis';
import type { Browser, BrowserContext, CDPSession, Page } from 'playwright-core';
import { createRedisStore } from '../../adapters/redis/index.js';
import type { Store } from '../../adapters/types.js';
import { AuditTrail, DEFAULT_AUDIT_SETTINGS } from '../../src/audit/trail.js';
import { Factors, FACTORS, type FactorRecord } from '../../src/factors/index.js';
import { Passkeys } from '../../src/factors/passkeys.js';
import { totpCode, totpStep } from '../../src/factors/totp.js';
import { ACR_MFA } from '../../src/index.js';
import { PASSKEY_SCRIPT_PATH, passkeyScriptTag } from '../../src/pages/passkey-script.js';
import { testAccounts } from '../support/accounts.js';
import { accessibilityViolations } from '../support/axe.js';
import { launchChromium } from '../support/chromium.js';
import { capturingLogger } from '../support/fixtures.js';
import { startServer, type RunningServer } from '../support/server.js';
import { useStore } from '../support/stores.js';
import { pkcePair } from '../support/user-agent.js';
import { startAppServer } from '../support/app-callback.js';

/**
 * Passkeys at sign-in (src/endpoints/sign-in/passkey-steps.ts) in headless Chromium with a virtual
 * authenticator (the DevTools protocol's WebAuthn domain): a passkey registered for the server's
 * relying party (localhost: the server's base URL is http://localhost:PORT), then, through the
 * real pages, the authorization request and the code exchange of openid-client: the passkey as
 * the second factor after the password, and alone where the tenant allows it; another user's
 * assertion and a cloned authenticator refused and audited; the pages in en/de/fr with axe-core.
 * On Redis: the passkeys are registered by a second Passkeys instance on the same Redis, as
 * another server process would (the memory store is the server's own; the store-neutral rules
 * are in test/endpoints/sign-in/passkeys.test.ts, on both stores). Screenshots go to
 * docs/screenshots/ when UPDATE_SCREENSHOTS=1.
 */

const SHOTS = process.env.UPDATE_SCREENSHOTS === '1' ? join(process.cwd(), 'docs/screenshots') : join(tmpdir(), `talent-auth-screenshots-${process.pid}`);
const SLOW = 120_000;
const TEST_TIMEOUT = 100_000;
const STEP = 20_000;
const FACTOR_KEY = 'factor-key-of-the-server-0123456789abcdef';
const USERS = [
  ...['pia', 'rex', 'sam', 'una'].map((sub) => ({ sub, password: `${sub}-password`, tenant: 'acme', claims: { name: sub }, scopes: ['scim.read'] })),
  { sub: 'ted', password: 'ted-password', tenant: 'globex', claims: { name: 'ted' }, scopes: ['scim.read'] },
];
const SELF = (sub: string) => ({ actor: { type: 'user' as const, id: sub } });

const escape = (text: string) => text.replace(/&/g, '&amp;').replace(/"/g, '&quot;').replace(/</g, '&lt;');

describe('passkeys at sign-in in Chromium (redis store): second factor, alone, refusals, en/de/fr', () => {
  const redis = useStore('redis');
  let launching: Promise<Browser> | undefined;
  let browser: Browser;
  let server: RunningServer;
  let appServer: Awaited<ReturnType<typeof startAppServer>>;
  let other: Store;
  let passkeys: Passkeys;
  let factors: Factors;
  let acme: client.Configuration;
  let globex: client.Configuration;
  let context: BrowserContext | undefined;

  beforeAll(async () => {
    launching = launchChromium(SLOW);
    appServer = await startAppServer();
    const store = redis.option() as { type: 'redis'; url: string; keyPrefix: string };
    server = await startServer({
      accounts: testAccounts(USERS),
      store,
      factorKeys: [FACTOR_KEY],
      tenantPolicy: (tenant) => (tenant === 'acme' ? { passkeyOnlySignIn: true } : {}),
    }, { hostName: 'localhost' });
    const configuration = async (tenant: string) => {
      const { clientId } = await server.auth.appRegistrations.create({ name: 'Acme Recruiting', tenant, redirectUris: [appServer.callback], clientType: 'public' });
      return client.discovery(new URL(server.oauthUrl), clientId, undefined, client.None(), { execute: [client.allowInsecureRequests] });
    };
    acme = await configuration('acme');
    globex = await configuration('globex');
    other = await createRedisStore({ url: store.url, keyPrefix: store.keyPrefix });
    const audit = new AuditTrail(other, DEFAULT_AUDIT_SETTINGS, capturingLogger().logger, undefined);
    // The server's relying party: its base URL (http://localhost:PORT).
    passkeys = new Passkeys(other, { baseUrl: server.baseUrl, rpName: 'Acme HR' }, audit);
    factors = new Factors(other.records, { keys: [FACTOR_KEY], issuerName: 'x' }, audit);
    browser = await launching;
  }, SLOW);

  afterAll(async () => {
    await context?.close().catch(() => undefined);
    await (await launching?.catch(() => undefined))?.close();
    await other?.close();
    await server?.stop();
    await appServer?.stop();
  }, SLOW);

  afterEach(async () => {
    await context?.close();
    context = undefined;
  }, SLOW);

  /**
   * A page in a new context (language `locale`) with a virtual authenticator: resident keys, user
   * verified. `presence(on)`: whether it answers a request by itself (the user touching it); off,
   * a request waits (the autofill's, started with a passkey-only login page, too).
   */
  async function withAuthenticator(locale = 'en-US'): Promise<{ page: Page; cdp: CDPSession; authenticatorId: string; presence(on: boolean): Promise<void> }> {
    context = await browser.newContext({ locale });
    context.setDefaultTimeout(STEP);
    context.setDefaultNavigationTimeout(STEP);
    const page = await context.newPage();
    const cdp = await context.newCDPSession(page);
    await cdp.send('WebAuthn.enable');
    const { authenticatorId } = await cdp.send('WebAuthn.addVirtualAuthenticator', {
      options: { protocol: 'ctap2', transport: 'internal', hasResidentKey: true, hasUserVerification: true, isUserVerified: true, automaticPresenceSimulation: true },
    });
    const presence = async (enabled: boolean) => {
      await cdp.send('WebAuthn.setAutomaticPresenceSimulation', { authenticatorId, enabled });
    };
    return { page, cdp, authenticatorId, presence };
  }

  /**
   * Registers a passkey of `sub` in the page's authenticator: a page at the server's own origin
   * (answered by the browser context, as the portal's Security page would be) that runs the
   * server's passkey script; the answer checked by the second Passkeys instance.
   */
  async function register(page: Page, sub: string): Promise<void> {
    const owner = { tenant: 'acme', sub };
    const url = `${server.baseUrl}/test-register-${sub}`;
    let outcome: unknown;
    await page.route(url, async (route) => {
      if (route.request().method() === 'POST') {
        const form = new URLSearchParams(route.request().postData() ?? '');
        outcome = await passkeys.register(owner, form.get('ceremony'), JSON.parse(form.get('credential') ?? 'null'), 'Laptop', SELF(sub));
        await route.fulfill({ contentType: 'text/plain', body: 'done' });
        return;
      }
      const { ceremony, options } = await passkeys.registrationOptions(owner, `${sub}@acme.example`);
      const nonce = randomBytes(16).toString('base64');
      await route.fulfill({
        contentType: 'text/html',
        headers: { 'content-security-policy': `default-src 'none'; script-src 'nonce-${nonce}'; form-action 'self'` },
        body: `<!doctype html><html lang="en"><head><meta charset="utf-8"><title>Add a passkey</title>${passkeyScriptTag(PASSKEY_SCRIPT_PATH, nonce)}</head><body>
<form method="post" action="${url}" data-passkey="create" data-passkey-options="${escape(JSON.stringify(options))}">
<input type="hidden" name="ceremony" value="${ceremony}"><input type="hidden" name="credential" value="">
<p data-passkey-error role="status"></p><button type="submit">Add</button></form></body></html>`,
      });
    });
    await page.goto(url);
    await Promise.all([page.waitForURL(url, { waitUntil: 'load' }), page.getByRole('button', { name: 'Add' }).click()]);
    await page.getByText('done').waitFor();
    expect(outcome).toMatchObject({ accepted: true, passkey: { method: 'hwk' } });
  }

  interface Started { verifier: string; state: string }

  /** Opens an authorization request of openid-client (`on`: the app's configuration). */
  async function authorize(page: Page, on: client.Configuration, extra: Record<string, string> = {}): Promise<Started> {
    const { verifier, challenge } = pkcePair();
    const state = client.randomState();
    const url = client.buildAuthorizationUrl(on, {
      redirect_uri: appServer.callback, scope: 'openid scim.read', state, code_challenge: challenge, code_challenge_method: 'S256', ...extra,
    });
    await page.goto(url.href);
    return { verifier, state };
  }

  async function password(page: Page, sub: string): Promise<void> {
    await page.locator('#username').fill(sub);
    await page.locator('#password').fill(`${sub}-password`);
    await page.locator('#password').press('Enter');
  }

  /** Through the consent (when asked) back at the app: the ID token's claims of the code exchange. */
  async function backAtTheApp(page: Page, started: Started, on = acme, allow = 'Allow') {
    const consentOrApp = page.getByRole('button', { name: allow }).or(page.getByRole('heading', { name: 'Back at the app' }));
    await consentOrApp.first().waitFor({ state: 'visible' });
    if (await page.getByRole('button', { name: allow }).isVisible()) {
      await page.getByRole('button', { name: allow }).click();
      await page.getByRole('heading', { name: 'Back at the app' }).waitFor({ state: 'visible' });
    }
    const tokens = await client.authorizationCodeGrant(on, new URL(page.url()), { pkceCodeVerifier: started.verifier, expectedState: started.state });
    return tokens.claims()!;
  }

  /** The page's language and heading, no accessibility violation; a screenshot (desktop and phone) when named. */
  async function check(page: Page, lang: string, heading: string, shot?: string): Promise<void> {
    await page.getByRole('heading', { level: 1 }).waitFor({ state: 'visible' });
    expect(await page.locator('html').getAttribute('lang')).toBe(lang);
    expect((await page.getByRole('heading', { level: 1 }).textContent())?.trim()).toBe(heading);
    expect(await accessibilityViolations(page)).toEqual([]);
    if (!shot) return;
    mkdirSync(SHOTS, { recursive: true });
    await page.screenshot({ path: join(SHOTS, `${shot}.png`), fullPage: true });
    const size = page.viewportSize()!;
    await page.setViewportSize({ width: 390, height: 844 });
    await page.screenshot({ path: join(SHOTS, `${shot}-phone.png`), fullPage: true });
    await page.setViewportSize(size);
  }

  /** The user's audit events of a type, once `count` of them are written (up to 3 s). */
  async function events(type: string, sub: string, count = 1) {
    const read = async () => (await server.auth.audit.list({ tenant: 'acme', type: type as never })).events
      .filter((event) => event.target?.id === sub || (event.actor.type === 'user' && event.actor.id === sub));
    const until = Date.now() + 3000;
    let found = await read();
    while (found.length < count && Date.now() < until) {
      await new Promise((resolve) => setTimeout(resolve, 25));
      found = await read();
    }
    return found;
  }

  const focused = (page: Page) => page.evaluate(() => (globalThis as unknown as { document: { activeElement: { id: string; textContent: string } } }).document.activeElement.textContent?.trim()
    || (globalThis as unknown as { document: { activeElement: { id: string } } }).document.activeElement.id);

  it('a passkey as the second factor after the password: "Use a passkey", amr [pwd, hwk, mfa] and the mfa class in the ID token; keyboard only, accessible', async () => {
    const { page, presence } = await withAuthenticator();
    await register(page, 'pia');
    // Not touched yet: the login page's autofill request waits.
    await presence(false);
    // She also has an authenticator app: the page offers both, the code field first.
    const { secret } = await factors.startAuthenticatorApp({ tenant: 'acme', sub: 'pia' }, 'pia');
    await factors.confirmAuthenticatorApp({ tenant: 'acme', sub: 'pia' }, totpCode(secret, totpStep(Date.now()) - 1), SELF('pia'));

    const started = await authorize(page, acme);
    // The login page of a tenant that allows a passkey alone: the autofill and the button.
    await check(page, 'en', 'Sign in');
    await password(page, 'pia');
    await check(page, 'en', 'Two-step verification', 'second-factor-passkey');
    await presence(true);
    expect(await page.locator('input[name="code"]').getAttribute('autocomplete')).toBe('one-time-code');
    // The page loads our script by path, under its nonce with its integrity; nothing inline.
    const script = page.locator('script');
    expect(await script.count()).toBe(1);
    expect(await script.getAttribute('src')).toBe(PASSKEY_SCRIPT_PATH);
    expect(await script.getAttribute('integrity')).toMatch(/^sha384-/);
    // With the keyboard alone: from the code field, past Verify, to "Use a passkey".
    await page.keyboard.press('Tab');
    await page.keyboard.press('Tab');
    expect(await focused(page)).toBe('Use a passkey');
    await page.keyboard.press('Enter');
    const claims = await backAtTheApp(page, started);
    expect(claims).toMatchObject({ sub: 'pia', amr: ['pwd', 'hwk', 'mfa'], acr: ACR_MFA });
    expect(await events('sign_in.succeeded', 'pia')).toHaveLength(1);
    expect(await events('sign_in.second_factor_failed', 'pia', 0)).toEqual([]);
  }, TEST_TIMEOUT);

  it('a passkey alone where the tenant allows it: the autofill, or "Sign in with a passkey"; amr [hwk, mfa] and the mfa class in the ID token', async () => {
    const { page, presence } = await withAuthenticator();
    await register(page, 'sam');
    // The browser's autofill: the page starts a conditional request; the (virtual) authenticator
    // answers it at once, as a user picking her passkey in the username field's list would.
    const byAutofill = await authorize(page, acme);
    const claims = await backAtTheApp(page, byAutofill);
    expect(claims).toMatchObject({ sub: 'sam', amr: ['hwk', 'mfa'], acr: ACR_MFA });
    expect(claims.auth_time).toEqual(expect.any(Number));
    // No device cookie: a passkey alone names no username.
    expect((await context!.cookies()).map((cookie) => cookie.name)).not.toContain('talent_auth_device');

    // The button: the autofill's request waits (nobody touched the authenticator) and is ended by it.
    await context!.clearCookies();
    await presence(false);
    const byButton = await authorize(page, acme);
    await check(page, 'en', 'Sign in', 'sign-in-passkey');
    expect(await page.locator('#username').getAttribute('autocomplete')).toBe('username webauthn');
    expect(await page.locator('form[data-passkey="get"]').getAttribute('data-passkey-autofill')).toBe('');
    const options = JSON.parse((await page.locator('form[data-passkey="get"]').getAttribute('data-passkey-options'))!) as { rpId: string; allowCredentials: unknown[]; userVerification: string };
    expect(options).toMatchObject({ rpId: 'localhost', allowCredentials: [], userVerification: 'required' });
    await presence(true);
    await page.getByRole('button', { name: 'Sign in with a passkey' }).click();
    expect(await backAtTheApp(page, byButton)).toMatchObject({ sub: 'sam', amr: ['hwk', 'mfa'], acr: ACR_MFA });
  }, TEST_TIMEOUT);

  it('another user\'s assertion is refused (401, the page says so, audited); a cloned authenticator too (cloned_authenticator); the counter stays', async () => {
    const { page, cdp, authenticatorId, presence } = await withAuthenticator();
    // una's passkey, registered, then gone from this authenticator (she holds it elsewhere).
    await register(page, 'una');
    const { credentials: hers } = await cdp.send('WebAuthn.getCredentials', { authenticatorId });
    await cdp.send('WebAuthn.removeCredential', { authenticatorId, credentialId: hers[0]!.credentialId });
    await register(page, 'rex');
    /** The password of `sub`; the authenticator touched only once on the second-factor page (the login page's autofill waits). */
    const toSecondFactor = async (sub: string) => {
      await presence(false);
      const started = await authorize(page, acme);
      await password(page, sub);
      await page.getByRole('button', { name: 'Use a passkey' }).waitFor();
      await presence(true);
      return started;
    };
    // rex's assertion, taken as his passkey step posts it (and not let through).
    await toSecondFactor('rex');
    let taken = '';
    await page.route('**/passkey', async (route) => {
      taken = new URLSearchParams(route.request().postData() ?? '').get('credential') ?? '';
      // No content: the browser stays on the page, nothing reached the server.
      await route.fulfill({ status: 204 });
    });
    await Promise.all([page.waitForResponse((answer) => answer.url().endsWith('/passkey')), page.getByRole('button', { name: 'Use a passkey' }).click()]);
    for (const until = Date.now() + STEP; taken === '' && Date.now() < until;) await new Promise((resolve) => setTimeout(resolve, 25));
    expect(taken).toMatch(/^\{"id":/);
    await page.unroute('**/passkey');

    // una's second-factor page, rex's assertion posted to it.
    await context!.clearCookies();
    await toSecondFactor('una');
    await page.evaluate((credential) => {
      const form = (globalThis as unknown as { document: { querySelector(s: string): { elements: { namedItem(n: string): { value: string } } } } }).document.querySelector('form[data-passkey]')!;
      form.elements.namedItem('credential').value = credential;
      (globalThis as unknown as { HTMLFormElement: { prototype: { submit: { call(f: unknown): void } } } }).HTMLFormElement.prototype.submit.call(form);
    }, taken);
    await page.getByRole('alert').waitFor({ state: 'visible' });
    expect(await page.getByRole('alert').textContent()).toBe('That passkey cannot sign you in here. Try again, or choose another way to sign in.');
    await check(page, 'en', 'Two-step verification', 'second-factor-passkey-refused');
    expect(await events('sign_in.second_factor_failed', 'una')).toEqual([
      expect.objectContaining({ target: { type: 'user', id: 'una' }, details: expect.objectContaining({ factor: 'passkey', reason: 'wrong' }) }),
    ]);

    // rex again, his authenticator cloned: the same key, its counter back at zero.
    await context!.clearCookies();
    const started = await toSecondFactor('rex');
    await page.getByRole('button', { name: 'Use a passkey' }).click();
    await backAtTheApp(page, started);
    const counter = (await other.records.get<FactorRecord>(FACTORS, 'acme:rex'))?.passkeys[0]?.counter;
    expect(counter).toBeGreaterThan(0);
    const { credentials } = await cdp.send('WebAuthn.getCredentials', { authenticatorId });
    await cdp.send('WebAuthn.removeCredential', { authenticatorId, credentialId: credentials[0]!.credentialId });
    await cdp.send('WebAuthn.addCredential', { authenticatorId, credential: { ...credentials[0]!, signCount: 0 } });
    await context!.clearCookies();
    await toSecondFactor('rex');
    await page.getByRole('button', { name: 'Use a passkey' }).click();
    await page.getByRole('alert').waitFor({ state: 'visible' });
    expect(await page.getByRole('alert').textContent()).toContain('That passkey cannot sign you in here.');
    expect(page.url()).not.toContain(appServer.callback);
    expect((await other.records.get<FactorRecord>(FACTORS, 'acme:rex'))?.passkeys[0]?.counter).toBe(counter);
    expect(await events('sign_in.second_factor_failed', 'rex')).toEqual([
      expect.objectContaining({ details: expect.objectContaining({ factor: 'passkey', reason: 'cloned_authenticator' }) }),
    ]);
    // Alone (by the autofill), the clone is refused too: the login page again, with what
    // happened, and no autofill request started again at once (the button still there).
    await context!.clearCookies();
    await authorize(page, acme);
    await page.getByRole('alert').waitFor({ state: 'visible' });
    expect(await page.getByRole('alert').textContent()).toContain('That passkey cannot sign you in here.');
    expect(await page.locator('#password').isVisible()).toBe(true);
    expect(await page.locator('#username').getAttribute('autocomplete')).toBe('username');
    expect(await page.locator('form[data-passkey="get"]').getAttribute('data-passkey-autofill')).toBeNull();
    expect(await page.getByRole('button', { name: 'Sign in with a passkey' }).isVisible()).toBe(true);
    await check(page, 'en', 'Sign in');
    expect(await events('sign_in.second_factor_failed', 'rex', 2)).toHaveLength(2);
  }, TEST_TIMEOUT);

  it('a passkey alone of a user the account store no longer knows is refused (401, the login page again)', async () => {
    const { page, presence } = await withAuthenticator();
    // Registered while she was a user of acme; the host's AccountStore does not know her (any more).
    await register(page, 'gone');
    await presence(false);
    const started = await authorize(page, acme);
    await presence(true);
    await page.getByRole('button', { name: 'Sign in with a passkey' }).click();
    await page.getByRole('alert').waitFor({ state: 'visible' });
    expect(await page.getByRole('alert').textContent()).toContain('That passkey cannot sign you in here.');
    expect(page.url()).not.toContain(appServer.callback);
    expect(started.state).toEqual(expect.any(String));
    expect((await server.auth.audit.list({ tenant: 'acme', type: 'sign_in.succeeded' as never })).events.filter((event) => event.actor.id === 'gone')).toEqual([]);
  }, TEST_TIMEOUT);

  it('German and French pages (ui_locales too), accessible; a tenant without passkey-only: no passkey, no script', async () => {
    const { page } = await withAuthenticator('de-DE');
    await authorize(page, acme);
    await check(page, 'de', 'Anmelden', 'sign-in-passkey-de');
    expect(await page.getByRole('button', { name: 'Mit Passkey anmelden' }).isVisible()).toBe(true);
    await context!.close();
    const { page: french, presence } = await withAuthenticator('en-US');
    await register(french, 'pia');
    await presence(false);
    await authorize(french, acme, { ui_locales: 'fr' });
    await check(french, 'fr', 'Se connecter');
    expect(await french.getByRole('button', { name: 'Se connecter avec une clé d’accès' }).isVisible()).toBe(true);
    await password(french, 'pia');
    await check(french, 'fr', 'Validation en deux étapes', 'second-factor-passkey-fr');
    expect(await french.getByRole('button', { name: 'Utiliser une clé d’accès' }).isVisible()).toBe(true);

    // globex does not allow a passkey alone: the login page has none, and no script at all.
    await context!.clearCookies();
    const answer = await french.goto(client.buildAuthorizationUrl(globex, {
      redirect_uri: appServer.callback, scope: 'openid', state: 's', code_challenge: pkcePair().challenge, code_challenge_method: 'S256',
    }).href);
    const interactionPage = french.url();
    expect(interactionPage).toContain('/interaction/');
    expect(answer?.status()).toBe(200);
    expect(await french.locator('script').count()).toBe(0);
    expect(await french.locator('#username').getAttribute('autocomplete')).toBe('username');
    expect(await french.locator('form').count()).toBe(1);
    const csp = (await french.request.get(interactionPage)).headers()['content-security-policy'] ?? '';
    expect(csp).not.toContain('script-src');
  }, TEST_TIMEOUT);

  it('the challenge a login page keeps lives PASSKEY_CHALLENGE_SECONDS in Redis, one per page', async () => {
    const { page } = await withAuthenticator();
    const redisClient = new Redis(redis.redis!.url);
    try {
      const prefix = (server.storeOption as { keyPrefix: string }).keyPrefix;
      const before = new Set(await redisClient.keys(`${prefix}*PasskeyChallenge*`));
      await authorize(page, acme);
      const ceremony = await page.locator('input[name="ceremony"]').getAttribute('value');
      const added = (await redisClient.keys(`${prefix}*PasskeyChallenge*`)).filter((key) => !before.has(key));
      expect(added).toEqual([expect.stringContaining(ceremony!)]);
      const ttl = await redisClient.ttl(added[0]!);
      expect(ttl).toBeGreaterThan(290);
      expect(ttl).toBeLessThanOrEqual(300);
    } finally {
      redisClient.disconnect();
    }
  }, TEST_TIMEOUT);
});
