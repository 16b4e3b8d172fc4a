/**
 * Adversarial redirect URIs (RFC 9700 §4.1 and §2.1): at /authorize, a URI that is not exactly a
 * registered one gets an error page (400), never a redirect, and creates no interaction or session
 * (no cookie, nothing stored); at registration, the tricks are refused with the field and the rule,
 * and nothing is created or changed.
 */
import { ValidationError } from '../../src/index.js';
import { oauthDescription } from '../../policies/errors.js';
import { alice, testAccounts } from '../support/accounts.js';
import { type RunningServer, startServer } from '../support/server.js';
import { STORE_KINDS, type StoreOption, useStore } from '../support/stores.js';
import { pkcePair } from '../support/user-agent.js';

const WEB = 'https://app.example.com/cb';
const LOOPBACK = 'http://localhost:3000/cb';
const DEEP_LINK = 'com.example.app://cb';
const EVIL = 'https://evil.example/cb';

interface Answer {
  status: number;
  location: string | null;
  cookies: string[];
  html: string;
}

describe.each(STORE_KINDS)('adversarial redirect URIs (%s store)', (kind) => {
  const store = useStore(kind);
  let storeOption: StoreOption;
  let server: RunningServer;
  let app: string;
  let evilApp: string;

  beforeAll(async () => {
    storeOption = store.option();
    server = await startServer({ store: storeOption, accounts: testAccounts([alice]) });
    server.auth.provider.on('interaction.saved', () => (saved += 1));
    server.auth.provider.on('session.saved', () => (saved += 1));
    app = (await server.auth.appRegistrations.create({ name: 'App', redirectUris: [WEB, LOOPBACK, DEEP_LINK], clientType: 'public' })).clientId;
    // Another registered app: its redirect URI must not become an open redirect for the first one.
    evilApp = (await server.auth.appRegistrations.create({ name: 'Evil', redirectUris: [EVIL], clientType: 'public' })).clientId;
  });
  afterAll(async () => {
    await server.stop();
  });

  /**
   * Interactions and sessions the engine saved so far, in either store (its `*.saved` events),
   * plus, on Redis, the keys actually there.
   */
  let saved = 0;
  async function storedSignIns(): Promise<number> {
    if (storeOption.type !== 'redis') return saved;
    const redis = store.redis!.client();
    const prefix = storeOption.keyPrefix ?? '';
    const keys = [...await redis.keys(`${prefix}Interaction:*`), ...await redis.keys(`${prefix}Session:*`)];
    return saved + keys.length;
  }

  /** GET /authorize with these parameters, as a browser without cookies, not following redirects. */
  async function authorize(params: Record<string, string | undefined>, rawQuery?: string): Promise<Answer> {
    const query = rawQuery ?? new URLSearchParams(
      Object.entries({
        response_type: 'code', client_id: app, scope: 'openid scim.read', state: 'the-state-value',
        code_challenge: pkcePair().challenge, code_challenge_method: 'S256', ...params,
      }).filter((entry): entry is [string, string] => entry[1] !== undefined),
    ).toString();
    const response = await fetch(`${server.oauthUrl}/authorize?${query}`, { redirect: 'manual', headers: { accept: 'text/html' } });
    return {
      status: response.status,
      location: response.headers.get('location'),
      cookies: response.headers.getSetCookie(),
      html: await response.text(),
    };
  }

  /** The error page: 400, no redirect, no cookie, nothing stored, nothing echoed that a browser would follow. */
  async function expectErrorPage(answer: Answer, error: string, before: number, uri?: string): Promise<void> {
    expect({ status: answer.status, location: answer.location }).toEqual({ status: 400, location: null });
    expect(answer.html).toContain('Sign-in cannot continue');
    expect(answer.html).toContain(`<strong>${error}</strong>`);
    expect(answer.html).not.toContain('the-state-value');
    expect(answer.html).not.toMatch(/<(a|form|script|iframe)\b|http-equiv/i);
    if (uri) expect(answer.html).not.toContain(uri);
    expect(answer.cookies).toEqual([]);
    expect(await storedSignIns()).toBe(before);
  }

  it('control: a registered URI starts a sign-in (a login page and an interaction cookie)', async () => {
    for (const uri of [WEB, LOOPBACK, DEEP_LINK]) {
      const before = await storedSignIns();
      const answer = await authorize({ redirect_uri: uri });
      expect(answer.status).toBe(303);
      expect(answer.location).toContain('/oauth2/interaction/');
      expect(answer.cookies.join('\n')).toMatch(/_interaction=/);
      // What the error cases check for does show up here (so their "unchanged" means something).
      expect(await storedSignIns()).toBeGreaterThan(before);
    }
  });

  describe('at /authorize: an error page (400), no redirect, no interaction', () => {
    const tricks: Array<[string, string]> = [
      // path traversal
      ['a dot-dot segment after the path', `${WEB}/../evil`],
      ['a dot-dot segment that normalises to the registered path', 'https://app.example.com/evil/../cb'],
      ['an encoded dot-dot segment', `${WEB}/%2e%2e/evil`],
      ['an upper-case encoded dot-dot segment normalising to the path', 'https://app.example.com/x/%2E%2E/cb'],
      ['a dot segment', 'https://app.example.com/./cb'],
      // extra path
      ['an extra path segment', `${WEB}/evil`],
      ['a trailing slash', `${WEB}/`],
      ['a double slash', `${WEB}//`],
      ['a path prefix of the registered one', 'https://app.example.com/c'],
      // query
      ['an added query', `${WEB}?next=https://evil.example`],
      ['an empty query', `${WEB}?`],
      // port
      ['another port', 'https://app.example.com:8443/cb'],
      ['the explicit default port', 'https://app.example.com:443/cb'],
      // userinfo
      ['the registered host as userinfo of another host', 'https://app.example.com@evil.example/cb'],
      ['userinfo before the registered host', 'https://evil.example@app.example.com/cb'],
      ['the registered host and port as userinfo', 'https://app.example.com:443@evil.example/cb'],
      // host suffix and prefix
      ['the registered host as a prefix of another host', 'https://app.example.com.evil.example/cb'],
      ['a host ending in the registered host', 'https://evilapp.example.com/cb'],
      ['a host with a letter less', 'https://app.example.co/cb'],
      ['the host as a fully qualified name (trailing dot)', 'https://app.example.com./cb'],
      // case
      ['an upper-case host', 'https://APP.EXAMPLE.COM/cb'],
      ['an upper-case scheme', 'HTTPS://app.example.com/cb'],
      ['an upper-case path', 'https://app.example.com/CB'],
      // percent-encoding
      ['a percent-encoded path character', 'https://app.example.com/%63b'],
      ['a double-encoded path character', 'https://app.example.com/%2563b'],
      ['a percent-encoded dot in the host', 'https://app%2Eexample.com/cb'],
      ['an encoded slash ending the host', 'https://app.example.com%2Fcb'],
      ['an encoded @ in the host', 'https://app.example.com%40evil.example/cb'],
      // fragment
      ['an empty fragment', `${WEB}#`],
      ['a fragment', `${WEB}#x`],
      ['a fragment that looks like userinfo', `${WEB}#@evil.example`],
      // backslashes and whitespace
      ['a backslash before @', 'https://app.example.com\\@evil.example/cb'],
      ['backslash dot-dot segments', `${WEB}\\..\\..\\evil`],
      ['a leading space', ` ${WEB}`],
      ['a trailing space', `${WEB} `],
      ['a tab inside', 'https://app.example.com/\tcb'],
      ['an encoded NUL', `${WEB}%00`],
      ['an encoded CRLF', `${WEB}%0d%0aLocation:%20https://evil.example`],
      // scheme
      ['http instead of https', 'http://app.example.com/cb'],
      ['a scheme-relative URI', '//app.example.com/cb'],
      ['a relative path', '/cb'],
      ['javascript:', 'javascript://app.example.com/%0aalert(1)'],
      // look-alikes
      ['a Cyrillic look-alike host', 'https://аpp.example.com/cb'],
      ['the punycode of a look-alike host', 'https://xn--pp-8kc.example.com/cb'],
      // another registered app
      ["another registered app's URI (open redirect)", EVIL],
      // loopback (registered: http://localhost:3000/cb)
      ['127.0.0.1 for localhost', 'http://127.0.0.1:3000/cb'],
      ['[::1] for localhost', 'http://[::1]:3000/cb'],
      ['another loopback port', 'http://localhost:3001/cb'],
      ['no loopback port', 'http://localhost/cb'],
      ['a zero-padded loopback port', 'http://localhost:03000/cb'],
      ['https for the loopback URI', 'https://localhost:3000/cb'],
      ['an upper-case localhost', 'http://LOCALHOST:3000/cb'],
      ['localhost as a subdomain of another host', 'http://localhost.evil.example:3000/cb'],
      // deep link (registered: com.example.app://cb)
      ['a deep link with an extra path', `${DEEP_LINK}/x`],
      ['a deep link with an upper-case scheme', 'COM.EXAMPLE.APP://cb'],
      ['a deep link without the authority slashes', 'com.example.app:/cb'],
      ['another deep-link scheme', 'com.example.evil://cb'],
    ];

    it.each(tricks)('%s', async (_name, uri) => {
      const before = await storedSignIns();
      await expectErrorPage(await authorize({ redirect_uri: uri }), 'invalid_redirect_uri', before, uri.startsWith('http') ? uri : undefined);
    });

    it.each([
      ['an unknown scope', { scope: 'openid payroll.read' }],
      ['no state', { state: undefined }],
      ['the plain PKCE method', { code_challenge_method: 'plain' }],
      ['no code_challenge', { code_challenge: undefined, code_challenge_method: undefined }],
      ['response_type=token', { response_type: 'token' }],
      ['an unsupported response_mode', { response_mode: 'form_post' }],
      ['prompt=none', { prompt: 'none' }],
    ])('an unregistered URI together with %s: still the error page, never the redirect', async (_name, change) => {
      const before = await storedSignIns();
      const answer = await authorize({ redirect_uri: EVIL, ...change });
      expect({ status: answer.status, location: answer.location }).toEqual({ status: 400, location: null });
      expect(answer.html).toContain('Sign-in cannot continue');
      expect(answer.cookies).toEqual([]);
      expect(await storedSignIns()).toBe(before);
    });

    it.each([
      ['missing', { redirect_uri: undefined }, undefined, 'invalid_request'],
      ['empty', { redirect_uri: '' }, undefined, 'invalid_request'],
      ['twice: the registered one and another', {}, 'twice-evil', 'invalid_request'],
      ['twice: the registered one twice', {}, 'twice-same', 'invalid_request'],
    ] as Array<[string, Record<string, string | undefined>, string | undefined, string]>)('redirect_uri %s → the error page (%s)', async (_name, change, twice, error) => {
      const before = await storedSignIns();
      let raw: string | undefined;
      if (twice) {
        const base = new URLSearchParams({
          response_type: 'code', client_id: app, scope: 'openid', state: 'the-state-value',
          code_challenge: pkcePair().challenge, code_challenge_method: 'S256', redirect_uri: WEB,
        });
        base.append('redirect_uri', twice === 'twice-evil' ? EVIL : WEB);
        raw = base.toString();
      }
      await expectErrorPage(await authorize(change, raw), error, before);
    });

    it("a client ID of another app with this app's URI (and the other way round) → the error page", async () => {
      const before = await storedSignIns();
      await expectErrorPage(await authorize({ client_id: evilApp, redirect_uri: WEB }), 'invalid_redirect_uri', before);
      await expectErrorPage(await authorize({ client_id: app, redirect_uri: EVIL }), 'invalid_redirect_uri', before);
    });

    it("a machine client's ID (no redirect URIs at all) with any URI → the error page", async () => {
      const machine = await server.auth.clientConfigurations.create({
        tenant: 'acme', name: 'Sync', category: 'hr', resources: { scim: { scopes: ['scim.read'] } },
      });
      const before = await storedSignIns();
      await expectErrorPage(await authorize({ client_id: machine.clientId, redirect_uri: EVIL }), 'invalid_redirect_uri', before);
    });

    it('POST /authorize is answered as its GET (303 to it): the same error page, no redirect, no sign-in stored', async () => {
      const before = await storedSignIns();
      const response = await fetch(`${server.oauthUrl}/authorize`, {
        method: 'POST',
        redirect: 'manual',
        headers: { 'content-type': 'application/x-www-form-urlencoded', accept: 'text/html' },
        body: new URLSearchParams({
          response_type: 'code', client_id: app, scope: 'openid', state: 'the-state-value',
          code_challenge: pkcePair().challenge, code_challenge_method: 'S256', redirect_uri: EVIL,
        }).toString(),
      });
      expect(response.status).toBe(303);
      const location = response.headers.get('location')!;
      expect(new URL(location, server.baseUrl).origin).toBe(server.baseUrl);
      expect(new URL(location, server.baseUrl).pathname).toBe(new URL(`${server.oauthUrl}/authorize`).pathname);
      expect(response.headers.getSetCookie()).toEqual([]);
      const followed = await fetch(new URL(location, server.baseUrl), { redirect: 'manual', headers: { accept: 'text/html' } });
      expect({ status: followed.status, location: followed.headers.get('location') }).toEqual({ status: 400, location: null });
      expect(await followed.text()).not.toContain(EVIL);
      expect(await storedSignIns()).toBe(before);
    });

    it('client_id twice (two apps) → the error page, not a redirect to either', async () => {
      const before = await storedSignIns();
      const query = new URLSearchParams({
        response_type: 'code', client_id: app, scope: 'openid', state: 'the-state-value',
        code_challenge: pkcePair().challenge, code_challenge_method: 'S256', redirect_uri: EVIL,
      });
      query.append('client_id', evilApp);
      await expectErrorPage(await authorize({}, query.toString()), 'invalid_request', before);
    });
  });

  describe('at registration: refused with the field and the rule; nothing created or changed', () => {
    const refused: Array<[string, string, RegExp]> = [
      ['a dot-dot segment', 'https://app.example.com/a/../cb', /path segments/],
      ['an encoded dot-dot segment', 'https://app.example.com/a/%2E%2E/cb', /path segments/],
      ['a half-encoded dot-dot segment', 'https://app.example.com/a/.%2e/cb', /path segments/],
      ['a dot segment', 'https://app.example.com/./cb', /path segments/],
      ['userinfo (the registered host as user)', 'https://app.example.com@evil.example/cb', /user information/],
      ['empty userinfo', 'https://@evil.example/cb', /user information/],
      ['userinfo with a password', 'https://user:pass@app.example.com/cb', /user information/],
      ['an encoded slash before userinfo', 'https://app.example.com%2F@evil.example/cb', /user information/],
      ['userinfo on a loopback URI', 'http://app.example.com@localhost/cb', /user information/],
      ['a fragment', 'https://app.example.com/cb#x', /fragment/],
      ['an empty fragment', 'https://app.example.com/cb#', /fragment/],
      ['plain http', 'http://app.example.com/cb', /plain http/],
      ['plain http to localhost as a subdomain', 'http://localhost.evil.example/cb', /plain http/],
      ['plain http to 127.0.0.1 as a subdomain', 'http://127.0.0.1.nip.io/cb', /plain http/],
      ['plain http to [::1]', 'http://[::1]:3000/cb', /plain http/],
      ['plain http to 0.0.0.0', 'http://0.0.0.0/cb', /plain http/],
      ['plain http to a zero-padded 127.0.0.1', 'http://127.000.000.001/cb', /plain http/],
      ['plain http to a decimal 127.0.0.1', 'http://2130706433/cb', /plain http/],
      ['a wildcard host', 'https://*.example.com/cb', /wildcards/],
      ['a wildcard path', 'https://app.example.com/*', /wildcards/],
      ['a backslash', 'https://app.example.com\\@evil.example/cb', /backslashes/],
      ['a leading space', ' https://app.example.com/cb', /whitespace/],
      ['a tab', 'https://app.example.com/\tcb', /whitespace/],
      ['a raw NUL', 'https://app.example.com/cb\u0000', /control characters/],
      ['a percent-encoded dot in the host', 'https://app%2Eexample.com/cb', /host name/],
      ['a Cyrillic look-alike host', 'https://аpp.example.com/cb', /host name/],
      ['an underscore in the host', 'https://app_example.com/cb', /host name/],
      ['port 0', 'https://app.example.com:0/cb', /between 1 and 65535/],
      ['port 65536', 'https://app.example.com:65536/cb', /between 1 and 65535/],
      ['an empty port', 'https://app.example.com:/cb', /empty port/],
      ['a scheme-relative URI', '//app.example.com/cb', /scheme/],
      ['a relative path', '/cb', /scheme/],
      ['https without //', 'https:app.example.com/cb', /scheme:\/\//],
      ['a custom scheme without //', 'com.example.app:/cb', /scheme:\/\//],
      ['javascript: in mixed case', 'JaVaScRiPt://app.example.com/%0aalert(1)', /javascript: scheme/],
      ['vbscript:', 'vbscript://x', /vbscript: scheme/],
      ['data:', 'data://text/html,x', /data: scheme/],
      ['file:', 'file:///etc/passwd', /file: scheme/],
      ['blob:', 'blob:https://app.example.com/x', /blob: scheme/],
      ['a WebSocket server as a deep link', 'ws://evil.example/cb', /network or browser scheme/],
      ['a secure WebSocket server', 'wss://evil.example/cb', /network or browser scheme/],
      ['an FTP server', 'ftp://evil.example/cb', /network or browser scheme/],
      ['an Android intent', 'intent://cb#Intent;package=com.evil;end', /network or browser scheme/],
      ['a browser extension', 'chrome-extension://abcdefghijklmnopabcdefghijklmnop/cb', /network or browser scheme/],
      ['a Firefox extension', 'moz-extension://6f2c6a3e-0000-4000-8000-000000000000/cb', /network or browser scheme/],
    ];

    it.each(refused)('create: %s', async (_name, uri, rule) => {
      const before = await server.auth.appRegistrations.list();
      const error = await server.auth.appRegistrations
        .create({ name: 'Tricky', redirectUris: ['https://ok.example.com/cb', uri], clientType: 'public' })
        .catch((caught: unknown) => caught);
      expect(error).toBeInstanceOf(ValidationError);
      expect((error as ValidationError).field).toBe('redirectUris.1');
      expect((error as ValidationError).description).toMatch(rule);
      expect((error as ValidationError).description).toContain(`'${oauthDescription(uri)}'`);
      expect(await server.auth.appRegistrations.list()).toEqual(before);
    });

    it.each(refused)('update: %s (the app keeps its URIs and still works)', async (_name, uri, rule) => {
      const before = await server.auth.appRegistrations.get(app);
      const error = await server.auth.appRegistrations.update(app, { redirectUris: [WEB, uri] }).catch((caught: unknown) => caught);
      expect(error).toBeInstanceOf(ValidationError);
      expect((error as ValidationError).field).toBe('redirectUris.1');
      expect((error as ValidationError).description).toMatch(rule);
      expect(await server.auth.appRegistrations.get(app)).toEqual(before);
      expect((await authorize({ redirect_uri: WEB })).status).toBe(303);
    });

    it.each([
      ['a host that merely contains the registered host', 'https://app.example.com.evil.example/cb'],
      ['another port', 'https://app.example.com:8443/cb'],
      ['a query', 'https://app.example.com/cb?tenant=acme'],
      ['a double-encoded path (not a dot segment once decoded once)', 'https://app.example.com/%252e%252e/cb'],
    ])('accepted as its own exact URI: %s (only that exact string matches at use)', async (_name, uri) => {
      const created = await server.auth.appRegistrations.create({ name: 'Exact', redirectUris: [uri], clientType: 'public' });
      expect(created.redirectUris).toEqual([uri]);
      const answer = await authorize({ client_id: created.clientId, redirect_uri: uri });
      expect(answer.status).toBe(303);
      const before = await storedSignIns();
      await expectErrorPage(await authorize({ client_id: created.clientId, redirect_uri: WEB }), 'invalid_redirect_uri', before);
      expect(await server.auth.appRegistrations.delete(created.clientId)).toBe(true);
    });
  });
});
