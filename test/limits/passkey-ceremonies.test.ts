/**
 * Passkey ceremonies per address on their own (src/limits/passkey-ceremonies.ts): `max` per window
 * from one address, then none until the window ends (logged once, each refusal told); other
 * addresses unaffected; the limit off (`false`) starts every ceremony and counts nothing.
 */
import { createMemoryStore } from '../../adapters/memory.js';
import type { Store } from '../../adapters/types.js';
import { PasskeyCeremonyLimit } from '../../src/limits/passkey-ceremonies.js';
import { capturingLogger } from '../support/fixtures.js';

describe('passkey ceremonies per address (src/limits/passkey-ceremonies.ts)', () => {
  let store: Store;
  beforeEach(() => {
    store = createMemoryStore();
  });
  afterEach(() => store.close());

  it('max per window from one address, then refused (logged once, each refusal told); another address still starts', async () => {
    const { lines, logger } = capturingLogger();
    let refused = 0;
    const limit = new PasskeyCeremonyLimit(store.counters, { max: 2, windowSeconds: 60 }, logger, () => (refused += 1));
    const answers = [];
    for (let n = 0; n < 4; n += 1) answers.push(await limit.allows('198.51.100.7'));
    expect(answers).toEqual([true, true, false, false]);
    expect(refused).toBe(2);
    const logged = lines.filter((line) => line.includes('passkey ceremonies refused'));
    expect(logged).toHaveLength(1);
    // The line says who and how many, and until when (the window of 60 s, just begun).
    const line = JSON.parse(logged[0]!) as { address: string; ceremonies: number; retry_after: number };
    expect(line).toMatchObject({ address: '198.51.100.7', ceremonies: 3 });
    expect(line.retry_after).toBeGreaterThan(30);
    expect(await limit.allows('198.51.100.8')).toBe(true);
  });

  it('off (false): every ceremony starts and nothing is counted', async () => {
    const { lines, logger } = capturingLogger();
    const limit = new PasskeyCeremonyLimit(store.counters, false, logger);
    for (let n = 0; n < 50; n += 1) expect(await limit.allows('198.51.100.7')).toBe(true);
    expect(lines).toEqual([]);
    expect(await store.counters.peek(['passkey:addr:198.51.100.7'])).toEqual([expect.objectContaining({ count: 0 })]);
  });
});
