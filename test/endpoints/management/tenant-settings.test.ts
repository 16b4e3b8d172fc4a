import { auditLogOf } from '../../../src/audit/trail.js';
import type { TenantPolicy } from '../../../src/index.js';
import { testAccounts } from '../../support/accounts.js';
import { basic, postToken, startServer, type RunningServer } from '../../support/server.js';
import { signInForCode } from '../../support/sign-in.js';
import { STORE_KINDS, useStore } from '../../support/stores.js';
import { UserAgent } from '../../support/user-agent.js';

const PORTAL = 'https://portal.example/cb';

/**
 * THE TENANT'S OWN SETTINGS in the management API (src/endpoints/management/tenant-settings.ts):
 * read and replaced by the tenant's admins only, for their own tenant only, stored on both stores,
 * audited as changes; what applies combines them with the host's policy
 * (policies/second-factor-rule.ts). Admins sign in through the real pages (they enrol their app at
 * the first sign-in: test/support/second-factor.ts).
 */
describe.each(STORE_KINDS)('tenant settings in the management API (%s store)', (kind) => {
  const store = useStore(kind);
  let server: RunningServer;
  const admin = { sub: 'admin', password: 'admin-pw', tenant: 'acme', permissions: ['integration_setup'] };
  const other = { sub: 'other-admin', password: 'other-pw', tenant: 'globex', permissions: ['integration_setup'] };
  const plain = { sub: 'plain', password: 'plain-pw', tenant: 'acme' };
  /** globex's host policy: the second factor required, passkey-only sign-in forbidden. */
  const hostPolicies = new Map<string, TenantPolicy>([['globex', { secondFactor: 'required', passkeyOnlySignIn: false }]]);
  const tokens = new Map<string, string>();

  beforeAll(async () => {
    server = await startServer({ store: store.option(), accounts: testAccounts([admin, other, plain]), tenantPolicy: (tenant) => hostPolicies.get(tenant) });
    const app = await server.auth.appRegistrations.create({ name: 'Portal', redirectUris: [PORTAL], clientType: 'confidential', firstParty: true });
    for (const user of [admin, other, plain]) {
      const { code, verifier } = await signInForCode(server, { clientId: app.clientId, redirectUri: PORTAL }, user, 'openid manage.integrations', new UserAgent(server.baseUrl));
      const response = await postToken(server.oauthUrl, { grant_type: 'authorization_code', code, redirect_uri: PORTAL, code_verifier: verifier }, { authorization: basic(app.clientId, app.clientSecret!) });
      tokens.set(user.sub, response.body.access_token as string);
    }
  });
  afterAll(() => server.stop());

  const settings = (init: { method?: string; body?: string | object; as?: string; type?: string } = {}) => fetch(`${server.baseUrl}/api/oauth2/tenant-settings`, {
    method: init.method ?? 'GET',
    headers: {
      ...(init.as === 'nobody' ? {} : { authorization: `Bearer ${tokens.get(init.as ?? 'admin')}` }),
      ...(init.body !== undefined ? { 'content-type': init.type ?? 'application/json' } : {}),
    },
    ...(init.body !== undefined ? { body: typeof init.body === 'string' ? init.body : JSON.stringify(init.body) } : {}),
  });
  const put = (body: string | object, as?: string) => settings({ method: 'PUT', body, ...(as ? { as } : {}) });
  const changes = async (tenant: string) => (await server.auth.audit.list({ tenant, type: 'tenant_settings.updated' })).events;

  it('answers the default to an admin: no choice of the tenant, what applies', async () => {
    const response = await settings();
    expect(response.status).toBe(200);
    expect(response.headers.get('cache-control')).toBe('no-store');
    expect(await response.json()).toEqual({ effective: { second_factor: 'required_for_permissions', passkey_only_sign_in: false, sso: 'optional' } });
  });

  it('only to the management API\'s callers: 401 without a token, 403 for a token without the management right', async () => {
    expect((await settings({ as: 'nobody' })).status).toBe(401);
    const plainAnswer = await settings({ as: 'plain' });
    expect(plainAnswer.status).toBe(403);
    expect(plainAnswer.headers.get('www-authenticate')).toContain('insufficient_scope');
    expect((await put({ second_factor: 'optional' }, 'plain')).status).toBe(403);
    expect((await settings({ method: 'DELETE' })).status).toBe(405);
  });

  it('PUT replaces the tenant\'s choices whole: stored, answered with what applies, audited with the fields changed; the same again changes nothing', async () => {
    const response = await put({ second_factor: 'required', passkey_only_sign_in: true });
    expect(response.status).toBe(200);
    expect(await response.json()).toEqual({ second_factor: 'required', passkey_only_sign_in: true, effective: { second_factor: 'required', passkey_only_sign_in: true, sso: 'optional' } });
    expect(await (await settings()).json()).toEqual({ second_factor: 'required', passkey_only_sign_in: true, effective: { second_factor: 'required', passkey_only_sign_in: true, sso: 'optional' } });
    const [event] = await changes('acme');
    expect(event).toMatchObject({
      type: 'tenant_settings.updated', tenant: 'acme', actor: { type: 'user', id: 'admin' }, target: { type: 'tenant', id: 'acme' },
      details: { fields: ['secondFactor', 'passkeyOnlySignIn'], secondFactor: 'required', passkeyOnlySignIn: true },
    });
    // A change of the tenant's setup: kept in the changes log (with the other changes, not the activity).
    expect(auditLogOf('tenant_settings.updated')).toBe('changes');
    expect((await put({ second_factor: 'required', passkey_only_sign_in: true })).status).toBe(200);
    expect(await changes('acme')).toHaveLength(1);

    // Fields left out: no choice any more.
    expect(await (await put({})).json()).toEqual({ effective: { second_factor: 'required_for_permissions', passkey_only_sign_in: false, sso: 'optional' } });
    expect((await changes('acme'))[0]).toMatchObject({ details: { fields: ['secondFactor', 'passkeyOnlySignIn'], secondFactor: null, passkeyOnlySignIn: null } });
  });

  it('each tenant its own: globex\'s admin neither sees nor changes acme\'s', async () => {
    expect((await put({ second_factor: 'required' })).status).toBe(200);
    expect(await (await settings({ as: 'other-admin' })).json()).toEqual({ effective: { second_factor: 'required', passkey_only_sign_in: false, sso: 'optional' } });
    expect((await put({ passkey_only_sign_in: true }, 'other-admin')).status).toBe(200);
    expect(await (await settings()).json()).toEqual({ second_factor: 'required', effective: { second_factor: 'required', passkey_only_sign_in: false, sso: 'optional' } });
    expect((await changes('globex')).every((event) => event.actor.id === 'other-admin')).toBe(true);
    expect((await put({})).status).toBe(200);
  });

  it('a tenant asks for more than its host, never for less; the host\'s false forbids passkey-only sign-in', async () => {
    // globex's host: required, passkey-only forbidden.
    const weaker = await put({ second_factor: 'optional', passkey_only_sign_in: true }, 'other-admin');
    expect(await weaker.json()).toEqual({ second_factor: 'optional', passkey_only_sign_in: true, effective: { second_factor: 'required', passkey_only_sign_in: false, sso: 'optional' } });
    // acme (host: nothing): optional does not loosen the default.
    expect(await (await put({ second_factor: 'optional' })).json()).toEqual({ second_factor: 'optional', effective: { second_factor: 'required_for_permissions', passkey_only_sign_in: false, sso: 'optional' } });
    expect((await put({})).status).toBe(200);
  });

  it('sso: the tenant may require its identity provider; required when the host or the tenant says so, audited', async () => {
    const response = await put({ sso: 'required' });
    expect(response.status).toBe(200);
    expect(await response.json()).toEqual({ sso: 'required', effective: { second_factor: 'required_for_permissions', passkey_only_sign_in: false, sso: 'required' } });
    expect((await changes('acme'))[0]).toMatchObject({ actor: { type: 'user', id: 'admin' }, details: { fields: ['sso'], sso: 'required' } });
    expect(await server.auth.connections.list('acme')).toEqual([]);
    // globex's host requires it: the tenant's optional does not undo that.
    hostPolicies.set('globex', { secondFactor: 'required', passkeyOnlySignIn: false, sso: 'required' });
    try {
      expect(await (await put({ sso: 'optional' }, 'other-admin')).json()).toEqual({ sso: 'optional', effective: { second_factor: 'required', passkey_only_sign_in: false, sso: 'required' } });
    } finally {
      hostPolicies.set('globex', { secondFactor: 'required', passkeyOnlySignIn: false });
      expect((await put({}, 'other-admin')).status).toBe(200);
    }
    expect(await (await put({})).json()).toEqual({ effective: { second_factor: 'required_for_permissions', passkey_only_sign_in: false, sso: 'optional' } });
  });

  it.each<[string, string | object, string, number, string | undefined]>([
    ['an unknown SSO rule', { sso: 'always' }, 'application/json', 400, 'sso'],
    ['an SSO rule of another type', { sso: true }, 'application/json', 400, 'sso'],
    ['an unknown rule', { second_factor: 'sometimes' }, 'application/json', 400, 'second_factor'],
    ['a rule of another type', { second_factor: 2 }, 'application/json', 400, 'second_factor'],
    ['passkey-only not a boolean', { passkey_only_sign_in: 'yes' }, 'application/json', 400, 'passkey_only_sign_in'],
    ['null', { second_factor: null }, 'application/json', 400, 'second_factor'],
    ['an unknown field', { second_factor: 'required', mfa: true }, 'application/json', 400, 'mfa'],
    ['an array', '[]', 'application/json', 400, undefined],
    ['not JSON', '{"second_factor":', 'application/json', 400, undefined],
    ['a form', 'second_factor=required', 'application/x-www-form-urlencoded', 415, undefined],
    ['too large', { second_factor: 'required', pad: 'x'.repeat(2_000_000) }, 'application/json', 413, undefined],
  ])('refuses %s with a clear error, and stores nothing', async (_name, body, type, status, field) => {
    const before = await changes('acme');
    const response = await settings({ method: 'PUT', body, type });
    expect(response.status).toBe(status);
    const answer = await response.json() as { error: string; field?: string };
    expect(answer.error).toEqual(expect.any(String));
    if (field) expect(answer).toMatchObject({ error: 'invalid_request', field });
    expect(await (await settings()).json()).toEqual({ effective: { second_factor: 'required_for_permissions', passkey_only_sign_in: false, sso: 'optional' } });
    expect(await changes('acme')).toHaveLength(before.length);
  });
});
