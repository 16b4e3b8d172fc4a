import { markerTags } from '../../adapters/redis/epoch.js';
import { keySlot } from '../support/slots.js';

/** A slot map of masters owning equal ranges, in order (`slots[slot][0]` is the master). */
function slotMap(masters: string[]): string[][] {
  const size = Math.ceil(16384 / masters.length);
  return Array.from({ length: 16384 }, (_, slot) => [masters[Math.floor(slot / size)]!]);
}

describe('the masters\' epoch markers (adapters/redis/epoch.ts)', () => {
  it('gives each master one tag of its own slots, the same on every instance', () => {
    const slots = slotMap(['a:1', 'b:1', 'c:1']);
    const tags = markerTags(slots);
    expect(tags).toHaveLength(3);
    expect(new Set(tags.map((tag) => slots[keySlot(`{${tag}}`)]![0]))).toEqual(new Set(['a:1', 'b:1', 'c:1']));
    expect(markerTags(slotMap(['a:1', 'b:1', 'c:1']))).toEqual(tags);
  });

  it('keeps the tags through a failover (a replica serving the same slots), and covers a master added', () => {
    const tags = markerTags(slotMap(['a:1', 'b:1', 'c:1']));
    expect(markerTags(slotMap(['a:1', 'b-replica:1', 'c:1']))).toEqual(tags);
    const four = markerTags(slotMap(['a:1', 'b:1', 'c:1', 'd:1']));
    expect(four).toHaveLength(4);
  });

  it('has no tag for a map without masters (slots not known yet)', () => {
    expect(markerTags([])).toEqual([]);
    expect(markerTags(Array.from({ length: 16384 }, () => undefined))).toEqual([]);
  });
});
