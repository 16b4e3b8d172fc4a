import { createMemoryStore } from '../../adapters/memory.js';
import type { Store } from '../../adapters/types.js';
import { ApiCatalog } from '../../policies/catalog.js';
import { Consents } from '../../src/records/consents.js';

const catalog = new ApiCatalog([{ id: 'scim', name: 'SCIM', scopes: { 'scim.read': 'Read users' }, constraints: [] }]);
const alice = { tenant: 'acme', sub: 'alice' };

describe('consents (src/records/consents.ts)', () => {
  let store: Store;
  let consents: Consents;
  const grant = async (id: string) => {
    await store.engine('Grant').upsert(id, { jti: id }, 3600);
    return id;
  };
  const grantLives = async (id: string) => (await store.engine('Grant').find(id)) !== undefined;
  beforeEach(() => {
    store = createMemoryStore();
    consents = new Consents(store, catalog);
  });
  afterEach(() => store.close());

  it('records one consent per (tenant, user, app); a new one replaces it and ends the grant it replaced', async () => {
    await consents.record({ ...alice, clientId: 'app', grantId: await grant('g1'), scopes: ['openid', 'scim.read', 'scim.read'] });
    const [first] = await consents.list(alice);
    expect(first?.scopes.map(({ scope }) => scope)).toEqual(['openid', 'scim.read']);
    await consents.record({ ...alice, clientId: 'app', grantId: await grant('g2'), scopes: ['openid'] });
    const listed = await consents.list(alice);
    expect(listed).toHaveLength(1);
    expect(listed[0]?.createdAt).toBe(first?.createdAt);
    expect(await grantLives('g1')).toBe(false);
    expect(await grantLives('g2')).toBe(true);
  });

  it.each([
    ['another tenant of the same user', { tenant: 'globex', sub: 'alice' }],
    ['another user of the same tenant', { tenant: 'acme', sub: 'bob' }],
  ])('does not show or revoke a consent to %s', async (_name, other) => {
    await consents.record({ ...alice, clientId: 'app', grantId: await grant('g1'), scopes: ['openid'] });
    expect(await consents.list(other)).toEqual([]);
    expect(await consents.revoke({ ...other, clientId: 'app' })).toBe(false);
    expect(await grantLives('g1')).toBe(true);
  });

  it('revoking ends the grant; revoking again finds nothing', async () => {
    await consents.record({ ...alice, clientId: 'app', grantId: await grant('g1'), scopes: ['scim.read'] });
    expect(await consents.revoke({ ...alice, clientId: 'app' })).toBe(true);
    expect(await grantLives('g1')).toBe(false);
    expect(await consents.list(alice)).toEqual([]);
    expect(await consents.revoke({ ...alice, clientId: 'app' })).toBe(false);
  });

  it('describes scopes in words', async () => {
    await consents.record({ ...alice, clientId: 'app', grantId: await grant('g1'), scopes: ['scim.read'] });
    const [consent] = await consents.list(alice);
    expect(consent?.scopes[0]).toEqual(expect.objectContaining({ scope: 'scim.read' }));
    expect(JSON.stringify(consent?.scopes[0])).toContain('Read users');
  });
});
