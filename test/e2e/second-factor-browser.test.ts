import { mkdirSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { type Browser, type BrowserContext, type Page } from 'playwright-core';
import { createRedisStore } from '../../adapters/redis/index.js';
import type { Store } from '../../adapters/types.js';
import { AuditTrail, DEFAULT_AUDIT_SETTINGS } from '../../src/audit/trail.js';
import { Factors } from '../../src/factors/index.js';
import { totpCode, totpStep } from '../../src/factors/totp.js';
import { testAccounts } from '../support/accounts.js';
import { accessibilityViolations } from '../support/axe.js';
import { launchChromium } from '../support/chromium.js';
import { capturingLogger } from '../support/fixtures.js';
import { startServer, type RunningServer } from '../support/server.js';
import { useStore } from '../support/stores.js';
import { pkcePair } from '../support/user-agent.js';
import { startAppServer } from '../support/app-callback.js';

/**
 * The second-factor page in headless Chromium, in English, German and French: reached with the
 * keyboard alone after the password, the app's code or a recovery code typed into the one field, axe-core WCAG 2.0/2.1/2.2 A and AA with zero violations, its error state too. The user's
 * app is enrolled by a second Factors instance on the same Redis. Screenshots (desktop and phone)
 * go to docs/screenshots/ when UPDATE_SCREENSHOTS=1, else to a temporary folder.
 */

const SHOTS = process.env.UPDATE_SCREENSHOTS === '1' ? join(process.cwd(), 'docs/screenshots') : join(tmpdir(), `talent-auth-screenshots-${process.pid}`);

const SLOW = 120_000;
const TEST_TIMEOUT = 90_000;
const STEP = 20_000;
const FACTOR_KEY = 'factor-key-of-the-server-0123456789abcdef';
const USERS = ['kim', 'lea', 'max'].map((sub) => ({ sub, password: `${sub}-password`, tenant: 'acme', claims: { name: sub }, scopes: ['scim.read'] }));

describe('the second-factor page in Chromium (keyboard only, axe-core, en/de/fr)', () => {
  const redis = useStore('redis');
  let launching: Promise<Browser> | undefined;
  let browser: Browser | undefined;
  let server: RunningServer | undefined;
  let appServer: Awaited<ReturnType<typeof startAppServer>> | undefined;
  let other: Store | undefined;
  let factors: Factors;
  let clientId: string;
  let context: BrowserContext | undefined;

  beforeAll(async () => {
    launching = launchChromium(SLOW);
    appServer = await startAppServer();
    const store = redis.option() as { type: 'redis'; url: string; keyPrefix: string };
    server = await startServer({ accounts: testAccounts(USERS), store, factorKeys: [FACTOR_KEY] });
    ({ clientId } = await server.auth.appRegistrations.create({ name: 'Acme Recruiting', tenant: 'acme', redirectUris: [appServer.callback], clientType: 'public' }));
    other = await createRedisStore({ url: store.url, keyPrefix: store.keyPrefix });
    factors = new Factors(other.records, { keys: [FACTOR_KEY], issuerName: 'x' }, new AuditTrail(other, DEFAULT_AUDIT_SETTINGS, capturingLogger().logger, undefined));
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

  async function enrolled(sub: string): Promise<string> {
    const owner = { tenant: 'acme', sub };
    const { secret } = await factors.startAuthenticatorApp(owner, sub);
    await factors.confirmAuthenticatorApp(owner, totpCode(secret, totpStep(Date.now()) - 1), { actor: { type: 'user', id: sub } });
    return secret;
  }

  async function newPage(locale: string): Promise<Page> {
    context = await browser!.newContext({ locale });
    context.setDefaultTimeout(STEP);
    context.setDefaultNavigationTimeout(STEP);
    return context.newPage();
  }

  const focused = (page: Page) => page.evaluate(() => (globalThis as unknown as { document: { activeElement: { id: string; tagName: string } } }).document.activeElement.id
    || (globalThis as unknown as { document: { activeElement: { tagName: string } } }).document.activeElement.tagName);

  /** The password typed with the keyboard alone (the username field has the focus). */
  async function passwordByKeyboard(page: Page, sub: string): Promise<void> {
    await page.goto(`${server!.oauthUrl}/authorize?${new URLSearchParams({
      response_type: 'code', client_id: clientId, redirect_uri: appServer!.callback, scope: 'openid scim.read',
      state: 's', code_challenge: pkcePair().challenge, code_challenge_method: 'S256',
    })}`);
    await page.locator('#username').waitFor({ state: 'visible' });
    expect(await focused(page)).toBe('username');
    await page.keyboard.type(sub);
    await page.keyboard.press('Tab');
    await page.keyboard.type(`${sub}-password`);
    await page.keyboard.press('Enter');
    // The sign-in page has a heading too: wait until it is gone, so that the next check reads the
    // page the password led to, not the one it was typed on.
    await page.locator('#username').waitFor({ state: 'detached' });
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

  it('English: the code typed into the field that has the focus, Enter: on to the consent; a wrong code first shows the error, accessible', async () => {
    const secret = await enrolled('kim');
    const page = await newPage('en-US');
    await passwordByKeyboard(page, 'kim');
    await check(page, 'en', 'Two-step verification', 'second-factor');
    expect(await focused(page)).toBe('code');
    const right = totpCode(secret, totpStep(Date.now()));
    await page.keyboard.type(right === '000000' ? '111111' : '000000');
    await page.keyboard.press('Enter');
    await page.getByRole('alert').waitFor({ state: 'visible' });
    expect(await page.getByRole('alert').textContent()).toContain('That code is not right.');
    await check(page, 'en', 'Two-step verification', 'second-factor-wrong-code');
    expect(await page.locator('#code').getAttribute('aria-describedby')).toBe('code-error');
    // The field has the focus again: the right code, Enter.
    expect(await focused(page)).toBe('code');
    await page.keyboard.type(right);
    await page.keyboard.press('Enter');
    await page.getByRole('button', { name: 'Allow' }).waitFor({ state: 'visible' });
  }, TEST_TIMEOUT);

  it('German: a recovery code typed into the same one field, with the keyboard alone', async () => {
    await enrolled('lea');
    const [recovery] = await factors.newRecoveryCodes({ tenant: 'acme', sub: 'lea' }, { actor: { type: 'user', id: 'lea' } });
    const page = await newPage('de-DE');
    await passwordByKeyboard(page, 'lea');
    await check(page, 'de', 'Bestätigung in zwei Schritten', 'second-factor-recovery-de');
    // One field for both: it has the focus, takes letters (not a numeric keyboard), and the
    // browser may fill it with a code it received (one-time-code).
    expect(await focused(page)).toBe('code');
    expect(await page.getByLabel('Bestätigungscode', { exact: true }).getAttribute('autocomplete')).toBe('one-time-code');
    expect(await page.getByLabel('Bestätigungscode', { exact: true }).getAttribute('inputmode')).toBe('text');
    expect(await page.locator('form').count()).toBe(1);
    await page.keyboard.type(recovery!);
    await page.keyboard.press('Enter');
    await page.getByRole('button', { name: 'Erlauben' }).waitFor({ state: 'visible' });
  }, TEST_TIMEOUT);

  it('French by ui_locales: the page and its error (a malformed code), accessible', async () => {
    await enrolled('max');
    const page = await newPage('en-US');
    await page.goto(`${server!.oauthUrl}/authorize?${new URLSearchParams({
      response_type: 'code', client_id: clientId, redirect_uri: appServer!.callback, scope: 'openid scim.read',
      state: 's', code_challenge: pkcePair().challenge, code_challenge_method: 'S256', ui_locales: 'fr',
    })}`);
    await page.getByLabel("Nom d'utilisateur").fill('max');
    await page.getByLabel('Mot de passe', { exact: true }).fill('max-password');
    await page.getByRole('button', { name: 'Se connecter' }).click();
    await page.locator('#username').waitFor({ state: 'detached' });
    await check(page, 'fr', 'Validation en deux étapes');
    await page.getByLabel('Code de validation').fill('12ab');
    await page.getByRole('button', { name: 'Valider' }).click();
    await page.getByRole('alert').waitFor({ state: 'visible' });
    expect(await page.getByRole('alert').textContent()).toContain('6 chiffres');
    await check(page, 'fr', 'Validation en deux étapes', 'second-factor-malformed-fr');
  }, TEST_TIMEOUT);
});
