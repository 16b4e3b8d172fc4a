import type { Browser, BrowserContext, Page } from 'playwright-core';
import { testAccounts } from '../support/accounts.js';
import { accessibilityViolations } from '../support/axe.js';
import { launchChromium } from '../support/chromium.js';
import { startServer, type RunningServer } from '../support/server.js';
import { pkcePair } from '../support/user-agent.js';

/**
 * The SSO-required page (src/pages/sso-required.ts) in headless Chromium: a tenant's app, German
 * and French, axe-core (WCAG A/AA) with zero violations, its button reached with the keyboard;
 * after a password at a platform app, the same page with its link back to the sign-in page.
 */

const SLOW = 120_000;
const TEST_TIMEOUT = 90_000;
const STEP = 20_000;
const CALLBACK = 'http://127.0.0.1:9/cb';

describe('the SSO-required page in Chromium (axe-core, keyboard, de/fr)', () => {
  let launching: Promise<Browser> | undefined;
  let browser: Browser | undefined;
  let server: RunningServer | undefined;
  let context: BrowserContext | undefined;
  let acmeApp: string;
  let platformApp: string;
  const amy = { sub: 'amy', password: 'amy-pw', tenant: 'acme' };

  beforeAll(async () => {
    launching = launchChromium(SLOW);
    server = await startServer({ accounts: testAccounts([amy]), tenantPolicy: (tenant) => (tenant === 'acme' ? { sso: 'required' } : undefined) });
    acmeApp = (await server.auth.appRegistrations.create({ name: 'Acme Recruiting', tenant: 'acme', redirectUris: [CALLBACK], clientType: 'public' })).clientId;
    platformApp = (await server.auth.appRegistrations.create({ name: 'Talent Hub', redirectUris: [CALLBACK], clientType: 'public' })).clientId;
    await server.auth.connections.create({ tenant: 'acme', name: 'Acme Entra', issuer: 'https://login.acme.example/v2.0', clientId: 'c', clientSecret: 's', domains: ['acme.example'] });
    browser = await launching;
  }, SLOW);
  afterAll(async () => {
    await context?.close().catch(() => undefined);
    await (await launching?.catch(() => undefined))?.close();
    await server?.stop();
  }, SLOW);
  afterEach(async () => {
    await context?.close();
    context = undefined;
  }, SLOW);

  async function open(locale: string, clientId: string): Promise<Page> {
    context = await browser!.newContext({ locale });
    context.setDefaultTimeout(STEP);
    context.setDefaultNavigationTimeout(STEP);
    const page = await context.newPage();
    await page.goto(`${server!.oauthUrl}/authorize?${new URLSearchParams({
      response_type: 'code', client_id: clientId, redirect_uri: CALLBACK, scope: 'openid', state: 's',
      code_challenge: pkcePair().challenge, code_challenge_method: 'S256',
    })}`);
    await page.getByRole('heading', { level: 1 }).waitFor({ state: 'visible' });
    return page;
  }

  it.each([
    ['de-DE', 'de', 'Über Ihre Organisation anmelden', 'Weiter mit Acme Entra'],
    ['fr-FR', 'fr', 'Se connecter via votre organisation', 'Continuer avec Acme Entra'],
  ])("a tenant's app in %s: no password field, the provider's button reached with the keyboard", async (locale, lang, heading, button) => {
    const page = await open(locale, acmeApp);
    expect(await page.locator('html').getAttribute('lang')).toBe(lang);
    expect((await page.getByRole('heading', { level: 1 }).textContent())?.trim()).toBe(heading);
    expect(await page.locator('input[type="password"]').count()).toBe(0);
    await page.keyboard.press('Tab');
    expect(await page.evaluate(() => (globalThis as unknown as { document: { activeElement: { textContent: string } } }).document.activeElement.textContent.trim())).toBe(button);
    expect(await accessibilityViolations(page)).toEqual([]);
  }, TEST_TIMEOUT);

  it('a platform app: after her password, the page with the link back to the sign-in page', async () => {
    const page = await open('en-US', platformApp);
    await page.getByLabel('Username').fill(amy.sub);
    await page.getByLabel('Password', { exact: true }).fill(amy.password);
    await page.getByRole('button', { name: 'Sign in' }).click();
    await page.getByRole('link', { name: 'Back to the sign-in' }).waitFor({ state: 'visible' });
    expect(await page.getByRole('button', { name: 'Continue with Acme Entra' }).count()).toBe(1);
    expect(await accessibilityViolations(page)).toEqual([]);
    await page.getByRole('link', { name: 'Back to the sign-in' }).click();
    await page.getByLabel('Password', { exact: true }).waitFor({ state: 'visible' });
  }, TEST_TIMEOUT);
});
