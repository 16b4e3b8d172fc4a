/**
 * Lifting a sign-in hold (`auth.signIns.unlock`, `POST /api/oauth2/sign-ins/unlock`): the operator
 * unlocks any username; a tenant's admin only her own tenant's users, another tenant's or an
 * unknown username being answered exactly like one that is not held; recorded as
 * `sign_in.unlocked` with the user's sub, never the username. Usernames here are e-mail addresses,
 * not the users' subs, so that "never the username" can be checked.
 */
import type { Account, AccountStore } from '../../src/index.js';
import { NotSupported, ValidationError } from '../../src/index.js';
import { basic, postToken, startServer, type RunningServer } from '../support/server.js';
import { signInForCode } from '../support/sign-in.js';
import { STORE_KINDS, useStore } from '../support/stores.js';
import { pkcePair, UserAgent, type Step } from '../support/user-agent.js';

const COOKIE_KEYS = ['a-cookie-key-of-at-least-32-characters!'];
const LIMITS = { perUsername: { max: 3, windowSeconds: 60 }, perAddress: { max: 6, windowSeconds: 60 } };
const WEB = 'https://web.example/cb';
const PORTAL = 'https://portal.example/cb';

interface User {
  username: string;
  password: string;
  account: Account;
}

const alice: User = { username: 'alice@acme.example', password: 'alice-pw', account: { sub: 'u-alice', tenant: 'acme', claims: { name: 'Alice' } } };
const ada: User = { username: 'ada@acme.example', password: 'ada-pw', account: { sub: 'u-ada', tenant: 'acme', permissions: ['integration_setup'] } };
const bob: User = { username: 'bob@globex.example', password: 'bob-pw', account: { sub: 'u-bob', tenant: 'globex' } };
const USERS = [alice, ada, bob];

/** Users who sign in with their e-mail address; `findByUsername` only when `lookup`. */
function accountsByEmail(lookup: boolean): AccountStore {
  const byName = (username: string) => USERS.find((user) => user.username === username.toLowerCase());
  return {
    async authenticate({ username, password }) {
      const user = byName(username);
      return user && user.password === password ? user.account : undefined;
    },
    async findAccount(sub) {
      return USERS.find((user) => user.account.sub === sub)?.account;
    },
    ...(lookup ? { findByUsername: async (username: string) => byName(username)?.account } : {}),
  };
}

