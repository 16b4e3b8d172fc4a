import type { Page } from 'playwright-core';
import type { Store } from '../../adapters/types.js';
import { Connections } from '../../src/federation/connections.js';
import type { AuthServer } from '../../src/index.js';
import { Sealer } from '../../src/records/sealed.js';
import { TENANT_SETTINGS } from '../../src/records/tenant-settings.js';
import type { PortalSessions } from '../../src/portal/sessions.js';
import { startPortalOnRedis, type PortalOnRedis } from '../support/portal.js';
import { usePortalBrowser } from '../support/portal-browser.js';
import { type RedisServer, redisContents } from '../support/redis.js';

/**
 * The portal's "Sign-in providers" (src/portal/connections.ts) in headless Chromium on Redis: an
 * admin adds, edits and deletes her organisation's identity providers and sets its SSO rule, with
 * the keyboard; the client secret is write-only (never in a page, a URL, a log line or the store in
 * clear); each provider's own redirect URI is on the page to copy once it is saved (none before);
 * a refused field is shown at its input; adding, changing and deleting need a recent sign-in; a user without the permission gets the permission's page; another
 * organisation's provider is "gone". axe-core WCAG A/AA on every page, in English, German and
 * French; no CSP report, nothing fetched elsewhere.
 */

const SLOW = 120_000;
const TEST_TIMEOUT = 120_000;
const STEP = 20_000;
const COOKIE_KEY = 'a-cookie-key-of-the-portal-connection-tests-01';
const SECRET = 'okta-secret-typed-in-the-portal-4b8d2f6a0c';
const NEW_SECRET = 'okta-secret-replaced-in-the-portal-9e1c3a5b';
const user = (sub: string, name: string, tenant: string, permissions: string[] = []) => ({
  sub, password: `${sub}-password`, tenant, claims: { name }, ...(permissions.length ? { permissions } : { scopes: ['scim.read'] }),
});
const USERS = [
  user('ada', 'Ada Admin', 'acme', ['integration_setup']), user('ben', 'Ben Reader', 'acme'),
  user('dora', 'Dora Dietrich', 'acme', ['integration_setup']), user('fleur', 'Fleur Faure', 'acme', ['integration_setup']),
  user('gil', 'Gil Globex', 'globex', ['integration_setup']),
];

