import { spawn, type ChildProcess } from 'node:child_process';
import { existsSync } from 'node:fs';
import { join } from 'node:path';
import { type Browser, type BrowserContext, type Page, type Response } from 'playwright-core';
import { freePort } from '../support/redis.js';
import { basic, postToken } from '../support/server.js';
import { launchChromium } from '../support/chromium.js';

/**
 * The developer portal of the example server (examples/portal.ts) in Debian's headless Chromium:
 * the example server runs as a subprocess (as `npm start` does), the browser signs in through the
 * real login and consent pages and uses the portal's forms.
 */

const entry = join(process.cwd(), 'dist/examples/server.js');
const SLOW = 120_000;
const TEST_TIMEOUT = 90_000;
const STEP = 20_000;
const PERMISSION = "You need the permission 'Create and update integration setup'";
/** A JWT anywhere in a page: tokens must stay on the server. */
const JWT = /eyJ[A-Za-z0-9_-]{10,}\.[A-Za-z0-9_-]+/;

interface Example {
  child: ChildProcess;
  output: string;
  origin: string;
  portalClientId: string;
  stop(): Promise<void>;
}

/** Runs the built example server and waits for its printout. */
async function runExample(): Promise<Example> {
  const port = await freePort();
  const origin = `http://127.0.0.1:${port}`;
  const child = spawn(process.execPath, [entry], {
    env: { ...process.env, PORT: String(port), BASE_URL: origin },
    stdio: ['ignore', 'pipe', 'pipe'],
  });
  let output = '';
  child.stdout!.on('data', (chunk: Buffer) => (output += chunk.toString()));
  child.stderr!.on('data', (chunk: Buffer) => (output += chunk.toString()));
  const deadline = Date.now() + 15_000;
  while (!/Developer portal.*\n/.test(output)) {
    if (child.exitCode !== null || Date.now() > deadline) throw new Error(`example server did not start:\n${output}`);
    await new Promise((resolve) => setTimeout(resolve, 50));
  }
  return {
    child,
    get output() {
      return output;
    },
    origin,
    portalClientId: /confidential app client_id:\s+(\S+)/.exec(output)![1]!,
    async stop() {
      if (child.exitCode !== null) return;
      const exited = new Promise((resolve) => child.once('exit', resolve));
      child.kill('SIGTERM');
      await exited;
    },
  };
}

/** Runs in the page (tsconfig has no DOM lib): what the clipboard holds. */
const readClipboard = (): Promise<string> =>
  (globalThis as unknown as { navigator: { clipboard: { readText(): Promise<string> } } }).navigator.clipboard.readText();

