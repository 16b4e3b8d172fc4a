import { mkdirSync } from 'node:fs';
import { join } from 'node:path';
import { tmpdir } from 'node:os';
import { type Browser, type BrowserContext, type Page } from 'playwright-core';
import { launchChromium } from '../support/chromium.js';
import { accessibilityViolations } from '../support/axe.js';
import { startRedis, type RedisServer } from '../support/redis.js';
import { basic, postToken, startServer, type RunningServer } from '../support/server.js';
import { signInForCode } from '../support/sign-in.js';
import { testAccounts } from '../support/accounts.js';
import { passSecondFactorInBrowser } from '../support/second-factor.js';
import { UserAgent } from '../support/user-agent.js';

/**
 * The administration portal of the library (`portal: { enabled: true }`) in Debian's headless
 * Chromium, on the Redis store: every action of the spec as a user with "Create and update
 * integration setup" (ada) and one without (ben); axe-core's WCAG 2.0/2.1/2.2 A and AA rules on every
 * page and state; the create flow with the keyboard alone; a secret never shown twice, never in a
 * URL, a log line or the browser's history. Screenshots of each page (desktop and a 390 px phone)
 * go to docs/screenshots/ when UPDATE_SCREENSHOTS=1, else to a temporary folder.
 */

const SLOW = 120_000;
const TEST_TIMEOUT = 120_000;
const STEP = 20_000;
const PERMISSION = "You need the permission 'Create and update integration setup'";
const JWT = /eyJ[A-Za-z0-9_-]{10,}\.[A-Za-z0-9_-]+/;
const SHOTS = process.env.UPDATE_SCREENSHOTS === '1' ? join(process.cwd(), 'docs/screenshots') : join(tmpdir(), `talent-auth-screenshots-${process.pid}`);

const accounts = testAccounts([
  { sub: 'ada', password: 'ada-password', tenant: 'acme', claims: { name: 'Ada Admin', email: 'ada@acme.example' }, permissions: ['integration_setup'] },
  { sub: 'ben', password: 'ben-password', tenant: 'acme', claims: { name: 'Ben Reader' }, scopes: ['scim.read', 'user.read'] },
]);