describe('the Sign-in providers page of the portal, in Chromium', () => {
  let redis: RedisServer;
  let running: PortalOnRedis;
  let auth: AuthServer;
  let origin: string;
  let store: Store;
  let sessions: PortalSessions;
  /** The server's view of the secrets (no factorKeys: sealed under the cookie key). */
  let sealed: Connections;
  let page: Page;
  const portal = usePortalBrowser({ slow: SLOW, origin: () => origin, sessions: () => sessions, step: STEP });
  const { accessible, focused, tabTo, passwordAndConsent, signIn, staleSignIn } = portal;
  let logLines: string[] = [];

  beforeAll(async () => {
    // The admins here sign in with the password alone (startPortalOnRedis's tenant rule: the default one would have them enrol a factor first).
    running = await startPortalOnRedis(USERS, COOKIE_KEY, {}, { hostName: 'localhost' });
    ({ redis, store, sessions, server: { auth, baseUrl: origin, logLines } } = running);
    sealed = new Connections(store.records, new Sealer([COOKIE_KEY], 'connection-secrets'));
  }, SLOW);

  afterAll(async () => {
    await running?.stop();
  }, SLOW);

  // After the page's checks (usePortalBrowser's afterEach, registered first): no provider left behind.
  afterEach(async () => {
    for (const tenant of ['acme', 'globex']) for (const connection of await auth.connections.list(tenant)) await auth.connections.delete(connection.id);
    // A test that stopped half-way leaves no SSO rule behind for the next one.
    for (const tenant of ['acme', 'globex']) await store.records.delete(TENANT_SETTINGS, tenant);
  }, SLOW);

  async function open(locale?: string): Promise<Page> {
    page = await portal.open(locale);
    return page;
  }

  /** Every key and value in Redis, as text. */
  async function everythingIn(): Promise<string> {
    // The inspection client is disconnected by redis.stop().
    return redisContents(redis.client());
  }

  it('ada adds a provider with the keyboard: its own redirect URI to copy once saved, a refused issuer at its input, a sign-in again, the secret never shown again', async () => {
    await open();
    await signIn('ada');
    await tabTo('Manage sign-in providers');
    await page.keyboard.press('Enter');
    await page.waitForURL(`${origin}/portal/connections`);
    await page.getByRole('heading', { name: 'Sign-in providers' }).waitFor();
    expect(await page.getByText('No sign-in provider is connected.').count()).toBe(1);
    // No redirect URI for all: each provider has its own, once it exists.
    expect(await page.locator('input[readonly]').count()).toBe(0);
    expect(await page.content()).not.toContain('/oauth2/federation/callback');
    await accessible();

    await tabTo('Add a sign-in provider');
    await page.keyboard.press('Enter');
    await page.locator('#connection-name').waitFor();
    expect(await page.locator('#connection-redirect-uri').count()).toBe(0);
    expect(await page.getByText('The redirect URI to register at the provider is shown once the provider is saved').count()).toBe(1);
    await accessible();
    await page.locator('#connection-name').focus();
    await page.keyboard.type('Acme Okta');
    await page.keyboard.press('Tab');
    // Our own machine: the operator's, never a tenant's.
    await page.keyboard.type('http://127.0.0.1:4455');
    await page.locator('#connection-client-id').fill('okta-client');
    await page.locator('#connection-secret').fill(SECRET);
    await page.locator('#connection-domains').fill('acme.example\nacme-corp.example');
    await page.locator('#connection-claims').fill('email=upn');
    await tabTo('Add a sign-in provider');
    await page.keyboard.press('Enter');
    await page.getByRole('alert').first().waitFor();
    expect(await page.locator('#connection-issuer').getAttribute('aria-invalid')).toBe('true');
    expect(await page.locator('#connection-issuer-error').textContent()).toMatch(/https/);
    // Kept as typed, but the secret: never sent back to the browser.
    expect(await page.locator('#connection-name').inputValue()).toBe('Acme Okta');
    expect(await page.locator('#connection-secret').inputValue()).toBe('');
    expect(await page.content()).not.toContain(SECRET);
    await accessible();
    expect(await auth.connections.list('acme')).toEqual([]);

    // Adding a provider needs a recent sign-in: kept meanwhile, done after the sign-in again.
    await staleSignIn();
    await page.locator('#connection-issuer').fill('https://acme.okta.com');
    await page.locator('#connection-secret').fill(SECRET);
    await page.locator('#connection-secret').press('Enter');
    await page.getByRole('heading', { name: 'Confirm it is you' }).waitFor();
    expect(await auth.connections.list('acme')).toEqual([]);
    await accessible();
    // Its button has the focus: Enter leads on.
    expect(await focused()).toBe('Sign in again');
    await page.keyboard.press('Enter');
    await passwordAndConsent('ada');
    await page.getByText('Sign-in provider Acme Okta added.').waitFor();
    const [created] = await auth.connections.list('acme');
    const redirectUri = `${origin}/oauth2/federation/callback/${created!.id}`;
    // The page she lands on names its redirect URI: in the notice, and at its row (read-only,
    // named after the provider, reached with the keyboard).
    expect(await page.getByText(`Register its redirect URI at the provider: ${redirectUri}`).count()).toBe(1);
    const listed = page.getByRole('textbox', { name: 'Redirect URI of Acme Okta' });
    expect(await listed.inputValue()).toBe(redirectUri);
    expect(await listed.getAttribute('readonly')).not.toBeNull();
    await tabTo(`redirect-uri-${created!.id}`);
    await page.keyboard.type('x');
    expect(await listed.inputValue()).toBe(redirectUri);
    expect(created).toMatchObject({ name: 'Acme Okta', issuer: 'https://acme.okta.com', clientId: 'okta-client', domains: ['acme.example', 'acme-corp.example'], claimMapping: { email: 'upn' }, hasClientSecret: true });
    expect((await sealed.forSignIn(created!.id))?.clientSecret).toBe(SECRET);
    expect(await page.getByRole('cell', { name: 'Kept (never shown)' }).count()).toBe(1);
    await accessible();
    const [event] = (await auth.audit.list({ tenant: 'acme', type: 'connection.created' })).events;
    expect(event).toMatchObject({ actor: { type: 'user', id: 'ada' } });

    // Nowhere but typed: not in a page, a URL, a log line, the store in clear.
    expect(await page.content()).not.toContain(SECRET);
    const written = [...portal.requested, ...logLines].join('\n');
    expect(written).not.toContain(SECRET);
    const stored = await everythingIn();
    expect(stored).toContain(created!.id);
    expect(stored).not.toContain(SECRET);
  }, TEST_TIMEOUT);

  it('ada edits a provider: the secret kept when left empty, replaced when typed; SSO required; deleting after a sign-in again', async () => {
    const created = await auth.connections.create({ tenant: 'acme', name: 'Acme Entra', issuer: 'https://login.microsoftonline.com/acme/v2.0', clientId: 'entra', clientSecret: SECRET, domains: ['acme.example'] });
    await open();
    await signIn('ada');
    await page.goto(`${origin}/portal/connections`);
    expect(await page.getByRole('textbox', { name: 'Redirect URI of Acme Entra' }).inputValue()).toBe(`${origin}/oauth2/federation/callback/${created.id}`);
    await page.getByRole('link', { name: 'Edit Acme Entra' }).click();
    await page.locator('#connection-name').waitFor();
    // Its own redirect URI, to copy.
    expect(await page.getByLabel('Redirect URI to register at the provider').inputValue()).toBe(`${origin}/oauth2/federation/callback/${created.id}`);
    expect(await page.locator('#connection-secret').inputValue()).toBe('');
    expect(await page.getByText('A secret is kept; it is never shown.').count()).toBe(1);
    await accessible();
    await page.locator('#connection-name').fill('Entra ID');
    await page.getByRole('checkbox', { name: 'Signing out of the platform also signs out at the provider' }).check();
    await page.getByRole('button', { name: 'Save', exact: true }).click();
    await page.getByText('Sign-in provider Entra ID saved.').waitFor();
    expect(await auth.connections.get(created.id)).toMatchObject({ name: 'Entra ID', signOutUpstream: true, hasClientSecret: true });
    expect((await sealed.forSignIn(created.id))?.clientSecret).toBe(SECRET);

    // Changing a provider needs a recent sign-in too: nothing changes before it.
    await page.getByRole('link', { name: 'Edit Entra ID' }).click();
    await page.locator('#connection-secret').fill(NEW_SECRET);
    await staleSignIn();
    await page.getByRole('button', { name: 'Save', exact: true }).click();
    await page.getByRole('heading', { name: 'Confirm it is you' }).waitFor();
    expect((await sealed.forSignIn(created.id))?.clientSecret).toBe(SECRET);
    await page.getByRole('button', { name: 'Sign in again' }).click();
    await passwordAndConsent('ada');
    await page.getByText('Sign-in provider Entra ID saved.').waitFor();
    expect((await sealed.forSignIn(created.id))?.clientSecret).toBe(NEW_SECRET);
    expect(await page.content()).not.toContain(NEW_SECRET);

    // The SSO rule, with the keyboard.
    await page.getByRole('radio', { name: 'Required' }).focus();
    await page.keyboard.press('Space');
    await tabTo('Save the sign-on rule');
    await page.keyboard.press('Enter');
    await page.getByText('Single sign-on is required.').waitFor();
    expect(await page.getByRole('radio', { name: 'Required' }).isChecked()).toBe(true);
    const [settings] = (await auth.audit.list({ tenant: 'acme', type: 'tenant_settings.updated' })).events;
    expect(settings).toMatchObject({ actor: { type: 'user', id: 'ada' }, details: { sso: 'required' } });
    await accessible();
    // Back to optional: under "required" her password no longer signs her in while the tenant has a
    // provider (she would sign in again through Entra ID, which this test does not run).
    await page.getByRole('radio', { name: 'Optional' }).check();
    await page.getByRole('button', { name: 'Save the sign-on rule' }).click();
    await page.getByText('Single sign-on is optional.').waitFor();

    // Deleting: a confirmation, then (a sign-in that is not recent) the sign-in again first.
    await staleSignIn();
    await page.getByRole('link', { name: 'Delete Entra ID' }).click();
    await page.getByRole('heading', { name: 'Delete sign-in provider Entra ID?' }).waitFor();
    await accessible();
    await page.getByRole('button', { name: 'Delete Entra ID' }).click();
    await page.getByRole('heading', { name: 'Confirm it is you' }).waitFor();
    expect(await auth.connections.get(created.id)).toBeDefined();
    await page.getByRole('button', { name: 'Sign in again' }).click();
    await passwordAndConsent('ada');
    await page.getByText('Sign-in provider Entra ID deleted.').waitFor();
    expect(await auth.connections.get(created.id)).toBeUndefined();
    await accessible();
  }, TEST_TIMEOUT);

  it('without the permission: the permission\'s page; another organisation\'s provider is gone', async () => {
    const theirs = await auth.connections.create({ tenant: 'acme', name: 'Acme Okta', issuer: 'https://acme.okta.com', clientId: 'okta', clientSecret: SECRET, domains: [] });
    await open();
    await signIn('ben');
    const forbidden = await page.goto(`${origin}/portal/connections`);
    expect(forbidden!.status()).toBe(403);
    await page.getByText("You need the permission 'Create and update integration setup'").waitFor();
    await accessible();
    await portal.context!.close();

    await open();
    await signIn('gil');
    await page.goto(`${origin}/portal/connections/${theirs.id}`);
    await page.getByText('It no longer exists.').waitFor();
    await page.goto(`${origin}/portal/connections`);
    expect(await page.getByText('No sign-in provider is connected.').count()).toBe(1);
    expect(await page.content()).not.toContain('Acme Okta');
  }, TEST_TIMEOUT);

  it.each([
    ['de-DE', 'dora', 'Anmeldeanbieter', 'Anmeldeanbieter hinzufügen', 'Weiterleitungs-URI von Acme Okta'],
    ['fr-FR', 'fleur', 'Fournisseurs de connexion', 'Ajouter un fournisseur de connexion', 'URI de redirection de Acme Okta'],
  ])('%s: the list and the form in the language, accessible', async (locale, sub, heading, add, redirect) => {
    const created = await auth.connections.create({ tenant: 'acme', name: 'Acme Okta', issuer: 'https://acme.okta.com', clientId: 'okta', clientSecret: SECRET, domains: ['acme.example'] });
    await open(locale);
    await signIn(sub);
    await page.goto(`${origin}/portal/connections`);
    await page.getByRole('heading', { name: heading, exact: true }).waitFor();
    expect(await page.locator('html').getAttribute('lang')).toBe(locale.slice(0, 2));
    expect(await page.getByLabel(redirect).inputValue()).toBe(`${origin}/oauth2/federation/callback/${created.id}`);
    await accessible();
    await page.getByRole('link', { name: add }).click();
    await page.locator('#connection-name').waitFor();
    await accessible();
    await page.locator('#connection-issuer').fill('https://sso.acme.example');
    await page.locator('#connection-client-id').fill('x');
    await page.locator('#connection-claims').fill('not a mapping');
    await page.locator('#connection-client-id').press('Enter');
    await page.getByRole('alert').first().waitFor();
    expect(await page.locator('#connection-name').getAttribute('aria-invalid')).toBe('true');
    expect(await page.locator('#connection-claims').getAttribute('aria-invalid')).toBe('true');
    await accessible();
  }, TEST_TIMEOUT);
});
