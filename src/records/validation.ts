import { z } from 'zod';
import { displayTextProblem } from '../../policies/display-text.js';
import { ValidationError } from '../../policies/errors.js';

/** Parses management input with a zod schema; the first issue becomes a ValidationError naming its field. */
export function parseInput<T>(schema: z.ZodType<T>, input: unknown, root: string): T {
  const result = schema.safeParse(input);
  if (result.success) return result.data;
  const issue = result.error.issues[0];
  const path = issue?.path.length ? issue.path.join('.') : root;
  throw new ValidationError(path, issue?.message ?? 'invalid input');
}

/** A name shown to people (policies/display-text.ts): trimmed, 1..`max` characters, one line. */
export function displayName(max = 200) {
  return z
    .string()
    .trim()
    .min(1, 'must not be empty')
    .max(max)
    .superRefine((value, ctx) => {
      const problem = displayTextProblem(value);
      if (problem) ctx.addIssue({ code: 'custom', message: problem });
    });
}

/** A description shown to people (policies/display-text.ts): trimmed, at most `max` characters, line breaks allowed. */
export function displayDescription(max = 2000) {
  return z
    .string()
    .transform((value) => value.replace(/\r\n/g, '\n').trim())
    .pipe(z.string().max(max))
    .superRefine((value, ctx) => {
      const problem = displayTextProblem(value, { lineBreaks: true });
      if (problem) ctx.addIssue({ code: 'custom', message: problem });
    });
}
