import { createHash } from 'node:crypto';
import { createMemoryStore } from '../../adapters/memory.js';
import { PortalSessions } from '../../src/portal/sessions.js';
import { startRedis } from '../support/redis.js';

/** The portal's sessions and its secret shown once, sealed in the store (memory and Redis). */

const COOKIE_KEY = 'a-cookie-key-of-the-portal-tests-0123456789';

describe('portal sessions (sealed in the store)', () => {
  const digest = (id: string) => createHash('sha256').update(id).digest('base64url');
  const OTHER_KEY = 'another-cookie-key-of-32-characters-at-least';

  it('keep what was saved, under a digest of the ID, sealed; another key, another ID or a changed byte reads nothing', async () => {
    const store = createMemoryStore();
    const adapter = store.engine('PortalSession');
    const sessions = new PortalSessions(adapter, store.engine('PortalSecret'), [COOKIE_KEY], 60);
    const id = PortalSessions.newId();
    await sessions.save(id, { csrf: 'c', accessToken: 'the-access-token', refreshToken: 'the-refresh-token', user: { sub: 'ada' } });
    expect(await sessions.get(id)).toMatchObject({ accessToken: 'the-access-token', user: { sub: 'ada' } });
    expect(await adapter.find(id)).toBeUndefined();
    expect(await new PortalSessions(adapter, store.engine('PortalSecret'), [OTHER_KEY], 60).get(id)).toBeUndefined();
    const stored = await adapter.find(digest(id));
    expect(stored).toEqual({ sealed: expect.stringMatching(/^[A-Za-z0-9_-]+$/) as unknown });
    expect(Buffer.from(String(stored!.sealed), 'base64url').toString('latin1')).not.toContain('the-access-token');
    // Copied under another session's key (someone who can write to the store): it does not open there.
    const attacker = PortalSessions.newId();
    await adapter.upsert(digest(attacker), stored!, 60);
    expect(await sessions.get(attacker)).toBeUndefined();
    const tampered = Buffer.from(String(stored!.sealed), 'base64url');
    tampered[20] = tampered[20]! ^ 1;
    await adapter.upsert(digest(id), { sealed: tampered.toString('base64url') }, 60);
    expect(await sessions.get(id)).toBeUndefined();
    expect(await sessions.get('not-a-session-id')).toBeUndefined();
    expect(await sessions.get(undefined)).toBeUndefined();
    await sessions.save(id, { csrf: 'c' });
    await sessions.delete(id);
    expect(await sessions.get(id)).toBeUndefined();
  });

  it('open with every cookie key (rotation) and seal with the first', async () => {
    const store = createMemoryStore();
    const old = new PortalSessions(store.engine('PortalSession'), store.engine('PortalSecret'), [COOKIE_KEY], 60);
    const rotated = new PortalSessions(store.engine('PortalSession'), store.engine('PortalSecret'), [OTHER_KEY, COOKIE_KEY], 60);
    const id = PortalSessions.newId();
    await old.save(id, { csrf: 'kept' });
    expect(await rotated.get(id)).toEqual({ csrf: 'kept' });
    expect(old.open(rotated.seal({ a: 1 }, 'sign-in'), 'sign-in')).toBeUndefined();
    expect(rotated.open(rotated.seal({ a: 1 }, 'sign-in'), 'sign-in')).toEqual({ a: 1 });
    // A seal opens for its own purpose only (a session is not a sign-in cookie).
    expect(rotated.open(rotated.seal({ a: 1 }, 'sign-in'), 'session x')).toBeUndefined();
  });

  it('give a secret once, to one of two requests that ask at the same time', async () => {
    const redis = await startRedis();
    const { createRedisStore } = await import('../../adapters/redis/index.js');
    const store = await createRedisStore({ url: redis.url });
    try {
      const sessions = new PortalSessions(store.engine('PortalSession'), store.engine('PortalSecret'), [COOKIE_KEY], 60);
      const id = PortalSessions.newId();
      const secret = { what: 'client_configuration' as const, name: 'n', clientId: 'c', clientSecret: 'the-secret-value', regenerated: false };
      await sessions.putSecret(id, secret);
      const raw = await redis.client().keys('*PortalSecret*');
      expect(raw).toHaveLength(1);
      expect(JSON.stringify(await redis.client().hgetall(raw[0]!))).not.toContain('the-secret-value');
      const taken = await Promise.all([sessions.takeSecret(id), sessions.takeSecret(id), sessions.takeSecret(id)]);
      expect(taken.filter(Boolean)).toEqual([secret]);
      expect(await sessions.takeSecret(id)).toBeUndefined();
    } finally {
      await store.close();
      await redis.stop();
    }
  });

  it.each(['memory', 'redis'] as const)('%s: keep a session\'s pending action sealed beside its secret, give it once to one of three at the same time, to that session only', async (kind) => {
    const redis = kind === 'redis' ? await startRedis() : undefined;
    const { createRedisStore } = await import('../../adapters/redis/index.js');
    const store = redis ? await createRedisStore({ url: redis.url }) : createMemoryStore();
    try {
      const sessions = new PortalSessions(store.engine('PortalSession'), store.engine('PortalSecret'), [COOKIE_KEY], 60);
      const id = PortalSessions.newId();
      const action = { route: 'deleteClient', id: 'c-1', fields: [['name', 'the-form-value']] as Array<[string, string]>, sub: 'ada', tenant: 'acme', createdAt: Date.now() };
      await sessions.putAction(id, action);
      // A secret of the same session is apart from it.
      await sessions.putSecret(id, { what: 'client_configuration', name: 'n', clientId: 'c', clientSecret: 's', regenerated: false });
      if (redis) expect(JSON.stringify(await Promise.all((await redis.client().keys('*PortalSecret*')).map((key) => redis.client().hgetall(key))))).not.toContain('the-form-value');
      expect(await sessions.takeAction(PortalSessions.newId())).toBeUndefined();
      const taken = await Promise.all([sessions.takeAction(id), sessions.takeAction(id), sessions.takeAction(id)]);
      expect(taken.filter(Boolean)).toEqual([action]);
      expect(await sessions.takeAction(id)).toBeUndefined();
      expect(await sessions.takeSecret(id)).toMatchObject({ clientSecret: 's' });
    } finally {
      await store.close();
      await redis?.stop();
    }
  });
});
