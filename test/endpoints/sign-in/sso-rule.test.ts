import type { Store } from '../../../adapters/types.js';
import type { TenantPolicy } from '../../../src/index.js';
import { AuditTrail, DEFAULT_AUDIT_SETTINGS } from '../../../src/audit/trail.js';
import { ssoRule, type SsoRule } from '../../../src/endpoints/sign-in/sso-rule.js';
import { Connections } from '../../../src/federation/connections.js';
import { Sealer } from '../../../src/records/sealed.js';
import { SecondFactorRules, TenantSettings } from '../../../src/records/tenant-settings.js';
import { useAdapterStore } from '../../support/adapter-stores.js';
import { capturingLogger } from '../../support/fixtures.js';
import { STORE_KINDS } from '../../support/stores.js';

const ADMIN = { actor: { type: 'user' as const, id: 'ada' } };

/**
 * Whose passwords the SSO rule refuses (src/endpoints/sign-in/sso-rule.ts), on both stores: the
 * host's policy or the tenant's own setting requires it, and only while the tenant has a connection.
 */
describe.each(STORE_KINDS)('the SSO rule (%s store)', (kind) => {
  const handle = useAdapterStore(kind);
  let store: Store;
  let settings: TenantSettings;
  let connections: Connections;
  let rule: SsoRule;
  let host: TenantPolicy;

  beforeEach(async () => {
    store = await handle.create();
    const audit = new AuditTrail(store, DEFAULT_AUDIT_SETTINGS, capturingLogger().logger, undefined);
    settings = new TenantSettings(store.records, audit);
    connections = new Connections(store.records, new Sealer(['test-key'], 'connections'), audit);
    host = {};
    rule = ssoRule({ rules: new SecondFactorRules(() => host, settings), connections, path: '/oauth2/interaction', brands: undefined, issueCsrf: () => 'csrf' });
    await connections.create({ tenant: 'acme', name: 'Acme Entra', issuer: 'https://login.acme.example/v2.0', clientId: 'c', clientSecret: 's', domains: ['acme.example'] });
  });
  afterEach(async () => {
    await new Promise((resolve) => setTimeout(resolve, 30));
    await store.close();
  });

  it("the tenant's own setting requires it: its connections, passwords refused", async () => {
    expect(await rule.required('acme')).toBeUndefined();
    await settings.replace('acme', { sso: 'required' }, ADMIN);
    expect((await rule.required('acme'))?.map((connection) => connection.name)).toEqual(['Acme Entra']);
  });

  it("the host's policy requires it: the tenant's `optional` does not undo it", async () => {
    host = { sso: 'required' };
    await settings.replace('acme', { sso: 'optional' }, ADMIN);
    expect((await rule.required('acme'))?.length).toBe(1);
  });

  it('a tenant without a connection keeps passwords, whoever requires SSO; a platform app has no tenant of its own', async () => {
    host = { sso: 'required' };
    await settings.replace('globex', { sso: 'required' }, ADMIN);
    expect(await rule.required('globex')).toBeUndefined();
    expect(await rule.required(undefined)).toBeUndefined();
  });
});
