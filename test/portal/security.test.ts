import { createRedisStore } from '../../adapters/redis/index.js';
import type { Store } from '../../adapters/types.js';
import { PORTAL_REAUTH_SECONDS, PORTAL_SESSION_SECONDS } from '../../policies/lifetimes.js';
import { AuditTrail, DEFAULT_AUDIT_SETTINGS } from '../../src/audit/trail.js';
import { Factors } from '../../src/factors/index.js';
import { FactorRecords } from '../../src/factors/record.js';
import { totpCode, totpStep } from '../../src/factors/totp.js';
import { PASSKEY_SCRIPT_INTEGRITY, PASSKEY_SCRIPT_PATH } from '../../src/pages/passkey-script.js';
import { PortalSessions } from '../../src/portal/sessions.js';
import { testAccounts } from '../support/accounts.js';
import { capturingLogger } from '../support/fixtures.js';
import { csrfOf, portalSignedIn, signedInAgo, signInAgainFrom, signInAs } from '../support/portal.js';
import { startRedis, type RedisServer } from '../support/redis.js';
import { startServer, type RunningServer } from '../support/server.js';
import { SoftwarePasskey } from '../support/software-passkey.js';
import { UserAgent } from '../support/user-agent.js';

/**
 * The portal's Security page over HTTP on Redis (src/portal/security.ts): every user, with or
 * without the management right, manages her own factors: the authenticator app set up with a first
 * code (a wrong one refused), recovery codes shown once and usable once, a factor removed (after a
 * recent sign-in), only her own; audited with her as the actor. (In Chromium, passkeys included:
 * test/e2e/portal-security.test.ts.)
 */

const COOKIE_KEY = 'a-cookie-key-of-the-security-tests-0123456789';
const FACTOR_KEY = 'a-factor-key-of-the-security-tests-0123456789';
/** Users without the management right (the second-factor rule for permissions does not apply to them). */
const reader = (sub: string) => ({ sub, password: `${sub}-password`, tenant: 'acme', claims: { name: sub.toUpperCase() }, scopes: ['scim.read'] });
/** The setup's warning when she holds an app already. */
const REPLACES = 'Your current authenticator app stops working once the new one is confirmed.';
const USERS = [
  ...['ben', 'cat', 'dan', 'eli', 'fay', 'gus', 'hal', 'ivy', 'joe', 'kim', 'lea', 'max'].map(reader),
  // The passkey's display name: her name trimmed, where it is one of 1 to 255 characters; else her sub.
  { ...reader('ned'), claims: { name: '  Ned Neumann  ' } },
  { ...reader('ola'), claims: { name: 'O'.repeat(255) } },
  { ...reader('pia'), claims: { name: 'P'.repeat(256) } },
  { ...reader('quy'), claims: {} },
];

