import { createMemoryStore } from '../../adapters/memory.js';
import type { Store } from '../../adapters/types.js';
import { ApiCatalog } from '../../policies/catalog.js';
import { NotFound, ValidationError } from '../../policies/errors.js';
import { ClientConfigurations, constraintsOf, type ClientConfigurationInput } from '../../src/records/client-configurations.js';
import { secretMatches } from '../../src/records/secrets.js';
import { AuditTrail, DEFAULT_AUDIT_SETTINGS } from '../../src/audit/trail.js';

const catalog = new ApiCatalog([
  { id: 'scim', name: 'SCIM', scopes: { 'scim.read': 'r', 'scim.write': 'w' }, constraints: ['country'] },
  { id: 'jobs', name: 'Jobs', scopes: { 'jobs.read': 'r' }, constraints: [] },
]);

describe('client configurations (src/records/client-configurations.ts)', () => {
  let store: Store;
  let clients: ClientConfigurations;
  beforeEach(() => {
    store = createMemoryStore();
    clients = new ClientConfigurations(store.records, catalog);
  });
  afterEach(() => store.close());

  const valid = { tenant: 'acme', name: 'Sync', category: 'HRIS', resources: { scim: { scopes: ['scim.read'] } } } satisfies ClientConfigurationInput;

  it('records the fields an update changes, not those sent unchanged (a form sends them all)', async () => {
    const audit = new AuditTrail(store, DEFAULT_AUDIT_SETTINGS, { info() {}, warn() {}, error() {} }, undefined);
    const audited = new ClientConfigurations(store.records, catalog, audit);
    const created = await audited.create({ ...valid, description: 'd' });
    await audited.update(created.clientId, { name: 'Sync', category: 'Payroll', description: 'd', resources: { scim: { scopes: ['scim.read'] } } });
    await audited.update(created.clientId, { name: 'Sync', description: '', resources: { scim: { scopes: ['scim.read', 'scim.write'] } } });
    const updates = (await audit.list({ tenant: 'acme', type: 'client_configuration.updated' })).events;
    expect(updates.map((event) => event.details)).toEqual([{ fields: ['description', 'resources'] }, { fields: ['category'] }]);
  });

  it.each([
    ['no tenant', { tenant: '' }, 'tenant'],
    ['a tenant over 100 characters', { tenant: 'x'.repeat(101) }, 'tenant'],
    ['no name', { name: '' }, 'name'],
    ['no category', { category: ' ' }, 'category'],
    ['an unknown API', { resources: { payroll: { scopes: ['p'] } } }, 'resources.payroll'],
    ['an API without scopes', { resources: { scim: { scopes: [] } } }, 'resources.scim'],
    ['a scope of another API', { resources: { scim: { scopes: ['jobs.read'] } } }, 'resources.scim'],
    ['a dimension the API does not define', { resources: { scim: { scopes: ['scim.read'], constraints: { site: ['x'] } } } }, 'resources.scim'],
    ['an unknown field', { secret: 'x' }, 'clientConfiguration'],
  ])('refuses %s, naming the field, and stores nothing', async (_name, change, field) => {
    const error = await clients.create({ ...valid, ...change } as ClientConfigurationInput).catch((thrown: unknown) => thrown);
    expect(error).toBeInstanceOf(ValidationError);
    expect((error as ValidationError).field.startsWith(field)).toBe(true);
    expect(await clients.list('acme')).toEqual([]);
  });

  it('creates with a UUID and a secret shown once, stored as a digest; lists by tenant only', async () => {
    const created = await clients.create({ ...valid, resources: { scim: { scopes: ['scim.read'], constraints: { country: ['DE'] } } } });
    expect(created.clientId).toMatch(/^[0-9a-f-]{36}$/);
    const stored = (await store.records.get<{ secretDigest: string }>('client', created.clientId))!;
    expect(JSON.stringify(stored)).not.toContain(created.clientSecret);
    expect(secretMatches(created.clientSecret, stored.secretDigest)).toBe(true);
    expect(await clients.get(created.clientId)).not.toHaveProperty('clientSecret');
    expect((await clients.list('acme')).map((client) => client.clientId)).toEqual([created.clientId]);
    expect(await clients.list('globex')).toEqual([]);
  });

  it('updates any field but the tenant; description "" removes it; an unknown ID is NotFound', async () => {
    const created = await clients.create({ ...valid, description: 'first' });
    const updated = await clients.update(created.clientId, { name: 'Renamed', description: '' });
    expect(updated).toEqual(expect.objectContaining({ name: 'Renamed', tenant: 'acme' }));
    expect(updated).not.toHaveProperty('description');
    await expect(clients.update(created.clientId, { tenant: 'globex' } as never)).rejects.toThrow(ValidationError);
    await expect(clients.update('00000000-0000-4000-8000-000000000000', { name: 'x' })).rejects.toThrow(NotFound);
  });

  it.each([
    [{ scim: { scopes: ['scim.read'], constraints: { country: ['DE'] } } }, { scim: { country: ['DE'] } }],
    [{ scim: { scopes: ['scim.read'] }, jobs: { scopes: ['jobs.read'] } }, {}],
  ])('the constraints of %j are %j', (resources, expected) => {
    expect(constraintsOf(resources)).toEqual(expected);
  });
});
