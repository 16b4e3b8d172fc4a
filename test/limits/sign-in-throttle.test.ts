/**
 * The sign-in throttle and holds on their own (src/limits/sign-in.ts), for the two set-ups the HTTP
 * tests do not reach: a server whose failed-sign-in limits are off (failures still logged, with
 * the hint and never the username) and the CLI's unlock, which has no AccountStore and takes the
 * tenant it is given as stated.
 */
import { createMemoryStore } from '../../adapters/memory.js';
import type { Store } from '../../adapters/types.js';
import { createHmac } from 'node:crypto';
import { SignInHolds, SignInThrottle, waitInWords } from '../../src/limits/sign-in.js';
import { capturingLogger } from '../support/fixtures.js';

const COOKIE_KEYS = ['a-cookie-key-of-at-least-32-characters!'];
const LIMITS = { perUsername: { max: 3, windowSeconds: 60 }, perAddress: { max: 100, windowSeconds: 60 } };
const OPERATOR = { actor: { type: 'operator' as const } };

describe('the sign-in throttle and holds (src/limits/sign-in.ts)', () => {
  let store: Store;
  beforeEach(() => {
    store = createMemoryStore();
  });
  afterEach(() => store.close());

  const events = () => {
    const seen = { failed: 0, refused: 0 };
    return { seen, failed: () => (seen.failed += 1), refused: () => (seen.refused += 1) };
  };

  it('limits off: a failure is logged with the client, the address and the hint (never the username), nothing is counted or held', async () => {
    const { lines, logger } = capturingLogger();
    const counted = events();
    const throttle = new SignInThrottle(store.counters, false, COOKIE_KEYS, logger, counted);
    const hint = throttle.hint('Alice@Acme.example');
    for (let n = 0; n < 5; n += 1) await throttle.failed(hint, '198.51.100.7', 'app-1');
    expect(counted.seen).toEqual({ failed: 5, refused: 0 });
    expect(lines.map((line) => JSON.parse(line) as unknown)).toEqual(Array.from({ length: 5 }, () => ({ level: 'info', message: 'sign-in failed', client_id: 'app-1', address: '198.51.100.7', user_hint: hint })));
    expect(lines.join('\n')).not.toMatch(/alice/i);
    expect(await throttle.wait(hint, '198.51.100.7', false)).toBeUndefined();
    // Nothing to lift: the counters were never written.
    expect(await new SignInHolds(store.counters, COOKIE_KEYS, undefined, undefined).unlock({ username: 'alice@acme.example' }, OPERATOR)).toEqual({ unlocked: false });
  });

  it("the CLI's unlock (no AccountStore, the tenant as stated): a held username of that tenant is lifted", async () => {
    const { logger } = capturingLogger();
    const throttle = new SignInThrottle(store.counters, LIMITS, COOKIE_KEYS, logger, events());
    const hint = throttle.hint('alice@acme.example');
    for (let n = 0; n < LIMITS.perUsername.max; n += 1) await throttle.failed(hint, `198.51.100.${n}`, 'app-1');
    expect(await throttle.wait(hint, '198.51.100.50', false)).toBeGreaterThan(0);
    const cli = new SignInHolds(store.counters, COOKIE_KEYS, undefined, undefined, true);
    expect(await cli.unlock({ tenant: 'acme', username: 'ALICE@acme.example' }, OPERATOR)).toEqual({ unlocked: true });
    expect(await throttle.wait(hint, '198.51.100.50', false)).toBeUndefined();
    expect(await cli.unlock({ tenant: 'acme', username: 'alice@acme.example' }, OPERATOR)).toEqual({ unlocked: false });
  });

  it('without the CLI flag, a tenant cannot be checked without findByUsername (refused, nothing lifted)', async () => {
    const { logger } = capturingLogger();
    const throttle = new SignInThrottle(store.counters, LIMITS, COOKIE_KEYS, logger, events());
    const hint = throttle.hint('alice@acme.example');
    for (let n = 0; n < LIMITS.perUsername.max; n += 1) await throttle.failed(hint, `198.51.100.${n}`, 'app-1');
    await expect(new SignInHolds(store.counters, COOKIE_KEYS, undefined, undefined).unlock({ tenant: 'acme', username: 'alice@acme.example' }, OPERATOR)).rejects.toThrow(/findByUsername/);
    expect(await throttle.wait(hint, '198.51.100.50', false)).toBeGreaterThan(0);
  });

  it('the username hint is a stored format: a known answer (the HMAC of the lower-cased, NFKC-folded username under a key derived from the first cookie key)', () => {
    const throttle = new SignInThrottle(store.counters, false, COOKIE_KEYS, capturingLogger().logger, events());
    const key = createHmac('sha256', COOKIE_KEYS[0]!).update('talent-auth sign-in username hint').digest();
    const expected = createHmac('sha256', key).update('alice@acme.example').digest('base64url').slice(0, 22);
    expect(throttle.hint('ＡＬＩＣＥ@Acme.example')).toBe(expected);
    expect(throttle.hint('alice@acme.example')).toBe(expected);
  });

  it('a refusal is logged once per window with what was counted: the address, the hint and both counts', async () => {
    const { lines, logger } = capturingLogger();
    const counted = events();
    const throttle = new SignInThrottle(store.counters, LIMITS, COOKIE_KEYS, logger, counted);
    const hint = throttle.hint('alice@acme.example');
    for (let n = 0; n < LIMITS.perUsername.max; n += 1) await throttle.failed(hint, '198.51.100.7', 'app-1');
    expect(counted.seen).toEqual({ failed: 3, refused: 0 });
    expect(lines.map((line) => JSON.parse(line) as Record<string, unknown>).at(-1)).toEqual({ level: 'info', message: 'sign-in failed', client_id: 'app-1', address: '198.51.100.7', user_hint: hint, failures: [3, 3] });
    expect(await throttle.wait(hint, '198.51.100.7', false)).toBeGreaterThan(0);
    expect(lines.map((line) => JSON.parse(line) as Record<string, unknown>).at(-1)).toMatchObject({ message: 'sign-in refused: too many failures', address: '198.51.100.7', user_hint: hint, failures: [3, 3] });
    expect(counted.seen).toEqual({ failed: 3, refused: 1 });
    // Another user held, or another address: each its own line in the window.
    const other = throttle.hint('bob@acme.example');
    for (let n = 0; n < LIMITS.perUsername.max; n += 1) await throttle.failed(other, `198.51.100.${20 + n}`, 'app-1');
    expect(await throttle.wait(other, '198.51.100.30', false)).toBeGreaterThan(0);
    const refusals = lines.map((line) => JSON.parse(line) as Record<string, unknown>).filter((line) => line['message'] === 'sign-in refused: too many failures');
    expect(refusals.map((line) => line['user_hint'])).toEqual([hint, other]);
    const flooding = new SignInThrottle(store.counters, { ...LIMITS, perAddress: { max: 2, windowSeconds: 60 } }, COOKIE_KEYS, logger, counted);
    for (const address of ['198.51.100.98', '198.51.100.99']) {
      for (const name of ['c1', 'c2', 'c3']) await flooding.failed(flooding.hint(`${address}-${name}`), address, 'app-1');
      expect(await flooding.wait(flooding.hint('c4'), address, false)).toBeGreaterThan(0);
      expect(await flooding.wait(flooding.hint('c5'), address, false)).toBeGreaterThan(0);
    }
    const byAddress = lines.map((line) => JSON.parse(line) as Record<string, unknown>).filter((line) => line['message'] === 'sign-in refused: too many failures' && String(line['address']).startsWith('198.51.100.9'));
    expect(byAddress.map((line) => line['address'])).toEqual(['198.51.100.98', '198.51.100.99']);
  });

  it.each([
    [1, '1 second'],
    [2, '2 seconds'],
    [89, '89 seconds'],
    [90, '2 minutes'],
    [120, '2 minutes'],
    [121, '3 minutes'],
  ])('a wait of %i s reads "%s"', (seconds, words) => {
    expect(waitInWords(seconds)).toBe(words);
  });

  it.each([
    [{ username: '' }, 'username', 'must not be empty'],
    [{ username: '   ' }, 'username', 'must not be empty'],
    [{ username: 'a'.repeat(201) }, 'username', 'must be at most 200 characters'],
    [{ username: 'alice@acme.example', tenant: '' }, 'tenant', 'must not be empty'],
    [{ username: 42 }, 'username', 'must not be empty'],
    [{ username: 'alice@acme.example', tenant: 7 }, 'tenant', 'must not be empty'],
  ])('an unlock of %j is refused (ValidationError on its field)', async (request, field, words) => {
    const holds = new SignInHolds(store.counters, COOKIE_KEYS, undefined, undefined, true);
    await expect(holds.unlock(request as never, OPERATOR)).rejects.toMatchObject({ field, description: expect.stringContaining(words) });
  });

  it('a username of exactly 200 characters may be unlocked', async () => {
    await expect(new SignInHolds(store.counters, COOKIE_KEYS, undefined, undefined, true).unlock({ username: 'a'.repeat(200) }, OPERATOR)).resolves.toEqual({ unlocked: false });
  });

  it('with findByUsername, the lookup decides even where the tenant would be taken as stated: another tenant\'s user is not lifted', async () => {
    const throttle = new SignInThrottle(store.counters, LIMITS, COOKIE_KEYS, capturingLogger().logger, events());
    const hint = throttle.hint('bob@globex.example');
    for (let n = 0; n < LIMITS.perUsername.max; n += 1) await throttle.failed(hint, `198.51.100.${n}`, 'app-1');
    const lookup = { findByUsername: async (username: string) => (username === 'bob@globex.example' ? { sub: 'u-bob', tenant: 'globex' } : undefined) };
    const holds = new SignInHolds(store.counters, COOKIE_KEYS, lookup, undefined, true);
    expect(await holds.unlock({ tenant: 'acme', username: 'bob@globex.example' }, OPERATOR)).toEqual({ unlocked: false });
    expect(await throttle.wait(hint, '198.51.100.50', false)).toBeGreaterThan(0);
    expect(await holds.unlock({ tenant: 'globex', username: 'bob@globex.example' }, OPERATOR)).toEqual({ unlocked: true });
  });
});
