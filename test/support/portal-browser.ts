import { join } from 'node:path';
import type { Browser, BrowserContext, Page } from 'playwright-core';
import { PORTAL_REAUTH_SECONDS } from '../../policies/lifetimes.js';
import type { PortalSessions } from '../../src/portal/sessions.js';
import { accessibilityViolations } from './axe.js';
import { launchChromium } from './chromium.js';

/* The portal in headless Chromium, driven with the keyboard, as the portal's Chromium tests share it. */

/** What a {@link PortalBrowser} needs: its timeouts, and (read once the suite's beforeAll has run) the server's origin and sessions. */
export interface PortalBrowserOptions {
  /** How long Chromium may take to start, and to close with the hooks of {@link usePortalBrowser}. */
  slow: number;
  /** The server's origin: a URL the page asks for outside it is a failure. */
  origin: () => string;
  /** The portal's sessions on the server's store (for {@link PortalBrowser.staleSignIn}). */
  sessions: () => PortalSessions;
  /** Playwright's default timeout for a step and a navigation. */
  step: number;
  /** How many Tab presses {@link PortalBrowser.tabTo} tries by default. */
  tabLimit?: number;
  /** Where {@link PortalBrowser.accessible} puts its screenshots (an existing folder), and whether a phone-sized one too. */
  shots?: { dir: string; phone: boolean };
}

/**
 * Headless Chromium with one context at a time and its page, recording what a test must not see: a
 * CSP report or an error in the console (a 4xx the page was meant to get aside), an uncaught page
 * error, and every URL asked for (nothing may be fetched outside the server's origin). Its hooks are
 * registered by {@link usePortalBrowser}. Its functions are bound: take them apart.
 */
export class PortalBrowser {
  context: BrowserContext | undefined;
  /** The console and page errors of the current test. */
  problems: string[] = [];
  /** Every URL the pages asked for, over the whole suite. */
  readonly requested: string[] = [];
  #page: Page | undefined;
  #launching: Promise<Browser> | undefined;

  constructor(private readonly options: PortalBrowserOptions) {}

  /** Starts Chromium (not awaited: the suite starts its servers meanwhile; {@link open} waits for it). */
  launch(): void {
    this.#launching = launchChromium(this.options.slow);
  }

  /** Closes Chromium if it started. */
  async closeBrowser(): Promise<void> {
    await (await this.#launching?.catch(() => undefined))?.close();
  }

  /** The page of the last {@link open}. */
  get page(): Page {
    if (!this.#page) throw new Error('no page open');
    return this.#page;
  }

  /** A new context (1280×900, `locale`) and its page, listened to. */
  open = async (locale = 'en-US'): Promise<Page> => {
    if (!this.#launching) throw new Error('Chromium not launched');
    const context = await (await this.#launching).newContext({ locale, viewport: { width: 1280, height: 900 } });
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

  /** Before each test: no problem yet. */
  reset = (): void => {
    this.problems = [];
  };

  /** After each test: the context closed, then nothing asked for outside the origin and no problem. */
  closeAndCheck = async (): Promise<void> => {
    await this.context?.close();
    this.context = undefined;
    expect(this.requested.filter((url) => !url.startsWith(this.options.origin()))).toEqual([]);
    expect(this.problems).toEqual([]);
  };

  /**
   * axe-core finds nothing on the page as it is (WCAG A/AA); when `shot` is named, a full-page
   * screenshot `{shot}.png` (and `{shot}-phone.png` at 390×844 when asked) in the shots folder.
   */
  accessible = async (shot?: string): Promise<void> => {
    const page = this.page;
    expect(await accessibilityViolations(page)).toEqual([]);
    if (!shot) return;
    const shots = this.options.shots;
    if (!shots) throw new Error(`no folder for the screenshot ${shot}`);
    await page.screenshot({ path: join(shots.dir, `${shot}.png`), fullPage: true });
    if (!shots.phone) return;
    const size = page.viewportSize()!;
    await page.setViewportSize({ width: 390, height: 844 });
    await page.screenshot({ path: join(shots.dir, `${shot}-phone.png`), fullPage: true });
    await page.setViewportSize(size);
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

/**
 * A {@link PortalBrowser} for the tests of this describe block, with its hooks registered: Chromium
 * launched before all (and closed after all, first among the block's afterAll hooks), the problems
 * emptied before each test, and after each the context closed and checked (nothing asked for outside
 * the origin, no problem). Register it before the block's own hooks: its afterEach runs first.
 */
export function usePortalBrowser(options: PortalBrowserOptions): PortalBrowser {
  const portal = new PortalBrowser(options);
  beforeAll(() => portal.launch());
  afterAll(() => portal.closeBrowser(), options.slow);
  beforeEach(() => portal.reset());
  afterEach(() => portal.closeAndCheck(), options.slow);
  return portal;
}
