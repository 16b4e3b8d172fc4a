import { exportJWK, generateKeyPair, calculateJwkThumbprint, type JWK } from 'jose';
import { PORTAL_REAUTH_SECONDS } from '../../policies/lifetimes.js';
import { authBody, authValues, authValuesOf, weakens } from '../../src/portal/client-authentication.js';
import type { PortalSessions } from '../../src/portal/sessions.js';
import { PORTAL_TEXT } from '../../src/portal/text.js';
import { PORTAL_TEXT_DE } from '../../src/portal/text-de.js';
import { PORTAL_TEXT_FR } from '../../src/portal/text-fr.js';
import { Form } from '../../src/http/forms.js';
import { csrfOf, portalSignedIn, signedInAgo as agoIn, signInAgainFrom, signInAs, startPortalOnRedis, type PortalOnRedis } from '../support/portal.js';
import { basic, postToken, type RunningServer } from '../support/server.js';
import type { Step, UserAgent } from '../support/user-agent.js';

const COOKIE_KEY = 'a-cookie-key-of-the-client-auth-portal-tests';
const USERS = [{ sub: 'ada', password: 'ada-password', tenant: 'acme', claims: { name: 'ADA' }, permissions: ['integration_setup'] }];

/** The client form's fields (a scope of the demo catalogue) and `extra`. */
const clientForm = (csrf: string, extra: Record<string, string>) => new URLSearchParams({ csrf, name: 'Bank feed', category: 'payroll', description: '', scope: 'scim.read', ...extra }).toString();
const appForm = (csrf: string, extra: Record<string, string>) => new URLSearchParams({ csrf, save: '1', name: 'Web', description: '', redirect_uri: 'https://app.example.com/cb', client_type: 'confidential', pkce_enabled: 'on', ...extra }).toString();

/**
 * CLIENT AUTHENTICATION IN THE PORTAL (src/portal/client-authentication.ts), over HTTP on Redis: the
 * forms of client configurations and apps take the method, the public keys (JSON) or their URL,
 * the DPoP rule and (apps) the PAR rule, and send what the API takes; the record's page shows its
 * method and keys by ID and thumbprint, never a secret to regenerate for a private_key_jwt client;
 * a JWKS that is not JSON and a private key are said at the field; lowering a client's protection
 * needs a recent sign-in; going back to a shared secret shows the new one once. (In Chromium, with
 * axe and the keyboard: test/e2e/portal-client-authentication.test.ts.)
 */
