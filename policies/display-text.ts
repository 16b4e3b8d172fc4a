/**
 * TEXT SHOWN TO PEOPLE (names and descriptions of clients and apps: on the consent page, in the
 * portal, in the CLI's output) holds no character that changes how the text around it looks:
 *
 * - control characters (C0, DEL, C1): a NUL, an escape sequence that drives a terminal, a tab;
 * - format characters, among them the bidirectional overrides and isolates (U+202A..U+202E,
 *   U+2066..U+2069) that reverse a heading, and the zero-width characters that hide a difference
 *   between two names;
 * - line and paragraph separators, and lone surrogates (half a character, invalid in UTF-8).
 *
 * A description may hold line breaks (`\n`; `\r\n` is taken as one), a name not.
 */

/** The characters refused in shown text (see above). */
const UNSAFE = /[\p{Cc}\p{Cf}\p{Cs}\p{Zl}\p{Zp}]/u;
const UNSAFE_BUT_NEWLINE = /(?!\n)[\p{Cc}\p{Cf}\p{Cs}\p{Zl}\p{Zp}]/u;

/** `U+202E` for a character. */
export function codePointName(char: string): string {
  return `U+${char.codePointAt(0)!.toString(16).toUpperCase().padStart(4, '0')}`;
}

/**
 * What is wrong with a text shown to people, or undefined: the first refused character, by its
 * code point (the character itself would do what it is refused for in the message).
 */
export function displayTextProblem(text: string, { lineBreaks = false } = {}): string | undefined {
  const found = (lineBreaks ? UNSAFE_BUT_NEWLINE : UNSAFE).exec(text);
  if (!found) return undefined;
  return `must not contain control, format or bidirectional characters (${codePointName(found[0])} at position ${found.index + 1})`;
}
