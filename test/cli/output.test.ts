import { safe } from '../../src/cli/output.js';

describe('what the CLI prints of records (src/cli/output.ts)', () => {
  it.each([
    ['an escape sequence', '\u001b[2J', '\\u{1b}[2J'],
    ['a right-to-left override', 'Pay\u202Eroll', 'Pay\\u{202e}roll'],
    ['a zero-width space', 'a\u200Bb', 'a\\u{200b}b'],
    ['a NUL and a line break', 'a\u0000\nb', 'a\\u{0}\\u{a}b'],
    ['a C1 control', 'a\u009bb', 'a\\u{9b}b'],
    ['a lone surrogate', 'a\uD800', 'a\\u{d800}'],
    ['plain text of any script, emoji included', 'Zürich 給与 💸', 'Zürich 給与 💸'],
  ])('escapes %s', (_what, text, printed) => {
    expect(safe(text)).toBe(printed);
  });
});
