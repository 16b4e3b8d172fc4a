import type { z } from 'zod';
import { ValidationError } from '../../policies/errors.js';

/** Parses management input with a zod schema; the first issue becomes a ValidationError naming its field. */
export function parseInput<T>(schema: z.ZodType<T>, input: unknown, root: string): T {
  const result = schema.safeParse(input);
  if (result.success) return result.data;
  const issue = result.error.issues[0];
  const path = issue?.path.length ? issue.path.join('.') : root;
  throw new ValidationError(path, issue?.message ?? 'invalid input');
}
