import { calculateJwkThumbprint, exportJWK, generateKeyPair, type JWK } from 'jose';
import type { Page } from 'playwright-core';
import type { AuthServer } from '../../src/index.js';
import type { PortalSessions } from '../../src/portal/sessions.js';
import { startPortalOnRedis, type PortalOnRedis } from '../support/portal.js';
import { usePortalBrowser } from '../support/portal-browser.js';

/**
 * Client authentication, DPoP and PAR on the portal's forms (src/portal/client-authentication.ts)
 * in headless Chromium on Redis: an admin registers a private_key_jwt client with the keyboard
 * alone (radio buttons with the arrow keys, the keys pasted in the text area), sees its keys by ID
 * and thumbprint and no "Regenerate secret", is told at the field when the keys are not JSON, turns
 * on PAR for an app, and makes DPoP optional again after a sign-in again. axe-core WCAG A/AA with
 * zero violations on every page and state, in English, German and French; no CSP report, nothing
 * fetched elsewhere.
 */

const SLOW = 120_000;
const TEST_TIMEOUT = 120_000;
const STEP = 20_000;
const COOKIE_KEY = 'a-cookie-key-of-the-portal-client-auth-tests';
const user = (sub: string, name: string) => ({ sub, password: `${sub}-password`, tenant: 'acme', claims: { name }, permissions: ['integration_setup'] });
const USERS = [user('ada', 'Ada Admin'), user('dora', 'Dora Dietrich'), user('fleur', 'Fleur Faure')];

