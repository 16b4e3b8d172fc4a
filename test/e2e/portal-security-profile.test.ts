import { mkdirSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { exportJWK, generateKeyPair, type JWK } from 'jose';
import type { Page } from 'playwright-core';
import type { AuthServer } from '../../src/index.js';
import type { PortalSessions } from '../../src/portal/sessions.js';
import { startPortalOnRedis, type PortalOnRedis } from '../support/portal.js';
import { usePortalBrowser } from '../support/portal-browser.js';

/**
 * The high-security profile in the portal (src/portal/client-authentication.ts, src/portal/connections.ts)
 * in headless Chromium on Redis: an admin puts a conforming keyed client under the profile with the
 * keyboard alone (the radio buttons with the arrow keys), is told at the method's field why a Basic
 * client cannot be, leaves the profile after a sign-in again, and switches her tenant to it, which
 * is refused naming the client that does not conform. axe-core WCAG A/AA with zero violations on
 * every page and state, in English, German and French; no CSP report, nothing fetched elsewhere.
 * Screenshots (desktop) go to docs/screenshots/ when UPDATE_SCREENSHOTS=1, else to a temporary folder.
 */

const SHOTS = process.env.UPDATE_SCREENSHOTS === '1' ? join(process.cwd(), 'docs/screenshots') : join(tmpdir(), `talent-auth-screenshots-${process.pid}`);
const SLOW = 120_000;
const TEST_TIMEOUT = 120_000;
const STEP = 20_000;
const COOKIE_KEY = 'a-cookie-key-of-the-portal-profile-tests';
const user = (sub: string, name: string, tenant = 'acme') => ({ sub, password: `${sub}-password`, tenant, claims: { name }, permissions: ['integration_setup'] });
// bea's, dora's and fleur's tenants are each switched (or not) on their own.
const USERS = [user('ada', 'Ada Admin'), user('bea', 'Bea Berger', 'beta'), user('dora', 'Dora Dietrich', 'delta'), user('fleur', 'Fleur Faure', 'foxtrot')];
const resources = { scim: { scopes: ['scim.read'] } };

describe('the high-security profile in the portal, in Chromium', () => {
  let running: PortalOnRedis;
  let auth: AuthServer;
  let origin: string;
  let sessions: PortalSessions;
  let page: Page;
  const portal = usePortalBrowser({ slow: SLOW, origin: () => origin, sessions: () => sessions, step: STEP, shots: { dir: SHOTS, phone: false } });
  const { accessible, tabTo, passwordAndConsent, signIn, staleSignIn } = portal;
  let jwks: { keys: JWK[] };

  beforeAll(async () => {
    mkdirSync(SHOTS, { recursive: true });
    running = await startPortalOnRedis(USERS, COOKIE_KEY, {}, { hostName: 'localhost' });
    ({ sessions, server: { auth, baseUrl: origin } } = running);
    const { publicKey } = await generateKeyPair('ES256', { extractable: true });
    jwks = { keys: [{ ...(await exportJWK(publicKey)), kid: 'payroll-2026', alg: 'ES256' }] };
  }, SLOW);

  afterAll(async () => {
    await running?.stop();
  }, SLOW);

  async function open(locale?: string): Promise<Page> {
    page = await portal.open(locale);
    return page;
  }

  const keyedClient = (tenant: string, name: string) => auth.clientConfigurations.create({
    tenant, name, category: 'payroll', resources, tokenEndpointAuthMethod: 'private_key_jwt', jwks: jwks as never, dpop: 'required',
  });
  const basicClient = (tenant: string, name: string) => auth.clientConfigurations.create({ tenant, name, category: 'payroll', resources });

  it('ada puts a keyed client under high security with the keyboard, is told why a Basic one cannot be, and leaves it after a sign-in again', async () => {
    const keyed = await keyedClient('acme', 'Payroll keys');
    const basic = await basicClient('acme', 'Old feed');
    await open();
    await signIn('ada');
    await page.goto(`${origin}/portal/client-configurations/${keyed.clientId}`);
    await page.getByRole('group', { name: 'Security profile' }).waitFor();
    await accessible();
    // Tab reaches the checked radio button; the arrow key chooses.
    await page.locator('#client-name').focus();
    await tabTo('auth-profile-standard');
    await page.keyboard.press('ArrowDown');
    expect(await page.getByRole('radio', { name: /^High security/ }).isChecked()).toBe(true);
    await tabTo('Save changes');
    await page.keyboard.press('Enter');
    await page.getByText('Client configuration "Payroll keys" saved.').waitFor();
    expect((await auth.clientConfigurations.get(keyed.clientId))!.profile).toBe('high-security');
    await page.getByRole('link', { name: 'Edit Payroll keys' }).click();
    await page.getByText('Now: high security.').waitFor();
    await accessible('client-configuration-high-security');

    // A Basic client: the API's refusal at the method's field, the choice kept.
    await page.goto(`${origin}/portal/client-configurations/${basic.clientId}`);
    await page.getByRole('radio', { name: /^High security/ }).check();
    await page.getByRole('button', { name: 'Save changes' }).click();
    await page.getByRole('alert').first().waitFor();
    expect(await page.locator('#auth-method-client_secret_basic-error').textContent()).toBe('the high-security profile requires private_key_jwt');
    expect(await page.locator('#auth-method-client_secret_basic').getAttribute('aria-invalid')).toBe('true');
    expect(await page.getByRole('radio', { name: /^High security/ }).isChecked()).toBe(true);
    await accessible('client-configuration-high-security-refused');
    expect((await auth.clientConfigurations.get(basic.clientId))!.profile).toBe('standard');

    // Leaving the profile lowers the client's protection: a sign-in again first.
    await page.goto(`${origin}/portal/client-configurations/${keyed.clientId}`);
    await staleSignIn();
    await page.getByRole('radio', { name: /^Standard/ }).check();
    await page.getByRole('button', { name: 'Save changes' }).click();
    await page.getByRole('heading', { name: 'Confirm it is you' }).waitFor();
    expect((await auth.clientConfigurations.get(keyed.clientId))!.profile).toBe('high-security');
    await page.getByRole('button', { name: 'Sign in again' }).click();
    await passwordAndConsent('ada');
    await page.getByText('Client configuration "Payroll keys" saved.').waitFor();
    expect((await auth.clientConfigurations.get(keyed.clientId))!.profile).toBe('standard');
    for (const client of [keyed, basic]) await auth.clientConfigurations.delete(client.clientId);
  }, TEST_TIMEOUT);

  it('bea switches her tenant to high security with the keyboard: refused naming the client that does not conform, then done; the forms say so', async () => {
    const basic = await basicClient('beta', 'Old feed');
    await open();
    await signIn('bea');
    await page.goto(`${origin}/portal/connections`);
    await page.getByRole('heading', { name: 'Security profile of your organisation\'s clients' }).waitFor();
    await accessible();
    await tabTo('tenant-profile-standard');
    await page.keyboard.press('ArrowDown');
    await tabTo('Save the security profile');
    await page.keyboard.press('Enter');
    const alert = page.getByRole('alert');
    await alert.waitFor();
    expect(await alert.textContent()).toBe(`High security was not turned on: these clients do not conform to it yet; change them first: ${basic.clientId}`);
    expect(await page.getByRole('radio', { name: /^Standard/ }).isChecked()).toBe(true);
    await accessible('portal-connections-profile-refused');

    await auth.clientConfigurations.delete(basic.clientId);
    await page.getByRole('radio', { name: /^High security/ }).check();
    await page.getByRole('button', { name: 'Save the security profile' }).click();
    await page.getByText('Every client of your organisation is under the high-security profile.').waitFor();
    expect(await page.getByRole('radio', { name: /^High security/ }).isChecked()).toBe(true);
    await page.goto(`${origin}/portal/client-configurations/new`);
    await page.getByText(/^Your organisation puts every client under the high-security profile/).waitFor();
    await accessible('client-configuration-new-tenant-high-security');
  }, TEST_TIMEOUT);

  it.each([
    ['de-DE', 'dora', 'delta', 'Sicherheitsprofil', 'Sicherheitsprofil der Clients Ihrer Organisation', 'Sicherheitsprofil speichern', 'Hohe Sicherheit wurde nicht eingeschaltet'],
    ['fr-FR', 'fleur', 'foxtrot', 'Profil de sécurité', 'Profil de sécurité des clients de votre organisation', 'Enregistrer le profil de sécurité', "La haute sécurité n'a pas été activée"],
  ])('%s: the profile on the forms and the tenant\'s page in the language, accessible, the refusal in words', async (locale, sub, tenant, group, heading, save, refused) => {
    const basic = await basicClient(tenant, 'Old feed');
    await open(locale);
    await signIn(sub);
    await page.goto(`${origin}/portal/app-registrations/new`);
    await page.getByRole('group', { name: group }).waitFor();
    expect(await page.locator('html').getAttribute('lang')).toBe(locale.slice(0, 2));
    await accessible();
    await page.goto(`${origin}/portal/client-configurations/${basic.clientId}`);
    await page.locator('#auth-profile-high-security').check();
    await page.locator('#client-name').press('Enter');
    await page.getByRole('alert').first().waitFor();
    expect(await page.locator('#auth-method-client_secret_basic-error').textContent()).toContain('private_key_jwt');
    await accessible();
    await page.goto(`${origin}/portal/connections`);
    await page.getByRole('heading', { name: heading }).waitFor();
    await page.locator('#tenant-profile-high-security').check();
    await page.getByRole('button', { name: save }).click();
    await page.getByRole('alert').waitFor();
    expect(await page.getByRole('alert').textContent()).toContain(refused);
    expect(await page.getByRole('alert').textContent()).toContain(basic.clientId);
    await accessible();
    await auth.clientConfigurations.delete(basic.clientId);
  }, TEST_TIMEOUT);
});
