import { displayTextProblem } from '../../policies/display-text.js';

describe('text shown to people (policies/display-text.ts)', () => {
  it.each([
    ['a right-to-left override', 'Payroll\u202Egnp.exe', 'U+202E at position 8'],
    ['a left-to-right isolate', '\u2066Payroll', 'U+2066 at position 1'],
    ['a NUL', 'Pay\u0000roll', 'U+0000 at position 4'],
    ['an escape sequence', '\u001b[31mred', 'U+001B at position 1'],
    ['a DEL', 'a\u007f', 'U+007F at position 2'],
    ['a C1 control', 'a\u0085b', 'U+0085 at position 2'],
    ['a zero-width space', 'Pay\u200Broll', 'U+200B at position 4'],
    ['a zero-width joiner', 'a\u200Db', 'U+200D at position 2'],
    ['a byte order mark', '\uFEFFPayroll', 'U+FEFF at position 1'],
    ['a soft hyphen', 'Pay\u00ADroll', 'U+00AD at position 4'],
    ['a line separator', 'a\u2028b', 'U+2028 at position 2'],
    ['a paragraph separator', 'a\u2029b', 'U+2029 at position 2'],
    ['a lone high surrogate', 'a\uD800b', 'U+D800 at position 2'],
    ['a lone low surrogate', 'a\uDC00', 'U+DC00 at position 2'],
    ['a tab', 'a\tb', 'U+0009 at position 2'],
    ['a line break in a name', 'a\nb', 'U+000A at position 2'],
  ])('refuses %s', (_what, text, where) => {
    expect(displayTextProblem(text)).toBe(`must not contain control, format or bidirectional characters (${where})`);
  });

  it.each([
    ['letters of any script', 'Gehaltsabrechnung für Zürich – 給与 – كشف الرواتب'],
    ['an emoji (a surrogate pair, not a lone half)', 'Payroll 💸'],
    ['punctuation and spaces', 'HR: "sync" (v2) & co.'],
    ['a no-break space', 'a\u00A0b'],
  ])('accepts %s', (_what, text) => {
    expect(displayTextProblem(text)).toBeUndefined();
  });

  it('a description may hold line breaks, nothing else of the kind', () => {
    expect(displayTextProblem('line one\nline two', { lineBreaks: true })).toBeUndefined();
    expect(displayTextProblem('line one\r\nline two', { lineBreaks: true })).toMatch(/U\+000D/);
    expect(displayTextProblem('a\n\u202Eb', { lineBreaks: true })).toMatch(/U\+202E at position 3/);
  });
});
