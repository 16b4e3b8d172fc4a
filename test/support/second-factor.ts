import { totpCode, totpStep } from '../../src/factors/totp.js';
import type { Page } from 'playwright-core';
import type { Step, UserAgent } from './user-agent.js';

/*
 * THE SECOND FACTOR IN HTTP TESTS: what a user who must have one does after her password, through
 * the real pages. At her first sign-in she enrols (the enrolment page shows the secret in text: the
 * test reads it, as a person would type it into her app, and answers the app's code computed
 * here), keeps the ten recovery codes shown once, and continues; at a later sign-in she gives a
 * code of her app (each step's code once: a newer step, while the window allows one), else one of
 * her recovery codes, else waits for the next step.
 */

/** What a test user holds, learnt at her enrolment. */
interface Held {
  secret: string;
  lastStep: number;
  recoveryCodes: string[];
}

/**
 * What each user of each server holds (by the server's base URL and her username), and what she
 * enrolled last on any server (by her username alone: another instance on the same store).
 */
const held = new Map<string, Held>();
const keyOf = (origin: string, username: string) => `${origin} ${username}`;

/** Whether the page is the enrolment page (a secret to type into the app). */
export function isEnrolmentPage(step: Step): boolean {
  return /<code id="secret">/.test(step.html);
}

/** Whether the page is the second-factor page. */
export function isSecondFactorPage(step: Step): boolean {
  return /\/second-factor"/.test(step.html);
}

/** The secret the enrolment page shows (without the spaces between its groups). */
export function secretOnPage(step: Step): string {
  const shown = /<code id="secret">([^<]+)<\/code>/.exec(step.html)?.[1];
  if (!shown) throw new Error('no secret on the page');
  return shown.replace(/\s/g, '');
}

/** The recovery codes a page shows (the page after the enrolment's first code). */
export function recoveryCodesOnPage(step: Step): string[] {
  return [...step.html.matchAll(/<li><code>([^<]+)<\/code><\/li>/g)].map(([, code]) => code!);
}

/** What a test holds of a user after she enrolled through the pages (undefined: never did, in this process). */
export function heldBy(origin: string, username: string): Readonly<Held> | undefined {
  return held.get(keyOf(origin, username));
}

/** Makes `secret` the app the helper answers with for this user (one enrolled by `auth.factors.enrollTotp`). */
export function holdApp(origin: string, username: string, secret: string): void {
  held.set(keyOf(origin, username), { secret, lastStep: -1, recoveryCodes: [] });
}

const sleep = (ms: number) => new Promise((resolve) => setTimeout(resolve, ms));

/**
 * The second factor after a correct password, whichever page came: the enrolment (enrols, keeps
 * the codes, continues) or the second factor (a code); any other page is answered as it is.
 */
export async function passSecondFactor(agent: UserAgent, step: Step, origin: string, username: string): Promise<Step> {
  const key = keyOf(origin, username);
  if (isEnrolmentPage(step)) {
    const secret = secretOnPage(step);
    const now = totpStep(Date.now());
    const codes = await agent.submit(step, { code: totpCode(secret, now) });
    if (codes.status !== 200) throw new Error(`enrolment refused (status ${codes.status})`);
    const holds = { secret, lastStep: now, recoveryCodes: recoveryCodesOnPage(codes) };
    held.set(key, holds);
    held.set(username, holds);
    return agent.submit(codes, {});
  }
  if (!isSecondFactorPage(step)) return step;
  const user = held.get(key) ?? held.get(username);
  if (!user) throw new Error(`the test does not know ${username}'s second factor`);
  const csrf = /name="csrf" value="([^"]+)"/.exec(step.html)?.[1] ?? '';
  for (;;) {
    const now = totpStep(Date.now());
    const next = Math.max(user.lastStep + 1, now - 1);
    if (next <= now + 1) {
      user.lastStep = next;
      return agent.submit(step, { csrf, code: totpCode(user.secret, next) });
    }
    const recovery = user.recoveryCodes.shift();
    if (recovery !== undefined) return agent.submit(step, { csrf, code: recovery });
    await sleep(1000);
  }
}

/**
 * The same in a real browser (playwright-core), after the password was sent: the enrolment (the
 * secret read from the page, the first code typed, the recovery codes kept, Continue) or the
 * second-factor page (a code typed), with the keyboard; nothing when neither page came. `seen`
 * is called on each page (an accessibility check, a screenshot).
 */
export async function passSecondFactorInBrowser(
  page: Page, origin: string, username: string, seen: (name: 'enrolment' | 'recovery-codes' | 'second-factor') => Promise<void> = async () => {},
): Promise<void> {
  const code = page.locator('input[name="code"]').first();
  if (!(await code.isVisible())) return;
  const key = keyOf(origin, username);
  if (await page.locator('#secret').count()) {
    await seen('enrolment');
    const secret = (await page.locator('#secret').textContent())!.replace(/\s/g, '');
    const now = totpStep(Date.now());
    await code.fill(totpCode(secret, now));
    await code.press('Enter');
    await page.locator('ol.codes').waitFor();
    const holds = { secret, lastStep: now, recoveryCodes: await page.locator('ol.codes code').allTextContents() };
    held.set(key, holds);
    held.set(username, holds);
    await seen('recovery-codes');
    await page.keyboard.press('Enter');
    return;
  }
  await seen('second-factor');
  const user = held.get(key) ?? held.get(username);
  if (!user) throw new Error(`the test does not know ${username}'s second factor`);
  for (;;) {
    const now = totpStep(Date.now());
    const next = Math.max(user.lastStep + 1, now - 1);
    if (next <= now + 1) {
      user.lastStep = next;
      await code.fill(totpCode(user.secret, next));
      await code.press('Enter');
      return;
    }
    // No step of the app left in this window: a recovery code (the one field takes either).
    const recovery = user.recoveryCodes.shift();
    if (recovery !== undefined) {
      await code.fill(recovery);
      await code.press('Enter');
      return;
    }
    await sleep(1000);
  }
}
