import type { ClientAuthentication } from '../../policies/client-authentication.js';
import { InvalidRequest } from '../../policies/errors.js';

/** What a token request of one grant type must and must not carry, and how its client authenticates. */
export interface TokenRequestRule {
  /** The `grant_type` value. */
  readonly grantType: string;
  /** `basic`: HTTP Basic only; `basic-or-none`: Basic (confidential app) or `client_id` alone (public app). */
  readonly clientAuthentication: ClientAuthentication;
  /** Parameters every request of the grant carries. */
  readonly required: readonly string[];
  /** Parameters a public client's request carries besides (it has no secret to prove anything with). */
  readonly requiredOfPublicClients: readonly string[];
  /** Optional parameters the grant takes. */
  readonly accepted: readonly string[];
  /** Parameters of other grants: sending one is a wrong parameter set, not something to ignore. */
  readonly foreign: readonly string[];
  /**
   * The request as the engine is to see it, when the grant reads a parameter otherwise than the
   * engine does; changes `params` in place and answers true when it changed something.
   */
  readonly normalize?: (params: Map<string, string>) => boolean;
}

/**
 * The parameter set of a token request against its grant's rule. A parameter that no grant
 * defines is ignored (RFC 6749 §3.1: unrecognized request parameters are ignored); one of another
 * grant is refused, since it says the client meant something else.
 * @throws InvalidRequest naming the first missing or foreign parameter.
 */
export function checkParameterSet(rule: TokenRequestRule, params: ReadonlyMap<string, string>, publicClient: boolean): void {
  const required = publicClient ? [...rule.required, ...rule.requiredOfPublicClients] : rule.required;
  for (const name of required) {
    if (!params.has(name)) throw new InvalidRequest(`missing required parameter '${name}'`);
  }
  const wrong = rule.foreign.find((name) => params.has(name));
  if (wrong !== undefined) throw new InvalidRequest(`parameter '${wrong}' does not belong to grant_type ${rule.grantType}`);
}
