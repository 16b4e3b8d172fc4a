import { createMemoryStore } from '../../adapters/memory.js';
import { WindowLimits } from '../../src/limits/window-limits.js';

/** The one shape of every rate limit (src/limits/window-limits.ts). */
describe('window limits (src/limits/window-limits.ts)', () => {
  it('counts each key in its own window, says when a count reached or passed its limit, and peeks without counting', async () => {
    const store = createMemoryStore();
    const windows = new WindowLimits(store.counters, { info() {}, warn() {}, error() {} }, 'refused');
    const watched = [{ key: 'a', limit: { max: 2, windowSeconds: 60 } }, { key: 'b', limit: { max: 1, windowSeconds: 10 } }];
    const first = await windows.count(watched);
    expect(first.map(({ count, reached, over }) => [count.count, reached, over])).toEqual([[1, false, false], [1, true, false]]);
    const second = await windows.count(watched);
    expect(second.map(({ count, reached, over }) => [count.count, reached, over])).toEqual([[2, true, false], [2, true, true]]);
    expect((await windows.peek(watched)).map(({ count }) => count.count)).toEqual([2, 2]);
    expect((await windows.peek(watched)).map(({ count }) => count.count)).toEqual([2, 2]);
    await store.close();
  });

  it('a refusal waits for the latest window, at least a second, is logged once per key and window, and always counted', async () => {
    const store = createMemoryStore();
    const lines: string[] = [];
    let refused = 0;
    const windows = new WindowLimits(store.counters, { info() {}, warn: (message) => lines.push(message), error() {} }, 'too many', () => { refused += 1; });
    const counts = await windows.count([{ key: 'a', limit: { max: 0, windowSeconds: 30 } }, { key: 'b', limit: { max: 0, windowSeconds: 90 } }]);
    const first = windows.refuse(counts, 'a', {});
    const again = windows.refuse(counts, 'a', {});
    expect(first.wait).toBe(90);
    expect([first.firstInWindow, again.firstInWindow]).toEqual([true, false]);
    expect(lines).toEqual(['too many']);
    expect(refused).toBe(2);
    await store.close();
  });
});
