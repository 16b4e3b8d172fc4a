import type { Store } from '../../adapters/types.js';
import { AuditTrail, DEFAULT_AUDIT_SETTINGS, type AuditEvent } from '../../src/audit/trail.js';
import { SecondFactorRules, TenantSettings } from '../../src/records/tenant-settings.js';
import { useAdapterStore } from '../support/adapter-stores.js';
import { capturingLogger } from '../support/fixtures.js';
import { STORE_KINDS } from '../support/stores.js';

const ADMIN = (id: string) => ({ actor: { type: 'user' as const, id } });

/**
 * A tenant's own settings in the store (src/records/tenant-settings.ts), on both stores: one record
 * per tenant, each change audited before it is made, compared-and-set (two admins at once: both
 * recorded, neither lost half-way), and the rule they make with the host's policy.
 */
describe.each(STORE_KINDS)('tenant settings records (%s store)', (kind) => {
  const handle = useAdapterStore(kind);
  let store: Store;
  let settings: TenantSettings;
  let events: AuditEvent[];

  beforeEach(async () => {
    store = await handle.create();
    events = [];
    settings = new TenantSettings(store.records, new AuditTrail(store, DEFAULT_AUDIT_SETTINGS, capturingLogger().logger, (event) => void events.push(event)));
  });
  afterEach(async () => {
    await new Promise((resolve) => setTimeout(resolve, 30));
    await store.close();
  });

  it('nothing chosen: an empty object; a choice is kept per tenant', async () => {
    expect(await settings.get('acme')).toEqual({});
    await settings.replace('acme', { secondFactor: 'required' }, ADMIN('ada'));
    expect(await settings.get('acme')).toMatchObject({ secondFactor: 'required' });
    expect(await settings.get('globex')).toEqual({});
  });

  it('two admins at once: both changes recorded, the record is one of them whole', async () => {
    await Promise.all([
      settings.replace('acme', { secondFactor: 'required', passkeyOnlySignIn: true }, ADMIN('ada')),
      new TenantSettings(store.records, new AuditTrail(store, DEFAULT_AUDIT_SETTINGS, capturingLogger().logger, (event) => void events.push(event)))
        .replace('acme', { secondFactor: 'optional' }, ADMIN('bob')),
    ]);
    const kept = await settings.get('acme');
    expect([{ secondFactor: 'required', passkeyOnlySignIn: true }, { secondFactor: 'optional' }]).toContainEqual({ secondFactor: kept.secondFactor, ...(kept.passkeyOnlySignIn !== undefined ? { passkeyOnlySignIn: kept.passkeyOnlySignIn } : {}) });
    expect(events.filter((event) => event.type === 'tenant_settings.updated').map((event) => event.actor.id).sort()).toEqual(expect.arrayContaining(['ada', 'bob']));
  });

  it("the rule of a tenant is read at every use: the host's policy and the tenant's settings as they are now", async () => {
    let host: { secondFactor?: 'optional' | 'required' } = {};
    const rules = new SecondFactorRules(() => host, settings);
    expect(await rules.of('acme')).toEqual({ secondFactor: 'required_for_permissions', passkeyOnlySignIn: false, sso: 'optional' });
    host = { secondFactor: 'optional' };
    expect((await rules.of('acme')).secondFactor).toBe('optional');
    await settings.replace('acme', { secondFactor: 'required', passkeyOnlySignIn: true }, ADMIN('ada'));
    expect(await rules.of('acme')).toEqual({ secondFactor: 'required', passkeyOnlySignIn: true, sso: 'optional' });
    expect(await rules.passkeyOnlyAllowed('acme')).toBe(true);
    expect(await rules.passkeyOnlyAllowed('globex')).toBe(false);
    // SSO: the tenant's admin may require it; the host's required stands whatever she says.
    expect(await rules.ssoRequired('acme')).toBe(false);
    await settings.replace('acme', { secondFactor: 'required', passkeyOnlySignIn: true, sso: 'required' }, ADMIN('ada'));
    expect(await rules.ssoRequired('acme')).toBe(true);
    expect(await rules.ssoRequired('globex')).toBe(false);
  });

  it('SSO is required when the host or the tenant says so; the tenant cannot undo the host\'s required', async () => {
    let host: { sso?: 'optional' | 'required' } = {};
    const rules = new SecondFactorRules(() => host, settings);
    expect(await rules.ssoRequired('acme')).toBe(false);
    await settings.replace('acme', { sso: 'required' }, ADMIN('ada'));
    expect(await rules.ssoRequired('acme')).toBe(true);
    expect(await rules.ssoRequired('globex')).toBe(false);
    host = { sso: 'required' };
    await settings.replace('acme', { sso: 'optional' }, ADMIN('ada'));
    expect(await rules.ssoRequired('acme')).toBe(true);
    expect(events.filter((event) => event.type === 'tenant_settings.updated').at(-1)).toMatchObject({ details: { fields: ['sso'], sso: 'optional' } });
  });

  it("a host policy that is not one is the host's error, reported with the field", async () => {
    const rules = new SecondFactorRules(() => ({ secondFactor: 'sometimes' }) as never, settings);
    await expect(rules.of('acme')).rejects.toThrow(/secondFactor/);
  });
});
