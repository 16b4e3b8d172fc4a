import type { AuthenticationMethod } from '../../../policies/authentication-context.js';
import type { AccountStore } from '../../accounts.js';
import type { FactorOwner } from '../../factors/index.js';
import type { Passkeys } from '../../factors/passkeys.js';
import type { Form } from '../../http/forms.js';
import type { PasskeyCeremonyLimit } from '../../limits/passkey-ceremonies.js';
import type { PasskeyOffer } from '../../pages/sign-in.js';

/**
 * The largest form a passkey step reads, in bytes (other sign-in forms: `limits.formRequestBytes`):
 * the assertion, URL-encoded, with a credential ID as long as WebAuthn allows and an RSA signature.
 */
export const PASSKEY_FORM_BYTES = 16 * 1024;

/*
 * PASSKEYS AT SIGN-IN: the ceremonies the sign-in pages start, and the answers their forms post.
 *
 * - As the second factor (after the password, for a user who holds a passkey): the second-factor
 *   page carries a ceremony for her passkeys (allowCredentials), posted to the interaction's
 *   `passkey` step, which is bound to the interaction's PasswordPassed like the code step
 *   (src/endpoints/sign-in/pages.ts). Methods: `pwd` and the passkey's (`hwk` or `swk`), so `mfa`.
 * - Alone (passkey-only, where the tenant's rule allows it: SecondFactorRules): the login page carries a
 *   ceremony without a user (discoverable credentials, user verification required) that the
 *   browser's autofill or the "Sign in with a passkey" button runs, posted to the
 *   `passkey-sign-in` step. The credential's user handle finds the user in the app's tenant
 *   (src/factors/passkeys.ts), whose account must still exist there. Methods: the passkey's and
 *   `mfa`: a passkey verified its user (PIN or biometrics) is something she has and something she
 *   knows or is, two factors at once (docs/decisions.md).
 * - The options are in the page (its form's `data-passkey-options`), the challenge on the server,
 *   so that a ceremony is one form post: no fetch, no `connect-src`. Every ceremony a page starts
 *   counts against the address's `rateLimits.passkeySignIn` (PasskeyCeremonyLimit); past it the
 *   page offers no passkey. The challenge lives PASSKEY_CHALLENGE_SECONDS.
 * - Refusals are not counted against the sign-in throttle: an answer is a signature over our
 *   one-time challenge, which cannot be guessed, so counting would protect nothing and would let
 *   a broken or cloned authenticator hold the user's username. Each answer uses up a ceremony,
 *   and ceremonies are limited per address: retries are bounded all the same. They are audited:
 *   `sign_in.second_factor_failed` by the Passkeys module for a known user (a clone always), and
 *   `sign_in.failed` (anonymous) by the page for a refused passkey alone.
 */

/** The largest credential answer read (a passkey assertion is well under 4 KiB). */
const MAX_CREDENTIAL_LENGTH = 16_384;

/** What a passkey answer gave: the user and the methods of the sign-in, or a refusal. */
export type PasskeyStepOutcome =
  | { accepted: true; owner: FactorOwner; methods: AuthenticationMethod[] }
  | { accepted: false; malformed: boolean };

/** How the passkey steps are set up. */
export interface PasskeyStepSetup {
  passkeys: Passkeys;
  accounts: AccountStore | undefined;
  /** Ceremonies per address. */
  limit: PasskeyCeremonyLimit;
  /** The sign-in pages' path (`{path}/{uid}/passkey`...). */
  path: string;
  /** The URL path of the passkey script. */
  script: string;
}

/** The credential JSON of a form, or undefined (absent, too long, not JSON): the Passkeys module judges its shape. */
function credentialOf(form: Form): unknown {
  const text = form.get('credential');
  if (!text || text.length > MAX_CREDENTIAL_LENGTH) return undefined;
  try {
    return JSON.parse(text) as unknown;
  } catch {
    return undefined;
  }
}

/** The passkey ceremonies of the sign-in pages (see above). */
export class PasskeySteps {
  constructor(private readonly setup: PasskeyStepSetup) {}

  /** The "Use a passkey" offer of `owner`'s second-factor page (her passkeys), or undefined past the address's limit. */
  async secondFactorOffer(uid: string, owner: FactorOwner, address: string): Promise<PasskeyOffer | undefined> {
    if (!(await this.setup.limit.allows(address))) return undefined;
    const { ceremony, options } = await this.setup.passkeys.authenticationOptions(owner);
    return { action: `${this.setup.path}/${uid}/passkey`, ceremony, options, script: this.setup.script };
  }

  /**
   * The passkey-alone offer of a login page for the users of `tenant` (the caller checked that the
   * tenant allows it), or undefined past the address's limit.
   */
  async signInOffer(uid: string, tenant: string, address: string): Promise<PasskeyOffer | undefined> {
    if (!(await this.setup.limit.allows(address))) return undefined;
    const { ceremony, options } = await this.setup.passkeys.authenticationOptions({ tenant });
    return { action: `${this.setup.path}/${uid}/passkey-sign-in`, ceremony, options, script: this.setup.script };
  }

  /** A passkey as `owner`'s second factor: one of hers, for this ceremony; methods `pwd` and the passkey's. */
  async secondFactor(form: Form, owner: FactorOwner): Promise<PasskeyStepOutcome> {
    const outcome = await this.setup.passkeys.authenticate(form.get('ceremony'), credentialOf(form), owner);
    if (!outcome.accepted) return { accepted: false, malformed: outcome.reason === 'malformed' };
    return { accepted: true, owner: outcome.owner, methods: ['pwd', outcome.method] };
  }

  /**
   * A passkey alone for a user of `tenant`: the credential's user, user verified, of this tenant,
   * whose account still exists there; methods the passkey's and `mfa`.
   */
  async alone(form: Form, tenant: string): Promise<PasskeyStepOutcome> {
    const outcome = await this.setup.passkeys.authenticate(form.get('ceremony'), credentialOf(form));
    if (!outcome.accepted) return { accepted: false, malformed: outcome.reason === 'malformed' };
    // The module required user verification for a ceremony without a user; checked again here,
    // since `mfa` rests on it. The ceremony was made for this page's tenant: another's is refused.
    if (!outcome.userVerified || outcome.owner.tenant !== tenant) return { accepted: false, malformed: false };
    const account = await this.setup.accounts?.findAccount(outcome.owner.sub);
    if (!account || account.tenant !== tenant) return { accepted: false, malformed: false };
    return { accepted: true, owner: outcome.owner, methods: [outcome.method, 'mfa'] };
  }
}
