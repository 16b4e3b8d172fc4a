import { createMemoryStore } from '../../adapters/memory.js';
import { appRegistrationMetadata, ClientDirectory, clientConfigurationMetadata, engineAppOwner } from '../../src/engine/client-directory.js';
import type { StoredAppRegistration } from '../../src/records/app-registrations.js';
import type { StoredClientConfiguration } from '../../src/records/client-configurations.js';

const ID = '1f0e8c84-5c3b-4b9a-9d7e-0a1b2c3d4e5f';
const at = '2026-01-01T00:00:00.000Z';
const app = (change: Partial<StoredAppRegistration>): StoredAppRegistration => ({
  clientId: ID, name: 'App', redirectUris: ['https://app.example/cb'], clientType: 'confidential', pkceEnabled: true,
  idTokenSigningAlg: 'RS256', firstParty: false, openToAllTenants: false, createdAt: at, updatedAt: at, secretDigest: 'digest', ...change,
});
const machine: StoredClientConfiguration = {
  clientId: ID, tenant: 'acme', name: 'Sync', category: 'HRIS', createdAt: at, updatedAt: at, secretDigest: 'digest',
  resources: { scim: { scopes: ['scim.read', 'scim.write'], constraints: { country: ['DE'] } } },
};

describe('clients as the engine sees them (src/engine/client-directory.ts)', () => {
  it('a client configuration: client_credentials only, Basic, its scopes, tenant and constraints; the secret a digest', () => {
    expect(clientConfigurationMetadata(machine)).toEqual({
      client_id: ID, client_name: 'Sync', client_secret: 'digest', grant_types: ['client_credentials'], response_types: [], redirect_uris: [],
      token_endpoint_auth_method: 'client_secret_basic', scope: 'scim.read scim.write', tenant: 'acme', constraints: { scim: { country: ['DE'] } },
      dpop_bound_access_tokens: false,
    });
  });

  it.each([
    ['a confidential web app', app({}), { grant_types: ['authorization_code', 'refresh_token'], token_endpoint_auth_method: 'client_secret_basic', application_type: 'web', client_secret: 'digest' }],
    ['a public app: no secret, no refresh tokens', app({ clientType: 'public', secretDigest: undefined }), { grant_types: ['authorization_code'], token_endpoint_auth_method: 'none' }],
    ['a mobile app: native', app({ redirectUris: ['com.example.app://cb'] }), { application_type: 'native' }],
    ["a tenant's app", app({ tenant: 'acme', openToAllTenants: true }), { tenant: 'acme', open_to_all_tenants: true }],
    ['a first-party app with PKCE off', app({ firstParty: true, pkceEnabled: false }), { first_party: true, pkce_enabled: false }],
  ])('%s', (_name, stored, expected) => {
    const metadata = appRegistrationMetadata(stored);
    expect(metadata).toEqual(expect.objectContaining(expected));
    if (stored.clientType === 'public') expect(metadata).not.toHaveProperty('client_secret');
  });

  it.each([
    [{}, { openToAllTenants: false }],
    [{ tenant: 'acme', open_to_all_tenants: true }, { tenant: 'acme', openToAllTenants: true }],
    [{ tenant: 7 }, { openToAllTenants: false }],
  ])('the owner of %j is %j', (metadata, owner) => {
    expect(engineAppOwner(metadata)).toEqual(owner);
  });

  it('finds either kind by UUID, and answers anything else without a read', async () => {
    const store = createMemoryStore();
    await store.records.put('client', ID, 'acme', machine);
    const directory = new ClientDirectory(store.records);
    expect((await directory.find(ID))?.grant_types).toEqual(['client_credentials']);
    expect(await directory.find('not-a-uuid')).toBeUndefined();
    expect(await directory.find('2f0e8c84-5c3b-4b9a-9d7e-0a1b2c3d4e5f')).toBeUndefined();
    await expect(directory.upsert()).rejects.toThrow('clients are managed');
    await store.close();
  });
});
