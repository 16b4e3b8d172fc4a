import { exportJWK, generateKeyPair, type JWK } from 'jose';
import type { Store } from '../../adapters/types.js';
import { PORTAL_REAUTH_SECONDS } from '../../policies/lifetimes.js';
import { authBody, authValues, authValuesOf, weakens } from '../../src/portal/client-authentication.js';
import type { PortalSessions } from '../../src/portal/sessions.js';
import { PORTAL_TEXT } from '../../src/portal/text.js';
import { Form } from '../../src/http/forms.js';
import { TENANT_SETTINGS, type TenantSettingsRecord } from '../../src/records/tenant-settings.js';
import { csrfOf, portalSignedIn, signedInAgo as agoIn, signInAgainFrom, signInAs, startPortalOnRedis, type PortalOnRedis } from '../support/portal.js';
import type { RunningServer } from '../support/server.js';
import type { UserAgent } from '../support/user-agent.js';

const COOKIE_KEY = 'a-cookie-key-of-the-profile-portal-tests';
const admin = (sub: string, tenant: string) => ({ sub, password: `${sub}-password`, tenant, claims: { name: sub.toUpperCase() }, permissions: ['integration_setup'] });
// ada's tenant has clients of every kind; bea's is switched to the profile as a whole.
const USERS = [admin('ada', 'acme'), admin('bea', 'beta')];

