import { createMemoryStore } from '../../adapters/memory.js';
import type { Store } from '../../adapters/types.js';
import { ApiCatalog } from '../../policies/catalog.js';
import { ValidationError } from '../../policies/errors.js';
import { AuditTrail, DEFAULT_AUDIT_SETTINGS } from '../../src/audit/trail.js';
import { appRegistrationMetadata, clientConfigurationMetadata } from '../../src/engine/client-directory.js';
import { AppRegistrations, APP_REGISTRATION, type StoredAppRegistration } from '../../src/records/app-registrations.js';
import { ClientConfigurations, CLIENT_CONFIGURATION, type StoredClientConfiguration } from '../../src/records/client-configurations.js';

const catalog = new ApiCatalog([{ id: 'scim', name: 'SCIM', scopes: { 'scim.read': 'r' }, constraints: [] }]);
const machine = { tenant: 'acme', name: 'Sync', category: 'HRIS', resources: { scim: { scopes: ['scim.read'] } } };
const web = { name: 'Web', redirectUris: ['https://app.example.com/cb'], clientType: 'confidential' as const };
const silent = { info() {}, warn() {}, error() {} };

/** The `dpop` field of both record kinds: validated, kept, audited, and what the engine is told of it. */
describe('the dpop rule of client configurations and app registrations', () => {
  let store: Store;
  let audit: AuditTrail;
  let clients: ClientConfigurations;
  let apps: AppRegistrations;
  beforeEach(() => {
    store = createMemoryStore();
    audit = new AuditTrail(store, DEFAULT_AUDIT_SETTINGS, silent, undefined);
    clients = new ClientConfigurations(store.records, catalog, audit);
    apps = new AppRegistrations(store.records, async () => undefined, undefined, audit);
  });
  afterEach(() => store.close());

  it('a client configuration: absent means optional; required is kept, changed and audited', async () => {
    const plain = await clients.create(machine);
    expect(plain.dpop).toBeUndefined();
    const stored = await store.records.get<StoredClientConfiguration>(CLIENT_CONFIGURATION, plain.clientId);
    expect(clientConfigurationMetadata(stored!).dpop_bound_access_tokens).toBe(false);

    const strict = await clients.create({ ...machine, dpop: 'required' });
    expect(strict.dpop).toBe('required');
    expect(clientConfigurationMetadata((await store.records.get<StoredClientConfiguration>(CLIENT_CONFIGURATION, strict.clientId))!).dpop_bound_access_tokens).toBe(true);
    const relaxed = await clients.update(strict.clientId, { dpop: 'optional' });
    expect(relaxed.dpop).toBe('optional');
    expect(clientConfigurationMetadata((await store.records.get<StoredClientConfiguration>(CLIENT_CONFIGURATION, strict.clientId))!).dpop_bound_access_tokens).toBe(false);

    const created = (await audit.list({ tenant: 'acme', type: 'client_configuration.created' })).events.map((event) => event.details);
    expect(created).toContainEqual(expect.objectContaining({ dpop: 'required' }));
    const updated = (await audit.list({ tenant: 'acme', type: 'client_configuration.updated' })).events.map((event) => event.details);
    expect(updated).toEqual([{ fields: ['dpop'] }]);
  });

  it('an app registration: absent means optional; required is kept, changed and audited', async () => {
    const plain = await apps.create({ ...web, tenant: 'acme' });
    expect(plain.dpop).toBeUndefined();
    expect(appRegistrationMetadata((await store.records.get<StoredAppRegistration>(APP_REGISTRATION, plain.clientId))!).dpop_bound_access_tokens).toBe(false);
    const strict = await apps.create({ ...web, tenant: 'acme', dpop: 'required' });
    expect(strict.dpop).toBe('required');
    expect(appRegistrationMetadata((await store.records.get<StoredAppRegistration>(APP_REGISTRATION, strict.clientId))!).dpop_bound_access_tokens).toBe(true);
    await apps.update(strict.clientId, { dpop: 'optional' });
    expect(appRegistrationMetadata((await store.records.get<StoredAppRegistration>(APP_REGISTRATION, strict.clientId))!).dpop_bound_access_tokens).toBe(false);
    const created = (await audit.list({ tenant: 'acme', type: 'app_registration.created' })).events.map((event) => event.details);
    expect(created).toContainEqual(expect.objectContaining({ dpop: 'required' }));
    const updated = (await audit.list({ tenant: 'acme', type: 'app_registration.updated' })).events.map((event) => event.details);
    expect(updated).toEqual([{ fields: ['dpop'] }]);
  });

  it.each([['yes'], [true], ['Required'], ['']])('refuses dpop %p, naming the field', async (value) => {
    await expect(clients.create({ ...machine, dpop: value as never })).rejects.toMatchObject({ constructor: ValidationError, field: 'dpop' });
    await expect(apps.create({ ...web, dpop: value as never })).rejects.toMatchObject({ constructor: ValidationError, field: 'dpop' });
    const existing = await clients.create(machine);
    await expect(clients.update(existing.clientId, { dpop: value as never })).rejects.toMatchObject({ constructor: ValidationError, field: 'dpop' });
  });
});
