import Koa from 'koa';
import mount from 'koa-mount';
import { createTokenVerifier } from '../../src/index.js';
import { demoScimApi } from '../../examples/demo-scim.js';
import { startHost, type Host } from '../support/host.js';
import { basic, postToken } from '../support/server.js';

/** The demo user-provisioning API: each tenant reads only its own users (the kit's tenant guard). */
describe('demo user-provisioning API (examples/demo-scim.ts)', () => {
  let host: Host;

  beforeAll(async () => {
    host = await startHost((auth) => {
      const app = new Koa();
      app.use(demoScimApi(createTokenVerifier({ issuer: auth.issuer, audience: auth.audience, jwks: new URL(`${auth.issuer}/jwks`) })));
      app.use(mount(auth.app));
      return app.callback();
    }, { pathPrefix: '' });
  });
  afterAll(() => host.stop());

  async function tokenOf(tenant: string, constraints?: Record<string, string[]>): Promise<string> {
    const client = await host.auth.clientConfigurations.create({
      tenant, name: 'Sync', category: 'hr', resources: { scim: { scopes: ['scim.read'], ...(constraints ? { constraints } : {}) } },
    });
    const answer = await postToken(host.auth.issuer, 'grant_type=client_credentials', { authorization: basic(client.clientId, client.clientSecret) });
    return answer.body.access_token as string;
  }

  const users = async (tenant: string, bearer: string) => {
    const response = await fetch(`${host.baseUrl}/tenants/${tenant}/scim/v2/Users`, { headers: { authorization: `Bearer ${bearer}` } });
    return { status: response.status, body: (await response.json()) as { Resources?: Array<{ userName: string }>; error?: string } };
  };

  it("serves a tenant's token its own users, filtered by its constraints", async () => {
    const acme = await users('acme', await tokenOf('acme'));
    expect(acme.status).toBe(200);
    expect(acme.body.Resources!.map((user) => user.userName)).toEqual(['wile', 'road']);
    const engineering = await users('demo', await tokenOf('demo', { group: ['engineering'] }));
    expect(engineering.body.Resources!.map((user) => user.userName)).toEqual(['grace', 'linus']);
  });

  it("refuses another tenant's users to a token of acme (403), whatever the constraints", async () => {
    const acmeToken = await tokenOf('acme');
    expect(await users('demo', acmeToken)).toEqual({ status: 403, body: { error: 'insufficient_scope', error_description: 'the access token belongs to another tenant' } });
    expect((await users('globex', acmeToken)).status).toBe(403);
  });
});
