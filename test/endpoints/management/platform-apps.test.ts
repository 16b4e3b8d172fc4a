/**
 * `GET /api/oauth2/platform-apps`: the apps a tenant's users may authorize besides the tenant's own
 * (the operator's, and other tenants' apps the operator opened to all), less those the tenant's
 * policy does not allow: exactly what /authorize lets them authorize, read-only, never a secret.
 */
import { testAccounts } from '../../support/accounts.js';
import { basic, postToken, startServer, type RunningServer } from '../../support/server.js';
import { pkcePair, UserAgent } from '../../support/user-agent.js';
import { signInForCode } from '../../support/sign-in.js';
import { passSecondFactor } from '../../support/second-factor.js';

const CB = 'https://apps.example/cb';
const admin = { sub: 'admin', password: 'admin-pw', tenant: 'acme', permissions: ['integration_setup'] };
const globexAdmin = { sub: 'gadmin', password: 'gadmin-pw', tenant: 'globex', permissions: ['integration_setup'] };
const plain = { sub: 'plain', password: 'plain-pw', tenant: 'acme' };

describe('the apps that serve a tenant (management API)', () => {
  let server: RunningServer;
  const ids: Record<string, string> = {};
  const tokens = new Map<string, string>();

  beforeAll(async () => {
    server = await startServer({
      accounts: testAccounts([admin, globexAdmin, plain]),
      tenantPolicy: (tenant) => (tenant === 'globex' ? { allowedApps: [ids.payroll!, ids.console!] } : undefined),
    });
    const create = async (name: string, input: Record<string, unknown>) => {
      const app = await server.auth.appRegistrations.create({ name, redirectUris: [CB], clientType: 'confidential', ...input });
      ids[name] = app.clientId;
    };
    await create('payroll', { description: 'Payroll of the platform' });
    await create('timesheets', {});
    await create('console', { firstParty: true });
    await create('acme-own', { tenant: 'acme' });
    await create('globex-own', { tenant: 'globex' });
    await create('globex-open', { tenant: 'globex', openToAllTenants: true });
    for (const user of [admin, globexAdmin, plain]) {
      const { code, verifier } = await signInForCode(server, { clientId: ids.console!, redirectUri: CB }, user, 'openid manage.integrations');
      const app = (await server.auth.appRegistrations.get(ids.console!))!;
      const secret = (await server.auth.appRegistrations.rotateSecret(app.clientId)).clientSecret;
      const response = await postToken(server.oauthUrl, { grant_type: 'authorization_code', code, redirect_uri: CB, code_verifier: verifier }, { authorization: basic(app.clientId, secret) });
      tokens.set(user.sub, response.body.access_token as string);
    }
  });
  afterAll(() => server.stop());

  const list = (as: string, method = 'GET') => fetch(`${server.baseUrl}/api/oauth2/platform-apps`, { method, headers: as ? { authorization: `Bearer ${tokens.get(as)}` } : {} });
  const names = async (as: string) => ((await (await list(as)).json()) as { platform_apps: Array<{ client_id: string }> }).platform_apps
    .map((app) => Object.entries(ids).find(([, id]) => id === app.client_id)?.[0]);

  it("lists the operator's apps and those opened to all tenants, not the tenant's own nor another tenant's; no secret", async () => {
    const response = await list('admin');
    expect(response.status).toBe(200);
    expect(response.headers.get('cache-control')).toBe('no-store');
    const body = (await response.json()) as { platform_apps: Array<Record<string, unknown>> };
    expect(body.platform_apps.map((app) => app.name).sort()).toEqual(['console', 'globex-open', 'payroll', 'timesheets']);
    expect(body.platform_apps.find((app) => app.name === 'payroll')).toEqual({
      client_id: ids.payroll, name: 'payroll', description: 'Payroll of the platform', client_type: 'confidential', first_party: false, registered_by: 'platform', redirect_uris: [CB],
    });
    expect(body.platform_apps.find((app) => app.name === 'globex-open')).toMatchObject({ registered_by: 'another_tenant' });
    expect(JSON.stringify(body)).not.toMatch(/secret|"tenant"|globex"/);
  });

  it("follows the tenant's policy: only the apps it allows (globex's leaves timesheets out)", async () => {
    expect((await names('gadmin')).sort()).toEqual(['console', 'payroll']);
  });

  it('is what /authorize lets the tenant\'s users authorize', async () => {
    const outcome = async (user: { sub: string; password: string }, name: string) => {
      const agent = new UserAgent(server.baseUrl);
      const query = new URLSearchParams({ response_type: 'code', client_id: ids[name]!, redirect_uri: CB, scope: 'openid', state: 's', code_challenge: pkcePair().challenge, code_challenge_method: 'S256' });
      let step = await agent.request(`${server.oauthUrl}/authorize?${query}`);
      step = await agent.submit(step, { username: user.sub, password: user.password });
      // An admin gives her second factor (test/support/second-factor.ts).
      step = await passSecondFactor(agent, step, server.baseUrl, user.sub);
      // The consent page, or (consented before) straight back with a code.
      if (step.html.includes('value="allow"')) return 'may';
      const back = new URL(step.location!).searchParams;
      if (back.get('code')) return 'may';
      return back.get('error') === 'access_denied' ? 'refused' : `unexpected ${step.status}`;
    };
    for (const [user, as] of [[plain, 'admin'], [globexAdmin, 'gadmin']] as const) {
      const listed = new Set(await names(as));
      for (const name of Object.keys(ids).filter((app) => !app.endsWith('-own') || !app.startsWith(user.tenant))) {
        expect([user.sub, name, await outcome(user, name)]).toEqual([user.sub, name, listed.has(name) ? 'may' : 'refused']);
      }
    }
  });

  it('only for the same callers as the rest of the API, read-only', async () => {
    expect((await list('')).status).toBe(401);
    expect((await list('plain')).status).toBe(403);
    const post = await list('admin', 'POST');
    expect(post.status).toBe(405);
    expect(post.headers.get('allow')).toBe('GET');
  });
});
