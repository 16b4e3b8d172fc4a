import { createMemoryStore } from '../../adapters/memory.js';
import { StoreUnavailable, type AuditLog, type Store } from '../../adapters/types.js';
import { ApiCatalog } from '../../policies/catalog.js';
import { AuditTrail, DEFAULT_AUDIT_SETTINGS } from '../../src/audit/trail.js';
import { AppRegistrations } from '../../src/records/app-registrations.js';
import { ClientConfigurations } from '../../src/records/client-configurations.js';
import { Consents } from '../../src/records/consents.js';
import { Backups } from '../../src/records/backup.js';
import { SignInHolds, SignInThrottle } from '../../src/limits/sign-in.js';
import { testAccounts } from '../support/accounts.js';
import { startRedis, type RedisServer } from '../support/redis.js';
import { basic, postToken, startServer, type RunningServer } from '../support/server.js';
import { signInForCode } from '../support/sign-in.js';
import { UserAgent } from '../support/user-agent.js';

const catalog = new ApiCatalog([{ id: 'scim', name: 'SCIM', scopes: { 'scim.read': 'Read users' }, constraints: [] }]);
const quiet = { info() {}, warn() {}, error() {} };

/** An audit log that can be made to fail, over a real memory store. */
function failingAudit(store: Store): { trail: AuditTrail; fail(on: boolean): void } {
  let failing = false;
  const log: AuditLog = {
    append: (event, retention, now, name) => (failing ? Promise.reject(new StoreUnavailable('timeout')) : store.audit.append(event, retention, now, name)),
    list: (query) => store.audit.list(query),
  };
  const failingStore = { audit: log, counters: store.counters, sharedSecret: (name: string) => store.sharedSecret(name) };
  return { trail: new AuditTrail(failingStore, DEFAULT_AUDIT_SETTINGS, quiet, undefined), fail: (on) => { failing = on; } };
}

describe('no unaudited change: an event that cannot be written stops the change it describes', () => {
  let store: Store;
  let audit: ReturnType<typeof failingAudit>;
  let clients: ClientConfigurations;
  let apps: AppRegistrations;
  let consents: Consents;

  beforeEach(() => {
    store = createMemoryStore();
    audit = failingAudit(store);
    consents = new Consents(store, catalog, audit.trail);
    clients = new ClientConfigurations(store.records, catalog, audit.trail);
    apps = new AppRegistrations(store.records, async () => {}, (clientId, by, reason) => consents.endAllOf(clientId, by, reason), audit.trail);
  });
  afterEach(() => store.close());

  it.each([
    ['creating a client configuration', async () => {
      audit.fail(true);
      await expect(clients.create({ tenant: 'acme', name: 'n', category: 'c', resources: { scim: { scopes: ['scim.read'] } } })).rejects.toBeInstanceOf(StoreUnavailable);
      return async () => expect(await clients.list('acme')).toEqual([]);
    }],
    ['changing, rotating or deleting one', async () => {
      const created = await clients.create({ tenant: 'acme', name: 'n', category: 'c', resources: { scim: { scopes: ['scim.read'] } } });
      const before = await store.records.get('client', created.clientId);
      audit.fail(true);
      await expect(clients.update(created.clientId, { name: 'changed' })).rejects.toBeInstanceOf(StoreUnavailable);
      await expect(clients.rotateSecret(created.clientId)).rejects.toBeInstanceOf(StoreUnavailable);
      await expect(clients.delete(created.clientId)).rejects.toBeInstanceOf(StoreUnavailable);
      return async () => expect(await store.records.get('client', created.clientId)).toEqual(before);
    }],
    ['creating, changing, rotating or deleting an app', async () => {
      const created = await apps.create({ name: 'App', redirectUris: ['https://a.example/cb'], clientType: 'confidential' });
      const before = await store.records.get('app', created.clientId);
      audit.fail(true);
      await expect(apps.create({ name: 'Other', redirectUris: ['https://a.example/cb'], clientType: 'public' })).rejects.toBeInstanceOf(StoreUnavailable);
      await expect(apps.update(created.clientId, { clientType: 'public' })).rejects.toBeInstanceOf(StoreUnavailable);
      await expect(apps.rotateSecret(created.clientId)).rejects.toBeInstanceOf(StoreUnavailable);
      await expect(apps.delete(created.clientId)).rejects.toBeInstanceOf(StoreUnavailable);
      return async () => {
        expect(await store.records.get('app', created.clientId)).toEqual(before);
        expect((await apps.list()).map((app) => app.name)).toEqual(['App']);
      };
    }],
    ['granting or revoking a consent', async () => {
      await consents.record({ tenant: 'acme', sub: 'ann', clientId: 'app-1', grantId: 'g1', scopes: ['openid'] }, { actor: { type: 'user', id: 'ann' } });
      audit.fail(true);
      await expect(consents.record({ tenant: 'acme', sub: 'ann', clientId: 'app-2', grantId: 'g2', scopes: ['openid'] }, { actor: { type: 'user', id: 'ann' } })).rejects.toBeInstanceOf(StoreUnavailable);
      await expect(consents.revoke({ tenant: 'acme', sub: 'ann', clientId: 'app-1' })).rejects.toBeInstanceOf(StoreUnavailable);
      return async () => expect((await consents.list({ tenant: 'acme', sub: 'ann' })).map((consent) => consent.clientId)).toEqual(['app-1']);
    }],
    ['lifting a sign-in hold', async () => {
      const holds = new SignInHolds(store.counters, ['a-cookie-key-of-at-least-32-characters!'], undefined, audit.trail);
      const throttle = new SignInThrottle(store.counters, { perUsername: { max: 3, windowSeconds: 60 }, perAddress: { max: 100, windowSeconds: 60 } },
        ['a-cookie-key-of-at-least-32-characters!'], quiet, { failed() {}, refused() {} });
      const hint = throttle.hint('ann');
      for (let n = 0; n < 3; n += 1) await throttle.failed(hint, '192.0.2.1', 'app-1');
      audit.fail(true);
      await expect(holds.unlock({ username: 'ann' }, { actor: { type: 'operator' } })).rejects.toBeInstanceOf(StoreUnavailable);
      return async () => expect(await throttle.wait(hint, '192.0.2.2', false)).toBeGreaterThan(0);
    }],
    ['restoring a backup', async () => {
      const created = await clients.create({ tenant: 'acme', name: 'n', category: 'c', resources: { scim: { scopes: ['scim.read'] } } });
      const backups = new Backups(store, audit.trail, catalog);
      const document = await backups.export();
      await clients.delete(created.clientId);
      audit.fail(true);
      await expect(backups.import(document)).rejects.toBeInstanceOf(StoreUnavailable);
      return async () => expect(await clients.list('acme')).toEqual([]);
    }],
  ])('%s', async (_name, act) => {
    const check = await act();
    audit.fail(false);
    await check();
  });

  it('a hook that throws or rejects breaks nothing', async () => {
    const warnings: string[] = [];
    const logger = { info() {}, warn: (message: string) => warnings.push(message), error() {} };
    for (const hook of [() => { throw new Error('SIEM down'); }, () => Promise.reject(new Error('webhook 500'))]) {
      const trail = new AuditTrail(store, DEFAULT_AUDIT_SETTINGS, logger, hook);
      const withHook = new ClientConfigurations(store.records, catalog, trail);
      await expect(withHook.create({ tenant: 'acme', name: 'n', category: 'c', resources: { scim: { scopes: ['scim.read'] } } })).resolves.toBeDefined();
    }
    await new Promise((resolve) => setTimeout(resolve, 10));
    expect(warnings).toEqual(['onAuditEvent failed', 'onAuditEvent failed']);
    expect((await store.audit.list({ log: 'changes', tenant: 'acme', limit: 10 })).events).toHaveLength(2);
  });
});

