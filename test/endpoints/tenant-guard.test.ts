import { NotFound } from '../../policies/errors.js';
import { TenantGuard, type TenantRecords } from '../../src/endpoints/tenant-guard.js';

interface Rec { id: string; tenant?: string }

/** Records that say what they were asked: a listing must be by tenant, never all then filtered. */
function recordsOf(all: Rec[]): TenantRecords<Rec> & { asked: string[] } {
  const asked: string[] = [];
  return {
    asked,
    async listByTenant(tenant) {
      asked.push(`list ${tenant}`);
      return all.filter((record) => record.tenant === tenant);
    },
    async get(id) {
      asked.push(`get ${id}`);
      return all.find((record) => record.id === id);
    },
  };
}

describe('tenant isolation (src/endpoints/tenant-guard.ts)', () => {
  const records = [{ id: 'a1', tenant: 'acme' }, { id: 'g1', tenant: 'globex' }, { id: 'op', tenant: undefined }];

  it('lists the caller\'s tenant by tenant in the store', async () => {
    const store = recordsOf(records);
    expect(await new TenantGuard().list(store, { tenant: 'acme' })).toEqual([{ id: 'a1', tenant: 'acme' }]);
    expect(store.asked).toEqual(['list acme']);
  });

  it.each([
    ['another tenant\'s record', 'g1'],
    ['an operator\'s record (no tenant)', 'op'],
    ['a record that exists nowhere', 'nobody'],
  ])('answers %s exactly like a missing one, and tells of it alike', async (_what, id) => {
    const told: string[] = [];
    const guard = new TenantGuard((caller) => told.push(caller.tenant));
    const refused = await guard.own(recordsOf(records), id, { tenant: 'acme' }, 'client configuration').catch((error: unknown) => error);
    expect(refused).toBeInstanceOf(NotFound);
    expect((refused as NotFound).description).toBe(`client configuration ${id} not found`);
    expect(told).toEqual(['acme']);
  });

  it('gives the caller her own record, telling nothing', async () => {
    const told: string[] = [];
    expect(await new TenantGuard((caller) => told.push(caller.tenant)).own(recordsOf(records), 'a1', { tenant: 'acme' }, 'x')).toEqual({ id: 'a1', tenant: 'acme' });
    expect(told).toEqual([]);
  });

  it('a record the store keyed by tenant (a consent): 404 when not found for the caller', () => {
    const guard = new TenantGuard();
    expect(() => guard.found(true, 'consent', { tenant: 'acme' })).not.toThrow();
    expect(() => guard.found(false, 'consent', { tenant: 'acme' })).toThrow(NotFound);
  });
});