describe('client authentication on the portal\'s forms, in Chromium', () => {
  let running: PortalOnRedis;
  let auth: AuthServer;
  let origin: string;
  let sessions: PortalSessions;
  let page: Page;
  const portal = usePortalBrowser({ slow: SLOW, origin: () => origin, sessions: () => sessions, step: STEP });
  const { accessible, focused, tabTo, passwordAndConsent, signIn, staleSignIn } = portal;
  let jwks: { keys: JWK[] };
  let thumbprint: string;

  beforeAll(async () => {
    running = await startPortalOnRedis(USERS, COOKIE_KEY, {}, { hostName: 'localhost' });
    ({ sessions, server: { auth, baseUrl: origin } } = running);
    const { publicKey } = await generateKeyPair('ES256', { extractable: true });
    const jwk = { ...(await exportJWK(publicKey)), kid: 'payroll-2026', alg: 'ES256' };
    jwks = { keys: [jwk] };
    thumbprint = await calculateJwkThumbprint(jwk);
  }, SLOW);

  afterAll(async () => {
    await running?.stop();
  }, SLOW);

  async function open(locale?: string): Promise<Page> {
    page = await portal.open(locale);
    return page;
  }

  it('ada registers a private_key_jwt client with the keyboard: keys not JSON said at the field, then its keys by ID and thumbprint, no secret to regenerate', async () => {
    await open();
    await signIn('ada');
    await tabTo('Create a client configuration');
    await page.keyboard.press('Enter');
    await page.locator('#client-name').waitFor();
    await page.getByRole('group', { name: 'Client authentication' }).waitFor();
    await accessible();
    await page.locator('#client-name').focus();
    await page.keyboard.type('Payroll keys');
    await page.keyboard.press('Tab');
    await page.keyboard.type('payroll');
    await tabTo('scope-0-0');
    await page.keyboard.press('Space');
    // The method's radio buttons: Tab reaches the checked one, the arrow keys choose.
    await tabTo('auth-method-client_secret_basic');
    await page.keyboard.press('ArrowDown');
    expect(await page.getByRole('radio', { name: /Private key JWT/ }).isChecked()).toBe(true);
    await page.keyboard.press('Tab');
    expect(await focused()).toBe('auth-jwks');
    await page.keyboard.insertText('{"keys": [');
    await tabTo('auth-dpop-optional');
    await page.keyboard.press('ArrowDown');
    await tabTo('Create a client configuration');
    await page.keyboard.press('Enter');
    await page.getByRole('alert').first().waitFor();
    expect(await page.locator('#auth-jwks').getAttribute('aria-invalid')).toBe('true');
    expect(await page.locator('#auth-jwks-error').textContent()).toMatch(/not JSON/);
    // As typed, the choices kept.
    expect(await page.getByRole('radio', { name: /Private key JWT/ }).isChecked()).toBe(true);
    expect(await page.getByRole('radio', { name: /^Required/ }).isChecked()).toBe(true);
    await accessible();
    expect(await auth.clientConfigurations.list('acme')).toEqual([]);

    // The error summary's link leads to the field.
    await page.getByRole('link', { name: /not JSON/ }).click();
    await page.locator('#auth-jwks').focus();
    await page.keyboard.press('ControlOrMeta+A');
    await page.keyboard.insertText(JSON.stringify(jwks));
    await tabTo('Create a client configuration');
    await page.keyboard.press('Enter');
    await page.getByText('Client configuration "Payroll keys" created.').waitFor();
    const [client] = await auth.clientConfigurations.list('acme');
    expect(client).toMatchObject({ name: 'Payroll keys', tokenEndpointAuthMethod: 'private_key_jwt', jwks, dpop: 'required' });
    // No secret to regenerate on its row.
    expect(await page.getByRole('link', { name: 'Regenerate secret: Payroll keys' }).count()).toBe(0);
    expect(await page.getByText('no secret (keys)').count()).toBe(1);
    await accessible();

    await page.getByRole('link', { name: 'Edit Payroll keys' }).click();
    await page.getByText('Now: private key JWT, with these keys:').waitFor();
    expect(await page.getByRole('listitem').filter({ hasText: 'Key payroll-2026 (ES256), thumbprint' }).textContent()).toContain(thumbprint);
    await accessible();

    // DPoP back to optional lowers its protection: a sign-in again first.
    await staleSignIn();
    await page.getByRole('radio', { name: /^Optional/ }).check();
    await page.getByRole('button', { name: 'Save changes' }).click();
    await page.getByRole('heading', { name: 'Confirm it is you' }).waitFor();
    await accessible();
    expect((await auth.clientConfigurations.get(client!.clientId))!.dpop).toBe('required');
    await page.getByRole('button', { name: 'Sign in again' }).click();
    await passwordAndConsent('ada');
    await page.getByText('Client configuration "Payroll keys" saved.').waitFor();
    expect((await auth.clientConfigurations.get(client!.clientId))!.dpop).toBe('optional');
    await auth.clientConfigurations.delete(client!.clientId);
  }, TEST_TIMEOUT);

  it('ada registers an app that must push its authorization requests, with its keys at a URL; the app\'s page says so', async () => {
    await open();
    await signIn('ada');
    await page.goto(`${origin}/portal/app-registrations/new`);
    await page.locator('#app-name').fill('Web keys');
    await page.locator('#redirect-0').fill('https://app.example.com/cb');
    await page.getByRole('radio', { name: /Private key JWT/ }).check();
    await page.getByLabel('Or the URL of its public keys (JWKS URL)').fill('https://keys.example.com/web.json');
    await page.locator('#auth-par').focus();
    await page.keyboard.press('Space');
    expect(await page.getByRole('checkbox', { name: 'Require pushed authorization requests' }).isChecked()).toBe(true);
    await accessible();
    await page.getByRole('button', { name: 'Create an app registration' }).last().click();
    await page.getByText('App registration "Web keys" created.').waitFor();
    const app = (await auth.appRegistrations.listByTenant('acme')).find((entry) => entry.name === 'Web keys')!;
    expect(app).toMatchObject({ tokenEndpointAuthMethod: 'private_key_jwt', jwksUri: 'https://keys.example.com/web.json', requirePushedAuthorizationRequests: true });
    expect(await page.getByRole('link', { name: 'Regenerate secret: Web keys' }).count()).toBe(0);
    await accessible();
    await page.getByRole('link', { name: 'Edit Web keys' }).click();
    await page.getByText('Keys fetched from').waitFor();
    expect(await page.getByRole('checkbox', { name: 'Require pushed authorization requests' }).isChecked()).toBe(true);
    await accessible();
    await auth.appRegistrations.delete(app.clientId);
  }, TEST_TIMEOUT);

  it.each([
    ['de-DE', 'dora', 'Client-Authentifizierung', 'Übertragene Autorisierungsanfragen (PAR) verlangen', 'Öffentliche Schlüssel: Das ist kein JSON'],
    ['fr-FR', 'fleur', 'Authentification du client', "Exiger les demandes d'autorisation poussées (PAR)", "Clés publiques\u00a0: ce n'est pas du JSON"],
  ])('%s: the forms in the language, accessible, with an error at its field', async (locale, sub, group, par, notJson) => {
    await open(locale);
    await signIn(sub);
    await page.goto(`${origin}/portal/client-configurations/new`);
    await page.getByRole('group', { name: group }).waitFor();
    expect(await page.locator('html').getAttribute('lang')).toBe(locale.slice(0, 2));
    await accessible();
    await page.locator('#auth-method-private_key_jwt').check();
    await page.locator('#auth-jwks').fill('not json');
    await page.locator('#client-name').fill('x');
    await page.locator('#client-name').press('Enter');
    await page.getByRole('alert').first().waitFor();
    expect(await page.locator('#auth-jwks-error').textContent()).toContain(notJson);
    await accessible();
    await page.goto(`${origin}/portal/app-registrations/new`);
    await page.getByRole('checkbox', { name: par }).waitFor();
    await accessible();
  }, TEST_TIMEOUT);
});