describe('the portal: client authentication, DPoP and PAR on the forms', () => {
  let running: PortalOnRedis;
  let server: RunningServer;
  let sessions: PortalSessions;
  let jwk: JWK;
  let privateJwk: JWK;
  let thumbprint: string;

  beforeAll(async () => {
    running = await startPortalOnRedis(USERS, COOKIE_KEY);
    ({ server, sessions } = running);
    const pair = await generateKeyPair('ES256', { extractable: true });
    jwk = { ...(await exportJWK(pair.publicKey)), kid: 'bank-2026', alg: 'ES256' };
    privateJwk = { ...(await exportJWK(pair.privateKey)), kid: 'bank-2026' };
    thumbprint = await calculateJwkThumbprint(jwk);
  }, 60_000);
  afterAll(async () => {
    await running?.stop();
  });

  const signedIn = () => portalSignedIn(server.baseUrl, 'ada', 'ADA');
  const signedInAgo = (agent: UserAgent, seconds: number) => agoIn(sessions, agent, seconds);
  const post = (agent: UserAgent, path: string, body: string) => agent.request(path, { method: 'POST', body });
  const clientNamed = async (name: string) => (await server.auth.clientConfigurations.list('acme')).find((client) => client.name === name);

  it('a private_key_jwt client from the form: no secret page, its keys by ID and thumbprint, no "Regenerate secret" anywhere', async () => {
    const { agent, csrf } = await signedIn();
    const form = await agent.request('/portal/client-configurations/new');
    for (const id of ['auth-method-client_secret_basic', 'auth-method-private_key_jwt', 'auth-jwks', 'auth-jwks-uri', 'auth-dpop-optional', 'auth-dpop-required']) expect([id, form.html.includes(`id="${id}"`)]).toEqual([id, true]);
    expect(form.html).not.toContain('id="auth-par"');
    const home = await post(agent, '/portal/client-configurations', clientForm(csrf, { name: 'Keys only', token_endpoint_auth_method: 'private_key_jwt', jwks: JSON.stringify({ keys: [jwk] }), jwks_uri: '', dpop: 'required' }));
    expect(home.url).toBe(`${server.baseUrl}/portal`);
    expect(home.html).toContain('Client configuration &quot;Keys only&quot; created.');
    const client = (await clientNamed('Keys only'))!;
    expect(client).toMatchObject({ tokenEndpointAuthMethod: 'private_key_jwt', jwks: { keys: [jwk] }, dpop: 'required' });
    const row = new RegExp(`${client.clientId}[\\s\\S]*?</tr>`).exec(home.html)![0];
    expect(row).toContain(PORTAL_TEXT.clientAuth.noSecret);
    expect(row).not.toContain('/secret');

    const edit = await agent.request(`/portal/client-configurations/${client.clientId}`);
    expect(edit.html).toContain(PORTAL_TEXT.clientAuth.currentKeys);
    expect(edit.html).toContain(`Key bank-2026 (ES256), thumbprint <code>${thumbprint}</code>`);
    expect(edit.html).toMatch(/id="auth-method-private_key_jwt"[^>]*checked/);
    expect(edit.html).toMatch(/id="auth-dpop-required"[^>]*checked/);

    // Asking for a new secret anyway: said, nothing changed.
    const confirm = await agent.request(`/portal/client-configurations/${client.clientId}/secret`);
    expect(confirm.html).toContain(PORTAL_TEXT.clientAuth.noSecretToRotate('Keys only').replace(/"/g, '&quot;'));
    const regenerate = await post(agent, `/portal/client-configurations/${client.clientId}/secret`, new URLSearchParams({ csrf: csrfOf(confirm) }).toString());
    expect(regenerate.html).toContain('has no secret to regenerate');
    expect(await server.auth.clientConfigurations.get(client.clientId)).toEqual(client);
  });

  it('says at the field what is wrong: keys that are not JSON (nothing sent), a private key (the API\'s rule), both key forms', async () => {
    const { agent, csrf } = await signedIn();
    const notJson = await post(agent, '/portal/client-configurations', clientForm(csrf, { name: 'Bad keys', token_endpoint_auth_method: 'private_key_jwt', jwks: '{"keys": [', dpop: 'optional' }));
    expect(notJson.status).toBe(400);
    expect(notJson.html).toContain(`<p class="field-error" id="auth-jwks-error">${PORTAL_TEXT.clientAuth.notJson.replace(/"/g, '&quot;')}</p>`);
    expect(notJson.html).toMatch(/<textarea id="auth-jwks"[^>]*aria-invalid="true"/);
    // What she typed stays.
    expect(notJson.html).toContain('{&quot;keys&quot;: [</textarea>');
    const privateKey = await post(agent, '/portal/client-configurations', clientForm(csrf, { name: 'Bad keys', token_endpoint_auth_method: 'private_key_jwt', jwks: JSON.stringify({ keys: [privateJwk] }), dpop: 'optional' }));
    expect(privateKey.status).toBe(400);
    expect(privateKey.html).toMatch(/id="auth-jwks-error">[^<]*private member/);
    const both = await post(agent, '/portal/client-configurations', clientForm(csrf, { name: 'Bad keys', token_endpoint_auth_method: 'private_key_jwt', jwks: JSON.stringify({ keys: [jwk] }), jwks_uri: 'https://keys.example.com/jwks', dpop: 'optional' }));
    expect(both.html).toMatch(/id="auth-jwks-uri-error">[^<]*not both/);
    // A tenant's admin: a public host only.
    const loopback = await post(agent, '/portal/client-configurations', clientForm(csrf, { name: 'Bad keys', token_endpoint_auth_method: 'private_key_jwt', jwks_uri: 'http://127.0.0.1:9/jwks', dpop: 'optional' }));
    expect(loopback.html).toMatch(/id="auth-jwks-uri-error">/);
    expect(await clientNamed('Bad keys')).toBeUndefined();
    expect(JSON.stringify(await server.auth.clientConfigurations.list('acme'))).not.toContain(privateJwk.d!);
  });

  it('lowering protection needs a recent sign-in: DPoP required → optional and keys → a shared secret (shown once, the keys then refused)', async () => {
    const { agent, csrf } = await signedIn();
    await post(agent, '/portal/client-configurations', clientForm(csrf, { name: 'Downgrade', token_endpoint_auth_method: 'private_key_jwt', jwks: JSON.stringify({ keys: [jwk] }), dpop: 'required' }));
    const client = (await clientNamed('Downgrade'))!;
    const path = `/portal/client-configurations/${client.clientId}`;
    const keep = { name: 'Downgrade', token_endpoint_auth_method: 'private_key_jwt', jwks: JSON.stringify({ keys: [jwk] }) };
    // Renaming with a stale sign-in: not a lowering, done at once.
    await signedInAgo(agent, PORTAL_REAUTH_SECONDS + 30);
    const renamed = await post(agent, path, clientForm(csrf, { ...keep, name: 'Downgrade', category: 'bank', dpop: 'required' }));
    expect(renamed.html).toContain('saved.');
    expect(await server.auth.clientConfigurations.get(client.clientId)).toMatchObject({ category: 'bank', dpop: 'required' });

    const optional = await post(agent, path, clientForm(csrf, { ...keep, dpop: 'optional' }));
    const login = await signInAgainFrom(agent, optional);
    expect((await server.auth.clientConfigurations.get(client.clientId))!.dpop).toBe('required');
    const back = await signInAs(agent, login, 'ada');
    expect(back.html).toContain('saved.');
    expect((await server.auth.clientConfigurations.get(client.clientId))!.dpop).toBe('optional');

    await signedInAgo(agent, PORTAL_REAUTH_SECONDS + 30);
    const toSecret = await post(agent, path, clientForm(csrfOf(back), { name: 'Downgrade', token_endpoint_auth_method: 'client_secret_basic', jwks: JSON.stringify({ keys: [jwk] }), dpop: 'optional' }));
    const again = await signInAgainFrom(agent, toSecret);
    expect((await server.auth.clientConfigurations.get(client.clientId))!.tokenEndpointAuthMethod).toBe('private_key_jwt');
    const shown: Step = await signInAs(agent, again, 'ada');
    expect(shown.url).toBe(`${server.baseUrl}/portal/secret`);
    expect(shown.html).toContain(PORTAL_TEXT.clientAuth.fromKeys('client configuration'));
    const secret = /id="secret" class="secret" value="([^"]+)"/.exec(shown.html)![1]!;
    expect((await postToken(server.oauthUrl, 'grant_type=client_credentials', { authorization: basic(client.clientId, secret) })).status).toBe(200);
    expect(await server.auth.clientConfigurations.get(client.clientId)).toMatchObject({ tokenEndpointAuthMethod: 'client_secret_basic' });
    expect((await server.auth.clientConfigurations.get(client.clientId))!.jwks).toBeUndefined();
    // The Activity says it in words: the method at creation and its change, the DPoP rule.
    const activity = await agent.request('/portal/activity');
    expect(activity.html).toContain('Client authentication: private key JWT → shared secret');
    expect(activity.html).toContain('<li>Client authentication: private key JWT</li>');
    expect(activity.html).toContain('<li>DPoP: required</li>');
  });

  it('apps: private_key_jwt with a JWKS URL, DPoP and "Require pushed authorization requests"; a public app sends no method; PAR off needs a recent sign-in', async () => {
    const { agent, csrf } = await signedIn();
    const form = await agent.request('/portal/app-registrations/new');
    expect(form.html).toContain('id="auth-par"');
    const home = await post(agent, '/portal/app-registrations', appForm(csrf, { name: 'Web keys', token_endpoint_auth_method: 'private_key_jwt', jwks: '', jwks_uri: 'https://keys.example.com/web.json', dpop: 'required', require_par: 'on' }));
    expect(home.html).toContain('App registration &quot;Web keys&quot; created.');
    const app = (await server.auth.appRegistrations.listByTenant('acme')).find((entry) => entry.name === 'Web keys')!;
    expect(app).toMatchObject({ tokenEndpointAuthMethod: 'private_key_jwt', jwksUri: 'https://keys.example.com/web.json', dpop: 'required', requirePushedAuthorizationRequests: true });
    const row = new RegExp(`${app.clientId}[\\s\\S]*?</tr>`).exec(home.html)![0];
    expect(row).not.toContain('/secret');
    const edit = await agent.request(`/portal/app-registrations/${app.clientId}`);
    expect(edit.html).toContain(`${PORTAL_TEXT.clientAuth.keysAt} <code>https://keys.example.com/web.json</code>`);
    expect(edit.html).toMatch(/id="auth-par"[^>]*checked/);

    await signedInAgo(agent, PORTAL_REAUTH_SECONDS + 30);
    const fields = { name: 'Web keys', token_endpoint_auth_method: 'private_key_jwt', jwks_uri: 'https://keys.example.com/web.json', dpop: 'required' };
    const parOff = await post(agent, `/portal/app-registrations/${app.clientId}`, appForm(csrfOf(edit), fields));
    const login = await signInAgainFrom(agent, parOff);
    expect((await server.auth.appRegistrations.get(app.clientId))!.requirePushedAuthorizationRequests).toBe(true);
    const saved = await signInAs(agent, login, 'ada');
    expect(saved.html).toContain('saved.');
    expect((await server.auth.appRegistrations.get(app.clientId))!.requirePushedAuthorizationRequests).toBe(false);

    const spa = await post(agent, '/portal/app-registrations', appForm(csrfOf(saved), { name: 'SPA', client_type: 'public', token_endpoint_auth_method: 'private_key_jwt', jwks: JSON.stringify({ keys: [jwk] }), dpop: 'required' }));
    expect(spa.html).toContain('App registration &quot;SPA&quot; created (public');
    const created = (await server.auth.appRegistrations.listByTenant('acme')).find((entry) => entry.name === 'SPA')!;
    expect(created).toMatchObject({ clientType: 'public', dpop: 'required' });
    expect(created.tokenEndpointAuthMethod).toBeUndefined();
  });

  it('the form parts: what is read, what is sent (a rule only when it changes), what lowers protection', () => {
    const read = authValues(new Form([['token_endpoint_auth_method', 'private_key_jwt'], ['jwks', '{"keys":[]}'], ['jwks_uri', ' '], ['dpop', 'required'], ['require_par', 'on']]));
    expect(read).toEqual({ method: 'private_key_jwt', jwks: '{"keys":[]}', jwksUri: ' ', dpop: 'required', requirePar: true, profile: 'standard' });
    expect(authValues(new Form([['token_endpoint_auth_method', 'other'], ['dpop', 'always']]))).toMatchObject({ method: 'client_secret_basic', dpop: 'optional', requirePar: false });
    expect(authBody(read, PORTAL_TEXT, { authenticates: true, app: true }).body).toEqual({ token_endpoint_auth_method: 'private_key_jwt', jwks: { keys: [] }, dpop: 'required', require_pushed_authorization_requests: true });
    // An edit that changes no rule sends none (nothing recorded as changed).
    const record = { token_endpoint_auth_method: 'private_key_jwt' as const, jwks: { keys: [] }, dpop: 'required' as const, require_pushed_authorization_requests: true };
    expect(authBody(read, PORTAL_TEXT, { authenticates: true, app: true, existing: record }).body).toEqual({ token_endpoint_auth_method: 'private_key_jwt', jwks: { keys: [] } });
    expect(authBody(read, PORTAL_TEXT, { authenticates: false, app: false }).body).toEqual({ dpop: 'required' });
    expect(authValuesOf(record)).toEqual({ method: 'private_key_jwt', jwks: '{\n  "keys": []\n}', jwksUri: '', dpop: 'required', requirePar: true, profile: 'standard' });
    expect(weakens(read, record, true)).toBe(false);
    expect(weakens({ ...read, dpop: 'optional' }, record, true)).toBe(true);
    expect(weakens({ ...read, requirePar: false }, record, true)).toBe(true);
    expect(weakens({ ...read, method: 'client_secret_basic' }, record, true)).toBe(true);
    // A type change to public is not this rule's (the type change has its own).
    expect(weakens({ ...read, method: 'client_secret_basic' }, record, false)).toBe(false);
    expect(weakens({ ...read, dpop: 'optional', requirePar: false, method: 'client_secret_basic' }, {}, true)).toBe(false);
  });

  it('has every new text in German and French, none left in English (but words the same in both)', () => {
    /** Every text of a group, by its dotted key (a function with sample arguments). */
    const flat = (group: object, prefix = ''): Record<string, string> => Object.fromEntries(Object.entries(group).flatMap(([key, value]): Array<[string, string]> => {
      if (typeof value === 'function') return [[`${prefix}${key}`, (value as (...args: string[]) => string)('X', 'Y')]];
      if (typeof value === 'object' && value !== null) return Object.entries(flat(value as object, `${prefix}${key}.`));
      return [[`${prefix}${key}`, String(value)]];
    }));
    // The same word in the language, not a text left untranslated.
    const same: Record<string, string[]> = { de: ['dpopRule', 'dpopRules.optional'], fr: [] };
    const english = flat(PORTAL_TEXT.clientAuth);
    for (const [language, texts] of [['de', PORTAL_TEXT_DE.clientAuth], ['fr', PORTAL_TEXT_FR.clientAuth]] as const) {
      const theirs = flat(texts);
      expect(Object.keys(theirs).sort()).toEqual(Object.keys(english).sort());
      for (const [key, text] of Object.entries(theirs)) {
        expect([language, key, text.length > 0 && (text !== english[key] || same[language]!.includes(key))]).toEqual([language, key, true]);
      }
    }
  });
});
