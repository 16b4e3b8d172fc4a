import { addKey, nextSafeStep, promoteKey, retireKey, rotationStates, type RotatingKey } from '../../policies/key-rotation.js';

/*
 * The safe order of a signing-key rotation (policies/key-rotation.ts), step by step: what each step
 * does to the key set, and every refusal with the moment it becomes safe.
 */

const MIN = 60_000;
const WAITS = { publishWaitSeconds: 600, retireWaitSeconds: 3900 };
const T0 = Date.UTC(2026, 10, 26, 12, 0, 0);

const es1: RotatingKey = { kid: 'es1', alg: 'ES256', addedAt: T0 - 100 * MIN, promotedAt: T0 - 100 * MIN };
const rs1: RotatingKey = { kid: 'rs1', alg: 'RS256', addedAt: T0 - 100 * MIN, promotedAt: T0 - 100 * MIN };
const es2: RotatingKey = { kid: 'es2', alg: 'ES256', addedAt: T0 };

const kids = (outcome: { keys: RotatingKey[] } | { refused: string }) => ('keys' in outcome ? outcome.keys.map((key) => key.kid) : outcome.refused);

describe('the safe order of a signing-key rotation (policies/key-rotation.ts)', () => {
  it('states the first key of each algorithm signing, the others published', () => {
    expect(rotationStates([es1, rs1, es2])).toEqual(['signing', 'signing', 'published']);
    expect(rotationStates([es2, es1])).toEqual(['signing', 'published']);
  });

  describe('add', () => {
    it('appends the key, published, with the time it was added', () => {
      const outcome = addKey([es1, rs1], { ...es2, addedAt: 0 }, T0);
      expect(kids(outcome)).toEqual(['es1', 'rs1', 'es2']);
      expect('keys' in outcome && outcome.keys[2]).toEqual({ kid: 'es2', alg: 'ES256', addedAt: T0 });
      expect('keys' in outcome && rotationStates(outcome.keys)[2]).toBe('published');
    });

    it('makes the first key of a new algorithm sign at once (nothing signed it before)', () => {
      const outcome = addKey([es1], { kid: 'ed1', alg: 'EdDSA', addedAt: 0 }, T0);
      expect('keys' in outcome && outcome.keys[1]).toEqual({ kid: 'ed1', alg: 'EdDSA', addedAt: T0, promotedAt: T0 });
    });

    it('refuses a kid the set already has', () => {
      expect(kids(addKey([es1, rs1], { ...es1 }, T0))).toMatch(/already in the key set/);
    });
  });

  describe('promote', () => {
    const set = [es1, rs1, es2];

    it.each([
      ['at once after it was added', T0, false],
      ['one second before the publish wait ends', T0 + WAITS.publishWaitSeconds * 1000 - 1000, false],
      ['when the publish wait ends', T0 + WAITS.publishWaitSeconds * 1000, true],
      ['later', T0 + 60 * MIN, true],
    ])('%s: %s', (_when, now, allowed) => {
      const outcome = promoteKey(set, 'es2', WAITS, now);
      if (!allowed) {
        expect(outcome).toEqual({ refused: expect.stringMatching(/published less than 600 s ago/), safeAt: T0 + WAITS.publishWaitSeconds * 1000 });
        return;
      }
      expect(kids(outcome)).toEqual(['es2', 'es1', 'rs1']);
      const keys = (outcome as { keys: RotatingKey[] }).keys;
      expect(rotationStates(keys)).toEqual(['signing', 'published', 'signing']);
      expect(keys[0]).toMatchObject({ kid: 'es2', promotedAt: now });
      expect(keys[1]).toMatchObject({ kid: 'es1', demotedAt: now });
      expect(keys[2]).toEqual(rs1);
    });

    it("takes the place of its own algorithm's signer, wherever that is, and demotes that one only", () => {
      const outcome = promoteKey([rs1, es1, es2], 'es2', WAITS, T0 + 60 * MIN);
      expect(kids(outcome)).toEqual(['rs1', 'es2', 'es1']);
      const keys = (outcome as { keys: RotatingKey[] }).keys;
      expect(keys[0]).toEqual(rs1);
      expect(keys[2]).toMatchObject({ kid: 'es1', demotedAt: T0 + 60 * MIN });
      expect(rotationStates(keys)).toEqual(['signing', 'signing', 'published']);
    });

    it('with force, at once (a compromised key)', () => {
      expect(kids(promoteKey(set, 'es2', WAITS, T0, true))).toEqual(['es2', 'es1', 'rs1']);
    });

    it('refuses the key that signs already, and an unknown kid, even with force', () => {
      expect(promoteKey(set, 'es1', WAITS, T0 + 100 * MIN, true)).toEqual({ refused: 'key es1 already signs ES256' });
      expect(promoteKey(set, 'nope', WAITS, T0, true)).toEqual({ refused: 'no key with kid nope in the key set' });
    });
  });

  describe('retire', () => {
    const promotedAt = T0 + 10 * MIN;
    const after = (promoteKey([es1, rs1, es2], 'es2', WAITS, promotedAt) as { keys: RotatingKey[] }).keys;

    it.each([
      ['at once after the switch', promotedAt, false],
      ['one second before the retire wait ends', promotedAt + WAITS.retireWaitSeconds * 1000 - 1000, false],
      ['when the retire wait ends', promotedAt + WAITS.retireWaitSeconds * 1000, true],
    ])('the former signing key %s: %s', (_when, now, allowed) => {
      const outcome = retireKey(after, 'es1', WAITS, now);
      if (!allowed) {
        expect(outcome).toEqual({ refused: expect.stringMatching(/signed tokens less than 3900 s ago/), safeAt: promotedAt + WAITS.retireWaitSeconds * 1000 });
        return;
      }
      expect(kids(outcome)).toEqual(['es2', 'rs1']);
    });

    it('with force, at once', () => {
      expect(kids(retireKey(after, 'es1', WAITS, promotedAt, true))).toEqual(['es2', 'rs1']);
    });

    it('a key that never signed, at once (no token carries it)', () => {
      expect(kids(retireKey([es1, rs1, es2], 'es2', WAITS, T0))).toEqual(['es1', 'rs1']);
    });

    it('never the key that signs, not even with force (the algorithm would have none)', () => {
      expect(retireKey(after, 'es2', WAITS, T0 + 1000 * MIN, true)).toEqual({ refused: 'key es2 signs ES256: promote another ES256 key first' });
      expect(retireKey([es1, rs1], 'rs1', WAITS, T0, true)).toEqual({ refused: 'key rs1 signs RS256: promote another RS256 key first' });
      expect(retireKey(after, 'nope', WAITS, T0, true)).toEqual({ refused: 'no key with kid nope in the key set' });
    });
  });

  it('names the next safe step of each key: promote after the publish wait, retire after the retire wait', () => {
    const after = (promoteKey([es1, rs1, es2], 'es2', WAITS, T0 + 20 * MIN) as { keys: RotatingKey[] }).keys;
    const states = rotationStates(after);
    expect(after.map((key, index) => nextSafeStep(key, states[index]!, WAITS))).toEqual([
      undefined,
      { step: 'retire', safeAt: T0 + 20 * MIN + WAITS.retireWaitSeconds * 1000 },
      undefined,
    ]);
    expect(nextSafeStep(es2, 'published', WAITS)).toEqual({ step: 'promote', safeAt: T0 + WAITS.publishWaitSeconds * 1000 });
  });
});
