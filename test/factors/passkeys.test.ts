import { randomBytes } from 'node:crypto';
import { createServer, type IncomingMessage, type Server } from 'node:http';
import type { AddressInfo } from 'node:net';
import { Writable } from 'node:stream';
import Koa from 'koa';
import type { Browser, BrowserContext, CDPSession, Page } from 'playwright-core';
import type { Store } from '../../adapters/types.js';
import { AuditTrail, DEFAULT_AUDIT_SETTINGS, type AuditEvent } from '../../src/audit/trail.js';
import { Factors, FACTORS, type FactorRecord } from '../../src/factors/index.js';
import { Passkeys } from '../../src/factors/passkeys.js';
import { createLogger } from '../../src/logger.js';
import { passkeyScriptHandler } from '../../src/endpoints/ops/assets.js';
import { PASSKEY_SCRIPT, PASSKEY_SCRIPT_PATH, passkeyScriptTag } from '../../src/pages/passkey-script.js';
import { PASSKEY_CHALLENGE_SECONDS } from '../../policies/lifetimes.js';
import { launchChromium } from '../support/chromium.js';
import { useAdapterStore } from '../support/adapter-stores.js';
import { startServer } from '../support/server.js';
import { STORE_KINDS } from '../support/stores.js';

/**
 * Passkeys (src/factors/passkeys.ts) with a real browser: headless Chromium with a virtual
 * authenticator (the DevTools protocol's WebAuthn domain), on a small page served here over HTTP
 * on 127.0.0.1, opened as localhost (a secure context) that loads our served script under a nonce CSP and posts the
 * credential back by form. On both stores.
 */

const SLOW = 120_000;
const STEP = 20_000;
const KEY = 'factor-key-one-0123456789abcdefghijklmnop';
const alice = { tenant: 'acme', sub: 'alice' };
const bob = { tenant: 'acme', sub: 'bob' };
const byAlice = { actor: { type: 'user' as const, id: 'alice' } };
const settled = () => new Promise((resolve) => setTimeout(resolve, 50));

/** A form's body, read whole. */
async function formOf(req: IncomingMessage): Promise<URLSearchParams> {
  const chunks: Buffer[] = [];
  for await (const chunk of req) chunks.push(chunk as Buffer);
  return new URLSearchParams(Buffer.concat(chunks).toString('utf8'));
}

