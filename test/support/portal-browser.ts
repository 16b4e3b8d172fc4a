import type { Browser, BrowserContext, Page } from 'playwright-core';
import { PORTAL_REAUTH_SECONDS } from '../../policies/lifetimes.js';
import type { PortalSessions } from '../../src/portal/sessions.js';

/* The portal in headless Chromium, driven with the keyboard, as the portal's Chromium tests share it. */

/** What a {@link PortalBrowser} reads from its suite once the suite's beforeAll has run. */
export interface PortalBrowserOptions {
  browser: () => Browser;
  /** The server's origin: a URL the page asks for outside it is a failure. */
  origin: () => string;
  /** The portal's sessions on the server's store (for {@link PortalBrowser.staleSignIn}). */
  sessions: () => PortalSessions;
  /** Playwright's default timeout for a step and a navigation. */
  step: number;
  /** How many Tab presses {@link PortalBrowser.tabTo} tries by default. */
  tabLimit?: number;
}

/**
 * One browser context at a time with its page, recording what a test must not see: a CSP report or
 * an error in the console (a 4xx the page was meant to get aside), an uncaught page error, and every
 * URL asked for (nothing may be fetched outside the server's origin). Call {@link reset} in
 * beforeEach and {@link closeAndCheck} in afterEach. Its functions are bound: take them apart.
 */
export class PortalBrowser {
  context: BrowserContext | undefined;
  /** The console and page errors of the current test. */
  problems: string[] = [];
  /** Every URL the pages asked for, over the whole suite. */
  readonly requested: string[] = [];
  #page: Page | undefined;

  constructor(private readonly options: PortalBrowserOptions) {}

  /** The page of the last {@link open}. */
  get page(): Page {
    if (!this.#page) throw new Error('no page open');
    return this.#page;
  }

  /** A new context (1280×900, `locale`) and its page, listened to. */
  open = async (locale = 'en-US'): Promise<Page> => {
    const context = await this.options.browser().newContext({ locale, viewport: { width: 1280, height: 900 } });
    this.context = context;
    context.setDefaultTimeout(this.options.step);
    context.setDefaultNavigationTimeout(this.options.step);
    const page = await context.newPage();
    this.#page = page;
    page.on('request', (request) => this.requested.push(request.url()));
    page.on('console', (message) => {
      const text = message.text();
      if (/Content Security Policy/i.test(text) || (message.type() === 'error' && !text.startsWith('Failed to load resource: the server responded with a status of 4'))) this.problems.push(text);
    });
    page.on('pageerror', (error) => this.problems.push(String(error)));
    return page;
  };

  /** For beforeEach: no problem yet. */
  reset = (): void => {
    this.problems = [];
  };

  /** For afterEach: the context closed, then nothing asked for outside the origin and no problem. */
  closeAndCheck = async (): Promise<void> => {
    await this.context?.close();
    this.context = undefined;
    expect(this.requested.filter((url) => !url.startsWith(this.options.origin()))).toEqual([]);
    expect(this.problems).toEqual([]);
  };

  /** The focused element's id and text. */
  focused = (): Promise<string> => this.page.evaluate(() => {
    const element = (globalThis as unknown as { document: { activeElement: { id: string; textContent: string | null } | null } }).document.activeElement;
    return `${element?.id ?? ''} ${element?.textContent ?? ''}`.trim();
  });

  /** Presses Tab until the focused element's id or text matches (keyboard only). */
  tabTo = async (name: string | RegExp, limit = this.options.tabLimit ?? 80): Promise<void> => {
    for (let presses = 0; presses < limit; presses += 1) {
      await this.page.keyboard.press('Tab');
      const now = await this.focused();
      if (typeof name === 'string' ? now.includes(name) : name.test(now)) return;
    }
    throw new Error(`never focused ${String(name)}`);
  };

  /** The password page answered as `sub` (password `${sub}-password`), the consent when asked, until signed in. */
  passwordAndConsent = async (sub: string): Promise<void> => {
    const page = this.page;
    await page.locator('#username').waitFor();
    await page.locator('#username').fill(sub);
    await page.locator('#password').fill(`${sub}-password`);
    await page.keyboard.press('Enter');
    const allow = page.locator('button[value="allow"]');
    const signedIn = page.locator('form[action="/portal/logout"]');
    await Promise.race([allow.waitFor(), signedIn.waitFor()]);
    if (await allow.isVisible()) await allow.click();
    await signedIn.waitFor();
  };

  /** Signs in to the portal as `sub` from its login URL. */
  signIn = async (sub: string): Promise<void> => {
    await this.page.goto(`${this.options.origin()}/portal/login`);
    await this.passwordAndConsent(sub);
  };

  /** Makes this browser's last sign-in older than PORTAL_REAUTH_SECONDS (its session's `authTime`). */
  staleSignIn = async (): Promise<void> => {
    const sessions = this.options.sessions();
    const id = (await this.context!.cookies()).find((cookie) => cookie.name === 'portal_session')!.value;
    const session = (await sessions.get(id))!;
    await sessions.save(id, { ...session, authTime: Math.floor(Date.now() / 1000) - PORTAL_REAUTH_SECONDS - 30 });
  };
}
