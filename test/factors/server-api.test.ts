import { Redis } from 'ioredis';
import { createRedisStore } from '../../adapters/redis/index.js';
import { AuditTrail, DEFAULT_AUDIT_SETTINGS } from '../../src/audit/trail.js';
import { Factors } from '../../src/factors/index.js';
import { totpCode, totpStep } from '../../src/factors/totp.js';
import { factorKeysOf } from '../../src/compose/store.js';
import { createAuthServer } from '../../src/index.js';
import { resolveOptions } from '../../src/options.js';
import { capturingLogger, demoApis } from '../support/fixtures.js';
import { startServer } from '../support/server.js';
import { useStore } from '../support/stores.js';

const FACTOR_KEY = 'factor-key-of-the-server-0123456789abcdef';
const COOKIE_KEY = 'cookie-key-of-the-server-0123456789abcdef';
const alice = { tenant: 'acme', sub: 'alice' };

/** The server's factors API (auth.factors) and its factorKeys option, on a real Redis. */
describe('auth.factors and factorKeys', () => {
  const redis = useStore('redis');

  it('lists and resets what a user enrolled on another instance with the same factorKeys; the reset is audited with the operator', async () => {
    const store = redis.option() as { type: 'redis'; url: string; keyPrefix: string };
    const server = await startServer({ store, factorKeys: [FACTOR_KEY], cookieKeys: [COOKIE_KEY] });
    // A second instance of the factors (as another server process would be) on the same Redis.
    const other = await createRedisStore({ url: store.url, keyPrefix: store.keyPrefix });
    const { logger } = capturingLogger();
    try {
      const factors = new Factors(other.records, { keys: [FACTOR_KEY], issuerName: 'x' }, new AuditTrail(other, DEFAULT_AUDIT_SETTINGS, logger, undefined));
      expect(await server.auth.factors.list(alice)).toEqual([]);
      const { secret } = await factors.startAuthenticatorApp(alice, 'alice');
      expect(await factors.confirmAuthenticatorApp(alice, totpCode(secret, totpStep(Date.now())), { actor: { type: 'user', id: 'alice' } })).toEqual({ accepted: true });
      await factors.newRecoveryCodes(alice, { actor: { type: 'user', id: 'alice' } });
      const listed = await server.auth.factors.list(alice);
      expect(listed).toEqual([
        { id: expect.any(String), type: 'totp', createdAt: expect.any(String) },
        { id: expect.any(String), type: 'recovery_codes', createdAt: expect.any(String) },
      ]);
      expect(JSON.stringify(listed)).not.toContain(secret);

      // What a user with an app and recovery codes costs in Redis.
      const client = new Redis(store.url);
      const [key] = await client.keys(`${store.keyPrefix}rec:*factors*`);
      const bytes = await client.memory('USAGE', key!);
      client.disconnect();
      // Measured 1,184 bytes with the factor ids (docs/operations.md#second-factors says about 1,200).
      expect(bytes).toBeLessThan(1300);

      expect(await server.auth.factors.reset(alice)).toBe(true);
      expect(await server.auth.factors.list(alice)).toEqual([]);
      const { events } = await server.auth.audit.list({ tenant: 'acme', type: 'factor.reset' });
      expect(events).toEqual([expect.objectContaining({ type: 'factor.reset', actor: { type: 'operator' }, target: { type: 'user', id: 'alice' } })]);
      expect(await server.auth.factors.reset(alice)).toBe(false);
      await expect(server.auth.factors.list({ tenant: 'acme', sub: '' })).rejects.toThrow('sub: must be a string of 1 to 255 characters');
      expect(server.logLines.join('\n')).not.toContain('NO FACTOR KEYS CONFIGURED');
    } finally {
      await other.close();
      await server.stop();
    }
  });

  it('enrollTotp and remove (the public contract): the app is enrolled at once, listed, removed by its id; audited with the operator', async () => {
    const server = await startServer({ factorKeys: [FACTOR_KEY] });
    try {
      const enrolment = await server.auth.factors.enrollTotp(alice);
      expect(Object.keys(enrolment).sort()).toEqual(['factorId', 'otpauthUri', 'secret']);
      expect(enrolment.otpauthUri).toContain(':alice?');
      expect(await server.auth.factors.list(alice)).toEqual([{ id: enrolment.factorId, type: 'totp', createdAt: expect.any(String) }]);
      const named = await server.auth.factors.enrollTotp({ ...alice, accountName: 'alice@acme.example' });
      expect(named.otpauthUri).toContain(':alice%40acme.example?');
      expect(await server.auth.factors.remove({ ...alice, id: enrolment.factorId })).toBe(false);
      expect(await server.auth.factors.remove({ ...alice, id: named.factorId })).toBe(true);
      expect(await server.auth.factors.list(alice)).toEqual([]);
      const { events } = await server.auth.audit.list({ tenant: 'acme' });
      expect(events.map((event) => [event.type, event.actor.type])).toEqual([['factor.removed', 'operator'], ['factor.added', 'operator'], ['factor.added', 'operator']]);
      await expect(server.auth.factors.enrollTotp({ tenant: 'acme', sub: '' })).rejects.toThrow('sub: must be a string');
      expect(server.logLines.join('\n')).not.toContain(named.secret);
    } finally {
      await server.stop();
    }
  });

  it('without factorKeys: derived from cookieKeys, with a warning at start', async () => {
    const server = await startServer({ cookieKeys: [COOKIE_KEY] });
    try {
      expect(server.logLines.filter((line) => line.includes('NO FACTOR KEYS CONFIGURED'))).toHaveLength(1);
      expect(await server.auth.factors.list(alice)).toEqual([]);
    } finally {
      await server.stop();
    }
  });

  it('the server seals with factorKeys when given, else with the cookie keys (and warns)', () => {
    const { logger, lines } = capturingLogger();
    const given = resolveOptions({ baseUrl: 'http://127.0.0.1:1', apis: demoApis, factorKeys: [FACTOR_KEY, COOKIE_KEY] });
    expect(factorKeysOf(given, [COOKIE_KEY], logger)).toEqual([FACTOR_KEY, COOKIE_KEY]);
    expect(lines).toEqual([]);
    expect(factorKeysOf(resolveOptions({ baseUrl: 'http://127.0.0.1:1', apis: demoApis }), [COOKIE_KEY], logger)).toEqual([COOKIE_KEY]);
    expect(lines).toEqual([expect.stringContaining('NO FACTOR KEYS CONFIGURED')]);
  });

  it.each([
    [['short'], 'factorKeys.0: factor keys need at least 32 characters'],
    [[], 'factorKeys'],
    ['not-a-list-of-keys-0123456789abcdefghijkl', 'factorKeys'],
  ])('refuses factorKeys %j naming the option', async (factorKeys, message) => {
    await expect(createAuthServer({ baseUrl: 'http://127.0.0.1:1', apis: demoApis, factorKeys: factorKeys as string[] })).rejects.toThrow(message);
  });
});