describe('developer portal (example server) in headless Chromium', () => {
  let launching: Promise<Browser> | undefined;
  let browser: Browser | undefined;
  let example: Example | undefined;
  let context: BrowserContext | undefined;
  let page: Page;
  let requests: string[];
  let problems: string[];

  beforeAll(async () => {
    if (!existsSync(entry)) throw new Error('run `npm run build` first (the test command does)');
    launching = launchChromium(SLOW);
    example = await runExample();
    browser = await launching;
  }, SLOW);

  afterAll(async () => {
    await (await launching?.catch(() => undefined))?.close();
    await example?.stop();
  }, SLOW);

  beforeEach(async () => {
    context = await browser!.newContext({ permissions: ['clipboard-read', 'clipboard-write'] });
    context.setDefaultTimeout(STEP);
    context.setDefaultNavigationTimeout(STEP);
    page = await context.newPage();
    requests = [];
    problems = [];
    page.on('request', (request) => requests.push(request.url()));
    page.on('console', (message) => {
      // A 4xx page the test asks for is logged as "Failed to load resource": not a problem of the page.
      const text = message.text();
      if (/Content Security Policy/i.test(text) || (message.type() === 'error' && !text.startsWith('Failed to load resource: the server responded with a status of 4'))) {
        problems.push(text);
      }
    });
    page.on('pageerror', (error) => problems.push(String(error)));
  }, SLOW);

  afterEach(async () => {
    // Nothing went anywhere but the example server, and nothing was blocked or failed in the pages.
    const elsewhere = requests.filter((url) => new URL(url).origin !== example!.origin);
    await context?.close();
    context = undefined;
    expect(elsewhere).toEqual([]);
    expect(problems).toEqual([]);
  }, SLOW);

  const portalUrl = (path = '') => `${example!.origin}/portal${path}`;
  const isPortalHome = (url: URL) => url.origin === example!.origin && url.pathname === '/portal';

  /** Waits for the portal's home page of a signed-in user. */
  async function onDashboard(): Promise<void> {
    try {
      await page.waitForURL(isPortalHome, { waitUntil: 'load' });
      await page.getByRole('button', { name: 'Sign out' }).waitFor({ state: 'visible' });
    } catch (error) {
      throw new Error(`not on the portal: ${(error as Error).message}\nat ${page.url()}\n${await page.locator('body').innerText().catch(() => '')}`);
    }
    await expect(page.getByRole('heading', { level: 1 }).textContent()).resolves.toBe('Developer portal');
    expect(await page.content()).not.toMatch(JWT);
  }

  /** /portal → Sign in → login page → (consent page → Allow, when asked) → the portal. */
  async function signIn(username: string, password: string, expectConsent: boolean): Promise<void> {
    await page.goto(portalUrl());
    await page.getByRole('link', { name: 'Sign in' }).click();
    await expect(page.getByRole('heading', { level: 1 }).textContent()).resolves.toBe('Sign in');
    await page.getByLabel('Username').fill(username);
    await page.getByLabel('Password').fill(password);
    await page.getByRole('button', { name: 'Sign in' }).click();
    if (expectConsent) {
      await page.getByRole('button', { name: 'Allow' }).waitFor({ state: 'visible' });
      await expect(page.getByRole('heading', { level: 1 }).textContent()).resolves.toBe('Allow Demo portal to access your account?');
      await page.getByRole('button', { name: 'Allow' }).click();
    }
    await onDashboard();
  }

  /** Waits for the secret page and returns what it shows (checking the page as it goes). */
  async function shownSecret(response: Response): Promise<{ clientId: string; secret: string }> {
    await page.waitForURL((url) => url.pathname === '/portal/secret', { waitUntil: 'load' });
    expect(response.status()).toBe(200);
    const csp = response.headers()['content-security-policy'] ?? '';
    // The copy button's script is allowed by a nonce, on this page only; nothing else is.
    expect(csp).toContain("default-src 'none'");
    expect(csp).toMatch(/script-src 'nonce-[^']+'$/);
    await expect(page.getByText('This secret is shown once.').count()).resolves.toBe(1);
    const secret = await page.getByLabel('Client secret').inputValue();
    expect(secret).toMatch(/^[A-Za-z0-9_-]{43}$/);
    expect(await page.getByLabel('Client secret').getAttribute('readonly')).not.toBeNull();
    const clientId = (await page.locator('#client-id').textContent())!;
    await page.getByRole('button', { name: 'Copy secret' }).click();
    await page.getByRole('status').filter({ hasText: 'Copied.' }).waitFor();
    await expect(page.evaluate(readClipboard)).resolves.toBe(secret);
    return { clientId, secret };
  }

  /** Clicks a button that navigates, and returns the response of the page it ends at. */
  async function clickTo(button: ReturnType<Page['getByRole']>, path: string): Promise<Response> {
    const [response] = await Promise.all([
      page.waitForResponse((r) => r.request().isNavigationRequest() && new URL(r.url()).pathname === path),
      button.click(),
    ]);
    return response;
  }

  const clientCredentials = (clientId: string, secret: string) =>
    postToken(`${example!.origin}/oauth2`, 'grant_type=client_credentials', { authorization: basic(clientId, secret) });

  it('ada: lists, creates a client configuration (secret once, copy), regenerates it, creates an app registration, revokes consents', async () => {
    const home = await page.goto(portalUrl());
    await expect(page.getByRole('link', { name: 'Sign in' }).count()).resolves.toBe(1);
    expect(home!.headers()['content-security-policy']).not.toContain('script-src');

    await signIn('ada', 'ada-demo-password', true);
    await expect(page.getByText('Signed in as Ada Admin').count()).resolves.toBe(1);
    const cookie = (await context!.cookies()).find((entry) => entry.name === 'portal_session');
    expect(cookie).toMatchObject({ httpOnly: true, sameSite: 'Lax', path: '/portal' });
    // The tenant's lists: the seeded client configuration; no app registration of the tenant yet.
    await expect(page.getByRole('heading', { name: 'Client configurations', level: 2 }).count()).resolves.toBe(1);
    await expect(page.getByRole('heading', { name: 'App registrations', level: 2 }).count()).resolves.toBe(1);
    await expect(page.getByRole('row', { name: /Demo integration/ }).count()).resolves.toBe(1);
    await expect(page.getByText('No app registrations yet.').count()).resolves.toBe(1);
    await expect(page.getByText(PERMISSION).count()).resolves.toBe(0);

    // Create a client configuration: the secret is shown once, with a copy button, and it works.
    const clientForm = page.getByRole('form', { name: 'Create a client configuration' });
    await clientForm.getByLabel('Name').fill('Payroll sync');
    await clientForm.getByLabel('Category').fill('payroll');
    await clientForm.getByLabel('API scope').selectOption('scim.read');
    const created = await shownSecret(await clickTo(clientForm.getByRole('button', { name: 'Create client configuration' }), '/portal/secret'));
    expect((await clientCredentials(created.clientId, created.secret)).status).toBe(200);

    // Not on the list page afterwards, and not shown a second time.
    await page.getByRole('link', { name: 'Back to the portal' }).click();
    await onDashboard();
    const row = page.getByRole('row', { name: /Payroll sync/ });
    await expect(row.count()).resolves.toBe(1);
    await expect(row.getByText(created.clientId).count()).resolves.toBe(1);
    expect(await page.content()).not.toContain(created.secret);
    await page.goto(portalUrl('/secret'));
    await onDashboard();
    expect(await page.content()).not.toContain(created.secret);

    // Regenerate: a different secret, shown once; the old one no longer gets a token.
    const regenerated = await shownSecret(await clickTo(row.getByRole('button', { name: 'Regenerate secret' }), '/portal/secret'));
    expect(regenerated.clientId).toBe(created.clientId);
    expect(regenerated.secret).not.toBe(created.secret);
    await expect(page.getByRole('heading', { level: 1 }).textContent()).resolves.toBe('New secret: Payroll sync');
    expect((await clientCredentials(created.clientId, created.secret)).status).toBe(401);
    expect((await clientCredentials(created.clientId, regenerated.secret)).status).toBe(200);

    // A wrong redirect URI is refused with the API's reason, the form keeps what was typed.
    await page.goto(portalUrl());
    const appForm = page.getByRole('form', { name: 'Create an app registration' });
    await appForm.getByLabel('Name').fill('HR reports');
    await appForm.getByLabel('Redirect URI', { exact: true }).fill('http://reports.example/callback');
    await appForm.getByRole('button', { name: 'Create app registration' }).click();
    await expect(appForm.getByRole('alert').textContent()).resolves.toMatch(/^Not created: .*redirect_uris/);
    await expect(appForm.getByLabel('Name').inputValue()).resolves.toBe('HR reports');

    // Create a confidential app registration: its secret, once.
    await appForm.getByLabel('Redirect URI', { exact: true }).fill('https://reports.example/callback');
    await appForm.getByLabel('Type').selectOption('confidential');
    const app = await shownSecret(await clickTo(appForm.getByRole('button', { name: 'Create app registration' }), '/portal/secret'));
    await page.goto(portalUrl());
    const appRow = page.getByRole('row', { name: /HR reports/ });
    await expect(appRow.getByText(app.clientId).count()).resolves.toBe(1);
    await expect(appRow.getByText('https://reports.example/callback').count()).resolves.toBe(1);
    expect(await page.content()).not.toContain(app.secret);

    // Activity: what ada just did, newest first, by her.
    const activity = page.getByRole('table', { name: 'Activity' });
    const firstRow = activity.getByRole('row').nth(1);
    await expect(firstRow.textContent()).resolves.toContain('app_registration.created');
    await expect(firstRow.textContent()).resolves.toContain('user ada');
    await expect(activity.getByRole('row', { name: /client_configuration\.secret_rotated/ }).count()).resolves.toBe(1);
    expect(await page.content()).not.toContain(regenerated.secret);

    // My consents: sign in to the demo SPA too (same browser: no password, consent only).
    await page.goto(`${example!.origin}/demo/start/public`);
    await page.getByRole('button', { name: 'Allow' }).click();
    await page.waitForURL((url) => url.pathname === '/demo/callback/public');
    await page.goto(portalUrl());
    await onDashboard();
    const consents = page.getByRole('table', { name: 'My consents' });
    await expect(consents.getByRole('row', { name: /Demo portal/ }).count()).resolves.toBe(1);
    await expect(consents.getByRole('row', { name: /Demo SPA/ }).count()).resolves.toBe(1);

    // Revoke the SPA's consent.
    await clickTo(consents.getByRole('row', { name: /Demo SPA/ }).getByRole('button', { name: 'Revoke' }), '/portal');
    await onDashboard();
    await expect(page.getByRole('status').textContent()).resolves.toMatch(/^Consent of Demo SPA revoked/);
    await expect(consents.getByRole('row', { name: /Demo SPA/ }).count()).resolves.toBe(0);
    await expect(consents.getByRole('row', { name: /Demo portal/ }).count()).resolves.toBe(1);
    // The SPA asks for consent again.
    await page.goto(`${example!.origin}/demo/start/public`);
    await expect(page.getByRole('heading', { level: 1 }).textContent()).resolves.toBe('Allow Demo SPA to access your account?');

    // Revoking the portal's own consent ends the portal's sign-in.
    await page.goto(portalUrl());
    await consents.getByRole('row', { name: /Demo portal/ }).getByRole('button', { name: 'Revoke' }).click();
    await expect(page.getByRole('status').textContent()).resolves.toMatch(/you are signed out of the portal/);
    await page.goto(portalUrl());
    await expect(page.getByRole('link', { name: 'Sign in' }).count()).resolves.toBe(1);
    await expect(page.getByRole('button', { name: 'Sign out' }).count()).resolves.toBe(0);
  }, TEST_TIMEOUT);

  it('ben (no integration_setup): sees the permission message and his consents, no management forms', async () => {
    await signIn('ben', 'ben-demo-password', true);
    await expect(page.getByText(PERMISSION).count()).resolves.toBe(1);
    await expect(page.getByRole('form', { name: 'Create a client configuration' }).count()).resolves.toBe(0);
    await expect(page.getByRole('form', { name: 'Create an app registration' }).count()).resolves.toBe(0);
    await expect(page.getByText('Demo integration').count()).resolves.toBe(0);
    const consents = page.getByRole('table', { name: 'My consents' });
    await expect(consents.getByRole('row', { name: /Demo portal/ }).count()).resolves.toBe(1);

    // A forged create (right CSRF token) is still refused by the management API.
    const csrf = (await page.locator('input[name="csrf"]').first().getAttribute('value'))!;
    const forged = await context!.request.post(portalUrl('/client-configurations'), {
      form: { csrf, name: 'Sneaky', category: 'x', scope: 'scim.read' },
      headers: { origin: example!.origin },
    });
    expect(forged.status()).toBe(200);
    expect(new URL(forged.url()).pathname).toBe('/portal');
    expect(await forged.text()).toContain(PERMISSION.replace(/'/g, '&#39;'));

    await page.getByRole('button', { name: 'Sign out' }).click();
    await expect(page.getByRole('status').textContent()).resolves.toBe('You are signed out of the portal.');
  }, TEST_TIMEOUT);

  it('every POST needs the session and its CSRF token; the sign-in callback is bound to the browser', async () => {
    await signIn('ada', 'ada-demo-password', true);
    const csrf = (await page.locator('input[name="csrf"]').first().getAttribute('value'))!;
    const create = (form: Record<string, string>, headers: Record<string, string> = {}) =>
      context!.request.post(portalUrl('/client-configurations'), { form: { name: 'Forged', category: 'x', scope: 'scim.read', ...form }, headers, maxRedirects: 0 });
    expect((await create({})).status()).toBe(403);
    expect((await create({ csrf: 'wrong' })).status()).toBe(403);
    expect((await create({ csrf: `${csrf}x` })).status()).toBe(403);
    expect((await create({ csrf }, { origin: 'http://evil.example' })).status()).toBe(403);
    // Without the session cookie (another browser), the right token is not enough.
    const stranger = await fetch(portalUrl('/client-configurations'), {
      method: 'POST',
      headers: { 'content-type': 'application/x-www-form-urlencoded' },
      body: new URLSearchParams({ csrf, name: 'Forged', category: 'x', scope: 'scim.read' }),
      redirect: 'manual',
    });
    expect(stranger.status).toBe(403);
    await page.goto(portalUrl());
    await onDashboard();
    await expect(page.getByRole('row', { name: /Forged/ }).count()).resolves.toBe(0);

    // A callback URL with a state that this browser did not start is refused.
    const callback = await page.goto(portalUrl('/callback?code=abc&state=not-mine'));
    expect(callback!.status()).toBe(400);
    await expect(page.getByText('That sign-in is unknown or has expired.', { exact: false }).count()).resolves.toBe(1);
  }, TEST_TIMEOUT);
});
