/**
 * Password guessing at the sign-in page: failures are counted per username (case-folded) and per
 * address, in the store, shared by every instance; past a limit the attempt gets a 429 page with
 * Retry-After and the password is not even checked. A browser that signed in as the user before is
 * not held by the username limit, so guesses cannot lock a user out of her own devices. Logs and
 * the store carry the address and a hint of the username, never the username itself.
 */
import { alice, bob, testAccounts } from '../support/accounts.js';
import { startServer, type RunningServer } from '../support/server.js';
import { STORE_KINDS, useStore } from '../support/stores.js';
import { UserAgent, type Step } from '../support/user-agent.js';
import { pkcePair, WEB } from './helpers.js';

const COOKIE_KEYS = ['a-cookie-key-of-at-least-32-characters!'];
const LIMITS = { perUsername: { max: 3, windowSeconds: 60 }, perAddress: { max: 6, windowSeconds: 60 } };

describe.each(STORE_KINDS)('adversarial: sign-in throttling (%s store)', (kind) => {
  const store = useStore(kind);
  let server: RunningServer;
  let app: string;
  let addresses = 0;

  beforeEach(async () => {
    server = await startServer({
      store: store.option(),
      accounts: testAccounts([alice, bob]),
      cookieKeys: COOKIE_KEYS,
      proxy: true,
      rateLimits: { authorize: false, failedSignIn: LIMITS },
    });
    app = (await server.auth.appRegistrations.create({ name: 'App', redirectUris: [WEB], clientType: 'public' })).clientId;
  });
  afterEach(() => server.stop());

  const freshAddress = () => `203.0.113.${(addresses += 1) % 250}`;

  /** A browser at `address` on the login page (prompt=login: also a browser with a session). */
  async function loginPage(address: string, agent = new UserAgent(server.baseUrl, { 'x-forwarded-for': address })): Promise<{ agent: UserAgent; page: Step }> {
    const query = new URLSearchParams({
      response_type: 'code', client_id: app, redirect_uri: WEB, scope: 'openid', state: 'st',
      code_challenge: pkcePair().challenge, code_challenge_method: 'S256', prompt: 'login',
    });
    const page = await agent.request(`${server.oauthUrl}/authorize?${query}`);
    expect(page.html).toContain('name="password"');
    return { agent, page };
  }

  async function attempt(username: string, password: string, address = freshAddress(), agent?: UserAgent): Promise<Step> {
    const login = await loginPage(address, agent);
    return login.agent.submit(login.page, { username, password });
  }

  it('past the username limit: 429 with Retry-After in words, even for the right password, from any new browser', async () => {
    for (const typed of ['alice', 'ALICE', 'Alice']) expect((await attempt(typed, 'wrong')).status).toBe(401);
    const refused = await attempt('alice', alice.password);
    expect(refused.status).toBe(429);
    expect(refused.html).toMatch(/Too many failed sign-ins\. For your security, try again in \d+ seconds\./);
    expect(refused.html).toContain('name="password"');
    // Another user is not affected.
    expect((await attempt(bob.sub, bob.password)).html).toContain('value="allow"');
  });

  it("a browser that signed in as the user before is not held by the username limit", async () => {
    const address = freshAddress();
    const device = new UserAgent(server.baseUrl, { 'x-forwarded-for': address });
    expect((await attempt('alice', alice.password, address, device)).html).toContain('value="allow"');
    for (let i = 0; i < 3; i += 1) await attempt('alice', 'guess');
    expect((await attempt('alice', alice.password)).status).toBe(429);
    const again = await attempt('alice', alice.password, address, device);
    expect(again.status).toBe(200);
    expect(again.html).not.toContain('Too many');
  });

  it('past the address limit: every username from that address waits', async () => {
    const address = freshAddress();
    for (const name of ['u1', 'u2', 'u3', 'u4', 'u5', 'u6']) expect((await attempt(name, 'x', address)).status).toBe(401);
    const refused = await attempt(bob.sub, bob.password, address);
    expect(refused.status).toBe(429);
    expect((await attempt(bob.sub, bob.password)).html).toContain('value="allow"');
  });

  it('logs the address and a hint of the username, never the username; one line per refused key and window', async () => {
    const address = freshAddress();
    await attempt('mallory-who-does-not-exist', 'pw', address);
    for (let i = 0; i < 3; i += 1) await attempt('alice', 'wrong');
    for (let i = 0; i < 4; i += 1) expect((await attempt('alice', 'wrong')).status).toBe(429);
    const log = server.logLines.join('\n');
    expect(log).not.toContain('mallory-who-does-not-exist');
    expect(log).not.toMatch(/"(username|user)":"alice"/);
    const failed = server.logLines.filter((line) => line.includes('"sign-in failed"'));
    expect(failed).toHaveLength(4);
    const first = JSON.parse(failed[0]!) as { address: string; user_hint: string; failures: number[] };
    expect(first.address).toBe(address);
    expect(first.user_hint).toMatch(/^[A-Za-z0-9_-]{22}$/);
    const hints = new Set(failed.slice(1).map((line) => (JSON.parse(line) as { user_hint: string }).user_hint));
    expect(hints.size).toBe(1);
    expect(hints.has(first.user_hint)).toBe(false);
    expect(server.logLines.filter((line) => line.includes('sign-in refused'))).toHaveLength(1);
  });

  (kind === 'redis' ? it : it.skip)('on Redis, every instance shares the counts', async () => {
    const other = await startServer({
      store: server.storeOption,
      accounts: testAccounts([alice, bob]),
      cookieKeys: COOKIE_KEYS,
      proxy: true,
      rateLimits: { authorize: false, failedSignIn: LIMITS },
    });
    try {
      for (let i = 0; i < 3; i += 1) await attempt('alice', 'wrong');
      const otherApp = await other.auth.appRegistrations.get(app);
      expect(otherApp).toBeDefined();
      const agent = new UserAgent(other.baseUrl, { 'x-forwarded-for': freshAddress() });
      const query = new URLSearchParams({
        response_type: 'code', client_id: app, redirect_uri: WEB, scope: 'openid', state: 'st',
        code_challenge: pkcePair().challenge, code_challenge_method: 'S256',
      });
      const page = await agent.request(`${other.oauthUrl}/authorize?${query}`);
      expect((await agent.submit(page, { username: 'alice', password: alice.password })).status).toBe(429);
    } finally {
      await other.stop();
    }
  });
});
