/**
 * A user's second factors in the management API: `GET /api/oauth2/users/{sub}/factors` (what she
 * holds, never a secret) and `POST .../factors/reset-request` (a reset she completes at her next
 * sign-in, audited with the admin as actor). Only users of the caller's tenant: another tenant's
 * user is answered exactly like one that exists nowhere, and nothing of hers changes. Over real
 * sockets, on both stores.
 */
import { testAccounts } from '../../support/accounts.js';
import { basic, postToken, startServer, type RunningServer } from '../../support/server.js';
import { signInForCode } from '../../support/sign-in.js';
import { STORE_KINDS, useStore } from '../../support/stores.js';
import { UserAgent } from '../../support/user-agent.js';
import { auditEventsOnceWritten } from '../../support/audit.js';

const CB = 'https://portal.example/cb';
const FACTOR_KEY = 'factor-key-of-the-server-0123456789abcdef';
const admin = { sub: 'ada', password: 'ada-pw', tenant: 'acme', permissions: ['integration_setup'] };
const plain = { sub: 'alice', password: 'alice-pw', tenant: 'acme' };
const fresh = { sub: 'fred', password: 'fred-pw', tenant: 'acme' };
const bob = { sub: 'bob', password: 'bob-pw', tenant: 'globex' };
const globexAdmin = { sub: 'gil', password: 'gil-pw', tenant: 'globex', permissions: ['integration_setup'] };
const USERS = [admin, plain, fresh, bob, globexAdmin];

