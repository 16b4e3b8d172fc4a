import { testAccounts } from '../support/accounts.js';
import { basic, postToken, startServer, type RunningServer } from '../support/server.js';
import { signInForCode } from '../support/sign-in.js';
import { UserAgent } from '../support/user-agent.js';

const PORTAL = 'https://portal.example/cb';
const admin = { sub: 'admin', password: 'admin-pw', tenant: 'acme', permissions: ['integration_setup'] };

/** Every request body has a limit, an option each; over it the answer is 413 and nothing is stored. */
describe('request body limits', () => {
  let server: RunningServer;
  let adminToken: string;

  beforeAll(async () => {
    server = await startServer({
      accounts: testAccounts([admin]),
      limits: { tokenRequestBytes: 2048, apiRequestBytes: 4096, formRequestBytes: 1024 },
    });
    const app = await server.auth.appRegistrations.create({ name: 'Portal', redirectUris: [PORTAL], clientType: 'confidential', firstParty: true });
    const { code, verifier } = await signInForCode(server, { clientId: app.clientId, redirectUri: PORTAL }, admin, 'openid manage.integrations');
    const response = await postToken(
      server.oauthUrl,
      { grant_type: 'authorization_code', code, redirect_uri: PORTAL, code_verifier: verifier },
      { authorization: basic(app.clientId, app.clientSecret!) },
    );
    adminToken = response.body.access_token as string;
  });
  afterAll(() => server.stop());

  it('token endpoint: limits.tokenRequestBytes', async () => {
    const client = await server.auth.clientConfigurations.create({ tenant: 'acme', name: 'n', category: 'c', resources: { scim: { scopes: ['scim.read'] } } });
    const auth = { authorization: basic(client.clientId, client.clientSecret) };
    const base = 'grant_type=client_credentials&x=';
    const fits = await postToken(server.oauthUrl, base + 'a'.repeat(2048 - base.length), auth);
    expect(fits.status).toBe(200);
    const over = await postToken(server.oauthUrl, base + 'a'.repeat(2049 - base.length), auth);
    expect(over.status).toBe(413);
    expect(over.body).toEqual({ error: 'invalid_request', error_description: 'request body exceeds 2048 bytes' });
  });

  it('management API: limits.apiRequestBytes', async () => {
    const post = (description: string) => fetch(`${server.baseUrl}/api/oauth2/client-configurations`, {
      method: 'POST',
      headers: { authorization: `Bearer ${adminToken}`, 'content-type': 'application/json' },
      body: JSON.stringify({ name: 'Big', category: 'c', description, resources: { scim: { scopes: ['scim.read'] } } }),
    });
    const before = await server.auth.clientConfigurations.list('acme');
    const over = await post('d'.repeat(4096));
    expect(over.status).toBe(413);
    expect(await over.json()).toMatchObject({ error: 'invalid_request' });
    expect(await server.auth.clientConfigurations.list('acme')).toHaveLength(before.length);
    expect((await post('small')).status).toBe(201);
  });

  it('management API: the media type is case-insensitive (RFC 9110 §8.3.1)', async () => {
    const response = await fetch(`${server.baseUrl}/api/oauth2/client-configurations`, {
      method: 'POST',
      headers: { authorization: `Bearer ${adminToken}`, 'content-type': 'Application/JSON; charset=UTF-8' },
      body: JSON.stringify({ name: 'Cased', category: 'c', resources: { scim: { scopes: ['scim.read'] } } }),
    });
    expect(response.status).toBe(201);
  });

  it('sign-in form: limits.formRequestBytes', async () => {
    const agent = new UserAgent(server.baseUrl);
    const { clientId } = await server.auth.appRegistrations.create({ name: 'A', redirectUris: [PORTAL], clientType: 'confidential' });
    const query = new URLSearchParams({
      response_type: 'code', client_id: clientId, redirect_uri: PORTAL, scope: 'openid', state: 's', code_challenge: 'E9Melhoa2OwvFrEMTJguCHaoeK1t8URWbuGJSstw-cM', code_challenge_method: 'S256',
    });
    const login = await agent.request(`${server.baseUrl}/oauth2/authorize?${query}`);
    expect([login.status, login.location, login.html]).toEqual([200, undefined, expect.stringContaining('name="password"')]);
    const tooBig = await agent.submit(login, { username: admin.sub, password: 'p'.repeat(1100) });
    expect(tooBig.status).toBe(413);
    const fine = await agent.submit(login, { username: admin.sub, password: admin.password });
    expect(fine.status).toBeLessThan(400);
  });
});
