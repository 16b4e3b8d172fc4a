import { constantTimeEqual } from '../../policies/constant-time.js';

describe('constant-time comparison (policies/constant-time.ts)', () => {
  it.each([
    ['equal strings', 'secret', 'secret', true],
    ['different strings', 'secret', 'secreT', false],
    ['a prefix', 'secre', 'secret', false],
    ['empty and not', '', 'x', false],
    ['equal buffers', Buffer.from([1, 2, 3]), Buffer.from([1, 2, 3]), true],
    ['buffers of other lengths', Buffer.from([1, 2]), Buffer.from([1, 2, 3]), false],
  ] as const)('%s → %s', (_what, actual, expected, equal) => {
    expect(constantTimeEqual(actual, expected)).toBe(equal);
  });
});