const clientForm = (csrf: string, extra: Record<string, string>) => new URLSearchParams({ csrf, name: 'Bank feed', category: 'payroll', description: '', scope: 'scim.read', ...extra }).toString();
const appForm = (csrf: string, extra: Record<string, string>) => new URLSearchParams({ csrf, save: '1', name: 'Web', description: '', redirect_uri: 'https://app.example.com/cb', client_type: 'confidential', pkce_enabled: 'on', ...extra }).toString();
const html = (text: string) => text.replace(/"/g, '&quot;').replace(/'/g, '&#39;');

/**
 * THE HIGH-SECURITY PROFILE IN THE PORTAL (src/portal/client-authentication.ts, src/portal/connections.ts),
 * over HTTP on Redis: the client and app forms offer the profile and send it only when it changes;
 * a client that does not conform is refused by the API and the form says why at the field the API
 * names; the record's page says when it is under the profile, and when its tenant puts it there;
 * leaving the profile needs a recent sign-in; the tenant's own profile sits beside its SSO rule, a
 * switch refused while clients do not conform names them, and a change needs a recent sign-in.
 * (In Chromium, with axe and the keyboard: test/e2e/portal-security-profile.test.ts.)
 */
describe('the portal: the high-security profile', () => {
  let running: PortalOnRedis;
  let server: RunningServer;
  let store: Store;
  let sessions: PortalSessions;
  let jwk: JWK;

  beforeAll(async () => {
    running = await startPortalOnRedis(USERS, COOKIE_KEY);
    ({ server, store, sessions } = running);
    const pair = await generateKeyPair('ES256', { extractable: true });
    jwk = { ...(await exportJWK(pair.publicKey)), kid: 'bank-2026', alg: 'ES256' };
  }, 60_000);
  afterAll(async () => {
    await running?.stop();
  });

  const post = (agent: UserAgent, path: string, body: string) => agent.request(path, { method: 'POST', body });
  const stale = (agent: UserAgent) => agoIn(sessions, agent, PORTAL_REAUTH_SECONDS + 30);
  const clientNamed = async (tenant: string, name: string) => (await server.auth.clientConfigurations.list(tenant)).find((client) => client.name === name);
  const settingsOf = async (tenant: string) => (await store.records.get<TenantSettingsRecord>(TENANT_SETTINGS, tenant)) ?? {};
  const keyed = { token_endpoint_auth_method: 'private_key_jwt', dpop: 'required' };

  it('a conforming keyed client chooses high security (only the profile sent); its page says so; a Basic one is refused at the method\'s field', async () => {
    const { agent, csrf } = await portalSignedIn(server.baseUrl, 'ada', 'ADA');
    const form = await agent.request('/portal/client-configurations/new');
    expect(form.html).toMatch(/id="auth-profile-standard"[^>]*checked/);
    expect(form.html).toContain(`id="auth-profile-hint">${html(PORTAL_TEXT.clientAuth.profileHint)}`);
    await post(agent, '/portal/client-configurations', clientForm(csrf, { ...keyed, name: 'Keyed', jwks: JSON.stringify({ keys: [jwk] }) }));
    const client = (await clientNamed('acme', 'Keyed'))!;
    expect(client.profile).toBe('standard');
    const path = `/portal/client-configurations/${client.clientId}`;
    // A stale sign-in: choosing high security strengthens the client, done at once.
    await stale(agent);
    const saved = await post(agent, path, clientForm(csrf, { ...keyed, name: 'Keyed', profile: 'high-security' }));
    expect(saved.html).toContain('Client configuration &quot;Keyed&quot; saved.');
    expect((await server.auth.clientConfigurations.get(client.clientId))!.profile).toBe('high-security');
    const page = await agent.request(path);
    expect(page.html).toContain(`<p id="auth-profile-current">${PORTAL_TEXT.clientAuth.profileNow}</p>`);
    expect(page.html).toMatch(/id="auth-profile-high-security"[^>]*checked/);
    // ada's tenant has no profile of its own: no word of it.
    expect(page.html).not.toContain('id="auth-profile-tenant"');

    const basic = await post(agent, '/portal/client-configurations', clientForm(csrf, { name: 'Basic', token_endpoint_auth_method: 'client_secret_basic', dpop: 'required', profile: 'high-security' }));
    expect(basic.status).toBe(400);
    expect(basic.html).toContain('<p class="field-error" id="auth-method-client_secret_basic-error">the high-security profile requires private_key_jwt</p>');
    expect(basic.html).toMatch(/id="auth-method-client_secret_basic"[^>]*aria-invalid="true"/);
    // As chosen, kept for her to change the method or the profile.
    expect(basic.html).toMatch(/id="auth-profile-high-security"[^>]*checked/);
    expect(await clientNamed('acme', 'Basic')).toBeUndefined();
    // An edit of a Basic client to high security: refused at the same field, nothing changed.
    await post(agent, '/portal/client-configurations', clientForm(csrf, { name: 'Basic', token_endpoint_auth_method: 'client_secret_basic', dpop: 'optional' }));
    const existing = (await clientNamed('acme', 'Basic'))!;
    const refused = await post(agent, `/portal/client-configurations/${existing.clientId}`, clientForm(csrf, { name: 'Basic', token_endpoint_auth_method: 'client_secret_basic', dpop: 'required', profile: 'high-security' }));
    expect(refused.status).toBe(400);
    expect(refused.html).toContain('id="auth-method-client_secret_basic-error">the high-security profile requires private_key_jwt');
    expect(await server.auth.clientConfigurations.get(existing.clientId)).toEqual(existing);
  });

  it('apps: a conforming one chooses high security; a public one is refused at the client type', async () => {
    const { agent, csrf } = await portalSignedIn(server.baseUrl, 'ada', 'ADA');
    const form = await agent.request('/portal/app-registrations/new');
    expect(form.html).toContain(html(PORTAL_TEXT.clientAuth.profileHintApp));
    const home = await post(agent, '/portal/app-registrations', appForm(csrf, { ...keyed, name: 'Strict web', jwks_uri: 'https://keys.example.com/web.json', require_par: 'on', profile: 'high-security' }));
    expect(home.html).toContain('App registration &quot;Strict web&quot; created.');
    const app = (await server.auth.appRegistrations.listByTenant('acme')).find((entry) => entry.name === 'Strict web')!;
    expect(app).toMatchObject({ profile: 'high-security', requirePushedAuthorizationRequests: true, dpop: 'required' });
    const spa = await post(agent, '/portal/app-registrations', appForm(csrf, { name: 'Strict SPA', client_type: 'public', dpop: 'required', require_par: 'on', profile: 'high-security' }));
    expect(spa.status).toBe(400);
    expect(spa.html).toMatch(/id="type-confidential-error">[^<]*requires a confidential app/);
    expect((await server.auth.appRegistrations.listByTenant('acme')).some((entry) => entry.name === 'Strict SPA')).toBe(false);
  });

  it('leaving high security needs a recent sign-in, then is saved', async () => {
    const { agent, csrf } = await portalSignedIn(server.baseUrl, 'ada', 'ADA');
    await post(agent, '/portal/client-configurations', clientForm(csrf, { ...keyed, name: 'Leaving', jwks: JSON.stringify({ keys: [jwk] }), profile: 'high-security' }));
    const client = (await clientNamed('acme', 'Leaving'))!;
    expect(client.profile).toBe('high-security');
    const path = `/portal/client-configurations/${client.clientId}`;
    await stale(agent);
    const leave = await post(agent, path, clientForm(csrf, { ...keyed, name: 'Leaving', profile: 'standard' }));
    const login = await signInAgainFrom(agent, leave);
    expect((await server.auth.clientConfigurations.get(client.clientId))!.profile).toBe('high-security');
    const back = await signInAs(agent, login, 'ada');
    expect(back.html).toContain('Client configuration &quot;Leaving&quot; saved.');
    expect((await server.auth.clientConfigurations.get(client.clientId))!.profile).toBe('standard');
  });

  it('the tenant\'s profile: refused naming the clients that do not conform, then switched on (every form says so), saving SSO keeps it, leaving needs a recent sign-in', async () => {
    const { agent, csrf } = await portalSignedIn(server.baseUrl, 'bea', 'BEA');
    await post(agent, '/portal/client-configurations', clientForm(csrf, { name: 'Old feed', token_endpoint_auth_method: 'client_secret_basic', dpop: 'optional' }));
    const old = (await clientNamed('beta', 'Old feed'))!;
    const page = await agent.request('/portal/connections');
    expect(page.html).toContain(`<h2 id="tenant-profile-heading">${html(PORTAL_TEXT.clientAuth.tenantProfileHeading)}</h2>`);
    expect(page.html).toMatch(/id="tenant-profile-standard"[^>]*checked/);
    expect(page.html).toContain('action="/portal/connections/profile"');

    const refused = await post(agent, '/portal/connections/profile', new URLSearchParams({ csrf: csrfOf(page), profile: 'high-security' }).toString());
    expect(refused.url).toBe(`${server.baseUrl}/portal/connections`);
    expect(refused.html).toContain(`<p class="error" role="alert">${html(PORTAL_TEXT.clientAuth.tenantProfileRefused(old.clientId))}</p>`);
    expect(await settingsOf('beta')).not.toMatchObject({ profile: 'high-security' });
    // Nothing chosen (or something else): said, nothing sent.
    const nothing = await post(agent, '/portal/connections/profile', new URLSearchParams({ csrf, profile: 'strict' }).toString());
    expect(nothing.html).toContain(html(PORTAL_TEXT.clientAuth.tenantProfilePick));

    // The client made to conform: the switch is done (turning it on needs a recent sign-in too).
    await server.auth.clientConfigurations.update(old.clientId, { tokenEndpointAuthMethod: 'private_key_jwt', jwks: { keys: [jwk as never] }, dpop: 'required' });
    await stale(agent);
    const asked = await post(agent, '/portal/connections/profile', new URLSearchParams({ csrf, profile: 'high-security' }).toString());
    const on = await signInAs(agent, await signInAgainFrom(agent, asked), 'bea');
    expect(on.html).toContain(html(PORTAL_TEXT.clientAuth.tenantProfileSaved['high-security']!));
    expect(await settingsOf('beta')).toMatchObject({ profile: 'high-security' });
    expect(on.html).toMatch(/id="tenant-profile-high-security"[^>]*checked/);
    // Every client form of the tenant says the client is under it (its effective profile).
    for (const form of ['/portal/client-configurations/new', `/portal/client-configurations/${old.clientId}`, '/portal/app-registrations/new']) {
      expect([form, (await agent.request(form)).html.includes(`<p class="warning" id="auth-profile-tenant">${html(PORTAL_TEXT.clientAuth.profileByTenant)}</p>`)]).toEqual([form, true]);
    }
    // The SSO rule saved keeps the profile (the settings are one record, replaced whole).
    await post(agent, '/portal/connections/sso', new URLSearchParams({ csrf: csrfOf(on), sso: 'optional' }).toString());
    expect(await settingsOf('beta')).toMatchObject({ sso: 'optional', profile: 'high-security' });

    await stale(agent);
    const leave = await post(agent, '/portal/connections/profile', new URLSearchParams({ csrf: csrfOf(on), profile: 'standard' }).toString());
    const login = await signInAgainFrom(agent, leave);
    expect(await settingsOf('beta')).toMatchObject({ profile: 'high-security' });
    const off = await signInAs(agent, login, 'bea');
    expect(off.html).toContain(html(PORTAL_TEXT.clientAuth.tenantProfileSaved.standard!));
    expect(await settingsOf('beta')).toMatchObject({ sso: 'optional', profile: 'standard' });
  });

  it('the form parts: the profile read, sent only when it changes, leaving it lowers protection', () => {
    const read = authValues(new Form([['token_endpoint_auth_method', 'private_key_jwt'], ['dpop', 'required'], ['profile', 'high-security']]));
    expect(read.profile).toBe('high-security');
    expect(authValues(new Form([['profile', 'fapi']])).profile).toBe('standard');
    expect(authBody(read, PORTAL_TEXT, { authenticates: true, app: false }).body).toMatchObject({ profile: 'high-security' });
    const record = { token_endpoint_auth_method: 'private_key_jwt' as const, dpop: 'required' as const, profile: 'high-security' as const };
    expect(authValuesOf(record).profile).toBe('high-security');
    expect(authBody(read, PORTAL_TEXT, { authenticates: true, app: false, existing: record }).body).not.toHaveProperty('profile');
    expect(authBody({ ...read, profile: 'standard' }, PORTAL_TEXT, { authenticates: true, app: false, existing: record }).body).toMatchObject({ profile: 'standard' });
    // A new record's standard profile is not sent (the API's default).
    expect(authBody({ ...read, profile: 'standard' }, PORTAL_TEXT, { authenticates: true, app: false }).body).not.toHaveProperty('profile');
    expect(weakens(read, record, true)).toBe(false);
    expect(weakens({ ...read, profile: 'standard' }, record, true)).toBe(true);
    expect(weakens({ ...read, profile: 'high-security' }, { ...record, profile: 'standard' }, true)).toBe(false);
  });
});
