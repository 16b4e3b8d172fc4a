import { createServer, type Server } from 'node:http';
import type { AddressInfo } from 'node:net';
import { type Browser, type BrowserContext, type Page } from 'playwright-core';
import { alice, testAccounts } from '../support/accounts.js';
import { startServer, type RunningServer } from '../support/server.js';
import { pkcePair } from '../support/user-agent.js';
import { launchChromium } from '../support/chromium.js';
import { accessibilityViolations } from '../support/axe.js';

/**
 * The German, French and branded pages in headless Chromium: sign-in, consent, sign-out and
 * "signed out", each checked by axe-core against WCAG 2.0, 2.1 and 2.2 A and AA (zero
 * violations), with the language the browser asks for (its locale) or the app asks for (ui_locales).
 */

const SLOW = 120_000;
const TEST_TIMEOUT = 90_000;
const STEP = 20_000;

const LOGO = '<svg xmlns="http://www.w3.org/2000/svg" width="120" height="40"><rect width="120" height="40" fill="#0b5d1e"/></svg>';

/** The app's side: a callback page, and the tenant's logo. */
async function startAppServer(): Promise<{ origin: string; callback: string; stop(): Promise<void> }> {
  const http: Server = createServer((req, res) => {
    const url = new URL(req.url ?? '/', 'http://127.0.0.1');
    if (url.pathname === '/logo.svg') {
      res.writeHead(200, { 'content-type': 'image/svg+xml' }).end(LOGO);
      return;
    }
    res.writeHead(200, { 'content-type': 'text/html; charset=utf-8' })
      .end('<!doctype html><html lang="en"><head><meta charset="utf-8"><title>App</title></head><body><h1>Back at the app</h1></body></html>');
  });
  await new Promise<void>((resolve) => http.listen(0, '127.0.0.1', resolve));
  const origin = `http://127.0.0.1:${(http.address() as AddressInfo).port}`;
  return {
    origin,
    callback: `${origin}/callback`,
    async stop() {
      http.closeAllConnections();
      await new Promise((resolve) => http.close(resolve));
    },
  };
}

