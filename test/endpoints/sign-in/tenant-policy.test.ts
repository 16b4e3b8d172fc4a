import { decodeJwt } from 'jose';
import type { TenantPolicy } from '../../../src/index.js';
import { testAccounts } from '../../support/accounts.js';
import { basic, postToken, startServer, type RunningServer } from '../../support/server.js';
import { signInForCode } from '../../support/sign-in.js';
import { pkcePair, UserAgent } from '../../support/user-agent.js';

const A = 'https://a.example/cb';
const B = 'https://b.example/cb';

describe('per-tenant policies', () => {
  let server: RunningServer;
  let appA: { clientId: string; redirectUri: string; secret: string };
  let appB: { clientId: string; redirectUri: string; secret: string };
  const policies = new Map<string, TenantPolicy>();
  const amy = { sub: 'amy', password: 'amy-pw', tenant: 'acme' };
  const gus = { sub: 'gus', password: 'gus-pw', tenant: 'globex' };

  beforeAll(async () => {
    server = await startServer({
      accounts: testAccounts([amy, gus]),
      tenantPolicy: async (tenant) => policies.get(tenant),
    });
    const a = await server.auth.appRegistrations.create({ name: 'A', redirectUris: [A], clientType: 'confidential' });
    const b = await server.auth.appRegistrations.create({ name: 'B', redirectUris: [B], clientType: 'confidential' });
    appA = { clientId: a.clientId, redirectUri: A, secret: a.clientSecret! };
    appB = { clientId: b.clientId, redirectUri: B, secret: b.clientSecret! };
    policies.set('acme', { allowedApps: [appA.clientId], allowedScopes: ['scim.read'], accessTokenTtl: 900 });
  });
  afterAll(async () => {
    await server.stop();
  });

  const exchange = async (app: typeof appA, user: { sub: string; password: string }, scope: string) => {
    const { code, verifier } = await signInForCode(server, app, user, scope);
    return postToken(server.oauthUrl, { grant_type: 'authorization_code', code, redirect_uri: app.redirectUri, code_verifier: verifier }, { authorization: basic(app.clientId, app.secret) });
  };

  it('narrows the scopes and sets the lifetime of the tenant\'s named-user tokens', async () => {
    const tokens = await exchange(appA, amy, 'openid scim.read user.read');
    expect(tokens.status).toBe(200);
    expect(tokens.body.expires_in).toBe(900);
    expect(decodeJwt(tokens.body.access_token as string).scope).toBe('openid scim.read');
    const other = await exchange(appB, gus, 'openid scim.read user.read');
    expect(other.body.expires_in).toBe(300);
    expect(decodeJwt(other.body.access_token as string).scope).toBe('openid scim.read user.read');
  });

  it("keeps the tenant's lifetime on refreshed tokens", async () => {
    const tokens = await exchange(appA, amy, 'openid scim.read');
    const refreshed = await postToken(
      server.oauthUrl,
      { grant_type: 'refresh_token', refresh_token: tokens.body.refresh_token as string },
      { authorization: basic(appA.clientId, appA.secret) },
    );
    expect(refreshed.status).toBe(200);
    expect(refreshed.body.expires_in).toBe(900);
    const { exp, iat } = decodeJwt(refreshed.body.access_token as string);
    expect(exp! - iat!).toBe(900);
  });

  it('refuses an app the tenant does not allow: access_denied back to the app', async () => {
    const agent = new UserAgent(server.baseUrl);
    const query = new URLSearchParams({
      response_type: 'code', client_id: appB.clientId, redirect_uri: B, scope: 'openid', state: 'st',
      code_challenge: pkcePair().challenge, code_challenge_method: 'S256',
    });
    const login = await agent.request(`${server.oauthUrl}/authorize?${query}`);
    const step = await agent.submit(login, { username: 'amy', password: 'amy-pw' });
    const back = new URL(step.location!);
    expect(back.searchParams.get('error')).toBe('access_denied');
    expect(back.searchParams.get('state')).toBe('st');
  });

  it('applies at refresh time: an app withdrawn from the tenant stops refreshing', async () => {
    const tokens = await exchange(appA, amy, 'openid scim.read');
    const auth = { authorization: basic(appA.clientId, appA.secret) };
    policies.set('acme', { allowedApps: [], allowedScopes: ['scim.read'] });
    try {
      const refresh = await postToken(server.oauthUrl, { grant_type: 'refresh_token', refresh_token: tokens.body.refresh_token as string }, auth);
      expect(refresh.body.error).toBe('invalid_grant');
    } finally {
      policies.set('acme', { allowedApps: [appA.clientId], allowedScopes: ['scim.read'], accessTokenTtl: 900 });
    }
  });

  it('narrows what a machine client of the tenant may get', async () => {
    const { clientId, clientSecret } = await server.auth.clientConfigurations.create({
      tenant: 'acme', name: 'M', category: 'c',
      resources: { scim: { scopes: ['scim.read', 'scim.write'] }, users: { scopes: ['user.read'] } },
    });
    const auth = { authorization: basic(clientId, clientSecret) };
    const issued = await postToken(server.oauthUrl, 'grant_type=client_credentials', auth);
    expect(issued.body.scope).toBe('scim.read');
    // The tenant's lifetime is for named users: a machine token lives its hour (policies/lifetimes.ts).
    expect(issued.body.expires_in).toBe(3600);
    const { exp, iat } = decodeJwt(issued.body.access_token as string);
    expect(exp! - iat!).toBe(3600);
    expect((await postToken(server.oauthUrl, 'grant_type=client_credentials&scope=user.read', auth)).body.error).toBe('invalid_scope');
  });
});
