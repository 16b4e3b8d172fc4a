import type { TenantPolicy } from '../../../src/index.js';
import { testAccounts } from '../../support/accounts.js';
import { startServer, type RunningServer } from '../../support/server.js';
import { signInForCode } from '../../support/sign-in.js';
import { STORE_KINDS, useStore } from '../../support/stores.js';
import { pkcePair, UserAgent, type Step } from '../../support/user-agent.js';

const CALLBACK = 'https://app.example/cb';

/**
 * SSO required (src/endpoints/sign-in/sso-rule.ts), over HTTP on both stores: a tenant that
 * requires it and has a connection gets no password form on its apps' login page and a password
 * posted anyway is refused unread (right or wrong alike); at a platform app the password is checked
 * first (the tenant is the user's); a tenant without a connection keeps passwords; each refusal is
 * a failed sign-in with its reason in the tenant's trail.
 */
describe.each(STORE_KINDS)('SSO required (%s store)', (kind) => {
  const handle = useStore(kind);
  let server: RunningServer;
  const policies = new Map<string, TenantPolicy>();
  const amy = { sub: 'amy', password: 'amy-pw', tenant: 'acme' };
  const gus = { sub: 'gus', password: 'gus-pw', tenant: 'globex' };
  let acmeApp: { clientId: string; redirectUri: string };
  let globexApp: { clientId: string; redirectUri: string };
  let platformApp: { clientId: string; redirectUri: string };
  let openApp: { clientId: string; redirectUri: string };
  let connectionId: string;

  beforeAll(async () => {
    server = await startServer({ store: handle.option(), accounts: testAccounts([amy, gus]), tenantPolicy: (tenant) => policies.get(tenant) });
    const create = async (tenant?: string) => ({
      clientId: (await server.auth.appRegistrations.create({ name: `App of ${tenant ?? 'the platform'}`, ...(tenant ? { tenant } : {}), redirectUris: [CALLBACK], clientType: 'public' })).clientId,
      redirectUri: CALLBACK,
    });
    acmeApp = await create('acme');
    globexApp = await create('globex');
    platformApp = await create();
    openApp = { clientId: (await server.auth.appRegistrations.create({ name: 'Globex Marketplace', tenant: 'globex', openToAllTenants: true, redirectUris: [CALLBACK], clientType: 'public' })).clientId, redirectUri: CALLBACK };
    connectionId = (await server.auth.connections.create({
      tenant: 'acme', name: 'Acme Entra', issuer: 'https://login.acme.example/v2.0', clientId: 'our-client', clientSecret: 'upstream-secret', domains: ['acme.example'],
    })).id;
  });
  afterAll(async () => {
    await server.stop();
  });
  beforeEach(() => {
    policies.clear();
    policies.set('acme', { sso: 'required' });
    policies.set('globex', { sso: 'required' });
  });

  const loginPage = async (app: { clientId: string }, agent = new UserAgent(server.baseUrl)) => {
    const query = new URLSearchParams({
      response_type: 'code', client_id: app.clientId, redirect_uri: CALLBACK, scope: 'openid', state: 's',
      code_challenge: pkcePair().challenge, code_challenge_method: 'S256',
    });
    return { agent, step: await agent.request(`${server.oauthUrl}/authorize?${query}`) };
  };
  /** Posts a password to the interaction's login step, as a script would (with the page's CSRF value). */
  const postPassword = (agent: UserAgent, page: Step, username: string, password: string) => {
    const csrf = /name="csrf" value="([^"]+)"/.exec(page.html)![1]!;
    const interaction = page.url.replace(/\/login$/, '');
    return agent.request(`${interaction}/login`, { method: 'POST', body: new URLSearchParams({ csrf, username, password }).toString() });
  };
  const ssoFailures = async (tenant: string) => {
    await new Promise((resolve) => setTimeout(resolve, 100));
    const { events } = await server.auth.audit.list({ tenant });
    return events.filter((event) => event.type === 'sign_in.failed' && event.details?.reason === 'sso_required');
  };

  it("a tenant's app: its login page names the provider, with its button and no password form", async () => {
    const { step } = await loginPage(acmeApp);
    expect(step.status).toBe(200);
    expect(step.html).not.toContain('name="password"');
    expect(step.html).toContain('Your organisation signs you in through <strong>Acme Entra</strong>.');
    expect(step.html).toMatch(new RegExp(`<form method="post" action="[^"]+/interaction/[^"/]+/federate">`));
    expect(step.html).toContain(`<input type="hidden" name="connection" value="${connectionId}">`);
    expect(step.html).toContain('>Continue with Acme Entra</button>');
  });

  it("a tenant's app: a password posted anyway is refused unread, right and wrong alike (403), audited with its reason", async () => {
    const before = (await ssoFailures('acme')).length;
    const { agent, step } = await loginPage(acmeApp);
    const right = await postPassword(agent, step, amy.sub, amy.password);
    const wrong = await postPassword(agent, right, amy.sub, 'not-her-password');
    for (const answer of [right, wrong]) {
      expect(answer.status).toBe(403);
      expect(answer.location).toBeUndefined();
      expect(answer.html).toContain('Your organisation signs you in through <strong>Acme Entra</strong>.');
      expect(answer.html).toContain('>Back to the sign-in</a>');
      expect(answer.html).not.toContain('Wrong username or password');
    }
    const failures = await ssoFailures('acme');
    expect(failures.length).toBeGreaterThan(before);
    expect(failures[0]).toMatchObject({ tenant: 'acme', actor: { type: 'anonymous' }, target: { type: 'app_registration', id: acmeApp.clientId } });
  });

  it("a tenant's app that allows a passkey alone: no passkey offered, and a passkey answer posted anyway is refused unread (403)", async () => {
    policies.set('acme', { sso: 'required', passkeyOnlySignIn: true });
    const { agent, step } = await loginPage(acmeApp);
    expect(step.html).not.toContain('webauthn');
    expect(step.html).not.toContain('passkey-sign-in');
    const csrf = /name="csrf" value="([^"]+)"/.exec(step.html)![1]!;
    const interaction = step.url.replace(/\/login$/, '');
    const answer = await agent.request(`${interaction}/passkey-sign-in`, { method: 'POST', body: new URLSearchParams({ csrf, credential: '{}' }).toString() });
    expect(answer.status).toBe(403);
    expect(answer.location).toBeUndefined();
    expect(answer.html).toContain('Your organisation signs you in through <strong>Acme Entra</strong>.');
    // Refused as SSO required, unread: not a passkey that failed (a refused passkey is `wrong_credentials`).
    const { events } = await server.auth.audit.list({ tenant: 'acme', type: 'sign_in.failed' });
    expect(events.filter((event) => event.details?.reason === 'wrong_credentials')).toEqual([]);
    // Without the rule, the same tenant offers the passkey alone (the test above is not vacuous).
    policies.set('acme', { passkeyOnlySignIn: true });
    expect((await loginPage(acmeApp)).step.html).toContain('passkey-sign-in');
  });

  it("a tenant's app: an address no connection owns, typed in the email field, gets the SSO page again, not a password form", async () => {
    const { agent, step } = await loginPage(acmeApp);
    const csrf = /name="csrf" value="([^"]+)"/.exec(step.html)![1]!;
    const interaction = step.url.replace(/\/login$/, '');
    const answer = await agent.request(`${interaction}/federate`, { method: 'POST', body: new URLSearchParams({ csrf, email: 'amy@unowned.example' }).toString() });
    expect(answer.status).toBe(200);
    expect(answer.html).not.toContain('name="password"');
    expect(answer.html).toContain('>Continue with Acme Entra</button>');
  });

  it('a platform app: the password is checked first, then refused for a user of the tenant (403), a wrong one stays wrong (401)', async () => {
    const { agent, step } = await loginPage(platformApp);
    expect(step.html).toContain('name="password"');
    const wrong = await postPassword(agent, step, amy.sub, 'not-her-password');
    expect(wrong.status).toBe(401);
    expect(wrong.html).toContain('Wrong username or password');
    const right = await postPassword(agent, wrong, amy.sub, amy.password);
    expect(right.status).toBe(403);
    expect(right.location).toBeUndefined();
    expect(right.html).toContain('Your organisation signs you in through <strong>Acme Entra</strong>.');
    expect(right.html).toContain(`<input type="hidden" name="connection" value="${connectionId}">`);
    const failures = await ssoFailures('acme');
    expect(failures.some((event) => event.target?.id === platformApp.clientId)).toBe(true);
  });

  it("a tenant's app open to all tenants: as a platform app, the rule of the user's tenant after her password", async () => {
    const { agent, step } = await loginPage(openApp);
    expect(step.html).toContain('name="password"');
    const right = await postPassword(agent, step, amy.sub, amy.password);
    expect(right.status).toBe(403);
    expect(right.html).toContain('Your organisation signs you in through <strong>Acme Entra</strong>.');
    await expect(signInForCode(server, openApp, gus, 'openid')).resolves.toMatchObject({ code: expect.any(String) });
  });

  it('a tenant that requires SSO without a connection keeps passwords (its app and a platform app)', async () => {
    const { step } = await loginPage(globexApp);
    expect(step.html).toContain('name="password"');
    await expect(signInForCode(server, globexApp, gus, 'openid')).resolves.toMatchObject({ code: expect.any(String) });
    await expect(signInForCode(server, platformApp, gus, 'openid')).resolves.toMatchObject({ code: expect.any(String) });
  });

  it('SSO optional: the tenant with a connection keeps passwords', async () => {
    policies.set('acme', { sso: 'optional' });
    const { step } = await loginPage(acmeApp);
    expect(step.html).toContain('name="password"');
    await expect(signInForCode(server, acmeApp, amy, 'openid')).resolves.toMatchObject({ code: expect.any(String) });
    await expect(signInForCode(server, platformApp, amy, 'openid')).resolves.toMatchObject({ code: expect.any(String) });
  });

  it("the rule is read at every sign-in: the connection deleted, the tenant's passwords work again", async () => {
    const other = await server.auth.connections.create({ tenant: 'globex', name: 'Globex Okta', issuer: 'https://globex.okta.example', clientId: 'c', clientSecret: 's', domains: ['globex.example'] });
    expect((await loginPage(globexApp)).step.html).toContain('Continue with Globex Okta');
    await server.auth.connections.delete(other.id);
    expect((await loginPage(globexApp)).step.html).toContain('name="password"');
  });
});