describe('pages in German, French and branded, in Chromium with axe-core', () => {
  let launching: Promise<Browser> | undefined;
  let browser: Browser | undefined;
  let server: RunningServer | undefined;
  let appServer: Awaited<ReturnType<typeof startAppServer>> | undefined;
  let acmeApp: { clientId: string };
  let context: BrowserContext | undefined;

  beforeAll(async () => {
    launching = launchChromium(SLOW);
    appServer = await startAppServer();
    const logoUrl = `${appServer.origin}/logo.svg`;
    server = await startServer({
      accounts: testAccounts([alice]),
      branding: (tenant) => (tenant === 'acme' ? { productName: 'Acme HR', logoUrl, accentColor: '#0b5d1e' } : undefined),
    });
    acmeApp = await server.auth.appRegistrations.create({ name: 'Acme Recruiting', tenant: 'acme', redirectUris: [appServer.callback], clientType: 'public' });
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
    return context.newPage();
  }

  function authorizeUrl(clientId: string, extra: Record<string, string> = {}): string {
    return `${server!.oauthUrl}/authorize?${new URLSearchParams({
      response_type: 'code', client_id: clientId, redirect_uri: appServer!.callback, scope: 'openid profile scim.read scim.write',
      state: 's', code_challenge: pkcePair().challenge, code_challenge_method: 'S256', ...extra,
    })}`;
  }

  /** The page's language, its heading, and no accessibility violation. */
  async function check(page: Page, lang: string, heading: string): Promise<void> {
    await page.getByRole('heading', { level: 1 }).waitFor({ state: 'visible' });
    expect(await page.locator('html').getAttribute('lang')).toBe(lang);
    expect((await page.getByRole('heading', { level: 1 }).textContent())?.trim()).toBe(heading);
    expect(await accessibilityViolations(page)).toEqual([]);
  }

  /** Sign-in, consent, back at the app, sign-out confirmation, signed out: each page checked. */
  async function walk(page: Page, clientId: string, lang: string, words: {
    signIn: string; username: string; password: string; signInButton: string; consent: string; allow: string;
    signOut: string; signOutButton: string; signedOut: string;
  }, extra: Record<string, string> = {}, signedOutLang = lang): Promise<void> {
    await page.goto(authorizeUrl(clientId, extra));
    await check(page, lang, words.signIn);
    await page.getByLabel(words.username).fill(alice.sub);
    await page.getByLabel(words.password, { exact: true }).fill(alice.password);
    await page.getByRole('button', { name: words.signInButton }).click();
    await page.getByRole('button', { name: words.allow }).waitFor({ state: 'visible' });
    await check(page, lang, words.consent);
    await page.getByRole('button', { name: words.allow }).click();
    await page.waitForURL((url) => url.pathname === '/callback');

    await page.goto(`${server!.oauthUrl}/session/end?${new URLSearchParams({ client_id: clientId, ...extra })}`);
    await check(page, lang, words.signOut);
    await page.getByRole('button', { name: words.signOutButton }).click();
    await page.waitForURL((url) => url.pathname.endsWith('/session/end/success'));
    await check(page, signedOutLang, words.signedOut);
  }

  /** A new app for each walk: a consent given in one test must not skip the consent page of another. */
  const newApp = async () => server!.auth.appRegistrations.create({ name: 'Team SPA', redirectUris: [appServer!.callback], clientType: 'public' });

  const german = {
    signIn: 'Anmelden', username: 'Benutzername', password: 'Passwort', signInButton: 'Anmelden',
    consent: 'Möchten Sie Team SPA den Zugriff auf Ihr Konto erlauben?', allow: 'Erlauben',
    signOut: 'Abmelden', signOutButton: 'Abmelden', signedOut: 'Sie sind abgemeldet',
  };

  it('German by the browser\'s language (Accept-Language)', async () => {
    await walk(await newPage('de-DE'), (await newApp()).clientId, 'de', german);
  }, TEST_TIMEOUT);

  it('French by ui_locales (the browser asks for English: the signed-out page follows the browser)', async () => {
    const page = await newPage('en-US');
    await walk(page, (await newApp()).clientId, 'fr', {
      signIn: 'Se connecter', username: "Nom d'utilisateur", password: 'Mot de passe', signInButton: 'Se connecter',
      consent: 'Autoriser Team SPA à accéder à votre compte ?', allow: 'Autoriser',
      signOut: 'Se déconnecter', signOutButton: 'Se déconnecter', signedOut: 'You are signed out',
    }, { ui_locales: 'fr' }, 'en');
  }, TEST_TIMEOUT);

  it('error pages in German and French: lang, heading, no violation', async () => {
    const page = await newPage('fr-FR');
    await page.goto(authorizeUrl('no-such-app', { ui_locales: 'de' }));
    await check(page, 'de', 'Die Anmeldung kann nicht fortgesetzt werden');
    // The engine's technical description, marked English on the German page.
    expect(await page.locator('p.error [lang="en"]').count()).toBe(1);
    await page.goto(`${server!.oauthUrl}/interaction/not-a-sign-in`);
    await check(page, 'fr', 'La connexion ne peut pas se poursuivre');
  }, TEST_TIMEOUT);

  it("a branded tenant's pages: logo shown, accent colour, no violation", async () => {
    const page = await newPage('de-CH');
    const logoLoaded = page.waitForResponse((response) => response.url().endsWith('/logo.svg'));
    await page.goto(authorizeUrl(acmeApp.clientId));
    await check(page, 'de', 'Bei Acme HR anmelden');
    expect((await logoLoaded).status()).toBe(200);
    const logo = page.getByRole('img', { name: 'Acme HR' });
    expect(await logo.evaluate((image) => (image as unknown as { naturalWidth: number }).naturalWidth)).toBeGreaterThan(0);
    const background = await page.getByRole('button', { name: 'Anmelden' }).evaluate((element) =>
      (globalThis as unknown as { getComputedStyle(node: unknown): { backgroundColor: string } }).getComputedStyle(element).backgroundColor);
    expect(background).toBe('rgb(11, 93, 30)');
    await page.getByLabel('Benutzername').fill(alice.sub);
    await page.getByLabel('Passwort', { exact: true }).fill(alice.password);
    await page.getByRole('button', { name: 'Anmelden' }).click();
    await page.getByRole('button', { name: 'Erlauben' }).waitFor({ state: 'visible' });
    await check(page, 'de', 'Möchten Sie Acme Recruiting den Zugriff auf Ihr Konto erlauben?');
    expect(await page.title()).toBe('Zugriff erlauben? – Acme HR');
    await page.getByRole('button', { name: 'Erlauben' }).click();
    await page.waitForURL((url) => url.pathname === '/callback');
    await page.goto(`${server!.oauthUrl}/session/end?client_id=${acmeApp.clientId}`);
    await check(page, 'de', 'Abmelden');
    expect(await page.title()).toBe('Abmelden – Acme HR');
  }, TEST_TIMEOUT);
});