const escape = (text: string) => text.replace(/&/g, '&amp;').replace(/"/g, '&quot;').replace(/</g, '&lt;');

/** What the test page posted last: the ceremony and the credential JSON, and what the server answered. */
interface Posted {
  ceremony: string;
  credential: unknown;
  answer: unknown;
}

describe.each(STORE_KINDS)('passkeys (src/factors/passkeys.ts) in Chromium, %s store', (kind) => {
  const handle = useAdapterStore(kind);
  let launching: Promise<Browser> | undefined;
  let browser: Browser;
  let http: Server;
  let origin: string;
  let port: number;
  let store: Store;
  let passkeys: Passkeys;
  /** Who checks what the page posts, when not the instance that served it (a second instance). */
  let verifier: Passkeys | undefined;
  let factors: Factors;
  let events: AuditEvent[];
  let posted: Posted[];
  let context: BrowserContext | undefined;

  beforeAll(async () => {
    launching = launchChromium(SLOW);
    const app = new Koa();
    app.use(async (ctx) => {
      const url = new URL(ctx.url, origin);
      if (url.pathname === PASSKEY_SCRIPT_PATH) return passkeyScriptHandler(ctx, {}, async () => undefined);
      if (url.pathname !== '/register' && url.pathname !== '/sign-in') return; // 404 (the browser's favicon request)
      if (ctx.method === 'POST') {
        const form = await formOf(ctx.req);
        const ceremony = form.get('ceremony') ?? '';
        const credential: unknown = JSON.parse(form.get('credential') ?? 'null');
        const user = form.get('user');
        const owner = user ? { tenant: 'acme', sub: user } : undefined;
        const answer = url.pathname === '/register'
          ? await (verifier ?? passkeys).register(owner!, ceremony, credential, form.get('name') ?? '', byAlice)
          : await (verifier ?? passkeys).authenticate(ceremony, credential, owner);
        posted.push({ ceremony, credential, answer });
        ctx.body = answer;
        return;
      }
      const user = url.searchParams.get('user');
      const register = url.pathname === '/register';
      const { ceremony, options } = register
        ? await passkeys.registrationOptions({ tenant: 'acme', sub: user! }, `${user}@acme.example`)
        : await passkeys.authenticationOptions(user ? { tenant: 'acme', sub: user } : { tenant: 'acme' });
      const nonce = randomBytes(16).toString('base64');
      ctx.set('Content-Security-Policy', `default-src 'none'; script-src 'nonce-${nonce}'; form-action 'self'; base-uri 'none'`);
      ctx.type = 'html';
      ctx.body = `<!doctype html><html lang="en"><head><meta charset="utf-8"><title>Passkey</title>${passkeyScriptTag(PASSKEY_SCRIPT_PATH, nonce)}</head><body>
<form method="post" action="${url.pathname}" data-passkey="${register ? 'create' : 'get'}" data-passkey-options="${escape(JSON.stringify(options))}">
<input type="hidden" name="ceremony" value="${ceremony}"><input type="hidden" name="credential" value="">
${user ? `<input type="hidden" name="user" value="${escape(user)}">` : ''}<input type="hidden" name="name" value="Laptop">
<p data-passkey-error role="status"></p><button type="submit">Go</button></form></body></html>`;
    });
    http = createServer(app.callback());
    await new Promise<void>((resolve) => http.listen(0, '127.0.0.1', resolve));
    port = (http.address() as AddressInfo).port;
    // A host name, not an address: an RP ID is a domain. Chromium takes localhost (and its
    // subdomains) for the loopback, a secure context over plain HTTP.
    origin = `http://localhost:${port}`;
    browser = await launching;
  }, SLOW);

  afterAll(async () => {
    await (await launching?.catch(() => undefined))?.close();
    http?.closeAllConnections();
    await new Promise((resolve) => http?.close(resolve));
  }, SLOW);

  beforeEach(async () => {
    store = await handle.create();
    events = [];
    posted = [];
    verifier = undefined;
    const logger = createLogger({ destination: new Writable({ write(_chunk, _e, done) { done(); } }) });
    const audit = new AuditTrail(store, DEFAULT_AUDIT_SETTINGS, logger, (event) => void events.push(event));
    passkeys = new Passkeys(store, { baseUrl: origin, rpName: 'Acme HR' }, audit);
    factors = new Factors(store.records, { keys: [KEY], issuerName: 'auth.example' }, audit);
  });

  afterEach(async () => {
    await context?.close();
    context = undefined;
    await settled();
    await store.close();
  }, SLOW);

  /** A page in a new context with a virtual authenticator (user verified, resident keys). */
  async function withAuthenticator(): Promise<{ page: Page; cdp: CDPSession; authenticatorId: string }> {
    context = await browser.newContext();
    context.setDefaultTimeout(STEP);
    const page = await context.newPage();
    const cdp = await context.newCDPSession(page);
    await cdp.send('WebAuthn.enable');
    const { authenticatorId } = await cdp.send('WebAuthn.addVirtualAuthenticator', {
      options: { protocol: 'ctap2', transport: 'internal', hasResidentKey: true, hasUserVerification: true, isUserVerified: true, automaticPresenceSimulation: true },
    });
    return { page, cdp, authenticatorId };
  }

  /** Opens the page at `path`, presses its button, and answers what the server said to the post. */
  async function ceremony(page: Page, path: string, at = origin): Promise<unknown> {
    await page.goto(`${at}${path}`);
    const [response] = await Promise.all([page.waitForResponse((answer) => answer.request().method() === 'POST', { timeout: STEP }), page.getByRole('button', { name: 'Go' }).click()]);
    return response.json();
  }

  /** Like `ceremony`, but the browser may refuse: then 'refused by the browser' (nothing posted). */
  async function attempt(page: Page, path: string): Promise<unknown> {
    await page.goto(`${origin}${path}`);
    const before = posted.length;
    await page.getByRole('button', { name: 'Go' }).click();
    const outcome = await Promise.race([
      page.waitForResponse((answer) => answer.request().method() === 'POST').then((answer) => answer.json() as Promise<unknown>),
      page.getByText('The passkey was not used.').waitFor().then(() => 'refused by the browser'),
    ]);
    if (outcome === 'refused by the browser') expect(posted.length).toBe(before);
    return outcome;
  }

  const stored = async (owner = alice) => store.records.get<FactorRecord>(FACTORS, `${owner.tenant}:${owner.sub}`);

  it('registers a passkey (stored without a secret, audited), then signs in with it as a second factor and alone', async () => {
    const { page } = await withAuthenticator();
    const registered = await ceremony(page, '/register?user=alice');
    expect(registered).toEqual({ accepted: true, passkey: { id: expect.any(String), name: 'Laptop', backedUp: false, method: 'hwk' } });
    const record = (await stored())!;
    expect(record.passkeys).toHaveLength(1);
    const [passkey] = record.passkeys;
    expect(passkey).toMatchObject({ name: 'Laptop', backupEligible: false, backedUp: false, transports: ['internal'] });
    expect(passkey!.publicKey.length).toBeGreaterThan(40);
    expect(record.passkeyUserHandle).toMatch(/^[A-Za-z0-9_-]{43}$/);
    expect(events.filter((event) => event.type === 'factor.added')).toEqual([expect.objectContaining({ tenant: 'acme', target: { type: 'user', id: 'alice' }, details: { factor: 'passkey' } })]);
    expect((await factors.summary(alice)).passkeys).toEqual([{ id: passkey!.id, name: 'Laptop', createdAt: passkey!.createdAt, backedUp: false }]);

    // Her passkey is excluded from a new registration: the same authenticator cannot register twice.
    const again = await passkeys.registrationOptions(alice, 'alice@acme.example');
    expect(again.options.excludeCredentials).toEqual([{ id: passkey!.id, type: 'public-key', transports: ['internal'] }]);
    expect(again.options.authenticatorSelection).toMatchObject({ residentKey: 'preferred', userVerification: 'preferred' });
    expect(again.options.rp).toEqual({ name: 'Acme HR', id: 'localhost' });

    // The second factor after her password: her passkeys allowed; the counter grows and is kept.
    const second = await ceremony(page, '/sign-in?user=alice');
    expect(second).toEqual({ accepted: true, owner: alice, passkeyId: passkey!.id, method: 'hwk', userVerified: true });
    const counterAfterFirst = (await stored())!.passkeys[0]!.counter;
    expect(counterAfterFirst).toBeGreaterThan(passkey!.counter);

    // Passkey alone: no user known, the browser offers the discoverable credential; its user handle finds her.
    const options = await passkeys.authenticationOptions({ tenant: 'acme' });
    expect(options.options.allowCredentials).toEqual([]);
    expect(options.options.userVerification).toBe('required');
    const alone = await ceremony(page, '/sign-in');
    expect(alone).toEqual({ accepted: true, owner: alice, passkeyId: passkey!.id, method: 'hwk', userVerified: true });
    expect((await stored())!.passkeys[0]!.counter).toBeGreaterThan(counterAfterFirst);
    expect(events.filter((event) => event.type === 'sign_in.second_factor_failed')).toEqual([]);

    // Nothing stored is a private key: the record holds the public key only.
    expect(JSON.stringify(await stored())).not.toMatch(/privateKey|BEGIN/);
  }, SLOW);

  it('refuses an assertion used twice, for another user, tampered, or for a ceremony of another purpose; audited, nothing changed', async () => {
    const { page } = await withAuthenticator();
    await ceremony(page, '/register?user=alice');
    await ceremony(page, '/sign-in?user=alice');
    const good = posted.at(-1)!;
    const counter = (await stored())!.passkeys[0]!.counter;

    // Replayed with its own ceremony: the challenge was used.
    expect(await passkeys.authenticate(good.ceremony, good.credential, alice)).toEqual({ accepted: false, reason: 'expired' });
    // Replayed with a fresh ceremony: its challenge is not the one signed.
    const fresh = await passkeys.authenticationOptions(alice);
    expect(await passkeys.authenticate(fresh.ceremony, good.credential, alice)).toEqual({ accepted: false, reason: 'wrong' });
    // Alice's credential for Bob's sign-in (he has a passkey of his own elsewhere or none): not his.
    const forBob = await passkeys.authenticationOptions(bob);
    expect(await passkeys.authenticate(forBob.ceremony, good.credential, bob)).toEqual({ accepted: false, reason: 'wrong' });
    // Alice's ceremony presented as Bob's: the ceremony was made for her.
    const hers = await passkeys.authenticationOptions(alice);
    expect(await passkeys.authenticate(hers.ceremony, good.credential, bob)).toEqual({ accepted: false, reason: 'expired' });
    // A registration's ceremony cannot carry a sign-in.
    const registration = await passkeys.registrationOptions(alice, 'alice');
    expect(await passkeys.authenticate(registration.ceremony, good.credential, alice)).toEqual({ accepted: false, reason: 'expired' });

    // A signature changed by one byte, with a good ceremony for her.
    await ceremony(page, '/sign-in?user=alice');
    const next = posted.at(-1)!;
    const credential = next.credential as { response: { signature: string } };
    const signature = Buffer.from(credential.response.signature, 'base64url');
    signature[signature.length - 1]! ^= 1;
    const tampered = { ...credential, response: { ...credential.response, signature: signature.toString('base64url') } };
    const fresher = await passkeys.authenticationOptions(alice);
    expect(await passkeys.authenticate(fresher.ceremony, tampered, alice)).toEqual({ accepted: false, reason: 'wrong' });

    expect((await stored())!.passkeys[0]!.counter).toBeGreaterThan(counter);
    await settled();
    const refusals = events.filter((event) => event.type === 'sign_in.second_factor_failed');
    expect(refusals.map((event) => event.target)).toEqual(expect.arrayContaining([{ type: 'user', id: 'alice' }, { type: 'user', id: 'bob' }]));
    for (const event of refusals) expect(event.details).toMatchObject({ factor: 'passkey' });
    expect(JSON.stringify(events)).not.toContain(credential.response.signature);
  }, SLOW);

  it('refuses a passkey alone without user verification; refuses a second registration of one authenticator; a reset takes the passkeys', async () => {
    const { page, cdp, authenticatorId } = await withAuthenticator();
    await ceremony(page, '/register?user=alice');
    // The same authenticator again: her passkey is excluded, the browser makes none.
    const before = posted.length;
    await page.goto(`${origin}/register?user=alice`);
    await page.getByRole('button', { name: 'Go' }).click();
    await page.getByText('The passkey was not used.').waitFor();
    expect(posted.length).toBe(before);
    expect((await stored())!.passkeys).toHaveLength(1);

    // The user present but not verified (no PIN, no biometrics).
    await cdp.send('WebAuthn.setUserVerified', { authenticatorId, isUserVerified: false });
    // (Chromium's authenticator that can verify but did not refuses itself; the server requires it too.)
    expect(await attempt(page, '/sign-in')).toBe('refused by the browser');
    await cdp.send('WebAuthn.setUserVerified', { authenticatorId, isUserVerified: true });
    expect(await ceremony(page, '/sign-in')).toMatchObject({ accepted: true, userVerified: true });

    // An operator's reset: the passkey cannot sign in after, alone or not.
    expect(await factors.reset(alice)).toBe(true);
    expect(await ceremony(page, '/sign-in')).toEqual({ accepted: false, reason: 'wrong' });
    const forHer = await passkeys.authenticationOptions(alice);
    expect(forHer.options.allowCredentials).toEqual([]);
  }, SLOW);

  // Two instances share a store on Redis only (a memory store is one process's).
  if (kind === 'redis') it('runs a ceremony across two instances on one Redis: the challenge lives PASSKEY_CHALLENGE_SECONDS at most, and goes once used', async () => {
    const { page } = await withAuthenticator();
    const second = await handle.another();
    try {
      const quiet = createLogger({ destination: new Writable({ write(_c, _e, done) { done(); } }) });
      verifier = new Passkeys(second, { baseUrl: origin, rpName: 'Acme HR' }, new AuditTrail(second, DEFAULT_AUDIT_SETTINGS, quiet, undefined));
      const pending = await passkeys.authenticationOptions(alice);
      const [key] = await handle.keys(`${handle.prefix}PasskeyChallenge:*${pending.ceremony}*`);
      const ttl = await handle.ttl(key!);
      expect(ttl).toBeGreaterThan(PASSKEY_CHALLENGE_SECONDS - 10);
      expect(ttl).toBeLessThanOrEqual(PASSKEY_CHALLENGE_SECONDS);
      expect(await ceremony(page, '/register?user=alice')).toMatchObject({ accepted: true });
      expect(await ceremony(page, '/sign-in?user=alice')).toMatchObject({ accepted: true, owner: alice });
      // Every ceremony the pages made is gone once used: only the one never used is left.
      expect(await handle.keys(`${handle.prefix}PasskeyChallenge:*`)).toEqual([key]);
    } finally {
      await second.close();
    }
  }, SLOW);

  it('refuses a cloned authenticator (its counter goes back) and audits it as cloned_authenticator; the counter stays', async () => {
    const { page, cdp, authenticatorId } = await withAuthenticator();
    await ceremony(page, '/register?user=alice');
    await ceremony(page, '/sign-in?user=alice');
    await ceremony(page, '/sign-in?user=alice');
    const counter = (await stored())!.passkeys[0]!.counter;
    expect(counter).toBeGreaterThanOrEqual(2);

    // The clone: the same key, its sign count back at zero.
    const { credentials } = await cdp.send('WebAuthn.getCredentials', { authenticatorId });
    expect(credentials).toHaveLength(1);
    await cdp.send('WebAuthn.removeCredential', { authenticatorId, credentialId: credentials[0]!.credentialId });
    await cdp.send('WebAuthn.addCredential', { authenticatorId, credential: { ...credentials[0]!, signCount: 0 } });

    expect(await ceremony(page, '/sign-in?user=alice')).toEqual({ accepted: false, reason: 'cloned_authenticator' });
    // Alone too: the user handle finds her, the counter refuses.
    expect(await ceremony(page, '/sign-in')).toEqual({ accepted: false, reason: 'cloned_authenticator' });
    expect((await stored())!.passkeys[0]!.counter).toBe(counter);
    await settled();
    const clones = events.filter((event) => event.type === 'sign_in.second_factor_failed' && event.details?.reason === 'cloned_authenticator');
    expect(clones).toHaveLength(2);
    expect(clones[0]).toMatchObject({ tenant: 'acme', target: { type: 'user', id: 'alice' }, details: { factor: 'passkey', reason: 'cloned_authenticator' } });
  }, SLOW);

  it('pins the relying party to baseUrl: the browser refuses the options under another host name, the server an answer made for another origin', async () => {
    const { page } = await withAuthenticator();
    // The same server reached as sub.localhost (its Host header): the options still name localhost,
    // never the Host header, and the browser will not use them there: nothing is posted.
    const before = posted.length;
    await page.goto(`http://sub.localhost:${port}/register?user=alice`);
    await page.getByRole('button', { name: 'Go' }).click();
    await page.getByText('The passkey was not used.').waitFor();
    expect(posted.length).toBe(before);
    expect(await stored()).toBeUndefined();

    // A server whose base URL has the same host on another port (same RP ID, another origin)
    // serves the page: the browser signs its challenge for the origin it is at, which the server refuses.
    await ceremony(page, '/register?user=alice');
    expect(posted.at(-1)!.answer).toMatchObject({ accepted: true });
    const quiet = createLogger({ destination: new Writable({ write(_c, _e, done) { done(); } }) });
    passkeys = new Passkeys(store, { baseUrl: `http://localhost:${port + 1}`, rpName: 'Acme HR' }, new AuditTrail(store, DEFAULT_AUDIT_SETTINGS, quiet, undefined));
    expect(await ceremony(page, '/sign-in?user=alice')).toEqual({ accepted: false, reason: 'wrong' });
    expect(await ceremony(page, '/register?user=bob')).toEqual({ accepted: false, reason: 'wrong' });
    expect(await stored(bob)).toBeUndefined();
  }, SLOW);
});

describe('the passkey script route of the server', () => {
  it('serves the script at its content-hashed path under the prefix, cached for good, as JavaScript, never sniffed', async () => {
    const server = await startServer();
    try {
      const answer = await fetch(`${server.baseUrl}${PASSKEY_SCRIPT_PATH}`);
      expect(answer.status).toBe(200);
      expect(answer.headers.get('content-type')).toBe('text/javascript; charset=utf-8');
      expect(answer.headers.get('cache-control')).toBe('public, max-age=31536000, immutable');
      expect(answer.headers.get('x-content-type-options')).toBe('nosniff');
      expect(answer.headers.get('cross-origin-resource-policy')).toBe('same-origin');
      expect(await answer.text()).toBe(PASSKEY_SCRIPT);
      expect((await fetch(`${server.baseUrl}${PASSKEY_SCRIPT_PATH}`, { method: 'POST' })).status).toBe(405);
      expect((await fetch(`${server.baseUrl}/assets/passkeys-0000000000000000.js`)).status).toBe(404);
    } finally {
      await server.stop();
    }
  }, SLOW);

  it('is loaded with a nonce and its integrity hash, and uses no third-party code', () => {
    expect(PASSKEY_SCRIPT_PATH).toMatch(/^\/assets\/passkeys-[A-Za-z0-9_-]{16}\.js$/);
    expect(passkeyScriptTag('/p/x.js', 'N0nce')).toMatch(/^<script src="\/p\/x\.js" nonce="N0nce" integrity="sha384-[A-Za-z0-9+/]{64}" defer><\/script>$/);
    expect(PASSKEY_SCRIPT).not.toMatch(/import|require\(|https?:\/\/|eval\(|innerHTML/);
  });
});
