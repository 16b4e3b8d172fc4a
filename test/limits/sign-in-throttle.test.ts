/**
 * The sign-in throttle and holds on their own (src/limits/sign-in.ts), for the two set-ups the HTTP
 * tests do not reach: a server whose failed-sign-in limits are off (failures still logged, with
 * the hint and never the username) and the CLI's unlock, which has no AccountStore and takes the
 * tenant it is given as stated.
 */
import { createMemoryStore } from '../../adapters/memory.js';
import type { Store } from '../../adapters/types.js';
import { SignInHolds, SignInThrottle } from '../../src/limits/sign-in.js';
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
});
