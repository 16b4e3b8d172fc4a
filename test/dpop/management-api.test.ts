import { testAccounts } from '../support/accounts.js';
import { callManagementApi, managementToken } from '../support/management.js';
import { basic, postToken, startServer, type RunningServer } from '../support/server.js';
import { STORE_KINDS, useStore } from '../support/stores.js';

const PORTAL = 'https://portal.example/cb';

/** The `dpop` field of client configurations and app registrations in the management API. */
describe.each(STORE_KINDS)('management API: dpop (%s store)', (kind) => {
  const store = useStore(kind);
  let server: RunningServer;
  let token: string;

  beforeAll(async () => {
    const admin = { sub: 'admin', password: 'admin-pw', tenant: 'acme', permissions: ['integration_setup'] };
    server = await startServer({ store: store.option(), accounts: testAccounts([admin]) });
    token = await managementToken(server, admin, PORTAL);
  });
  afterAll(() => server.stop());

  const api = (path: string, method = 'GET', body?: unknown) => callManagementApi(server, token, path, method, body);

  it('a client configuration with dpop required: shown, changed, and enforced at the token endpoint', async () => {
    const created = await api('client-configurations', 'POST', { name: 'Payroll', category: 'payroll', resources: { scim: { scopes: ['scim.read'] } }, dpop: 'required' });
    expect(created.status).toBe(201);
    expect(created.body.dpop).toBe('required');
    const clientId = created.body.client_id as string;
    const refused = await postToken(server.oauthUrl, 'grant_type=client_credentials', { authorization: basic(clientId, created.body.client_secret as string) });
    expect(refused.body.error).toBe('invalid_grant');
    const patched = await api(`client-configurations/${clientId}`, 'PATCH', { dpop: 'optional' });
    expect(patched.body.dpop).toBe('optional');
    const allowed = await postToken(server.oauthUrl, 'grant_type=client_credentials', { authorization: basic(clientId, created.body.client_secret as string) });
    expect(allowed.status).toBe(200);
    const plain = await api('client-configurations', 'POST', { name: 'Plain', category: 'payroll', resources: { scim: { scopes: ['scim.read'] } } });
    expect(plain.body).not.toHaveProperty('dpop');
  });

  it('an app registration with dpop required; a value other than required or optional is 400 naming the field', async () => {
    const created = await api('app-registrations', 'POST', { name: 'Web', redirect_uris: ['https://app.example.com/cb'], client_type: 'confidential', dpop: 'required' });
    expect(created.status).toBe(201);
    expect(created.body.dpop).toBe('required');
    const read = await api(`app-registrations/${created.body.client_id as string}`);
    expect(read.body.dpop).toBe('required');
    const bodies: Array<[string, Record<string, unknown>]> = [
      ['client-configurations', { name: 'Bad', category: 'payroll', resources: { scim: { scopes: ['scim.read'] } }, dpop: 'always' }],
      ['app-registrations', { name: 'Bad', redirect_uris: ['https://app.example.com/cb'], client_type: 'confidential', dpop: 'always' }],
    ];
    for (const [path, body] of bodies) {
      const bad = await api(path, 'POST', body);
      expect(bad.status).toBe(400);
      expect(bad.body).toMatchObject({ field: 'dpop' });
    }
  });
});
