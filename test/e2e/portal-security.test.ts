import { mkdirSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import type { Page } from 'playwright-core';
import { totpCode, totpStep } from '../../src/factors/totp.js';
import type { AuthServer } from '../../src/index.js';
import type { PortalSessions } from '../../src/portal/sessions.js';
import { startPortalOnRedis, type PortalOnRedis } from '../support/portal.js';
import { usePortalBrowser } from '../support/portal-browser.js';
import { type RedisServer, redisContents } from '../support/redis.js';

/**
 * The portal's Security page and its sign-in again, in headless Chromium on Redis, at
 * http://localhost:PORT (a secure context, and a domain for the passkeys' RP ID): the authenticator
 * app set up with the keyboard alone and a code computed here, recovery codes shown once, a passkey
 * added with a virtual authenticator (the DevTools protocol's WebAuthn domain) and removed, a factor
 * removed and a client configuration deleted after a stale sign-in (password and second factor
 * again, the action done once), and no detour after a recent one. axe-core WCAG 2.0/2.1/2.2 A and
 * AA on every page, in English, German and French; no CSP report. Screenshots (desktop and phone)
 * go to docs/screenshots/ when UPDATE_SCREENSHOTS=1, else to a temporary folder.
 */

const SLOW = 120_000;
const TEST_TIMEOUT = 120_000;
const STEP = 20_000;
const COOKIE_KEY = 'a-cookie-key-of-the-portal-security-tests-0123';
const SHOTS = process.env.UPDATE_SCREENSHOTS === '1' ? join(process.cwd(), 'docs/screenshots') : join(tmpdir(), `talent-auth-screenshots-${process.pid}`);
const user = (sub: string, name: string, permissions: string[] = []) => ({
  sub, password: `${sub}-password`, tenant: 'acme', claims: { name }, ...(permissions.length ? { permissions } : { scopes: ['scim.read'] }),
});
const USERS = [user('ben', 'Ben Reader'), user('cy', 'Cy Keys'), user('ada', 'Ada Admin', ['integration_setup']), user('dora', 'Dora Dietrich'), user('fleur', 'Fleur Faure')];

/** Every key and value in Redis, as text (strings, hashes, sets, sorted sets, lists, streams). */
async function everythingIn(redis: RedisServer): Promise<string> {
  // The inspection client is disconnected by redis.stop().
  return redisContents(redis.client());
}

describe('the Security page and the sign-in again, in Chromium', () => {
  let redis: RedisServer;
  let running: PortalOnRedis;
  let auth: AuthServer;
  let origin: string;
  let sessions: PortalSessions;
  let page: Page;
  const portal = usePortalBrowser({ slow: SLOW, origin: () => origin, sessions: () => sessions, step: STEP, tabLimit: 60, shots: { dir: SHOTS, phone: true } });
  const { accessible, focused, tabTo, staleSignIn } = portal;
  /** The server's log lines: no key, code or recovery code may be in one. */
  let logLines: string[] = [];

  beforeAll(async () => {
    mkdirSync(SHOTS, { recursive: true });
    // A host name: an RP ID is a domain, and Chromium takes localhost for a secure context over http.
    running = await startPortalOnRedis(USERS, COOKIE_KEY, {
      // ada (an admin) removes her only factor here and signs in again after: whatever the default
      // rule for admins, her organisation's is "optional" (a user who holds a factor still gives it).
      tenantPolicy: (tenant) => (tenant === 'acme' ? { secondFactor: 'optional' } : undefined),
    }, { hostName: 'localhost' });
    ({ redis, sessions, server: { auth, baseUrl: origin, logLines } } = running);
  }, SLOW);

  afterAll(async () => {
    await running?.stop();
  }, SLOW);

  async function open(locale?: string): Promise<Page> {
    page = await portal.open(locale);
    return page;
  }

  /** The password (and, when asked, the second factor's code, the consent) on the sign-in pages. */
  async function passwordAndCode(sub: string, code?: () => string, shot?: string): Promise<void> {
    await page.locator('#username').waitFor();
    if (shot) await accessible(shot);
    await page.locator('#username').fill(sub);
    await page.locator('#password').fill(`${sub}-password`);
    await page.keyboard.press('Enter');
    const codeField = page.locator('input[name="code"]').first();
    const allow = page.locator('button[value="allow"]');
    const signedIn = page.locator('form[action="/portal/logout"]');
    await Promise.race([codeField.waitFor(), allow.waitFor(), signedIn.waitFor()]);
    if (code && await codeField.isVisible()) {
      await codeField.fill(code());
      await codeField.press('Enter');
      await Promise.race([allow.waitFor(), signedIn.waitFor()]);
    }
    if (await allow.isVisible()) await allow.click();
    await signedIn.waitFor();
  }

  async function signIn(sub: string, code?: () => string): Promise<void> {
    await page.goto(`${origin}/portal/login`);
    await passwordAndCode(sub, code);
  }

  const types = async (sub: string) => (await auth.factors.list({ tenant: 'acme', sub })).map((entry) => entry.type).sort();

  it('ben sets up an authenticator app with the keyboard alone, then gets recovery codes shown once', async () => {
    await open();
    await signIn('ben');
    await tabTo('Security');
    await page.keyboard.press('Enter');
    await page.waitForURL(`${origin}/portal/security`);
    await accessible('portal-security');
    await tabTo('Set up an authenticator app');
    await page.keyboard.press('Enter');
    await page.locator('#app-key').waitFor();
    expect(await page.getByRole('img', { name: 'QR code for your authenticator app' }).count()).toBe(1);
    expect(await focused()).toMatch(/^app-code/);
    await accessible('portal-security-app');
    const secret = (await page.locator('#app-key').textContent())!.replace(/\s/g, '');
    const right = totpCode(secret, totpStep(Date.now()));
    await page.keyboard.type(right === '000000' ? '111111' : '000000');
    await page.keyboard.press('Enter');
    await page.getByRole('alert').first().waitFor();
    expect(await page.locator('#app-code').getAttribute('aria-invalid')).toBe('true');
    await accessible('portal-security-app-error');
    await page.locator('#app-code').focus();
    await page.keyboard.type(right);
    await page.keyboard.press('Enter');
    await page.getByText('Your authenticator app is set up.').waitFor();
    expect(await types('ben')).toEqual(['totp']);
    await tabTo('Create recovery codes');
    await page.keyboard.press('Enter');
    await page.getByRole('heading', { name: 'Your recovery codes' }).waitFor();
    const codes = await page.locator('ol.codes code').allTextContents();
    expect(codes).toHaveLength(10);
    await accessible('portal-security-recovery-codes');
    await tabTo('I have stored them');
    await page.keyboard.press('Enter');
    await page.getByText('10 codes left.').waitFor();
    const content = await page.content();
    for (const code of codes) expect(content).not.toContain(code);
    expect(content).not.toContain(secret);
    await accessible('portal-security-set-up');
    // Nowhere but on their page: not in a URL the browser asked for, not in a log line, not in the store in clear.
    const written = [...portal.requested, ...logLines].join('\n');
    const stored = await everythingIn(redis);
    expect(stored).toContain('factors');
    for (const code of [secret, ...codes]) {
      expect(written).not.toContain(code);
      expect(stored).not.toContain(code);
    }
  }, TEST_TIMEOUT);

  it('cy adds a passkey with a virtual authenticator, then removes it', async () => {
    await open();
    const cdp = await portal.context!.newCDPSession(page);
    await cdp.send('WebAuthn.enable');
    await cdp.send('WebAuthn.addVirtualAuthenticator', {
      options: { protocol: 'ctap2', transport: 'internal', hasResidentKey: true, hasUserVerification: true, isUserVerified: true, automaticPresenceSimulation: true },
    });
    await signIn('cy');
    await page.goto(`${origin}/portal/security`);
    await page.getByRole('link', { name: 'Add a passkey' }).click();
    await page.locator('#passkey-name').waitFor();
    await accessible('portal-security-passkey');
    await page.locator('#passkey-name').fill('Work laptop');
    await page.keyboard.press('Enter');
    await page.getByText('Passkey "Work laptop" added.').waitFor();
    const [passkey] = await auth.factors.list({ tenant: 'acme', sub: 'cy' });
    expect(passkey).toMatchObject({ type: 'passkey', label: 'Work laptop' });
    await accessible('portal-security-passkeys');
    // Just signed in: removed without a detour.
    await page.getByRole('button', { name: 'Remove passkey Work laptop' }).click();
    await page.getByText('The passkey was removed.').waitFor();
    expect(page.url()).toBe(`${origin}/portal/security`);
    expect(await types('cy')).toEqual([]);
  }, TEST_TIMEOUT);

  it('ada, signed in a while ago: removing her app and deleting a client ask for her password (and code) again, then are done once; just signed in, no detour', async () => {
    const { secret } = await auth.factors.enrollTotp({ tenant: 'acme', sub: 'ada' });
    const step = totpStep(Date.now());
    await open();
    await signIn('ada', () => totpCode(secret, step));
    await staleSignIn();
    await page.goto(`${origin}/portal/security`);
    await page.getByRole('button', { name: 'Remove the authenticator app' }).click();
    // Why, and the way on (the button has the focus: Enter goes on); then the password page (max_age=0) and her code.
    await page.getByRole('heading', { name: 'Confirm it is you' }).waitFor();
    await accessible('portal-reauth');
    expect(await types('ada')).toEqual(['totp']);
    expect(await focused()).toBe('Sign in again');
    await page.keyboard.press('Enter');
    await passwordAndCode('ada', () => totpCode(secret, step + 1), 'portal-reauth-sign-in');
    await page.getByText('Your authenticator app was removed.').waitFor();
    await accessible('portal-reauth-done');
    expect(await types('ada')).toEqual([]);

    const first = await auth.clientConfigurations.create({ tenant: 'acme', name: 'Payroll export', category: 'payroll', resources: { scim: { scopes: ['scim.read'] } } });
    await staleSignIn();
    await page.goto(`${origin}/portal/client-configurations/${first.clientId}/delete`);
    await page.getByRole('button', { name: 'Delete Payroll export' }).click();
    await page.getByRole('button', { name: 'Sign in again' }).click();
    await passwordAndCode('ada');
    await page.getByText('Client configuration "Payroll export" deleted.').waitFor();
    const deleted = async (clientId: string) => (await auth.audit.list({ tenant: 'acme', type: 'client_configuration.deleted' })).events.filter((event) => event.target?.id === clientId).length;
    expect(await deleted(first.clientId)).toBe(1);
    // The sign-in just given: the next delete goes straight through.
    const second = await auth.clientConfigurations.create({ tenant: 'acme', name: 'Benefits sync', category: 'benefits', resources: { scim: { scopes: ['scim.read'] } } });
    const before = portal.requested.length;
    await page.goto(`${origin}/portal/client-configurations/${second.clientId}/delete`);
    await page.getByRole('button', { name: 'Delete Benefits sync' }).click();
    await page.getByText('Client configuration "Benefits sync" deleted.').waitFor();
    expect(portal.requested.slice(before).some((url) => url.includes('/oauth2/authorize'))).toBe(false);
    expect(await deleted(second.clientId)).toBe(1);
  }, TEST_TIMEOUT);

  it.each([
    ['de-DE', 'Bestätigen Sie, dass Sie es sind', 'portal-reauth-de'],
    ['fr-FR', 'Confirmez votre identité', 'portal-reauth-fr'],
  ])('%s: the page before a sign-in again, accessible', async (locale, heading, shot) => {
    const { clientId } = await auth.clientConfigurations.create({ tenant: 'acme', name: `Zeit ${locale}`, category: 'time', resources: { scim: { scopes: ['scim.read'] } } });
    await open(locale);
    await signIn('ada');
    await staleSignIn();
    await page.goto(`${origin}/portal/client-configurations/${clientId}/delete`);
    await page.locator('form[action$="/delete"] button').click();
    await page.getByRole('heading', { name: heading }).waitFor();
    expect(await page.locator('html').getAttribute('lang')).toBe(locale.slice(0, 2));
    await accessible(shot);
  }, TEST_TIMEOUT);

  it.each([
    ['de-DE', 'dora', 'de', 'Sicherheit', 'portal-security-de'],
    ['fr-FR', 'fleur', 'fr', 'Sécurité', 'portal-security-fr'],
  ])('%s: the Security page and the app setup in the language, accessible', async (locale, sub, lang, title, shot) => {
    await open(locale);
    await signIn(sub);
    await page.getByRole('link', { name: title }).click();
    await page.waitForURL(`${origin}/portal/security`);
    expect(await page.locator('html').getAttribute('lang')).toBe(lang);
    await accessible(shot);
    await page.locator('form[action="/portal/security/authenticator-app"] button').click();
    await page.locator('#app-key').waitFor();
    await accessible(`${shot.replace('security', 'security-app')}`);
  }, TEST_TIMEOUT);
});