describe.each(STORE_KINDS)('lifting a sign-in hold (%s store)', (kind) => {
  const store = useStore(kind);
  let server: RunningServer;
  let app: string;
  let addresses = 0;

  async function start(lookup = true): Promise<void> {
    server = await startServer({
      store: store.option(),
      accounts: accountsByEmail(lookup),
      cookieKeys: COOKIE_KEYS,
      proxy: true,
      rateLimits: { authorize: false, failedSignIn: LIMITS },
    });
    app = (await server.auth.appRegistrations.create({ name: 'App', redirectUris: [WEB], clientType: 'public' })).clientId;
  }
  afterEach(() => server.stop());

  const freshAddress = () => `198.51.100.${(addresses += 1) % 250}`;

  /** One sign-in attempt from a new browser (at a new address unless given). */
  async function attempt(username: string, password: string, address = freshAddress()): Promise<Step> {
    const agent = new UserAgent(server.baseUrl, { 'x-forwarded-for': address });
    const query = new URLSearchParams({
      response_type: 'code', client_id: app, redirect_uri: WEB, scope: 'openid', state: 'st',
      code_challenge: pkcePair().challenge, code_challenge_method: 'S256', prompt: 'login',
    });
    const page = await agent.request(`${server.oauthUrl}/authorize?${query}`);
    return agent.submit(page, { username, password });
  }

  /** Holds a user: as many failures as the username limit allows. */
  async function hold(user: User): Promise<void> {
    for (let n = 0; n < LIMITS.perUsername.max; n += 1) expect((await attempt(user.username, 'wrong')).status).toBe(401);
    expect((await attempt(user.username, user.password)).status).toBe(429);
  }

  const events = async (tenant: string | null) => (await server.auth.audit.list({ tenant, type: 'sign_in.unlocked' })).events;

  describe('the library (the operator)', () => {
    beforeEach(() => start());

    it('lets a held user sign in again at once; recorded in her tenant with her sub, never the username', async () => {
      await hold(alice);
      expect(await server.auth.signIns.unlock({ username: 'Alice@ACME.example' })).toEqual({ unlocked: true });
      expect((await attempt(alice.username, alice.password)).html).toContain('value="allow"');
      // Nothing counted any more: a second unlock has nothing to do.
      expect(await server.auth.signIns.unlock({ username: alice.username })).toEqual({ unlocked: false });
      const [second, first] = await events('acme');
      expect(first).toMatchObject({ tenant: 'acme', actor: { type: 'operator' }, target: { type: 'user', id: 'u-alice' }, details: { failures: 3 } });
      expect(first!.details).not.toHaveProperty('user_hint');
      expect(second).toMatchObject({ target: { type: 'user', id: 'u-alice' }, details: { failures: 0 } });
      const written = JSON.stringify([await events('acme'), await events(null), server.logLines]).toLowerCase();
      expect(written).not.toContain(alice.username);
    });

    it('lifts the username hold only: an address past its own limit still waits', async () => {
      const address = freshAddress();
      for (const name of ['x1', 'x2', 'x3', 'x4', 'x5', 'x6']) await attempt(`${name}@acme.example`, 'wrong', address);
      expect((await attempt(alice.username, alice.password, address)).status).toBe(429);
      expect(await server.auth.signIns.unlock({ username: 'x1@acme.example' })).toEqual({ unlocked: true });
      expect((await attempt(alice.username, alice.password, address)).status).toBe(429);
    });

    it("a tenant: only its own users; another tenant's or an unknown username is answered like one not held, and stays held", async () => {
      await hold(bob);
      expect(await server.auth.signIns.unlock({ tenant: 'acme', username: bob.username })).toEqual({ unlocked: false });
      expect(await server.auth.signIns.unlock({ tenant: 'acme', username: 'nobody@acme.example' })).toEqual({ unlocked: false });
      expect(await server.auth.signIns.unlock({ tenant: 'acme', username: alice.username })).toEqual({ unlocked: false });
      expect((await attempt(bob.username, bob.password)).status).toBe(429);
      // In acme's trail: no trace of bob's account, nor of his state.
      const acme = await events('acme');
      expect(acme.map((event) => [event.target, event.details?.failures])).toEqual([[{ type: 'user', id: 'u-alice' }, 0], [undefined, 0], [undefined, 0]]);
      expect(JSON.stringify(acme)).not.toContain('u-bob');
      expect(await server.auth.signIns.unlock({ tenant: 'globex', username: bob.username })).toEqual({ unlocked: true });
      expect((await attempt(bob.username, bob.password)).html).toContain('value="allow"');
      expect(await events('globex')).toEqual([expect.objectContaining({ target: { type: 'user', id: 'u-bob' }, details: { failures: 3 } })]);
    });

    it.each([
      ['an empty username', { username: '' }, 'username'],
      ['a blank username', { username: '   ' }, 'username'],
      ['a username of 201 characters', { username: 'x'.repeat(201) }, 'username'],
      ['an empty tenant', { username: 'x', tenant: '' }, 'tenant'],
    ])('refuses %s', async (_name, request, field) => {
      const refused = server.auth.signIns.unlock(request);
      await expect(refused).rejects.toBeInstanceOf(ValidationError);
      await expect(refused).rejects.toMatchObject({ field });
      expect(await events(null)).toEqual([]);
    });
  });

  describe('an AccountStore without findByUsername', () => {
    beforeEach(() => start(false));

    it('a tenant cannot be checked: NotSupported, nothing cleared; the operator still unlocks, recorded with the hint', async () => {
      await hold(alice);
      const refused = server.auth.signIns.unlock({ tenant: 'acme', username: alice.username });
      await expect(refused).rejects.toBeInstanceOf(NotSupported);
      await expect(refused).rejects.toThrow(/findByUsername/);
      expect((await attempt(alice.username, alice.password)).status).toBe(429);
      expect(await server.auth.signIns.unlock({ username: alice.username })).toEqual({ unlocked: true });
      const [event] = await events(null);
      expect(event).toMatchObject({ actor: { type: 'operator' }, details: { failures: 3, user_hint: expect.stringMatching(/^[A-Za-z0-9_-]{22}$/) } });
      expect(event!.tenant).toBeUndefined();
      expect(event!.target).toBeUndefined();
    });
  });

  describe('the management API', () => {
    const tokens = new Map<string, string>();

    async function tokenOf(user: User): Promise<string> {
      const portal = await server.auth.appRegistrations.create({ name: 'Admin UI', redirectUris: [PORTAL], clientType: 'confidential', firstParty: true });
      const { code, verifier } = await signInForCode(server, { clientId: portal.clientId, redirectUri: PORTAL }, { sub: user.username, password: user.password }, 'openid manage.integrations', new UserAgent(server.baseUrl, { 'x-forwarded-for': '192.0.2.10' }));
      const response = await postToken(server.oauthUrl, { grant_type: 'authorization_code', code, redirect_uri: PORTAL, code_verifier: verifier }, { authorization: basic(portal.clientId, portal.clientSecret!) });
      return response.body.access_token as string;
    }

    const unlock = (body: unknown, as = 'ada', headers: Record<string, string> = { 'content-type': 'application/json' }) => fetch(`${server.baseUrl}/api/oauth2/sign-ins/unlock`, {
      method: 'POST',
      headers: { ...(as ? { authorization: `Bearer ${tokens.get(as)}` } : {}), 'x-forwarded-for': '192.0.2.77', ...headers },
      body: typeof body === 'string' ? body : JSON.stringify(body),
    });

    it("an admin with the permission unlocks a user of her tenant; another tenant's is answered alike; recorded with her as actor", async () => {
      await start();
      tokens.set('ada', await tokenOf(ada));
      tokens.set('alice', await tokenOf(alice));
      await hold(alice);
      await hold(bob);
      const done = await unlock({ username: alice.username });
      expect(done.status).toBe(200);
      expect(done.headers.get('cache-control')).toBe('no-store');
      expect(await done.json()).toEqual({ unlocked: true });
      expect((await attempt(alice.username, alice.password)).html).toContain('value="allow"');
      // bob is held, but of globex: the same answer as alice now (not held) and an unknown name.
      const answers = await Promise.all([bob.username, alice.username, 'nobody@acme.example'].map(async (username) => {
        const response = await unlock({ username });
        return [response.status, await response.text()];
      }));
      expect(answers).toEqual([[200, '{"unlocked":false}'], [200, '{"unlocked":false}'], [200, '{"unlocked":false}']]);
      expect((await attempt(bob.username, bob.password)).status).toBe(429);
      const [, , , first] = await events('acme');
      expect(first).toMatchObject({ actor: { type: 'user', id: 'u-ada' }, target: { type: 'user', id: 'u-alice' }, address: '192.0.2.77', details: { failures: 3 } });
    });

    it('refuses what is not for it: 401, 403, 400 with the field, 415, 405', async () => {
      await start();
      tokens.set('ada', await tokenOf(ada));
      tokens.set('alice', await tokenOf(alice));
      expect((await unlock({ username: 'x' }, '')).status).toBe(401);
      const forbidden = await unlock({ username: alice.username }, 'alice');
      expect(forbidden.status).toBe(403);
      expect(await forbidden.json()).toMatchObject({ error: 'insufficient_scope' });
      for (const [body, field] of [[{}, 'username'], [{ username: '' }, 'username'], [{ username: 'x'.repeat(201) }, 'username'], [{ username: 'x', tenant: 'globex' }, 'tenant'], [{ username: 7 }, 'username']] as const) {
        const refused = await unlock(body);
        expect(refused.status).toBe(400);
        expect(await refused.json()).toMatchObject({ error: 'invalid_request', field });
      }
      expect((await unlock('username=x', 'ada', { 'content-type': 'application/x-www-form-urlencoded' })).status).toBe(415);
      const get = await fetch(`${server.baseUrl}/api/oauth2/sign-ins/unlock`, { headers: { authorization: `Bearer ${tokens.get('ada')}` } });
      expect(get.status).toBe(405);
      expect(get.headers.get('allow')).toBe('POST');
      expect(await events('acme')).toEqual([]);
    });

    it('without findByUsername: 501 not_supported, nothing cleared', async () => {
      await start(false);
      tokens.set('ada', await tokenOf(ada));
      await hold(alice);
      const refused = await unlock({ username: alice.username });
      expect(refused.status).toBe(501);
      expect(await refused.json()).toMatchObject({ error: 'not_supported', error_description: expect.stringContaining('findByUsername') });
      expect((await attempt(alice.username, alice.password)).status).toBe(429);
    });
  });
});
