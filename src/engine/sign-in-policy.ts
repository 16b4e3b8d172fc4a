import { interactionPolicy, type KoaContextWithOIDC } from 'oidc-provider';
import { meetsAcrValues } from '../../policies/authentication-context.js';
import { UnmetAuthenticationRequirements } from '../../policies/errors.js';
import { mustHaveSecondFactor, usedSecondFactor } from '../../policies/second-factor-rule.js';
import type { SecondFactorRuling } from '../../policies/second-factor-rule.js';
import type { AccountStore } from '../accounts.js';
import { engineErrors } from './errors.js';

/** What the second-factor check reads: the users, and each tenant's rule. */
export interface SignInPolicySetup {
  accounts?: AccountStore | undefined;
  /** Each tenant's second-factor rule (the host's policy with the tenant's settings). */
  ruleOf?: ((tenant: string) => Promise<SecondFactorRuling>) | undefined;
  /** When a user was signed out everywhere (epoch ms; src/records/user-sign-out.ts), or undefined. */
  signedOutAt?: ((user: { tenant: string; sub: string }) => Promise<number | undefined>) | undefined;
}

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
 *
 * And the tenant's second-factor rule: a request by a user whose tenant's rule makes her have a
 * second factor (policies/second-factor-rule.ts), with a session that did not use one (a
 * password-only sign-in from before her tenant asked for one, or before she held a management
 * permission), signs her in again: the sign-in then asks for her factor or enrols her. A session
 * is never a way around a rule made stricter after it began. A sign-in this request just went
 * through that still has none (nothing to offer) goes on: a token is issued, without the
 * management right (src/grants/named-user.ts), never a loop.
 */
export function signInPolicy(setup: SignInPolicySetup = {}): interactionPolicy.DefaultPolicy {
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
  const { accounts, ruleOf, signedOutAt } = setup;
  if (accounts && signedOutAt) login.checks.add(signedOutCheck(accounts, signedOutAt));
  if (!accounts || !ruleOf) return policy;
  login.checks.add(new interactionPolicy.Check(
    'second_factor',
    'the tenant\'s rule asks for a sign-in with a second factor',
    'login_required',
    engineErrors(async (ctx: KoaContextWithOIDC) => {
      const { session, result } = ctx.oidc;
      if (!session?.accountId || result?.login || usedSecondFactor(session.amr)) return interactionPolicy.Check.NO_NEED_TO_PROMPT;
      const account = await accounts.findAccount(session.accountId);
      if (!account || !mustHaveSecondFactor((await ruleOf(account.tenant)).secondFactor, account)) return interactionPolicy.Check.NO_NEED_TO_PROMPT;
      return interactionPolicy.Check.REQUEST_PROMPT;
    }),
  ));
  return policy;
}

/**
 * A user the host signed out everywhere ("the user left": src/records/user-sign-out.ts): a
 * session of hers begun before then no longer signs her in; the request asks her to sign in again
 * (`login_required` with `prompt=none`). The session's `loginTs` counts whole seconds: a session
 * begun in the second of the mark ends too (a sign-in then is asked once more, never again after a
 * later one). Her (tenant, sub): the same `sub` in another tenant is someone else.
 */
function signedOutCheck(accounts: AccountStore, signedOutAt: NonNullable<SignInPolicySetup['signedOutAt']>): interactionPolicy.Check {
  return new interactionPolicy.Check(
    'signed_out_everywhere',
    'the user was signed out everywhere since this session began',
    'login_required',
    engineErrors(async (ctx: KoaContextWithOIDC) => {
      const { session, result } = ctx.oidc;
      if (!session?.accountId || result?.login) return interactionPolicy.Check.NO_NEED_TO_PROMPT;
      const account = await accounts.findAccount(session.accountId);
      const at = account && (await signedOutAt({ tenant: account.tenant, sub: account.sub }));
      if (at === undefined || (session.loginTs ?? 0) >= Math.ceil(at / 1000)) return interactionPolicy.Check.NO_NEED_TO_PROMPT;
      return interactionPolicy.Check.REQUEST_PROMPT;
    }),
  );
}
