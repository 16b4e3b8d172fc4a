import { basic, postToken, startServer, type RunningServer } from '../../support/server.js';
import { startRedis, type RedisServer } from '../../support/redis.js';
import { STORE_KINDS, useStore } from '../../support/stores.js';
import { ValidationError, NotFound } from '../../../src/index.js';

const UUID = /^[0-9a-f]{8}-[0-9a-f]{4}-4[0-9a-f]{3}-[89ab][0-9a-f]{3}-[0-9a-f]{12}$/;

describe.each(STORE_KINDS)('client configurations (%s store)', (kind) => {
  const store = useStore(kind);
  let server: RunningServer;

  beforeAll(async () => {
    server = await startServer({ store: store.option() });
  });
  afterAll(async () => {
    await server.stop();
  });

  const valid = () => ({
    tenant: 'acme',
    name: 'Payroll sync',
    category: 'payroll',
    description: 'Nightly export',
    resources: { scim: { scopes: ['scim.read'], constraints: { group: ['eng'] } } },
  });

  it('creates a client with a UUID and a 256-bit secret shown once', async () => {
    const created = await server.auth.clientConfigurations.create(valid());
    expect(created.clientId).toMatch(UUID);
    expect(created.clientSecret).toMatch(/^[A-Za-z0-9_-]{43}$/);
    expect(created).toMatchObject({ tenant: 'acme', name: 'Payroll sync', category: 'payroll', description: 'Nightly export' });
    const read = await server.auth.clientConfigurations.get(created.clientId);
    expect(read).not.toHaveProperty('clientSecret');
    expect(read).not.toHaveProperty('secretDigest');
    expect(JSON.stringify(await server.auth.clientConfigurations.list('acme'))).not.toContain(created.clientSecret);
  });

  it('gives every client its own ID and secret', async () => {
    const a = await server.auth.clientConfigurations.create(valid());
    const b = await server.auth.clientConfigurations.create(valid());
    expect(a.clientId).not.toBe(b.clientId);
    expect(a.clientSecret).not.toBe(b.clientSecret);
  });

  if (kind === 'redis') {
    it('stores only a digest of the secret', async () => {
      const created = await server.auth.clientConfigurations.create(valid());
      const redis = store.redis!.client();
      const keys = await redis.keys('*');
      for (const key of keys) {
        const type = await redis.type(key);
        const dump =
          type === 'hash'
            ? JSON.stringify(await redis.hgetall(key))
            : type === 'set'
              ? (await redis.smembers(key)).join()
              : type === 'stream'
                ? JSON.stringify(await redis.xrange(key, '-', '+'))
                : String(await redis.get(key));
        expect(dump).not.toContain(created.clientSecret);
      }
    });
  }

  it('lists by tenant only', async () => {
    const globex = await server.auth.clientConfigurations.create({ ...valid(), tenant: 'globex' });
    const acme = await server.auth.clientConfigurations.list('acme');
    expect(acme.length).toBeGreaterThan(0);
    expect(acme.every((client) => client.tenant === 'acme')).toBe(true);
    expect((await server.auth.clientConfigurations.list('globex')).map((c) => c.clientId)).toEqual([globex.clientId]);
  });

  describe('validation', () => {
    const cases: Array<[string, Record<string, unknown>, string]> = [
      ['name missing', { name: undefined }, 'name'],
      ['name blank', { name: '  ' }, 'name'],
      ['category missing', { category: undefined }, 'category'],
      ['tenant missing', { tenant: undefined }, 'tenant'],
      ['no API at all', { resources: {} }, 'resources'],
      ['an API with no scope', { resources: { scim: { scopes: [] } } }, 'resources.scim.scopes'],
      ['an unknown API', { resources: { payroll: { scopes: ['payroll.read'] } } }, 'resources.payroll.scopes'],
      ['a scope of another API', { resources: { scim: { scopes: ['user.read'] } } }, 'resources.scim.scopes'],
      ['an undeclared dimension', { resources: { scim: { scopes: ['scim.read'], constraints: { location: ['x'] } } } }, 'resources.scim.constraints.location'],
      ['constraints on an API without any', { resources: { users: { scopes: ['user.read'], constraints: { group: ['x'] } } } }, 'resources.users.constraints.group'],
      ['an empty value list', { resources: { scim: { scopes: ['scim.read'], constraints: { group: [] } } } }, 'resources.scim.constraints.group'],
      ['an empty value', { resources: { scim: { scopes: ['scim.read'], constraints: { group: [''] } } } }, 'resources.scim.constraints.group'],
      ['an unknown field', { secret: 'mine' }, 'clientConfiguration'],
    ];

    it.each(cases)('refuses %s, naming the field', async (_name, change, field) => {
      const input = { ...valid(), ...change };
      const error = await server.auth.clientConfigurations.create(input as never).catch((e: unknown) => e);
      expect(error).toBeInstanceOf(ValidationError);
      expect((error as ValidationError).field).toBe(field);
    });
  });

  it('updates name, category, description and resources; the tenant never changes', async () => {
    const created = await server.auth.clientConfigurations.create(valid());
    const updated = await server.auth.clientConfigurations.update(created.clientId, {
      name: 'Renamed',
      description: '',
      resources: { subscriptions: { scopes: ['manage.subscriptions'] } },
    });
    expect(updated).toMatchObject({ name: 'Renamed', category: 'payroll', tenant: 'acme' });
    expect(updated).not.toHaveProperty('description');
    expect(updated.resources).toEqual({ subscriptions: { scopes: ['manage.subscriptions'] } });
    await expect(
      server.auth.clientConfigurations.update(created.clientId, { tenant: 'globex' } as never),
    ).rejects.toBeInstanceOf(ValidationError);
    await expect(
      server.auth.clientConfigurations.update(created.clientId, { resources: { scim: { scopes: [] } } }),
    ).rejects.toBeInstanceOf(ValidationError);
    expect((await server.auth.clientConfigurations.get(created.clientId))?.name).toBe('Renamed');
    const response = await postToken(server.oauthUrl, 'grant_type=client_credentials', {
      authorization: basic(created.clientId, created.clientSecret),
    });
    expect(response.body.scope).toBe('manage.subscriptions');
  });

  it('rotates the secret: the old one fails at once, the new one works', async () => {
    const created = await server.auth.clientConfigurations.create(valid());
    const { clientSecret } = await server.auth.clientConfigurations.rotateSecret(created.clientId);
    expect(clientSecret).not.toBe(created.clientSecret);
    const old = await postToken(server.oauthUrl, 'grant_type=client_credentials', { authorization: basic(created.clientId, created.clientSecret) });
    expect(old.status).toBe(401);
    const fresh = await postToken(server.oauthUrl, 'grant_type=client_credentials', { authorization: basic(created.clientId, clientSecret) });
    expect(fresh.status).toBe(200);
  });

  it('a rotation racing an update is never undone, and an update never brings a deleted client back', async () => {
    for (let round = 0; round < 5; round += 1) {
      const created = await server.auth.clientConfigurations.create(valid());
      const [rotated] = await Promise.all([
        server.auth.clientConfigurations.rotateSecret(created.clientId),
        server.auth.clientConfigurations.update(created.clientId, { description: `edit ${round}` }),
      ]);
      const old = await postToken(server.oauthUrl, 'grant_type=client_credentials', { authorization: basic(created.clientId, created.clientSecret) });
      expect(old.status).toBe(401);
      const fresh = await postToken(server.oauthUrl, 'grant_type=client_credentials', { authorization: basic(created.clientId, rotated.clientSecret) });
      expect(fresh.status).toBe(200);
      const results = await Promise.allSettled([
        server.auth.clientConfigurations.delete(created.clientId),
        server.auth.clientConfigurations.update(created.clientId, { name: 'revived?' }),
      ]);
      expect(results[0]).toEqual({ status: 'fulfilled', value: true });
      expect(await server.auth.clientConfigurations.get(created.clientId)).toBeUndefined();
    }
  });

  it('deletes: the client can no longer get tokens', async () => {
    const created = await server.auth.clientConfigurations.create(valid());
    expect(await server.auth.clientConfigurations.delete(created.clientId)).toBe(true);
    expect(await server.auth.clientConfigurations.get(created.clientId)).toBeUndefined();
    expect(await server.auth.clientConfigurations.delete(created.clientId)).toBe(false);
    const response = await postToken(server.oauthUrl, 'grant_type=client_credentials', { authorization: basic(created.clientId, created.clientSecret) });
    expect(response.status).toBe(401);
    await expect(server.auth.clientConfigurations.rotateSecret(created.clientId)).rejects.toBeInstanceOf(NotFound);
  });
});