describe("the portal's Security page", () => {
  let redis: RedisServer;
  let server: RunningServer;
  let store: Store;
  let sessions: PortalSessions;
  let factors: Factors;

  beforeAll(async () => {
    redis = await startRedis();
    server = await startServer({ store: { type: 'redis', url: redis.url }, accounts: testAccounts(USERS), cookieKeys: [COOKIE_KEY], factorKeys: [FACTOR_KEY], portal: { enabled: true } });
    store = await createRedisStore({ url: redis.url });
    sessions = new PortalSessions(store.engine('PortalSession'), store.engine('PortalSecret'), [COOKIE_KEY], PORTAL_SESSION_SECONDS);
    // The server's factors, seen from a second instance on the same Redis (to use a recovery code).
    factors = new Factors(store.records, { keys: [FACTOR_KEY], issuerName: 'x' }, new AuditTrail(store, DEFAULT_AUDIT_SETTINGS, capturingLogger().logger, undefined));
  }, 60_000);

  afterAll(async () => {
    await store?.close();
    await server?.stop();
    await redis?.stop();
  });

  const signedIn = (sub: string, code?: () => string) => portalSignedIn(server.baseUrl, sub, sub.toUpperCase(), code);
  const post = (agent: UserAgent, path: string, fields: Record<string, string>) => agent.request(`/portal${path}`, { method: 'POST', body: new URLSearchParams(fields).toString() });
  const owner = (sub: string) => ({ tenant: 'acme', sub });
  const types = async (sub: string) => (await server.auth.factors.list(owner(sub))).map((entry) => entry.type).sort();

  it('every user reaches it from the navigation, without the management right too: nothing set up yet, the ways to add a factor', async () => {
    const { agent } = await signedIn('ben');
    const home = await agent.request('/portal');
    expect(home.html).toContain('<nav aria-label="Portal">');
    expect(home.html).toContain('href="/portal/security"');
    const page = await agent.request('/portal/security');
    expect(page.status).toBe(200);
    expect(page.html).toContain('>Security</h2>');
    expect(page.html).toContain('You have no second factor yet.');
    expect(page.html).toContain('action="/portal/security/authenticator-app"');
    expect(page.html).toContain('href="/portal/security/passkeys/new"');
    expect(page.html).toContain('action="/portal/security/recovery-codes"');
    // Signed out: the page is not shown, and its forms are refused.
    const stranger = await fetch(`${server.baseUrl}/portal/security`, { redirect: 'manual' });
    expect(stranger.status).toBe(303);
    expect((await fetch(`${server.baseUrl}/portal/security/recovery-codes`, { method: 'POST', headers: { 'content-type': 'application/x-www-form-urlencoded', origin: server.baseUrl }, body: 'csrf=x' })).status).toBe(403);
  });

  it('the authenticator app: a QR code drawn on the server and the key in text, a wrong first code refused, the right one sets it up (audited as hers)', async () => {
    const { agent, csrf } = await signedIn('cat');
    expect((await post(agent, '/security/authenticator-app', {})).status).toBe(403);
    const setup = await post(agent, '/security/authenticator-app', { csrf });
    expect(setup.status).toBe(200);
    expect(setup.html).toMatch(/<svg role="img" aria-label="QR code for your authenticator app"[^>]*>/);
    const secret = /id="app-key">([A-Z2-7 ]+)</.exec(setup.html)![1]!.replace(/ /g, '');
    expect(setup.html).not.toContain(REPLACES);
    const right = totpCode(secret, totpStep(Date.now()));
    const wrong = await post(agent, '/security/authenticator-app/confirm', { csrf, code: right === '000000' ? '111111' : '000000' });
    expect(wrong.status).toBe(400);
    expect(wrong.html).not.toContain(REPLACES);
    expect(wrong.html).toContain('aria-invalid="true"');
    expect(wrong.html).toContain('that is not the code the app shows now');
    expect(wrong.html).not.toContain(secret.slice(0, 8));
    expect((await post(agent, '/security/authenticator-app/confirm', { csrf, code: '12' })).html).toContain('enter the six digits');
    expect(await types('cat')).toEqual([]);
    const done = await post(agent, '/security/authenticator-app/confirm', { csrf, code: right });
    expect(done.url).toMatch(/\/portal\/security$/);
    expect(done.html).toContain('Your authenticator app is set up.');
    expect(await types('cat')).toEqual(['totp']);
    const [added] = (await server.auth.audit.list({ tenant: 'acme', type: 'factor.added' })).events.filter((event) => event.target?.id === 'cat');
    expect(added).toMatchObject({ actor: { type: 'user', id: 'cat' }, address: '127.0.0.1' });
    // The code that confirmed is used: the same code again is refused by the app's check.
    expect(await factors.verifyAuthenticatorApp(owner('cat'), right)).toEqual({ accepted: false, reason: 'replayed' });
  });

  it('recovery codes: ten, shown once in the answer, each usable once; new ones (after a recent sign-in) replace them', async () => {
    const { agent, csrf } = await signedIn('dan');
    const shown = await post(agent, '/security/recovery-codes', { csrf });
    const codes = [...shown.html.matchAll(/<li><code class="secret">([^<]+)<\/code><\/li>/g)].map(([, code]) => code!);
    expect(codes).toHaveLength(10);
    expect(new Set(codes).size).toBe(10);
    const page = await agent.request('/portal/security');
    expect(page.html).toContain('10 codes left.');
    for (const code of codes) expect(page.html).not.toContain(code);
    expect(await factors.useRecoveryCode(owner('dan'), codes[0])).toEqual({ accepted: true });
    expect(await factors.useRecoveryCode(owner('dan'), codes[0])).toMatchObject({ accepted: false });
    expect((await agent.request('/portal/security')).html).toContain('9 codes left.');
    const renewed = await post(agent, '/security/recovery-codes', { csrf });
    const next = [...renewed.html.matchAll(/<li><code class="secret">([^<]+)<\/code><\/li>/g)].map(([, code]) => code!);
    expect(next).toHaveLength(10);
    expect(await factors.useRecoveryCode(owner('dan'), codes[1])).toMatchObject({ accepted: false });
    expect(await factors.useRecoveryCode(owner('dan'), next[1])).toEqual({ accepted: true });
  });

  it('a factor removed by its id, only her own: another user\'s id is "no longer exists" and stays', async () => {
    await server.auth.factors.enrollTotp({ tenant: 'acme', sub: 'fay' });
    const [hers] = await server.auth.factors.list(owner('fay'));
    const { agent, csrf } = await signedIn('eli');
    await post(agent, '/security/recovery-codes', { csrf });
    const gone = await post(agent, '/security/remove', { csrf, factor: hers!.id });
    expect(gone.html).toContain('That factor no longer exists.');
    expect(gone.url).toMatch(/\/portal\/security$/);
    expect(await types('fay')).toEqual(['totp']);
    const [mine] = await server.auth.factors.list(owner('eli'));
    const removed = await post(agent, '/security/remove', { csrf, factor: mine!.id });
    expect(removed.url).toMatch(/\/portal\/security$/);
    expect(removed.html).toContain('Your recovery codes were removed.');
    expect(await types('eli')).toEqual([]);
    const [event] = (await server.auth.audit.list({ tenant: 'acme', type: 'factor.removed' })).events.filter((entry) => entry.target?.id === 'eli');
    expect(event).toMatchObject({ actor: { type: 'user', id: 'eli' } });
  });

  it('removing or replacing a factor after a stale sign-in: a sign-in again (with her second factor), then done once', async () => {
    const { secret } = await server.auth.factors.enrollTotp({ tenant: 'acme', sub: 'ben' });
    const step = totpStep(Date.now());
    const { agent, csrf } = await signedIn('ben', () => totpCode(secret, step));
    const [app] = await server.auth.factors.list(owner('ben'));
    await signedInAgo(sessions, agent, PORTAL_REAUTH_SECONDS + 30);
    // Replacing the app: the password page first, nothing started.
    expect((await post(agent, '/security/authenticator-app', { csrf })).html).toContain('action="/portal/reauth"');
    const login = await signInAgainFrom(agent, await post(agent, '/security/remove', { csrf, factor: app!.id }));
    expect(login.html).toContain('name="password"');
    expect(await types('ben')).toEqual(['totp']);
    const done = await signInAs(agent, login, 'ben', () => totpCode(secret, step + 1));
    expect(done.html).toContain('Your authenticator app was removed.');
    expect(await types('ben')).toEqual([]);
    expect((await server.auth.audit.list({ tenant: 'acme', type: 'factor.removed' })).events.filter((entry) => entry.target?.id === 'ben')).toHaveLength(1);
  });

  it('adding a factor, the first one too, after a stale sign-in: nothing added until she signs in again (a session left open adds no one else\'s passkey)', async () => {
    const { agent, csrf } = await signedIn('ivy');
    await signedInAgo(sessions, agent, PORTAL_REAUTH_SECONDS + 30);
    expect((await post(agent, '/security/authenticator-app', { csrf })).html).toContain('action="/portal/reauth"');
    expect((await post(agent, '/security/recovery-codes', { csrf })).html).toContain('action="/portal/reauth"');
    expect((await post(agent, '/security/passkeys', { csrf, ceremony: 'x', credential: '{}', name: 'Not hers' })).html).toContain('action="/portal/reauth"');
    expect(await types('ivy')).toEqual([]);
  });

  it('new recovery codes over a set she holds, after a stale sign-in: the old ones keep working until she signs in again', async () => {
    const { agent, csrf } = await signedIn('hal');
    const first = [...(await post(agent, '/security/recovery-codes', { csrf })).html.matchAll(/<li><code class="secret">([^<]+)<\/code><\/li>/g)].map(([, code]) => code!);
    await signedInAgo(sessions, agent, PORTAL_REAUTH_SECONDS + 30);
    const login = await signInAgainFrom(agent, await post(agent, '/security/recovery-codes', { csrf }));
    expect(login.html).toContain('name="password"');
    expect(await factors.useRecoveryCode(owner('hal'), first[0])).toEqual({ accepted: true });
    const shown = await signInAs(agent, login, 'hal');
    expect(shown.html).toContain('Your recovery codes');
    expect(await factors.useRecoveryCode(owner('hal'), first[1])).toMatchObject({ accepted: false });
  });

  it('the passkey page loads the passkey script from our origin (nonce and integrity, in the CSP); an answer that is no credential adds nothing', async () => {
    const { agent, csrf } = await signedIn('gus');
    const response = await fetch(`${server.baseUrl}/portal/security/passkeys/new`, { headers: { cookie: `portal_session=${agent.cookie('portal_session')}` } });
    expect(response.headers.get('cache-control')).toBe('no-store');
    const html = await response.text();
    const nonce = /<script src="([^"]+)" nonce="([^"]+)" integrity="([^"]+)" defer><\/script>/.exec(html);
    expect(nonce?.[1]).toBe(PASSKEY_SCRIPT_PATH);
    expect(nonce?.[3]).toBe(PASSKEY_SCRIPT_INTEGRITY);
    expect(response.headers.get('content-security-policy')).toContain(`script-src 'nonce-${nonce?.[2]}'`);
    expect(html).toContain('data-passkey="create"');
    expect((await fetch(`${server.baseUrl}${PASSKEY_SCRIPT_PATH}`)).status).toBe(200);
    const ceremony = /name="ceremony" value="([^"]+)"/.exec(html)![1]!;
    const refused = await post(agent, '/security/passkeys', { csrf, ceremony, name: 'Laptop', credential: '{"type":"public-key"}' });
    expect(refused.html).toContain('The passkey was not added.');
    expect(refused.url).toMatch(/\/portal\/security$/);
    expect((await server.auth.factors.list(owner('gus'))).filter((entry) => entry.type === 'passkey')).toEqual([]);
  });
  it('a passkey without a name asks for one (nothing added); a first app code with no setup started says to start again', async () => {
    const { agent, csrf } = await signedIn('joe');
    const html = (await agent.request('/portal/security/passkeys/new')).html;
    const ceremony = /name="ceremony" value="([^"]+)"/.exec(html)![1]!;
    const noName: Record<string, string>[] = [{ csrf, ceremony, credential: '{"type":"public-key"}' }, { csrf, ceremony, name: ' ', credential: '{"type":"public-key"}' }];
    for (const fields of noName) {
      const refused = await post(agent, '/security/passkeys', fields);
      expect(refused.html).toContain('Name of the passkey: enter a name of up to 64 characters.');
      expect(refused.url).toMatch(/\/portal\/security$/);
    }
    expect(await types('joe')).toEqual([]);
    const early = await post(agent, '/security/authenticator-app/confirm', { csrf, code: '123456' });
    expect(early.html).toContain('The setup took too long. Please start again.');
    expect(early.url).toMatch(/\/portal\/security$/);
    expect(await types('joe')).toEqual([]);
  });

  it('an app set up anew: the setup says the current one stops working (a wrong code keeps saying it); a setup past its time says to start again', async () => {
    const { secret: old } = await server.auth.factors.enrollTotp(owner('lea'));
    const step = totpStep(Date.now());
    const { agent, csrf } = await signedIn('lea', () => totpCode(old, step));
    const setup = await post(agent, '/security/authenticator-app', { csrf });
    expect(setup.html).toContain(REPLACES);
    const secret = /id="app-key">([A-Z2-7 ]+)</.exec(setup.html)![1]!.replace(/ /g, '');
    const right = totpCode(secret, totpStep(Date.now()));
    const wrong = await post(agent, '/security/authenticator-app/confirm', { csrf, code: right === '000000' ? '111111' : '000000' });
    expect(wrong.status).toBe(400);
    expect(wrong.html).toContain(REPLACES);
    // No code field at all: the same as a code that is not six digits.
    expect((await post(agent, '/security/authenticator-app/confirm', { csrf })).html).toContain('enter the six digits');
    // The setup's time has passed (its end, as stored, moved before now): refused, and it is gone.
    await new FactorRecords(store.records).change(owner('lea'), (record) => ({ next: { ...record, pendingAuthenticatorApp: { ...record.pendingAuthenticatorApp!, expiresAt: Date.now() - 1 } }, result: undefined }));
    const late = await post(agent, '/security/authenticator-app/confirm', { csrf, code: right });
    expect(late.url).toMatch(/\/portal\/security$/);
    expect(late.html).toContain('The setup took too long. Please start again.');
    expect((await server.auth.factors.list(owner('lea'))).filter((entry) => entry.type === 'totp')).toHaveLength(1);
    expect((await post(agent, '/security/authenticator-app/confirm', { csrf, code: right })).html).toContain('The setup took too long. Please start again.');
  });

  it('a passkey made by an authenticator: added under the name she gives (trimmed), refused when it is hers already, removed by its id', async () => {
    const { agent, csrf } = await signedIn('max');
    const passkey = new SoftwarePasskey();
    const options = async () => {
      const html = (await agent.request('/portal/security/passkeys/new')).html;
      const unescape = (value: string) => value.replace(/&quot;/g, '"').replace(/&#39;/g, "'").replace(/&lt;/g, '<').replace(/&gt;/g, '>').replace(/&amp;/g, '&');
      return { ceremony: /name="ceremony" value="([^"]+)"/.exec(html)![1]!, options: JSON.parse(unescape(/data-passkey-options="([^"]+)"/.exec(html)![1]!)) as { challenge: string; rp: { id?: string } } };
    };
    const first = await options();
    const added = await post(agent, '/security/passkeys', { csrf, ceremony: first.ceremony, name: ' Laptop ', credential: passkey.register(first.options, server.baseUrl) });
    expect(added.url).toMatch(/\/portal\/security$/);
    expect(added.html).toContain('Passkey &quot;Laptop&quot; added.');
    const [held] = (await server.auth.factors.list(owner('max'))).filter((entry) => entry.type === 'passkey');
    expect(held).toMatchObject({ type: 'passkey', label: 'Laptop' });
    // The same credential again (a new ceremony): not added twice.
    const again = await options();
    const duplicate = await post(agent, '/security/passkeys', { csrf, ceremony: again.ceremony, name: 'Laptop', credential: passkey.register(again.options, server.baseUrl) });
    expect(duplicate.url).toMatch(/\/portal\/security$/);
    expect(duplicate.html).toContain('The passkey was not added: it is registered already, or you hold the most passkeys allowed.');
    // An answer that is not JSON is no credential.
    const third = await options();
    expect((await post(agent, '/security/passkeys', { csrf, ceremony: third.ceremony, name: 'Phone', credential: '{not json' })).html).toContain('The passkey was not added. Please try again.');
    expect((await server.auth.factors.list(owner('max'))).filter((entry) => entry.type === 'passkey')).toHaveLength(1);
    const removed = await post(agent, '/security/remove', { csrf, factor: held!.id });
    expect(removed.url).toMatch(/\/portal\/security$/);
    expect(removed.html).toContain('The passkey was removed.');
    expect(await types('max')).toEqual([]);
  });

  it("the passkey's display name: her name trimmed, of up to 255 characters; a longer one, or none, is her sub", async () => {
    const displayNames: Record<string, string> = {};
    for (const sub of ['ned', 'ola', 'pia', 'quy']) {
      const agent = new UserAgent(server.baseUrl);
      csrfOf(await signInAs(agent, await agent.request('/portal/login'), sub));
      const page = await agent.request('/portal/security/passkeys/new');
      expect(page.status).toBe(200);
      const options = JSON.parse(/data-passkey-options="([^"]+)"/.exec(page.html)![1]!.replace(/&quot;/g, '"')) as { user: { name: string; displayName: string } };
      expect(options.user.name).toBe(sub);
      displayNames[sub] = options.user.displayName;
    }
    expect(displayNames).toEqual({ ned: 'Ned Neumann', ola: 'O'.repeat(255), pia: 'pia', quy: 'quy' });
  });

  it('a session whose sign-in named no tenant has no factors of ours: every page and form of the Security page is "not found"', async () => {
    const { agent, csrf } = await signedIn('kim');
    const id = agent.cookie('portal_session')!;
    const session = (await sessions.get(id))!;
    await sessions.save(id, { ...session, user: { sub: 'kim', name: 'KIM' } });
    const before = await types('kim');
    const answers = [
      await agent.request('/portal/security'),
      await agent.request('/portal/security/passkeys/new'),
      await post(agent, '/security/authenticator-app', { csrf }),
      await post(agent, '/security/authenticator-app/confirm', { csrf, code: '123456' }),
      await post(agent, '/security/recovery-codes', { csrf }),
      await post(agent, '/security/passkeys', { csrf, ceremony: 'x', name: 'Laptop', credential: '{}' }),
      await post(agent, '/security/remove', { csrf, factor: 'x' }),
    ];
    expect(answers.map((answer) => answer.status)).toEqual(answers.map(() => 404));
    for (const answer of answers) expect(answer.html).toContain('Not found.');
    expect(await types('kim')).toEqual(before);
  });
});
