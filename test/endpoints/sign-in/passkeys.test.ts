import { request as httpRequest } from 'node:http';
import { Redis } from 'ioredis';
import * as client from 'openid-client';
import { PASSKEY_SCRIPT_PATH } from '../../../src/pages/passkey-script.js';
import { testAccounts } from '../../support/accounts.js';
import { startServer, type RunningServer } from '../../support/server.js';
import { STORE_KINDS, useStore } from '../../support/stores.js';
import { pkcePair, UserAgent, type Step } from '../../support/user-agent.js';

const WEB = 'https://app.example.com/cb';
const USERS = [
  { sub: 'pat', password: 'pat-password', tenant: 'acme', claims: { name: 'pat' }, scopes: ['scim.read'] },
  { sub: 'quin', password: 'quin-password', tenant: 'globex', claims: { name: 'quin' }, scopes: ['scim.read'] },
];
const PASSKEY_ONLY = (tenant: string) => (tenant === 'acme' ? { passkeyOnlySignIn: true } : {});
/** A credential answer of the right shape that no authenticator made. */
const FORGED = JSON.stringify({ id: 'AAAA', rawId: 'AAAA', type: 'public-key', response: { clientDataJSON: 'AA', authenticatorData: 'AA', signature: 'AA', userHandle: 'AA' } });

/**
 * The passkey steps of the sign-in (src/endpoints/sign-in/passkey-steps.ts) over HTTP, what needs
 * no authenticator: who is offered a passkey alone (the tenant's policy: passkeyOnlyAllowed), the
 * steps refused elsewhere (403) or out of turn (400), answers refused with the page's words, the
 * ceremonies an address may start (rateLimits.passkeySignIn), the relying party pinned to the
 * base URL whatever the Host header says. On both stores. The ceremonies with a browser and a
 * virtual authenticator: test/e2e/passkey-sign-in-browser.test.ts.
 */
