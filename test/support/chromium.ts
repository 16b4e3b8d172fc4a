import { chromium, type Browser } from 'playwright-core';

/** Debian's Chromium, headless, without the background networking this closed machine refuses. */
export function launchChromium(timeout: number): Promise<Browser> {
  const launching = chromium.launch({
    executablePath: '/usr/bin/chromium',
    headless: true,
    timeout,
    args: [
      '--no-sandbox',
      '--disable-gpu',
      '--disable-quic',
      '--no-first-run',
      '--disable-background-networking',
      '--disable-component-update',
      '--disable-sync',
    ],
  });
  // Keep a rejection from going unhandled while the caller starts servers; it awaits it later.
  launching.catch(() => undefined);
  return launching;
}
