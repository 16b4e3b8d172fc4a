import { JWT_BEARER_ASSERTION } from '../../../policies/client-authentication.js';
import { testAccounts } from '../../support/accounts.js';
import { clientAssertion, clientKeyPair, type ClientKeyPair } from '../../support/keys.js';
import { callManagementApi, managementToken } from '../../support/management.js';
import { basic, postToken, startServer, type RunningServer } from '../../support/server.js';
import { STORE_KINDS, useStore } from '../../support/stores.js';

const PORTAL = 'https://portal.example/cb';
const RESOURCES = { scim: { scopes: ['scim.read'] } };

/**
 * CLIENT AUTHENTICATION IN THE MANAGEMENT API (src/http/wire.ts): `token_endpoint_auth_method`,
 * `jwks` and `jwks_uri` on client configurations and app registrations, over HTTP on both stores:
 * what is shown (the method, the public keys or the URL, never a secret of a private_key_jwt
 * client), what is refused (private members, both or neither of the keys, a tenant's loopback
 * URL, keys for a public app), the secret route for a client without a secret, the switch between
 * the methods (secret dropped, or a new one shown once) and its audit events, and a key rotation
 * without downtime, checked at the token endpoint.
 */
describe.each(STORE_KINDS)('management API: client authentication (%s store)', (kind) => {
  const store = useStore(kind);
  let server: RunningServer;
  let token: string;
  let k1: ClientKeyPair;
  let k2: ClientKeyPair;

  beforeAll(async () => {
    const admin = { sub: 'admin', password: 'admin-pw', tenant: 'acme', permissions: ['integration_setup'] };
    server = await startServer({ store: store.option(), accounts: testAccounts([admin]) });
    token = await managementToken(server, admin, PORTAL);
    [k1, k2] = await Promise.all([clientKeyPair('k1'), clientKeyPair('k2')]);
  });
  afterAll(() => server.stop());

  const api = (path: string, method = 'GET', body?: unknown) => callManagementApi(server, token, path, method, body);

  const assertion = (clientId: string, key: ClientKeyPair) => clientAssertion(clientId, key, server.auth.issuer);
  const tokenWithKey = async (clientId: string, key: ClientKeyPair) =>
    postToken(server.oauthUrl, { grant_type: 'client_credentials', client_assertion_type: JWT_BEARER_ASSERTION, client_assertion: await assertion(clientId, key) });
  const tokenWithSecret = (clientId: string, secret: string) =>
    postToken(server.oauthUrl, 'grant_type=client_credentials', { authorization: basic(clientId, secret) });

  it('a private_key_jwt client configuration: no secret, its method and public keys shown, tokens with its key', async () => {
    const created = await api('client-configurations', 'POST', { name: 'Payroll', category: 'payroll', resources: RESOURCES, token_endpoint_auth_method: 'private_key_jwt', jwks: { keys: [k1.jwk] } });
    expect(created.status).toBe(201);
    expect(created.body).not.toHaveProperty('client_secret');
    expect(created.body).toMatchObject({ token_endpoint_auth_method: 'private_key_jwt', jwks: { keys: [k1.jwk] } });
    expect(created.body).not.toHaveProperty('jwks_uri');
    const clientId = created.body.client_id as string;
    const read = await api(`client-configurations/${clientId}`);
    expect(read.body).toMatchObject({ token_endpoint_auth_method: 'private_key_jwt', jwks: { keys: [k1.jwk] } });
    const listed = await api('client-configurations');
    expect(listed.body.client_configurations).toContainEqual(expect.objectContaining({ client_id: clientId, token_endpoint_auth_method: 'private_key_jwt' }));
    expect((await tokenWithKey(clientId, k1)).status).toBe(200);
    // The default stays Basic, and says so.
    const plain = await api('client-configurations', 'POST', { name: 'Plain', category: 'payroll', resources: RESOURCES });
    expect(plain.body).toMatchObject({ token_endpoint_auth_method: 'client_secret_basic', client_secret: expect.stringMatching(/^[A-Za-z0-9_-]{43}$/) });
    expect(plain.body).not.toHaveProperty('jwks');
  });

  it('a jwks_uri is shown; a tenant may name only a public https host (not a loopback one, which the operator may)', async () => {
    const created = await api('client-configurations', 'POST', { name: 'Uri', category: 'payroll', resources: RESOURCES, token_endpoint_auth_method: 'private_key_jwt', jwks_uri: 'https://keys.example.com/jwks.json' });
    expect(created.status).toBe(201);
    expect(created.body).toMatchObject({ token_endpoint_auth_method: 'private_key_jwt', jwks_uri: 'https://keys.example.com/jwks.json' });
    expect(created.body).not.toHaveProperty('jwks');
    expect(created.body).not.toHaveProperty('client_secret');
    const loopback = 'http://127.0.0.1:8080/jwks';
    // The operator's rule would take it: the API applies the tenant's.
    await expect(server.auth.clientConfigurations.create({ tenant: 'acme', name: 'Op', category: 'c', resources: RESOURCES, tokenEndpointAuthMethod: 'private_key_jwt', jwksUri: loopback })).resolves.toBeDefined();
    for (const [path, body] of [
      ['client-configurations', { name: 'Loop', category: 'payroll', resources: RESOURCES, token_endpoint_auth_method: 'private_key_jwt', jwks_uri: loopback }],
      [`client-configurations/${created.body.client_id as string}`, { jwks_uri: loopback }],
      ['app-registrations', { name: 'Loop', redirect_uris: ['https://app.example.com/cb'], client_type: 'confidential', token_endpoint_auth_method: 'private_key_jwt', jwks_uri: loopback }],
    ] as const) {
      const refused = await api(path, path.includes('/') ? 'PATCH' : 'POST', body);
      expect(refused.status).toBe(400);
      expect(refused.body).toMatchObject({ error: 'invalid_request', field: 'jwks_uri' });
      expect(refused.body.error_description).toMatch(/^jwks_uri: /);
    }
    expect((await api(`client-configurations/${created.body.client_id as string}`)).body.jwks_uri).toBe('https://keys.example.com/jwks.json');
  });

  it('refuses with a 400 naming the wire field: a private member, both or neither key forms, keys for Basic or a public app, an unknown method', async () => {
    const client = { name: 'Bad', category: 'payroll', resources: RESOURCES };
    const app = { name: 'Bad', redirect_uris: ['https://app.example.com/cb'] };
    const cases: Array<[string, Record<string, unknown>, string, RegExp]> = [
      ['client-configurations', { ...client, token_endpoint_auth_method: 'private_key_jwt', jwks: { keys: [k1.privateJwk] } }, 'jwks.keys.0', /private member 'd'/],
      ['app-registrations', { ...app, client_type: 'confidential', token_endpoint_auth_method: 'private_key_jwt', jwks: { keys: [k1.privateJwk] } }, 'jwks.keys.0', /private member 'd'/],
      ['client-configurations', { ...client, token_endpoint_auth_method: 'private_key_jwt', jwks: { keys: [k1.jwk] }, jwks_uri: 'https://keys.example.com/jwks' }, 'jwks_uri', /not both/],
      ['client-configurations', { ...client, token_endpoint_auth_method: 'private_key_jwt' }, 'jwks', /needs its public keys/],
      ['client-configurations', { ...client, jwks: { keys: [k1.jwk] } }, 'jwks', /only a private_key_jwt client/],
      ['client-configurations', { ...client, token_endpoint_auth_method: 'client_secret_post' }, 'token_endpoint_auth_method', /./],
      ['app-registrations', { ...app, client_type: 'public', token_endpoint_auth_method: 'private_key_jwt', jwks: { keys: [k1.jwk] } }, 'token_endpoint_auth_method', /public app/],
      ['app-registrations', { ...app, client_type: 'confidential', token_endpoint_auth_method: 'private_key_jwt', jwks: { keys: [] } }, 'jwks.keys', /at least one key/],
    ];
    for (const [path, body, field, description] of cases) {
      const refused = await api(path, 'POST', body);
      expect([path, field, refused.status]).toEqual([path, field, 400]);
      expect(refused.body).toMatchObject({ error: 'invalid_request', field });
      expect(refused.body.error_description).toMatch(description);
    }
    // Nothing of them was stored: no record holds a private member.
    const stored = JSON.stringify([(await api('client-configurations')).body, (await api('app-registrations')).body]);
    expect(stored).not.toContain(k1.privateJwk.d as string);
  });

  it('the secret route answers 400 (token_endpoint_auth_method) for a private_key_jwt client or app, and changes nothing', async () => {
    const client = await api('client-configurations', 'POST', { name: 'Keys', category: 'payroll', resources: RESOURCES, token_endpoint_auth_method: 'private_key_jwt', jwks: { keys: [k1.jwk] } });
    const app = await api('app-registrations', 'POST', { name: 'Keys', redirect_uris: ['https://app.example.com/cb'], client_type: 'confidential', token_endpoint_auth_method: 'private_key_jwt', jwks: { keys: [k1.jwk] } });
    expect(app.status).toBe(201);
    expect(app.body).not.toHaveProperty('client_secret');
    for (const path of [`client-configurations/${client.body.client_id as string}`, `app-registrations/${app.body.client_id as string}`]) {
      const before = (await api(path)).body;
      const refused = await api(`${path}/secret`, 'POST');
      expect(refused.status).toBe(400);
      expect(refused.body).toMatchObject({ error: 'invalid_request', field: 'token_endpoint_auth_method' });
      expect(refused.body.error_description).toMatch(/^token_endpoint_auth_method: .*no secret to rotate/);
      expect((await api(path)).body).toEqual(before);
    }
    expect((await tokenWithKey(client.body.client_id as string, k1)).status).toBe(200);
  });

  it('Basic → private_key_jwt drops the secret; back to Basic answers a new secret once; audited with {from, to} and no key material', async () => {
    const created = await api('client-configurations', 'POST', { name: 'Switch', category: 'payroll', resources: RESOURCES });
    const clientId = created.body.client_id as string;
    const firstSecret = created.body.client_secret as string;
    expect((await tokenWithSecret(clientId, firstSecret)).status).toBe(200);

    const toKeys = await api(`client-configurations/${clientId}`, 'PATCH', { token_endpoint_auth_method: 'private_key_jwt', jwks: { keys: [k1.jwk] } });
    expect(toKeys.status).toBe(200);
    expect(toKeys.body).toMatchObject({ token_endpoint_auth_method: 'private_key_jwt', jwks: { keys: [k1.jwk] } });
    expect(toKeys.body).not.toHaveProperty('client_secret');
    expect((await tokenWithSecret(clientId, firstSecret)).body.error).toBe('invalid_client');
    expect((await tokenWithKey(clientId, k1)).status).toBe(200);

    const toBasic = await api(`client-configurations/${clientId}`, 'PATCH', { token_endpoint_auth_method: 'client_secret_basic' });
    expect(toBasic.body).toMatchObject({ token_endpoint_auth_method: 'client_secret_basic', client_secret: expect.stringMatching(/^[A-Za-z0-9_-]{43}$/) });
    expect(toBasic.body).not.toHaveProperty('jwks');
    const newSecret = toBasic.body.client_secret as string;
    expect(newSecret).not.toBe(firstSecret);
    expect((await tokenWithSecret(clientId, newSecret)).status).toBe(200);
    expect((await tokenWithKey(clientId, k1)).body.error).toBe('invalid_client');
    // Shown once: a read has no secret.
    expect((await api(`client-configurations/${clientId}`)).body).not.toHaveProperty('client_secret');

    const events = (await api('audit-events?type=client_configuration.updated')).body.events as Array<{ target: { id: string }; details: Record<string, unknown> }>;
    const mine = events.filter((event) => event.target.id === clientId);
    expect(mine.map((event) => event.details.token_endpoint_auth_method)).toEqual([
      { from: 'private_key_jwt', to: 'client_secret_basic' },
      { from: 'client_secret_basic', to: 'private_key_jwt' },
    ]);
    const trail = JSON.stringify((await api('audit-events')).body);
    for (const material of [k1.jwk.x as string, k1.jwk.y as string, firstSecret, newSecret]) expect(trail).not.toContain(material);
  });

  it('an app: private_key_jwt with a jwks_uri shown; switched to Basic (new secret) and back; public apps show no method', async () => {
    const created = await api('app-registrations', 'POST', { name: 'Web', redirect_uris: ['https://app.example.com/cb'], client_type: 'confidential', token_endpoint_auth_method: 'private_key_jwt', jwks_uri: 'https://keys.example.com/web.json' });
    expect(created.status).toBe(201);
    expect(created.body).toMatchObject({ token_endpoint_auth_method: 'private_key_jwt', jwks_uri: 'https://keys.example.com/web.json' });
    expect(created.body).not.toHaveProperty('client_secret');
    const clientId = created.body.client_id as string;
    const toBasic = await api(`app-registrations/${clientId}`, 'PATCH', { token_endpoint_auth_method: 'client_secret_basic' });
    expect(toBasic.body).toMatchObject({ token_endpoint_auth_method: 'client_secret_basic', client_secret: expect.any(String) });
    expect(toBasic.body).not.toHaveProperty('jwks_uri');
    const toKeys = await api(`app-registrations/${clientId}`, 'PATCH', { token_endpoint_auth_method: 'private_key_jwt', jwks: { keys: [k2.jwk] } });
    expect(toKeys.body).toMatchObject({ token_endpoint_auth_method: 'private_key_jwt', jwks: { keys: [k2.jwk] } });
    expect(toKeys.body).not.toHaveProperty('client_secret');
    const events = (await api('audit-events?type=app_registration.updated')).body.events as Array<{ target: { id: string }; details: Record<string, unknown> }>;
    expect(events.filter((event) => event.target.id === clientId).map((event) => event.details.token_endpoint_auth_method)).toEqual([
      { from: 'client_secret_basic', to: 'private_key_jwt' },
      { from: 'private_key_jwt', to: 'client_secret_basic' },
    ]);
    const createdEvents = (await api('audit-events?type=app_registration.created')).body.events as Array<{ target: { id: string }; details: Record<string, unknown> }>;
    expect(createdEvents.find((event) => event.target.id === clientId)?.details.token_endpoint_auth_method).toBe('private_key_jwt');

    const spa = await api('app-registrations', 'POST', { name: 'SPA', redirect_uris: ['https://app.example.com/cb'], client_type: 'public' });
    expect(spa.body).not.toHaveProperty('token_endpoint_auth_method');
    expect(spa.body).not.toHaveProperty('jwks');
  });

  it('keys rotate without downtime: old and new together, then the new one alone', async () => {
    const created = await api('client-configurations', 'POST', { name: 'Rotate', category: 'payroll', resources: RESOURCES, token_endpoint_auth_method: 'private_key_jwt', jwks: { keys: [k1.jwk] } });
    const clientId = created.body.client_id as string;
    expect((await tokenWithKey(clientId, k2)).body.error).toBe('invalid_client');
    const both = await api(`client-configurations/${clientId}`, 'PATCH', { jwks: { keys: [k1.jwk, k2.jwk] } });
    expect(both.body).toMatchObject({ jwks: { keys: [k1.jwk, k2.jwk] } });
    expect((await tokenWithKey(clientId, k1)).status).toBe(200);
    expect((await tokenWithKey(clientId, k2)).status).toBe(200);
    await api(`client-configurations/${clientId}`, 'PATCH', { jwks: { keys: [k2.jwk] } });
    expect((await tokenWithKey(clientId, k2)).status).toBe(200);
    expect((await tokenWithKey(clientId, k1)).body.error).toBe('invalid_client');
    // A change of something else keeps the keys.
    const renamed = await api(`client-configurations/${clientId}`, 'PATCH', { name: 'Renamed' });
    expect(renamed.body).toMatchObject({ name: 'Renamed', token_endpoint_auth_method: 'private_key_jwt', jwks: { keys: [k2.jwk] } });
  });
});