describe.each(STORE_KINDS)('passkeys at sign-in over HTTP (%s store)', (kind) => {
  const store = useStore(kind);
  let server: RunningServer;
  const clients: Record<string, client.Configuration> = {};

  async function serverOn(rateLimits: Record<string, unknown> = {}): Promise<{ started: RunningServer; configs: Record<string, client.Configuration> }> {
    const started = await startServer({ accounts: testAccounts(USERS), store: store.option(), tenantPolicy: PASSKEY_ONLY, rateLimits: { authorize: false, ...rateLimits } }, { hostName: 'localhost' });
    const configs: Record<string, client.Configuration> = {};
    for (const tenant of ['acme', 'globex', 'platform']) {
      const app = await started.auth.appRegistrations.create({ name: `${tenant} app`, ...(tenant === 'platform' ? {} : { tenant }), redirectUris: [WEB], clientType: 'public' });
      configs[tenant] = await client.discovery(new URL(started.oauthUrl), app.clientId, undefined, client.None(), { execute: [client.allowInsecureRequests] });
    }
    return { started, configs };
  }

  beforeAll(async () => {
    const { started, configs } = await serverOn();
    server = started;
    Object.assign(clients, configs);
  });
  afterAll(async () => {
    await server?.stop();
  });

  async function loginPage(agent: UserAgent, tenant: string, on = clients): Promise<Step> {
    const url = client.buildAuthorizationUrl(on[tenant]!, { redirect_uri: WEB, scope: 'openid scim.read', state: 's', code_challenge: pkcePair().challenge, code_challenge_method: 'S256' });
    const step = await agent.request(url.href);
    expect(step.html).toContain('name="password"');
    return step;
  }

  const uidOf = (step: Step) => /interaction\/([A-Za-z0-9_-]+)\/login/.exec(step.html)![1]!;
  const csrfOf = (step: Step) => /name="csrf" value="([^"]+)"/.exec(step.html)![1]!;
  const post = (agent: UserAgent, path: string, body: Record<string, string>) => agent.request(path, { method: 'POST', body: new URLSearchParams(body).toString() });
  const optionsOf = (step: Step) => JSON.parse(/data-passkey-options="([^"]+)"/.exec(step.html)![1]!.replace(/&quot;/g, '"').replace(/&amp;/g, '&')) as Record<string, unknown>;

  it('a tenant that allows a passkey alone: its login page offers one (autofill, the button, the script by path); others (another tenant, a platform app) do not', async () => {
    const allowed = await loginPage(new UserAgent(server.baseUrl), 'acme');
    expect(allowed.html).toContain('autocomplete="username webauthn"');
    expect(allowed.html).toMatch(/<form method="post" action="[^"]+\/passkey-sign-in" data-passkey="get" data-passkey-autofill data-passkey-options=/);
    expect(allowed.html).toContain('>Sign in with a passkey</button>');
    expect(allowed.html).toContain(`<script src="${PASSKEY_SCRIPT_PATH}" nonce="`);
    expect(optionsOf(allowed)).toMatchObject({ rpId: 'localhost', allowCredentials: [], userVerification: 'required', timeout: 300_000 });

    for (const tenant of ['globex', 'platform']) {
      const page = await loginPage(new UserAgent(server.baseUrl), tenant);
      expect(page.html).toContain('autocomplete="username"');
      expect(page.html).not.toContain('webauthn');
      expect(page.html).not.toContain('data-passkey');
      expect(page.html).not.toContain('<script');
    }
  });

  it('the passkey-alone step is refused (403, before reading anything) where the tenant does not allow it; an answer that is none or not ours is refused with the page\'s words and audited', async () => {
    for (const tenant of ['globex', 'platform']) {
      const agent = new UserAgent(server.baseUrl);
      const page = await loginPage(agent, tenant);
      const refused = await post(agent, `${server.oauthUrl}/interaction/${uidOf(page)}/passkey-sign-in`, { csrf: csrfOf(page), ceremony: 'x', credential: FORGED });
      expect(refused.status).toBe(403);
      expect(refused.html).toContain('Signing in with a passkey alone is not turned on for your organisation.');
    }

    const agent = new UserAgent(server.baseUrl);
    const page = await loginPage(agent, 'acme');
    const uid = uidOf(page);
    const ceremony = /name="ceremony" value="([^"]+)"/.exec(page.html)![1]!;
    // No credential (the page without its script): the passkey was not used.
    const none = await post(agent, `${server.oauthUrl}/interaction/${uid}/passkey-sign-in`, { csrf: csrfOf(page), ceremony });
    expect(none.status).toBe(400);
    expect(none.html).toContain('The passkey was not used.');
    // A forged answer with the page's own ceremony: refused, the login page again without autofill.
    const forged = await post(agent, `${server.oauthUrl}/interaction/${uid}/passkey-sign-in`, { csrf: csrfOf(none), ceremony, credential: FORGED });
    expect(forged.status).toBe(401);
    expect(forged.location).toBeUndefined();
    expect(forged.html).toContain('That passkey cannot sign you in here.');
    expect(forged.html).toContain('name="password"');
    expect(forged.html).not.toContain('data-passkey-autofill');
    expect(forged.html).toContain('data-passkey="get"');
    // Not counted as failed sign-ins (nothing to guess): no throttle counter, but audited (anonymous).
    expect(server.logLines.filter((line) => line.includes('"sign-in failed"'))).toEqual([]);
    const refusals = (await server.auth.audit.list({ tenant: 'acme', type: 'sign_in.failed' as never })).events;
    expect(refusals.length).toBeGreaterThanOrEqual(1);
    expect(JSON.stringify(refusals)).not.toContain('AAAA');
    // Without the CSRF token: 403.
    expect((await post(agent, `${server.oauthUrl}/interaction/${uid}/passkey-sign-in`, { ceremony, credential: FORGED })).status).toBe(403);
  });

  it('the passkey second-factor step without the password first is refused (400), without the CSRF token 403', async () => {
    const agent = new UserAgent(server.baseUrl);
    const page = await loginPage(agent, 'acme');
    const early = await post(agent, `${server.oauthUrl}/interaction/${uidOf(page)}/passkey`, { csrf: csrfOf(page), ceremony: 'x', credential: FORGED });
    expect(early.status).toBe(400);
    expect(early.html).toContain('This sign-in step is over.');
    expect((await post(agent, `${server.oauthUrl}/interaction/${uidOf(page)}/passkey`, { ceremony: 'x', credential: FORGED })).status).toBe(403);
    // A passkey's answer may be larger than the other forms (formRequestBytes, 4 KiB): read up to
    // PASSKEY_FORM_BYTES (16 KiB) and judged on what it is; beyond, 413. The login form keeps 4 KiB.
    const long = 'A'.repeat(8 * 1024);
    expect((await post(agent, `${server.oauthUrl}/interaction/${uidOf(page)}/passkey`, { csrf: csrfOf(page), ceremony: 'x', credential: long })).status).toBe(400);
    expect((await post(agent, `${server.oauthUrl}/interaction/${uidOf(page)}/passkey`, { csrf: csrfOf(page), ceremony: 'x', credential: 'A'.repeat(17 * 1024) })).status).toBe(413);
    expect((await post(agent, `${server.oauthUrl}/interaction/${uidOf(page)}/login`, { csrf: csrfOf(page), username: long, password: 'x' })).status).toBe(413);
    // A user without a passkey (nor an app): the password alone, no second-factor page.
    const signedIn = await agent.submit(page, { username: 'pat', password: 'pat-password' });
    expect(signedIn.html).not.toContain('name="code"');
  });

  it('the relying party is the base URL\'s host, whatever the Host header names', async () => {
    const agent = new UserAgent(server.baseUrl);
    const page = await loginPage(agent, 'acme');
    const cookie = agent.setCookieHeaders.map((header) => header.split(';')[0]).join('; ');
    const url = new URL(`${server.oauthUrl}/interaction/${uidOf(page)}`);
    const html = await new Promise<{ status: number; body: string }>((resolve, reject) => {
      const sent = httpRequest({ host: '127.0.0.1', port: url.port, path: url.pathname, headers: { host: `evil.example:${url.port}`, cookie, accept: 'text/html' } }, (answer) => {
        let body = '';
        answer.setEncoding('utf8').on('data', (chunk: string) => { body += chunk; }).on('end', () => resolve({ status: answer.statusCode!, body }));
      });
      sent.on('error', reject).end();
    });
    expect(html.status).toBe(200);
    expect(html.body).toContain('data-passkey-options');
    expect(optionsOf({ status: 200, url: '', html: html.body })).toMatchObject({ rpId: 'localhost' });
    expect(html.body).not.toContain('evil.example');
  });

  it('an address starts at most rateLimits.passkeySignIn ceremonies per window: past it the login page offers no passkey (the password still works), logged once', async () => {
    const { started, configs } = await serverOn({ passkeySignIn: { max: 2, windowSeconds: 60 } });
    try {
      const agent = new UserAgent(started.baseUrl);
      const first = await loginPage(agent, 'acme', configs);
      expect(first.html).toContain('data-passkey="get"');
      // The same page again (a reload): another ceremony.
      const again = await agent.request(`${started.oauthUrl}/interaction/${uidOf(first)}`);
      expect(again.html).toContain('data-passkey="get"');
      for (let i = 0; i < 2; i += 1) {
        const past = await agent.request(`${started.oauthUrl}/interaction/${uidOf(first)}`);
        expect(past.status).toBe(200);
        expect(past.html).not.toContain('data-passkey');
        expect(past.html).not.toContain('webauthn');
        expect(past.html).toContain('name="password"');
      }
      expect(started.logLines.filter((line) => line.includes('passkey ceremonies refused'))).toHaveLength(1);
      if (kind === 'redis') {
        // What the address keeps stored: the ceremonies the limit let through, no more, each with its lifetime.
        const redisClient = new Redis(store.redis!.url);
        try {
          const keys = await redisClient.keys(`${(started.storeOption as { keyPrefix: string }).keyPrefix}*PasskeyChallenge*`);
          expect(keys).toHaveLength(2);
          for (const key of keys) expect(await redisClient.ttl(key)).toBeGreaterThan(0);
        } finally {
          redisClient.disconnect();
        }
      }
      // The password still signs in.
      const page = await agent.request(`${started.oauthUrl}/interaction/${uidOf(first)}`);
      const after = await agent.submit(page, { username: 'pat', password: 'pat-password' });
      expect(after.html).not.toContain('name="password"');
    } finally {
      await started.stop();
    }
  });
});
