import { Sealer } from '../../src/records/sealed.js';

/** Sealed values (src/records/sealed.ts): bound to their use and purpose, opened by every key of a rotation. */
describe('sealed values (src/records/sealed.ts)', () => {
  const keys = ['a-cookie-key-of-at-least-32-characters', 'an-older-cookie-key-of-32-characters!'];

  it('opens what it sealed, for the same purpose only', () => {
    const sealer = new Sealer(keys, 'label');
    const sealed = sealer.seal({ a: 1 }, 'purpose');
    expect(sealer.open(sealed, 'purpose')).toEqual({ a: 1 });
    expect(sealer.open(sealed, 'another purpose')).toBeUndefined();
    expect(new Sealer(keys, 'another label').open(sealed, 'purpose')).toBeUndefined();
    expect(sealed).not.toContain('"a"');
  });

  it('a changed byte, garbage or an overlong value does not open', () => {
    const sealer = new Sealer(keys, 'label');
    const sealed = sealer.seal('value', 'p');
    const changed = `${sealed.slice(0, 20)}${sealed[20] === 'A' ? 'B' : 'A'}${sealed.slice(21)}`;
    for (const bad of [changed, 'x', '', 'A'.repeat(40_000), 42]) expect(sealer.open(bad, 'p')).toBeUndefined();
  });

  it('seals with the first key and opens with any: a new key first, the old ones still open', () => {
    const before = new Sealer([keys[1]!], 'label').seal('kept', 'p');
    expect(new Sealer(keys, 'label').open(before, 'p')).toBe('kept');
    expect(new Sealer([keys[0]!], 'label').open(before, 'p')).toBeUndefined();
  });
});