describe('no unaudited change with Redis frozen (management API)', () => {
  let redis: RedisServer;
  let server: RunningServer;
  const admin = { sub: 'admin', password: 'admin-password-1', tenant: 'acme', permissions: ['integration_setup'] };
  let token: string;

  beforeAll(async () => {
    redis = await startRedis();
    server = await startServer({ store: { type: 'redis', url: redis.url }, accounts: testAccounts([admin]) });
    const portal = await server.auth.appRegistrations.create({ name: 'Portal', redirectUris: ['https://portal.example/cb'], clientType: 'confidential', firstParty: true });
    const { code, verifier } = await signInForCode(server, { clientId: portal.clientId, redirectUri: 'https://portal.example/cb' }, admin, 'openid manage.integrations', new UserAgent(server.baseUrl));
    token = (await postToken(server.oauthUrl, { grant_type: 'authorization_code', code, redirect_uri: 'https://portal.example/cb', code_verifier: verifier }, { authorization: basic(portal.clientId, portal.clientSecret!) })).body.access_token as string;
  });
  afterAll(async () => {
    await server.stop();
    await redis.stop();
  });

  it('a create while Redis does not answer is 503, and nothing was created once it answers again', async () => {
    redis.pause();
    let status: number;
    try {
      const response = await fetch(`${server.baseUrl}/api/oauth2/client-configurations`, {
        method: 'POST',
        headers: { authorization: `Bearer ${token}`, 'content-type': 'application/json' },
        body: JSON.stringify({ name: 'Frozen', category: 'c', resources: { scim: { scopes: ['scim.read'] } } }),
      });
      status = response.status;
    } finally {
      redis.resume();
    }
    expect(status).toBe(503);
    await new Promise((resolve) => setTimeout(resolve, 500));
    expect((await server.auth.clientConfigurations.list('acme')).map((client) => client.name)).not.toContain('Frozen');
  });
});
