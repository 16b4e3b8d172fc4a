import { mkdirSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { type Browser, type BrowserContext, type Page } from 'playwright-core';
import { totpCode, totpStep } from '../../src/factors/totp.js';
import { testAccounts } from '../support/accounts.js';
import { accessibilityViolations } from '../support/axe.js';
import { launchChromium } from '../support/chromium.js';
import { startServer, type RunningServer } from '../support/server.js';
import { pkcePair } from '../support/user-agent.js';
import { startAppServer } from '../support/app-callback.js';

/**
 * The enrolment pages in headless Chromium (src/pages/enrolment.ts), in English, German and French,
 * branded for the tenant: after the password, an admin without a factor sees the QR code (an
 * inline SVG under the strict CSP: no request, no CSP report) and the secret, types the app's
 * first code with the keyboard alone, sees her ten recovery codes once and continues; axe-core
 * WCAG 2.0/2.1/2.2 A and AA with zero violations on every page and error state. Screenshots
 * (desktop and phone) go to docs/screenshots/ when UPDATE_SCREENSHOTS=1, else to a temporary folder.
 */

const SHOTS = process.env.UPDATE_SCREENSHOTS === '1' ? join(process.cwd(), 'docs/screenshots') : join(tmpdir(), `talent-auth-screenshots-${process.pid}`);

const SLOW = 120_000;
const TEST_TIMEOUT = 90_000;
const STEP = 20_000;
const USERS = ['nia', 'ole', 'pam'].map((sub) => ({
  sub, password: `${sub}-password`, tenant: 'acme', claims: { name: sub, email: `${sub}@acme.example` }, permissions: ['integration_setup'],
}));

describe('the enrolment pages in Chromium (keyboard only, axe-core, en/de/fr, branded)', () => {
  let launching: Promise<Browser> | undefined;
  let browser: Browser | undefined;
  let server: RunningServer | undefined;
  let appServer: Awaited<ReturnType<typeof startAppServer>> | undefined;
  let clientId: string;
  let context: BrowserContext | undefined;
  /** Every request the pages made, and every CSP violation they reported. */
  const requests: string[] = [];
  const violations: string[] = [];

  beforeAll(async () => {
    launching = launchChromium(SLOW);
    appServer = await startAppServer();
    server = await startServer({
      accounts: testAccounts(USERS),
      factorKeys: ['factor-key-of-the-enrolment-pages-0123456789'],
      branding: (tenant) => (tenant === 'acme' ? { productName: 'Acme HR', accentColor: '#6b1f8f' } : undefined),
    });
    ({ clientId } = await server.auth.appRegistrations.create({ name: 'Acme Console', tenant: 'acme', redirectUris: [appServer.callback], clientType: 'public' }));
    browser = await launching;
  }, SLOW);

  afterAll(async () => {
    await context?.close().catch(() => undefined);
    await (await launching?.catch(() => undefined))?.close();
    await server?.stop();
    await appServer?.stop();
  }, SLOW);

  afterEach(async () => {
    await context?.close();
    context = undefined;
  }, SLOW);

  async function newPage(locale: string): Promise<Page> {
    context = await browser!.newContext({ locale });
    context.setDefaultTimeout(STEP);
    context.setDefaultNavigationTimeout(STEP);
    const page = await context.newPage();
    page.on('request', (request) => requests.push(request.url()));
    page.on('console', (message) => {
      if (/Content Security Policy/i.test(message.text())) violations.push(message.text());
    });
    return page;
  }

  const focused = (page: Page) => page.evaluate(() => (globalThis as unknown as { document: { activeElement: { id: string; tagName: string } } }).document.activeElement.id
    || (globalThis as unknown as { document: { activeElement: { tagName: string } } }).document.activeElement.tagName);

  /** The password typed with the keyboard alone (the username field has the focus). */
  async function passwordByKeyboard(page: Page, sub: string, extra: Record<string, string> = {}): Promise<void> {
    await page.goto(`${server!.oauthUrl}/authorize?${new URLSearchParams({
      response_type: 'code', client_id: clientId, redirect_uri: appServer!.callback, scope: 'openid',
      state: 's', code_challenge: pkcePair().challenge, code_challenge_method: 'S256', ...extra,
    })}`);
    await page.locator('#username').waitFor({ state: 'visible' });
    await page.keyboard.type(sub);
    await page.keyboard.press('Tab');
    await page.keyboard.type(`${sub}-password`);
    await page.keyboard.press('Enter');
    // The sign-in page has a heading too: wait until it is gone, so that the next check reads the
    // page the password led to, not the one it was typed on.
    await page.locator('#username').waitFor({ state: 'detached' });
  }

  /** The page's language and heading, the tenant's look, no accessibility violation; a screenshot when named. */
  async function check(page: Page, lang: string, heading: string, shot?: string): Promise<void> {
    await page.getByRole('heading', { level: 1 }).waitFor({ state: 'visible' });
    expect(await page.locator('html').getAttribute('lang')).toBe(lang);
    expect((await page.getByRole('heading', { level: 1 }).textContent())?.trim()).toBe(heading);
    expect(await page.title()).toContain('Acme HR');
    expect(await accessibilityViolations(page)).toEqual([]);
    if (!shot) return;
    mkdirSync(SHOTS, { recursive: true });
    await page.screenshot({ path: join(SHOTS, `${shot}.png`), fullPage: true });
    const size = page.viewportSize()!;
    await page.setViewportSize({ width: 390, height: 844 });
    await page.screenshot({ path: join(SHOTS, `${shot}-phone.png`), fullPage: true });
    await page.setViewportSize(size);
  }

  const secretOf = async (page: Page) => (await page.locator('#secret').textContent())!.replace(/\s/g, '');

  it('English: QR code and secret, a wrong code first (the error at the field), the right one, the ten codes, Continue: back at the app', async () => {
    const page = await newPage('en-US');
    await passwordByKeyboard(page, 'nia');
    await check(page, 'en', 'Set up two-step verification', 'enrolment');
    // The QR code is drawn (an image with a name), the secret readable, the code field focused.
    const qr = page.getByRole('img', { name: 'QR code for your authenticator app' });
    expect(await qr.isVisible()).toBe(true);
    expect((await qr.boundingBox())!.width).toBeGreaterThanOrEqual(150);
    const secret = await secretOf(page);
    expect(secret).toMatch(/^[A-Z2-7]{32}$/);
    expect(await focused(page)).toBe('code');
    const right = totpCode(secret, totpStep(Date.now()));
    await page.keyboard.type(right === '000000' ? '111111' : '000000');
    await page.keyboard.press('Enter');
    await page.getByRole('alert').waitFor({ state: 'visible' });
    expect(await page.getByRole('alert').textContent()).toContain('That code is not right.');
    await check(page, 'en', 'Set up two-step verification', 'enrolment-wrong-code');
    expect(await page.locator('#code').getAttribute('aria-describedby')).toBe('code-error');
    // The same secret: the app she scanned still counts.
    expect(await secretOf(page)).toBe(secret);
    expect(await focused(page)).toBe('code');
    await page.keyboard.type(right);
    await page.keyboard.press('Enter');
    await page.locator('ol.codes').waitFor({ state: 'visible' });
    await check(page, 'en', 'Your recovery codes', 'enrolment-recovery-codes');
    expect(await page.locator('ol.codes li').count()).toBe(10);
    // Continue has the focus: Enter finishes the sign-in (consent given with it for a first-party app, or asked).
    expect(await focused(page)).toBe('BUTTON');
    await page.keyboard.press('Enter');
    const allow = page.getByRole('button', { name: 'Allow' });
    await Promise.race([allow.waitFor({ state: 'visible' }), page.waitForURL((url) => url.pathname === '/callback')]);
    if (await allow.isVisible()) await allow.click();
    await page.waitForURL((url) => url.pathname === '/callback');
    // Nothing fetched but our pages and the app's callback; the CSP reported nothing.
    expect(requests.every((url) => url.startsWith(server!.baseUrl) || url.startsWith(appServer!.callback.replace('/callback', '')))).toBe(true);
    expect(violations).toEqual([]);
  }, TEST_TIMEOUT);

  it('German: the enrolment and its malformed-code error, the codes page opened again (shown once), accessible', async () => {
    const page = await newPage('de-DE');
    await passwordByKeyboard(page, 'ole');
    await check(page, 'de', 'Bestätigung in zwei Schritten einrichten', 'enrolment-de');
    await page.keyboard.type('12ab');
    await page.keyboard.press('Enter');
    await page.getByRole('alert').waitFor({ state: 'visible' });
    expect(await page.getByRole('alert').textContent()).toContain('6 Ziffern');
    await check(page, 'de', 'Bestätigung in zwei Schritten einrichten');
    await page.keyboard.type(totpCode(await secretOf(page), totpStep(Date.now())));
    await page.keyboard.press('Enter');
    await page.locator('ol.codes').waitFor({ state: 'visible' });
    await check(page, 'de', 'Ihre Wiederherstellungscodes', 'enrolment-recovery-codes-de');
    // Back at the sign-in's page (its address, not the form's): the codes are not shown again.
    await page.goto(page.url().replace(/\/enrol$/, ''));
    await check(page, 'de', 'Ihre Wiederherstellungscodes');
    expect(await page.locator('ol.codes').count()).toBe(0);
    expect(await page.locator('main').textContent()).toContain('nicht erneut angezeigt');
    expect(violations).toEqual([]);
  }, TEST_TIMEOUT);

  it('French by ui_locales: the enrolment and the codes, accessible', async () => {
    const page = await newPage('en-US');
    await passwordByKeyboard(page, 'pam', { ui_locales: 'fr' });
    await check(page, 'fr', 'Configurer la validation en deux étapes', 'enrolment-fr');
    await page.getByLabel('Code de votre application d’authentification').fill(totpCode(await secretOf(page), totpStep(Date.now())));
    await page.getByRole('button', { name: 'Activer' }).click();
    await page.locator('ol.codes').waitFor({ state: 'visible' });
    await check(page, 'fr', 'Vos codes de récupération');
    await page.getByRole('button', { name: 'Continuer' }).click();
    expect(violations).toEqual([]);
  }, TEST_TIMEOUT);
});
