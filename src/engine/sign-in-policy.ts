import { interactionPolicy, type KoaContextWithOIDC } from 'oidc-provider';
import { meetsAcrValues } from '../../policies/authentication-context.js';
import { UnmetAuthenticationRequirements } from '../../policies/errors.js';
import { engineErrors } from './errors.js';

/**
 * When the engine asks the user to sign in: its own checks (no session, `max_age` older than the
 * session, `id_token_hint` of someone else, `prompt=login`), and ours, `acr_values`: a request
 * whose known `acr_values` need a class the browser's session has not reached (a second factor
 * over a password session) signs the user in again rather than answering with the weaker session
 * (policies/authentication-context.ts). With `prompt=none` that is `login_required`, as for the
 * engine's own checks. A user with an authenticator app reaches the mfa class at the sign-in
 * (the password, then the app's code or a recovery code: src/endpoints/sign-in/pages.ts). When
 * the sign-in this request just went through still did not reach the class (a user without a
 * second factor: the step had none to offer), the request ends with
 * `unmet_authentication_requirements` at the app's redirect URI: asking again would only loop.
 */
export function signInPolicy(): interactionPolicy.DefaultPolicy {
  const policy = interactionPolicy.base();
  const login = policy.get('login')!;
  login.checks.add(new interactionPolicy.Check(
    'acr_values',
    'the requested authentication class was not reached',
    'login_required',
    engineErrors((ctx: KoaContextWithOIDC) => {
      const { params, session, result } = ctx.oidc;
      if (!session?.accountId || meetsAcrValues(session.acr, params?.acr_values)) return interactionPolicy.Check.NO_NEED_TO_PROMPT;
      if (result?.login) throw new UnmetAuthenticationRequirements();
      return interactionPolicy.Check.REQUEST_PROMPT;
    }),
  ));
  return policy;
}
