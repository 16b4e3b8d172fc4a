import { displayTextProblem } from '../../policies/display-text.js';
import { ValidationError } from '../../policies/errors.js';
import { OPERATOR, type AuditContext } from './trail.js';

/** The longest operator name recorded (a person's login or e-mail address, a job's name). */
export const MAX_OPERATOR_NAME = 128;

/**
 * Who acts as the operator (a call of the library or the CLI): the operator, with her name as the
 * actor's id when one is given (`--actor`, `actor`), so that the trail tells which person or job
 * reset a user's factors or lifted a hold. The name is the caller's word (the library and the CLI
 * authenticate nobody): a label for the trail, never a permission. It is shown in the portal and
 * the CLI, so it follows the rule of shown text (policies/display-text.ts).
 * @throws ValidationError (field `actor`) for an empty, overlong or unsafe name.
 */
export function operatorContext(name: unknown): AuditContext {
  if (name === undefined) return OPERATOR;
  if (typeof name !== 'string' || name.trim() === '' || name.length > MAX_OPERATOR_NAME) {
    throw new ValidationError('actor', `must be a name of 1 to ${MAX_OPERATOR_NAME} characters`);
  }
  const problem = displayTextProblem(name);
  if (problem) throw new ValidationError('actor', problem);
  return { actor: { type: 'operator', id: name } };
}