describe('two server instances sharing Redis', () => {
  let redis: RedisServer;
  let a: RunningServer;
  let b: RunningServer;

  beforeAll(async () => {
    redis = await startRedis();
    const sharedKeys = await import('../../support/keys.js').then((m) => m.testJwks());
    a = await startServer({ store: { type: 'redis', url: redis.url }, keys: sharedKeys });
    b = await startServer({ store: { type: 'redis', url: redis.url }, keys: sharedKeys, baseUrl: a.baseUrl });
  });
  afterAll(async () => {
    await a.stop();
    await b.stop();
    await redis.stop();
  });

  it('a rotation on one instance invalidates the old secret on the other at once', async () => {
    const created = await a.auth.clientConfigurations.create({
      tenant: 'acme',
      name: 'Shared',
      category: 'hr',
      resources: { scim: { scopes: ['scim.read'] } },
    });
    const before = await postToken(b.oauthUrl, 'grant_type=client_credentials', { authorization: basic(created.clientId, created.clientSecret) });
    expect(before.status).toBe(200);
    const { clientSecret } = await a.auth.clientConfigurations.rotateSecret(created.clientId);
    const old = await postToken(b.oauthUrl, 'grant_type=client_credentials', { authorization: basic(created.clientId, created.clientSecret) });
    expect(old.status).toBe(401);
    const fresh = await postToken(b.oauthUrl, 'grant_type=client_credentials', { authorization: basic(created.clientId, clientSecret) });
    expect(fresh.status).toBe(200);
    expect(await b.auth.clientConfigurations.get(created.clientId)).toEqual(await a.auth.clientConfigurations.get(created.clientId));
  });

  it('a change or a deletion on one instance takes effect on the other at once', async () => {
    const created = await a.auth.clientConfigurations.create({
      tenant: 'acme', name: 'Shared', category: 'hr', resources: { scim: { scopes: ['scim.read'] } },
    });
    const auth = { authorization: basic(created.clientId, created.clientSecret) };
    expect((await postToken(b.oauthUrl, 'grant_type=client_credentials', auth)).body.scope).toBe('scim.read');
    await a.auth.clientConfigurations.update(created.clientId, { resources: { users: { scopes: ['user.read'] } } });
    expect((await postToken(b.oauthUrl, 'grant_type=client_credentials', auth)).body.scope).toBe('user.read');
    await a.auth.clientConfigurations.delete(created.clientId);
    expect((await postToken(b.oauthUrl, 'grant_type=client_credentials', auth)).status).toBe(401);
  });

  it('serves repeated token requests of a client without reading its record again', async () => {
    const created = await a.auth.clientConfigurations.create({
      tenant: 'acme', name: 'Busy', category: 'hr', resources: { scim: { scopes: ['scim.read'] } },
    });
    const auth = { authorization: basic(created.clientId, created.clientSecret) };
    await postToken(b.oauthUrl, 'grant_type=client_credentials', auth);
    const inspect = redis.client();
    const reads = async () => Number(/cmdstat_hget:calls=(\d+)/.exec(await inspect.info('commandstats'))?.[1] ?? 0);
    const before = await reads();
    for (let i = 0; i < 20; i += 1) {
      expect((await postToken(b.oauthUrl, 'grant_type=client_credentials', auth)).status).toBe(200);
    }
    expect(await reads()).toBe(before);
  });
});