describe('administration portal (library, Redis store) in headless Chromium', () => {
  let launching: Promise<Browser> | undefined;
  let browser: Browser | undefined;
  let redis: RedisServer;
  let server: RunningServer;
  let context: BrowserContext | undefined;
  let page: Page;
  let problems: string[];
  /** Every URL the browser asked for, in every test: no secret may ever be in one. */
  const requested: string[] = [];
  /** Every secret the portal showed. */
  const secrets: string[] = [];

  beforeAll(async () => {
    launching = launchChromium(SLOW);
    mkdirSync(SHOTS, { recursive: true });
    redis = await startRedis();
    server = await startServer({
      store: { type: 'redis', url: redis.url },
      accounts,
      cookieKeys: ['a-cookie-key-of-the-portal-tests-0123456789'],
      portal: { enabled: true },
      // The organisation's look: its product name and accent colour on its users' portal pages.
      branding: (tenant) => (tenant === 'acme' ? { productName: 'Acme HR', accentColor: '#6b1f8f' } : undefined),
    });
    browser = await launching;
  }, SLOW);

  afterAll(async () => {
    await (await launching?.catch(() => undefined))?.close();
    await server?.stop();
    await redis?.stop();
    // Nothing secret anywhere: not in a URL the browser asked for, not in a log line.
    const written = [...requested, ...server.logLines].join('\n');
    for (const secret of secrets) expect(written).not.toContain(secret);
    expect(written).not.toMatch(JWT);
  }, SLOW);

  beforeEach(async () => {
    context = await browser!.newContext({ permissions: ['clipboard-read', 'clipboard-write'], viewport: { width: 1280, height: 900 } });
    context.setDefaultTimeout(STEP);
    context.setDefaultNavigationTimeout(STEP);
    page = await context.newPage();
    problems = [];
    page.on('request', (request) => requested.push(request.url()));
    page.on('console', (message) => {
      const text = message.text();
      if (/Content Security Policy/i.test(text) || (message.type() === 'error' && !text.startsWith('Failed to load resource: the server responded with a status of 4'))) problems.push(text);
    });
    page.on('pageerror', (error) => problems.push(String(error)));
  }, SLOW);

  afterEach(async () => {
    const elsewhere = requested.filter((url) => new URL(url).origin !== server.baseUrl);
    await context?.close();
    context = undefined;
    expect(elsewhere).toEqual([]);
    expect(problems).toEqual([]);
  }, SLOW);

  const portalUrl = (path = '') => `${server.baseUrl}/portal${path}`;

  /** axe-core finds nothing on the page as it is; a screenshot of it (desktop and phone) when named. */
  async function accessible(shot?: string): Promise<void> {
    expect(await accessibilityViolations(page)).toEqual([]);
    expect(await page.content()).not.toMatch(JWT);
    if (!shot) return;
    await page.screenshot({ path: join(SHOTS, `${shot}.png`), fullPage: true });
    const size = page.viewportSize()!;
    await page.setViewportSize({ width: 390, height: 844 });
    await page.screenshot({ path: join(SHOTS, `${shot}-phone.png`), fullPage: true });
    await page.setViewportSize(size);
  }

  async function heading(): Promise<string> {
    return (await page.getByRole('heading', { level: 1 }).first().textContent())!.trim();
  }

  /** Presses Tab until the focused element's text or label matches, then returns (keyboard only). */
  async function tabTo(name: string | RegExp, limit = 80): Promise<void> {
    for (let presses = 0; presses < limit; presses += 1) {
      await page.keyboard.press('Tab');
      const focused = await page.evaluate(() => {
        const element = (globalThis as unknown as { document: { activeElement: { textContent: string | null; id: string; labels?: Array<{ textContent: string | null }> } | null } }).document.activeElement;
        if (!element) return '';
        const label = element.labels?.[0]?.textContent ?? '';
        return `${label} ${element.textContent ?? ''}`.trim();
      });
      if (typeof name === 'string' ? focused.includes(name) : name.test(focused)) return;
    }
    throw new Error(`never focused ${String(name)}`);
  }

  async function signIn(username: string, password: string): Promise<void> {
    await page.goto(portalUrl());
    await accessible('portal-signed-out');
    await page.getByRole('link', { name: 'Sign in' }).click();
    await page.getByLabel('Username').waitFor();
    await accessible('sign-in');
    await page.getByLabel('Username').fill(username);
    await page.getByLabel('Password').fill(password);
    await page.getByRole('button', { name: 'Sign in' }).click();
    const allow = page.getByRole('button', { name: 'Allow' });
    const code = page.locator('input[name="code"]').first();
    // An admin gives her second factor (enrols at her first sign-in): test/support/second-factor.ts.
    await Promise.race([allow.waitFor({ state: 'visible' }), code.waitFor({ state: 'visible' }), page.waitForURL((url) => url.pathname === '/portal')]);
    await passSecondFactorInBrowser(page, server.baseUrl, username, () => accessible());
    await Promise.race([allow.waitFor({ state: 'visible' }), page.waitForURL((url) => url.pathname === '/portal')]);
    if (await allow.isVisible()) {
      await accessible('consent');
      await allow.click();
    }
    await page.getByRole('button', { name: 'Sign out' }).waitFor();
    expect(await heading()).toBe('Developer portal');
  }

  /** The secret page: what it shows, once (checked as it goes). */
  async function shownSecret(): Promise<{ clientId: string; secret: string }> {
    await page.waitForURL((url) => url.pathname === '/portal/secret');
    await page.getByText('This secret is shown once.').waitFor();
    const secret = await page.getByLabel('Client secret').inputValue();
    expect(secret).toMatch(/^[A-Za-z0-9_-]{43}$/);
    secrets.push(secret);
    await accessible();
    return { clientId: (await page.locator('#client-id').textContent())!, secret };
  }

  const clientCredentials = (clientId: string, secret: string) =>
    postToken(`${server.baseUrl}/oauth2`, 'grant_type=client_credentials', { authorization: basic(clientId, secret) });

  it('ada creates a client configuration with the keyboard alone; its secret is shown once, copied, never again', async () => {
    await signIn('ada', 'ada-password');
    await accessible('portal-home-empty');
    await tabTo('Create a client configuration');
    await page.keyboard.press('Enter');
    await page.waitForURL((url) => url.pathname === '/portal/client-configurations/new');
    await accessible('client-configuration-new');
    await tabTo('Name');
    // Focus is visible: the focused field has an outline of its own.
    const outline = await page.evaluate(() => {
      const style = (globalThis as unknown as { getComputedStyle(e: unknown): { outlineStyle: string; outlineWidth: string }; document: { activeElement: unknown } });
      const computed = style.getComputedStyle(style.document.activeElement);
      return `${computed.outlineStyle} ${computed.outlineWidth}`;
    });
    expect(outline).toBe('solid 3px');
    await page.keyboard.type('Payroll sync');
    await tabTo('Category');
    await page.keyboard.type('payroll');
    await tabTo('Description');
    await page.keyboard.type('Nightly export to the payroll provider');
    await tabTo('scim.read');
    await page.keyboard.press('Space');
    await tabTo('Only group values');
    await page.keyboard.type('engineering, sales');
    await tabTo('user.read');
    await page.keyboard.press('Space');
    await tabTo('Create a client configuration');
    await page.keyboard.press('Enter');
    const created = await shownSecret();
    await accessible('secret-shown');
    // The copy button, by keyboard too.
    await tabTo('Copy secret');
    await page.keyboard.press('Enter');
    await page.getByRole('status').filter({ hasText: 'Copied.' }).waitFor();
    expect(await page.evaluate(() => (globalThis as unknown as { navigator: { clipboard: { readText(): Promise<string> } } }).navigator.clipboard.readText())).toBe(created.secret);
    expect(page.url()).not.toContain(created.secret);

    const token = await clientCredentials(created.clientId, created.secret);
    expect(token.status).toBe(200);

    // Back to the list: the new client is there, its secret is not; the browser's Back and a reload do not show it again.
    await page.getByRole('link', { name: 'Back to the portal' }).click();
    await page.getByRole('button', { name: 'Sign out' }).waitFor();
    const row = page.getByRole('table', { name: 'Client configurations' }).getByRole('row', { name: /Payroll sync/ });
    await expect(row.textContent()).resolves.toMatch(/scim\.read \(group = engineering, sales\)/);
    await expect(row.textContent()).resolves.toMatch(/user\.read/);
    await accessible('portal-home');
    await page.goBack();
    await page.waitForLoadState('load');
    expect(await page.content()).not.toContain(created.secret);
    await page.goto(portalUrl('/secret'));
    expect(new URL(page.url()).pathname).toBe('/portal');
    expect(await page.content()).not.toContain(created.secret);
  }, TEST_TIMEOUT);

  it('ada edits, regenerates the secret of (after a warning) and deletes (after confirming) a client configuration; the form says what is wrong, at the field', async () => {
    await signIn('ada', 'ada-password');
    await page.getByRole('link', { name: 'Create a client configuration' }).click();
    // Nothing chosen: every problem listed at the top and at its field.
    await page.getByRole('button', { name: 'Create a client configuration' }).click();
    const summary = page.getByRole('alert');
    await expect(summary.textContent()).resolves.toMatch(/There are 3 problems/);
    expect(await page.getByLabel('Name').getAttribute('aria-invalid')).toBe('true');
    expect(await page.getByLabel('Name').getAttribute('aria-describedby')).toContain('client-name-error');
    await accessible('client-configuration-errors');
    await page.getByLabel('Name').fill('Reporting');
    await page.getByLabel('Category').fill('analytics');
    await page.getByLabel(/^scim\.read/).check();
    await page.getByRole('button', { name: 'Create a client configuration' }).click();
    const created = await shownSecret();

    // Edit: name, description, one more API.
    await page.goto(portalUrl());
    await page.getByRole('link', { name: 'Edit Reporting' }).click();
    expect(await heading()).toBe('Edit client configuration: Reporting');
    await expect(page.getByLabel(/^scim\.read/).isChecked()).resolves.toBe(true);
    await accessible('client-configuration-edit');
    await page.getByLabel('Name').fill('Reporting v2');
    await page.getByLabel('Description (optional)').fill('Weekly reports');
    await page.getByLabel(/^manage\.subscriptions/).check();
    await page.getByRole('button', { name: 'Save changes' }).click();
    await expect(page.getByRole('status').textContent()).resolves.toBe('Client configuration "Reporting v2" saved.');
    const record = await server.auth.clientConfigurations.get(created.clientId);
    expect(record).toMatchObject({ name: 'Reporting v2', description: 'Weekly reports', resources: { scim: { scopes: ['scim.read'] }, subscriptions: { scopes: ['manage.subscriptions'] } } });

    // Regenerate: a warning first; the old secret stops at once.
    await page.getByRole('link', { name: 'Regenerate secret: Reporting v2' }).click();
    expect(await heading()).toBe('Regenerate the secret of "Reporting v2"?');
    await expect(page.getByText('The current secret stops working at once').count()).resolves.toBe(1);
    await accessible('client-configuration-regenerate');
    await page.getByRole('button', { name: 'Regenerate secret' }).click();
    const regenerated = await shownSecret();
    expect(regenerated.secret).not.toBe(created.secret);
    expect(await heading()).toBe('New secret: Reporting v2');
    expect((await clientCredentials(created.clientId, created.secret)).status).toBe(401);
    expect((await clientCredentials(created.clientId, regenerated.secret)).status).toBe(200);

    // Delete: confirmation, then gone (Cancel changes nothing).
    await page.goto(portalUrl());
    await page.getByRole('link', { name: 'Delete Reporting v2' }).click();
    await accessible('client-configuration-delete');
    await page.getByRole('link', { name: 'Cancel' }).click();
    expect(await server.auth.clientConfigurations.get(created.clientId)).toBeDefined();
    await page.getByRole('link', { name: 'Delete Reporting v2' }).click();
    await page.getByRole('button', { name: 'Delete Reporting v2' }).click();
    await expect(page.getByRole('status').textContent()).resolves.toBe('Client configuration "Reporting v2" deleted.');
    expect(await server.auth.clientConfigurations.get(created.clientId)).toBeUndefined();
    expect((await clientCredentials(created.clientId, regenerated.secret)).status).toBe(401);
  }, TEST_TIMEOUT);

  it('ada registers an app with several redirect URIs (a refused one shown at its field), edits it (PKCE, client type), regenerates and deletes it', async () => {
    await signIn('ada', 'ada-password');
    await page.getByRole('link', { name: 'Create an app registration' }).click();
    await accessible('app-registration-new');
    await page.getByLabel('Name').fill('HR reports');
    await page.getByLabel('Redirect URI 1', { exact: true }).fill('https://reports.example/callback');
    await page.getByRole('button', { name: 'Add another redirect URI' }).click();
    await page.getByLabel('Redirect URI 2', { exact: true }).fill('http://reports.example/other');
    await page.getByLabel('Post-logout redirect URI 1', { exact: true }).fill('https://reports.example/signed-out#top');
    await page.getByRole('button', { name: 'Create an app registration' }).click();
    // Each refused URI, with its rule, at its field; what was typed stays.
    const second = page.getByLabel('Redirect URI 2', { exact: true });
    expect(await second.getAttribute('aria-invalid')).toBe('true');
    await expect(page.locator('#redirect-1-error').textContent()).resolves.toMatch(/^"http:\/\/reports\.example\/other" plain http is allowed only for/);
    expect(await page.getByLabel('Post-logout redirect URI 1', { exact: true }).getAttribute('aria-invalid')).toBe('true');
    await expect(page.locator('#logout-0-error').textContent()).resolves.toMatch(/fragment/);
    await expect(page.getByRole('alert').textContent()).resolves.toMatch(/There are 2 problems/);
    expect(await page.getByLabel('Redirect URI 1', { exact: true }).getAttribute('aria-invalid')).toBeNull();
    await expect(page.getByLabel('Redirect URI 1', { exact: true }).inputValue()).resolves.toBe('https://reports.example/callback');
    await accessible('app-registration-errors');
    await second.fill('https://reports.example/other');
    await page.getByLabel('Post-logout redirect URI 1', { exact: true }).fill('https://reports.example/signed-out');
    // Enter in a field submits the form (its default button), not "Add another redirect URI".
    await page.getByLabel('Name').press('Enter');
    const created = await shownSecret();
    const app = await server.auth.appRegistrations.get(created.clientId);
    expect(app).toMatchObject({
      name: 'HR reports', tenant: 'acme', clientType: 'confidential', pkceEnabled: true,
      redirectUris: ['https://reports.example/callback', 'https://reports.example/other'], postLogoutRedirectUris: ['https://reports.example/signed-out'],
    });

    // Edit: PKCE off (https URIs only), with its warning on the page.
    await page.goto(portalUrl());
    await page.getByRole('link', { name: 'Edit HR reports' }).click();
    await expect(page.getByText('Turn it off only for a legacy confidential app', { exact: false }).count()).resolves.toBe(1);
    await expect(page.getByText('Changing the type signs every user out of this app', { exact: false }).count()).resolves.toBe(1);
    await accessible('app-registration-edit');
    await page.getByLabel('Require PKCE').uncheck();
    await page.getByLabel('Redirect URI 3', { exact: true }).fill('');
    await page.getByLabel('Back-channel logout URI (optional)').fill('https://reports.example/backchannel');
    await page.getByLabel('Description (optional)').fill('Monthly HR reports');
    await page.getByRole('button', { name: 'Save changes' }).click();
    await expect(page.getByRole('status').textContent()).resolves.toBe('App registration "HR reports" saved.');
    expect(await server.auth.appRegistrations.get(created.clientId)).toMatchObject({
      pkceEnabled: false, backchannelLogoutUri: 'https://reports.example/backchannel', description: 'Monthly HR reports',
    });

    // Confidential → public: no secret; public → confidential: a new one, shown once.
    await page.getByRole('link', { name: 'Edit HR reports' }).click();
    await page.getByLabel('Public: a single-page or mobile app, without a secret').check();
    await page.getByRole('button', { name: 'Save changes' }).click();
    await expect(page.getByRole('status').textContent()).resolves.toBe('App registration "HR reports" saved.');
    expect((await server.auth.appRegistrations.get(created.clientId))!).toMatchObject({ clientType: 'public', pkceEnabled: true });
    await page.getByRole('link', { name: 'Edit HR reports' }).click();
    await page.getByLabel('Confidential: a server-side app that keeps a secret').check();
    await page.getByRole('button', { name: 'Save changes' }).click();
    const secretAgain = await shownSecret();
    expect(secretAgain.clientId).toBe(created.clientId);

    // Regenerate, then delete.
    await page.goto(portalUrl());
    await page.getByRole('link', { name: 'Regenerate secret: HR reports' }).click();
    await page.getByRole('button', { name: 'Regenerate secret' }).click();
    const regenerated = await shownSecret();
    expect(regenerated.secret).not.toBe(secretAgain.secret);
    await page.goto(portalUrl());
    await page.getByRole('link', { name: 'Delete HR reports' }).click();
    await expect(page.getByText('Its users are signed out of it at once', { exact: false }).count()).resolves.toBe(1);
    await accessible('app-registration-delete');
    await page.getByRole('button', { name: 'Delete HR reports' }).click();
    await expect(page.getByRole('status').textContent()).resolves.toBe('App registration "HR reports" deleted.');
    expect(await server.auth.appRegistrations.get(created.clientId)).toBeUndefined();
  }, TEST_TIMEOUT);

  it("ada's Activity in words: who (by name) did what to which integration, the details; filtered by type and dates, with errors at their fields", async () => {
    await signIn('ada', 'ada-password');
    const activity = page.getByRole('table', { name: 'Activity' });
    // Words, not event codes; names, not bare IDs (her last sign-in may have used a recovery code: the test keeps no one waiting for a new app code).
    await expect(activity.getByRole('row').nth(1).textContent()).resolves.toMatch(/^\d{4}-\d\d-\d\d \d\d:\d\d UTC(Signed in|Access to an account allowed|App registration deleted|Recovery code used)Ada Admin/);
    expect(await activity.textContent()).not.toMatch(/[a-z_]+\.(created|succeeded|granted|deleted)/);
    await page.getByRole('link', { name: 'All activity' }).click();
    await accessible('activity');
    await page.getByLabel('Event type').selectOption({ label: 'Client configuration created' });
    await page.getByRole('button', { name: 'Show' }).click();
    const rows = page.getByRole('table', { name: 'Activity' }).getByRole('row');
    expect(await rows.count()).toBeGreaterThan(1);
    for (const text of (await rows.allTextContents()).slice(1)) {
      expect(text).toMatch(/^\d{4}-\d\d-\d\d \d\d:\d\d UTCClient configuration createdAda AdminClient configuration /);
      expect(text).toContain('Name: ');
    }
    expect(await page.getByLabel('Event type').inputValue()).toBe('client_configuration.created');
    // A date range that ends before it starts: said at the field, by keyboard too.
    await page.getByLabel('From date (UTC)').fill('2030-01-02');
    await page.getByLabel('To date (UTC)').fill('2030-01-01');
    await page.getByLabel('To date (UTC)').press('Enter');
    await expect(page.getByRole('alert').textContent()).resolves.toMatch(/There is 1 problem with this form/);
    expect(await page.getByLabel('To date (UTC)').getAttribute('aria-invalid')).toBe('true');
    await expect(page.locator('#activity-until-error').textContent()).resolves.toBe('To date (UTC): the date must not be before the from date.');
    await accessible('activity-errors');
    await page.getByLabel('To date (UTC)').fill('2030-01-03');
    await page.getByRole('button', { name: 'Show' }).click();
    await page.getByText('Nothing recorded yet.').waitFor();
    await accessible();
  }, TEST_TIMEOUT);

  it("ada sees the platform's apps that serve her organisation (read-only) and lets a held user of hers sign in again", async () => {
    // ben is held: as many failed sign-ins as the limit allows (10 per username), over HTTP.
    for (let n = 0; n < 10; n += 1) {
      const agent = new UserAgent(server.baseUrl);
      expect((await agent.submit(await agent.request('/portal/login'), { username: 'ben', password: 'not-his-password' })).status).toBe(401);
    }
    const held = new UserAgent(server.baseUrl);
    expect((await held.submit(await held.request('/portal/login'), { username: 'ben', password: 'ben-password' })).status).toBe(429);
    await signIn('ada', 'ada-password');
    const platform = page.getByRole('table', { name: 'Apps of the platform' });
    await expect(platform.getByRole('row', { name: /Developer portal/ }).textContent()).resolves.toContain('The platform');
    expect(await platform.getByRole('link').count()).toBe(0);
    expect(await platform.getByRole('button').count()).toBe(0);
    await page.getByRole('link', { name: 'Unlock a user' }).click();
    expect(await heading()).toBe('Unlock a user');
    await accessible('sign-in-unlock');
    // Nothing typed: said at the field.
    await page.getByRole('button', { name: 'Unlock' }).click();
    await expect(page.locator('#unlock-username-error').textContent()).resolves.toBe('Username: enter a username.');
    expect(await page.getByLabel('Username').getAttribute('aria-invalid')).toBe('true');
    await accessible('sign-in-unlock-errors');
    await page.getByLabel('Username').fill('ben');
    await page.getByLabel('Username').press('Enter');
    await expect(page.getByRole('status').textContent()).resolves.toBe('ben can sign in again.');
    await accessible();
    const [unlocked] = (await server.auth.audit.list({ tenant: 'acme', type: 'sign_in.unlocked' })).events;
    expect(unlocked).toMatchObject({ actor: { type: 'user', id: 'ada' }, target: { type: 'user', id: 'ben' }, details: { failures: 10 } });
    await page.getByRole('link', { name: 'All activity' }).click();
    await expect(page.getByRole('table', { name: 'Activity' }).getByRole('row').nth(1).textContent()).resolves.toMatch(/Sign-in hold liftedAda AdminUser Ben Reader10 failed sign-ins cleared/);
  }, TEST_TIMEOUT);

  it('ben (without the permission) sees only his consents and revokes one; the APIs refuse what the portal would not show him', async () => {
    // Ben allowed a third-party app of his organisation (through its own sign-in, over HTTP).
    const third = await server.auth.appRegistrations.create({ name: 'Timesheets', clientType: 'public', redirectUris: ['http://127.0.0.1:1/cb'], tenant: 'acme' });
    await signInForCode(server, { clientId: third.clientId, redirectUri: 'http://127.0.0.1:1/cb' }, { sub: 'ben', password: 'ben-password' }, 'openid scim.read');
    const refusals = async () => (await server.auth.audit.list({ tenant: 'acme', type: 'management.denied' })).events.length
      + (await server.auth.audit.list({ tenant: null, type: 'management.denied' })).events.length;
    const refusedBefore = await refusals();
    await signIn('ben', 'ben-password');
    await expect(page.getByText(PERMISSION).count()).resolves.toBe(1);
    await expect(page.getByRole('link', { name: 'Create a client configuration' }).count()).resolves.toBe(0);
    await expect(page.getByRole('table', { name: 'Activity' }).count()).resolves.toBe(0);
    await accessible('portal-home-without-permission');
    const consents = page.getByRole('table', { name: 'My consents' });
    await expect(consents.getByRole('row', { name: /Timesheets/ }).count()).resolves.toBe(1);
    await consents.getByRole('button', { name: 'Revoke the consent of Timesheets' }).click();
    await expect(page.getByRole('status').textContent()).resolves.toMatch(/^Consent of Timesheets revoked/);
    await expect(consents.getByRole('row', { name: /Timesheets/ }).count()).resolves.toBe(0);

    // A form's address typed in: a page that says which permission he lacks, not the form.
    const form = await page.goto(portalUrl('/client-configurations/new'));
    expect(form!.status()).toBe(403);
    await expect(page.getByRole('alert').textContent()).resolves.toContain(PERMISSION);
    expect(await page.getByLabel('Name').count()).toBe(0);
    await accessible('portal-forbidden');
    await page.getByRole('link', { name: 'Back to the portal' }).click();
    // Forged forms with his right CSRF token: the same page (403), and nothing sent to the APIs.
    const csrf = (await page.locator('input[name="csrf"]').first().getAttribute('value'))!;
    const forged = await context!.request.post(portalUrl('/client-configurations'), { form: { csrf, name: 'Sneaky', category: 'x', scope: 'scim.read' }, headers: { origin: server.baseUrl } });
    expect(forged.status()).toBe(403);
    expect(new URL(forged.url()).pathname).toBe('/portal/client-configurations');
    expect(await forged.text()).toContain(PERMISSION.replace(/'/g, '&#39;'));
    expect((await server.auth.clientConfigurations.list('acme')).some((client) => client.name === 'Sneaky')).toBe(false);
    const activity = await context!.request.get(portalUrl('/activity'));
    expect(activity.status()).toBe(403);
    expect(await activity.text()).toContain(PERMISSION.replace(/'/g, '&#39;'));
    // His portal asked the management API for nothing: not one refusal recorded.
    expect(await refusals()).toBe(refusedBefore);

    // Sign out: the portal's session, then the sign-in session, after the server's confirmation page.
    await page.getByRole('button', { name: 'Sign out' }).click();
    await page.waitForURL((url) => url.pathname === '/oauth2/session/end');
    await accessible('sign-out-confirm');
    await page.getByRole('button', { name: 'Sign out' }).click();
    await page.waitForURL((url) => url.pathname === '/portal');
    await expect(page.getByRole('status').textContent()).resolves.toBe('You are signed out of the portal.');
    await accessible('portal-signed-out-notice');
    // Signed out of the server too: the next sign-in asks for the password.
    await page.getByRole('link', { name: 'Sign in' }).click();
    await page.getByLabel('Password').waitFor();
  }, TEST_TIMEOUT);

  it.each([
    ['de-DE', 'de', 'Entwicklerportal', 'Anmelden', 'Benutzername', 'Passwort', 'Client-Konfigurationen', 'Aktivität', 'Alle Aktivitäten', /Angemeldet|Client-Konfiguration erstellt|Zugriff auf ein Konto erlaubt/],
    ['fr-FR', 'fr', 'Portail développeurs', 'Se connecter', "Nom d'utilisateur", 'Mot de passe', 'Configurations client', 'Activité', "Toute l'activité", /Connexion|Configuration client créée|Accès à un compte autorisé/],
  ])('in the browser\'s language (%s): the portal and its sign-in, accessible, in the organisation\'s look', async (locale, lang, product, signInLink, username, password, clients, activityName, allActivity, eventWords) => {
    await context!.close();
    context = await browser!.newContext({ locale, viewport: { width: 1280, height: 900 } });
    context.setDefaultTimeout(STEP);
    page = await context.newPage();
    page.on('request', (request) => requested.push(request.url()));
    await page.goto(portalUrl());
    expect(await page.getAttribute('html', 'lang')).toBe(lang);
    expect(await heading()).toBe(product);
    await accessible(`portal-signed-out-${lang}`);
    await page.getByRole('link', { name: signInLink }).click();
    // The sign-in page speaks it too (the portal asks with ui_locales).
    expect(await page.getAttribute('html', 'lang')).toBe(lang);
    await page.getByLabel(username).fill('ada');
    await page.getByLabel(password).fill('ada-password');
    await page.getByRole('button', { name: signInLink }).click();
    await Promise.race([page.locator('input[name="code"]').first().waitFor({ state: 'visible' }), page.waitForURL((url) => url.pathname === '/portal')]);
    await passSecondFactorInBrowser(page, server.baseUrl, 'ada', () => accessible());
    await page.waitForURL((url) => url.pathname === '/portal');
    expect(await page.getAttribute('html', 'lang')).toBe(lang);
    await expect(page.getByRole('heading', { name: clients, level: 2 }).count()).resolves.toBe(1);
    // Acme's look: its name in the title, its accent on the buttons.
    expect(await page.title()).toContain('Acme HR');
    const accent = await page.locator('a.button.primary').first().evaluate((element) => (globalThis as unknown as { getComputedStyle(e: unknown): { backgroundColor: string } }).getComputedStyle(element).backgroundColor);
    expect(accent).toBe('rgb(107, 31, 143)');
    await accessible(`portal-home-${lang}`);
    // The Activity in the page's language: its events in words, none in English.
    const events = await page.getByRole('table', { name: activityName }).textContent();
    expect(events).toMatch(eventWords);
    expect(events).not.toMatch(/Signed in|Client configuration created|Access to an account allowed|The platform operator/);
    await page.getByRole('link', { name: allActivity }).click();
    expect(await page.getAttribute('html', 'lang')).toBe(lang);
    await accessible(`activity-${lang}`);
    await page.goBack();
    await page.locator('a.button.primary').first().click();
    await accessible(`client-configuration-new-${lang}`);
  }, TEST_TIMEOUT);

  it('every POST needs the session and its CSRF token; a callback is bound to the browser; sessions are sealed in Redis', async () => {
    await signIn('ada', 'ada-password');
    const cookie = (await context!.cookies()).find((entry) => entry.name === 'portal_session')!;
    expect(cookie).toMatchObject({ httpOnly: true, sameSite: 'Lax', path: '/portal' });
    const csrf = (await page.locator('input[name="csrf"]').first().getAttribute('value'))!;
    const create = (form: Record<string, string>, headers: Record<string, string> = {}) =>
      context!.request.post(portalUrl('/client-configurations'), { form: { name: 'Forged', category: 'x', scope: 'scim.read', ...form }, headers, maxRedirects: 0 });
    expect((await create({})).status()).toBe(403);
    expect((await create({ csrf: 'wrong' })).status()).toBe(403);
    expect((await create({ csrf }, { origin: 'http://evil.example' })).status()).toBe(403);
    const stranger = await fetch(portalUrl('/client-configurations'), {
      method: 'POST', headers: { 'content-type': 'application/x-www-form-urlencoded' }, body: new URLSearchParams({ csrf, name: 'Forged', category: 'x', scope: 'scim.read' }), redirect: 'manual',
    });
    expect(stranger.status).toBe(403);
    const callback = await page.goto(portalUrl('/callback?code=abc&state=not-mine'));
    expect(callback!.status()).toBe(400);
    await accessible('portal-sign-in-refused');
    // The portal's own error pages: a page that does not exist, an integration that no longer does.
    expect((await page.goto(portalUrl('/nothing-here')))!.status()).toBe(404);
    await accessible('portal-not-found');
    await page.goto(portalUrl('/client-configurations/00000000-0000-4000-8000-000000000000'));
    expect(new URL(page.url()).pathname).toBe('/portal');
    await expect(page.getByRole('alert').first().textContent()).resolves.toBe('It no longer exists.');
    await accessible('portal-gone');
    // The server's own error page (an app it does not know), as users see it.
    const error = await page.goto(`${server.baseUrl}/oauth2/authorize?client_id=not-an-app&response_type=code&scope=openid`);
    expect(error!.status()).toBe(400);
    await accessible('error-page');
    // Redis holds the session under a digest of the cookie, sealed: no token, no session ID.
    const keys = await redis.client().keys('*PortalSession*');
    expect(keys.length).toBeGreaterThan(0);
    const stored = (await Promise.all(keys.map((key) => redis.client().hgetall(key)))).map((hash) => JSON.stringify(hash)).join('\n');
    expect(stored).not.toContain(cookie.value);
    expect(stored).not.toMatch(JWT);
    // Sealed means opaque: every readable value names nobody, and the sealed text is random
    // base64url (a plain substring check on it fails about once in 20 runs: 'ada' is three of
    // its 64 letters), so it is decoded and its bytes searched instead.
    const leaves: string[] = [];
    const walk = (value: unknown): void => {
      if (typeof value === 'string') {
        try { walk(JSON.parse(value)); } catch { leaves.push(value); }
      } else if (value !== null && typeof value === 'object') Object.values(value).forEach(walk);
      else leaves.push(String(value));
    };
    walk(await Promise.all(keys.map((key) => redis.client().hgetall(key))));
    const opaque = leaves.filter((leaf) => /^[A-Za-z0-9_-]{200,}$/.test(leaf));
    expect(opaque.length).toBeGreaterThan(0);
    for (const leaf of leaves.filter((each) => !opaque.includes(each))) expect(leaf).not.toContain('ada');
    for (const leaf of opaque) expect(Buffer.from(leaf, 'base64url').toString('latin1')).not.toContain('ada');
  }, TEST_TIMEOUT);
});
