/**
 * Apps belong to a tenant: an app a tenant registered (management API, portal, or the library with
 * `tenant`) can be authorized by that tenant's users only. Another tenant's user is sent back to
 * the app with access_denied, without a consent page, and nothing is recorded. The operator's apps
 * (no tenant) and a tenant app the operator opened to all serve every tenant. The consent page
 * names who registered the app.
 */
import { testAccounts } from '../support/accounts.js';
import { startServer, type RunningServer } from '../support/server.js';
import { STORE_KINDS, useStore } from '../support/stores.js';
import { UserAgent } from '../support/user-agent.js';
import { authorize, exchangeCode, expectOAuthError, pkcePair, refresh, WEB } from './helpers.js';

const acmeUser = { sub: 'ann', password: 'ann-pw', tenant: 'acme' };
const globexUser = { sub: 'gus', password: 'gus-pw', tenant: 'globex' };
const NAMES: Record<string, string> = { acme: 'Acme Corporation' };

describe.each(STORE_KINDS)('adversarial: apps belong to a tenant (%s store)', (kind) => {
  const store = useStore(kind);
  let server: RunningServer;

  beforeAll(async () => {
    server = await startServer({
      store: store.option(),
      accounts: testAccounts([acmeUser, globexUser]),
      tenantDisplayName: async (tenant) => NAMES[tenant],
    });
  });
  afterAll(() => server.stop());

  async function confidential(input: { tenant?: string; openToAllTenants?: boolean }) {
    const app = await server.auth.appRegistrations.create({ name: 'Talent Platform (official)', redirectUris: [WEB], clientType: 'confidential', ...input });
    return { clientId: app.clientId, redirectUri: WEB, secret: app.clientSecret! };
  }

  /** authorize → login (→ consent page, returned unanswered) for `user`. */
  async function start(app: { clientId: string }, user: { sub: string; password: string }) {
    const agent = new UserAgent(server.baseUrl);
    const { challenge, verifier } = pkcePair();
    const query = new URLSearchParams({
      response_type: 'code', client_id: app.clientId, redirect_uri: WEB, scope: 'openid scim.read', state: 'st',
      code_challenge: challenge, code_challenge_method: 'S256',
    });
    const login = await agent.request(`${server.oauthUrl}/authorize?${query}`);
    const after = await agent.submit(login, { username: user.sub, password: user.password });
    return { after, agent, verifier };
  }

  it("another tenant's user: back to the app with access_denied, no consent page, nothing recorded", async () => {
    const app = await confidential({ tenant: 'acme' });
    const { after } = await start(app, globexUser);
    expect(after.html).not.toContain('value="allow"');
    const back = new URL(after.location!);
    expect(`${back.origin}${back.pathname}`).toBe(WEB);
    expect(back.searchParams.get('error')).toBe('access_denied');
    expect(back.searchParams.get('error_description')).toBe('this application belongs to another organization');
    expect(back.searchParams.get('state')).toBe('st');
    expect(back.searchParams.get('code')).toBeNull();
    expect(await server.auth.consents.list({ tenant: 'globex', sub: 'gus' })).toEqual([]);
  });

  it('its own tenant\'s user: a consent page that names the tenant, then a code', async () => {
    const app = await confidential({ tenant: 'acme' });
    const { after, agent, verifier } = await start(app, acmeUser);
    expect(after.html).toContain('value="allow"');
    expect(after.html).toContain('Registered by Acme Corporation');
    const allowed = await agent.submit(after, { decision: 'allow' });
    const code = new URL(allowed.location!).searchParams.get('code')!;
    expect((await exchangeCode(server, app, code, verifier)).status).toBe(200);
  });

  it("the operator's app (no tenant) serves every tenant and is registered by the platform", async () => {
    const app = await confidential({});
    for (const user of [acmeUser, globexUser]) {
      const { after } = await start(app, user);
      expect(after.html).toContain('Registered by the platform');
    }
  });

  it('a tenant app the operator opened to all tenants: another tenant may allow it, and sees who registered it', async () => {
    const app = await confidential({ tenant: 'acme', openToAllTenants: true });
    const { after, agent, verifier } = await start(app, globexUser);
    expect(after.html).toContain('Registered by Acme Corporation');
    const allowed = await agent.submit(after, { decision: 'allow' });
    const tokens = await exchangeCode(server, app, new URL(allowed.location!).searchParams.get('code')!, verifier);
    expect(tokens.status).toBe(200);
    // Closed again: the other tenant's refresh is refused at once (the token-time check).
    await server.auth.appRegistrations.update(app.clientId, { openToAllTenants: false });
    expectOAuthError(server, await refresh(server, app, tokens.body.refresh_token as string), 400, 'invalid_grant');
  });

  it('a tenant without a display name is named by its ID', async () => {
    const app = await confidential({ tenant: 'globex' });
    const { after } = await start(app, globexUser);
    expect(after.html).toContain('Registered by globex');
  });

  it('the management API cannot open an app to all tenants', async () => {
    // Operator only: the wire refuses the field (tested with the management API's own suite too).
    const app = await confidential({ tenant: 'acme' });
    expect((await server.auth.appRegistrations.get(app.clientId))?.openToAllTenants).toBe(false);
    const { back } = await authorize(server, {
      response_type: 'code', client_id: app.clientId, redirect_uri: WEB, scope: 'openid', state: 's',
      code_challenge: pkcePair().challenge, code_challenge_method: 'S256',
    }, globexUser);
    expect(back?.searchParams.get('error')).toBe('access_denied');
  });
});