describe.each(STORE_KINDS)("a user's factors in the management API (%s store)", (kind) => {
  const store = useStore(kind);
  let server: RunningServer;
  const tokens = new Map<string, string>();
  /** What enrolment handed out: none of it may be in an answer or an event. */
  const secrets: string[] = [];

  beforeAll(async () => {
    server = await startServer({
      store: store.option(),
      accounts: testAccounts(USERS),
      factorKeys: [FACTOR_KEY],
      proxy: true,
      // The admins here hold no second factor: their management tokens come from the password alone.
      tenantPolicy: () => ({ secondFactor: 'optional' }),
    });
    const portal = await server.auth.appRegistrations.create({ name: 'Admin UI', redirectUris: [CB], clientType: 'confidential', firstParty: true });
    for (const user of [admin, plain, globexAdmin]) {
      const { code, verifier } = await signInForCode(server, { clientId: portal.clientId, redirectUri: CB }, user, 'openid manage.integrations', new UserAgent(server.baseUrl));
      const response = await postToken(server.oauthUrl, { grant_type: 'authorization_code', code, redirect_uri: CB, code_verifier: verifier }, { authorization: basic(portal.clientId, portal.clientSecret!) });
      tokens.set(user.sub, response.body.access_token as string);
    }
    for (const user of [plain, bob]) {
      const enrolled = await server.auth.factors.enrollTotp({ tenant: user.tenant, sub: user.sub });
      secrets.push(enrolled.secret, enrolled.otpauthUri);
    }
  });
  afterAll(() => server.stop());

  const url = (sub: string, reset = false) => `${server.baseUrl}/api/oauth2/users/${encodeURIComponent(sub)}/factors${reset ? '/reset-request' : ''}`;
  const call = (as: string, sub: string, reset = false, method = reset ? 'POST' : 'GET') =>
    fetch(url(sub, reset), { method, headers: { ...(as ? { authorization: `Bearer ${tokens.get(as)}` } : {}), 'x-forwarded-for': '192.0.2.44' } });
  const events = async (tenant: string, type: 'factor.reset' | 'management.denied') => auditEventsOnceWritten(server.auth.audit, { tenant, type: type as never });

  it("lists a user of the caller's tenant: the contract's entries in wire names, never a secret", async () => {
    const response = await call('ada', 'alice');
    expect(response.status).toBe(200);
    expect(response.headers.get('cache-control')).toBe('no-store');
    const text = await response.text();
    const [app] = await server.auth.factors.list({ tenant: 'acme', sub: 'alice' });
    expect(JSON.parse(text)).toEqual({ factors: [{ id: app!.id, type: 'totp', created_at: app!.createdAt }], reset_requested: false });
    for (const secret of secrets) expect(text).not.toContain(secret);
    // A user of the tenant who holds nothing: an empty list.
    expect(await (await call('ada', 'fred')).json()).toEqual({ factors: [], reset_requested: false });
  });

  it("answers another tenant's user exactly like nobody (404), recorded as a probe in the caller's tenant", async () => {
    const [other, nobody] = await Promise.all([call('ada', 'bob'), call('ada', 'nobody')]);
    expect([other.status, nobody.status]).toEqual([404, 404]);
    type Refusal = { error: string; error_description: string };
    const otherBody = (await other.json()) as Refusal;
    const nobodyBody = (await nobody.json()) as Refusal;
    expect(otherBody.error).toBe('not_found');
    expect(otherBody.error_description.replace('bob', 'X')).toBe(nobodyBody.error_description.replace('nobody', 'X'));
    const probes = await events('acme', 'management.denied');
    expect(probes[0]).toMatchObject({ actor: { type: 'user', id: 'ada' }, target: { type: 'management_api', id: 'userFactors' }, details: { status: 404, error: 'not_found' } });
    // Compared by field: event IDs and digests are random hex or base64url and may spell 'ada'.
    expect((await events('globex', 'management.denied')).filter((event) => JSON.stringify(event.actor).includes('"ada"'))).toEqual([]);
  });

  it('a reset asked for: her factors stay until her next sign-in, the answer and the list say so, audited with the admin as actor', async () => {
    const before = await server.auth.factors.list({ tenant: 'acme', sub: 'alice' });
    const asked = await call('ada', 'alice', true);
    expect(asked.status).toBe(200);
    expect(asked.headers.get('cache-control')).toBe('no-store');
    expect(await asked.json()).toEqual({ reset_requested: true });
    expect(await server.auth.factors.list({ tenant: 'acme', sub: 'alice' })).toEqual(before);
    expect(await (await call('ada', 'alice')).json()).toMatchObject({ reset_requested: true });
    const [event] = await events('acme', 'factor.reset');
    expect(event).toMatchObject({
      tenant: 'acme', actor: { type: 'user', id: 'ada' }, target: { type: 'user', id: 'alice' }, address: '192.0.2.44', details: { requested: true },
    });
    for (const secret of secrets) expect(JSON.stringify(event)).not.toContain(secret);
  });

  it('nothing to reset for a user who holds nothing: reset_requested false, nothing recorded', async () => {
    const count = (await events('acme', 'factor.reset')).length;
    const asked = await call('ada', 'fred', true);
    expect(asked.status).toBe(200);
    expect(await asked.json()).toEqual({ reset_requested: false });
    expect(await events('acme', 'factor.reset')).toHaveLength(count);
  });

  it("never resets another tenant's user: 404 like nobody, her factors and state untouched; her own admin may", async () => {
    const refused = await call('ada', 'bob', true);
    expect(refused.status).toBe(404);
    expect(await refused.json()).toMatchObject({ error: 'not_found' });
    expect(await events('globex', 'factor.reset')).toEqual([]);
    expect(await (await call('gil', 'bob')).json()).toMatchObject({ factors: [{ type: 'totp' }], reset_requested: false });
    expect(await (await call('gil', 'bob', true)).json()).toEqual({ reset_requested: true });
    expect(await events('globex', 'factor.reset')).toEqual([expect.objectContaining({ actor: { type: 'user', id: 'gil' }, target: { type: 'user', id: 'bob' } })]);
    // And globex's admin cannot see acme's users either.
    expect((await call('gil', 'alice')).status).toBe(404);
  });

  it('refuses what is not for it: 401 without a token, 403 without the permission, 400 naming sub, 405 with Allow', async () => {
    expect((await call('', 'alice')).status).toBe(401);
    expect((await call('', 'alice', true)).status).toBe(401);
    const forbidden = await call('alice', 'alice', true);
    expect(forbidden.status).toBe(403);
    expect(await forbidden.json()).toMatchObject({ error: 'insufficient_scope' });
    const long = await call('ada', 'x'.repeat(256));
    expect(long.status).toBe(400);
    expect(await long.json()).toMatchObject({ error: 'invalid_request', field: 'sub' });
    const wrongMethod = await call('ada', 'alice', true, 'GET');
    expect(wrongMethod.status).toBe(405);
    expect(wrongMethod.headers.get('allow')).toBe('POST');
    const deleting = await call('ada', 'alice', false, 'DELETE');
    expect(deleting.status).toBe(405);
    expect(deleting.headers.get('allow')).toBe('GET');
  });
});
