import type { Context } from 'koa';
import type { InteractionResults } from 'oidc-provider';
import { mustHaveSecondFactor } from '../../../policies/second-factor-rule.js';
import type { Account, AccountStore } from '../../accounts.js';
import type { AuditContext } from '../../audit/trail.js';
import { holdsSecondFactor, type Factors } from '../../factors/index.js';
import type { Form } from '../../http/forms.js';
import { localeOf } from '../../i18n/localizer.js';
import type { Messages } from '../../i18n/messages/en.js';
import type { SignInThrottle } from '../../limits/sign-in.js';
import type { Brands } from '../../pages/branding.js';
import { enrolmentPage, recoveryCodesPage } from '../../pages/enrolment.js';
import { sendPage } from '../../pages/html.js';
import type { AppRegistration } from '../../records/app-registrations.js';
import type { SecondFactorRules } from '../../records/tenant-settings.js';
import { federatedFirstFactorOf, type FederatedFirstFactor } from './federation-steps.js';

/*
 * ENROLMENT AFTER THE PASSWORD: a user who must have a second factor (her tenant's rule:
 * policies/second-factor-rule.ts) and has none, or whose factors a tenant admin asked to reset
 * (Factors.requestReset), sets up an authenticator app before her sign-in finishes, once:
 *
 * 1. the enrolment page: the QR code (an SVG drawn on the server) and the secret in text, and a
 *    field for the app's first code (the step `enrol`);
 * 2. a right code makes the app hers (a reset: in the same change everything she held goes and
 *    the request is cleared; she is not asked for her old factor, the reset exists for a lost
 *    phone) and her ten recovery codes are shown, once, on the answer to that POST (never kept
 *    anywhere but as HMACs);
 * 3. Continue (the step `enrolled`) finishes the sign-in with `pwd` and `otp`, so `amr` has `mfa`.
 *
 * Where she is in it is kept in the interaction's record in the store (as PasswordPassed, see
 * pages.ts), never in a form field: the user, her tenant, the username's hint, the stage, and
 * whether it completes a reset. Wrong codes count against the sign-in throttle like wrong codes at
 * the second factor (a guess at a code is a guess, whichever page it is typed on); a code that is
 * not one is refused unread and not counted.
 */

/** Where an interaction is in the enrolment. */
export interface Enrolment {
  uid: string;
  accountId: string;
  tenant: string;
  /** The username's hint, under which the throttle counts guesses (never the username). */
  hint: string;
  /** `app`: waiting for the app's first code; `codes`: the recovery codes were shown, Continue finishes. */
  stage: 'app' | 'codes';
  /** It completes a reset an admin asked for. */
  reset: boolean;
  /** The first factor when it was a sign-in through a provider, not the password. */
  first?: FederatedFirstFactor | undefined;
}

/** The key of Enrolment in the interaction's `lastSubmission`. */
const ENROLMENT = 'talentAuthEnrolment';

/** The interaction as this module reads and writes it. */
interface EnrolmentInteraction {
  uid: string;
  lastSubmission?: unknown;
  persist(): Promise<unknown>;
}

/** The Enrolment of this interaction, or undefined (none, or another interaction's). */
export function enrolmentOf(interaction: { uid: string; lastSubmission?: unknown }): Enrolment | undefined {
  const kept = (interaction.lastSubmission as Record<string, unknown> | undefined)?.[ENROLMENT] as Partial<Enrolment> | undefined;
  if (!kept || kept.uid !== interaction.uid) return undefined;
  const { accountId, tenant, hint, stage, reset } = kept;
  if (typeof accountId !== 'string' || typeof tenant !== 'string' || typeof hint !== 'string' || typeof reset !== 'boolean') return undefined;
  if (stage !== 'app' && stage !== 'codes') return undefined;
  const first = federatedFirstFactorOf(kept.first);
  return { uid: kept.uid, accountId, tenant, hint, stage, reset, ...(first ? { first } : {}) };
}

/** What the enrolment steps use of the sign-in pages (src/endpoints/sign-in/pages.ts). */
export interface EnrolmentSetup {
  /** The sign-in pages' path. */
  path: string;
  accounts: AccountStore | undefined;
  factors: Factors;
  rules: SecondFactorRules;
  throttle: SignInThrottle;
  brands?: Brands | undefined;
  addressOf: (ctx: Context) => string;
  issueCsrf: (ctx: Context) => string;
  /** A refused sign-in, audited (throttled). */
  refused: (app: AppRegistration, address: string, windowSeconds: number) => void;
  /** Finishes the sign-in with these methods. */
  signedIn: (ctx: Context, app: AppRegistration, user: Omit<Enrolment, 'uid' | 'stage' | 'reset'>, address: string, methods: ['pwd', 'otp']) => Promise<void>;
  /** The answer to a step posted out of turn (an error page). */
  stepOver: () => never;
}

/** What authenticator apps show beside our name: the e-mail address, else the username she is known by, else her ID. */
function accountName(account: Account | undefined, sub: string): string {
  const claims = account?.claims ?? {};
  const name = [claims.email, claims.preferred_username, sub].find((value): value is string => typeof value === 'string' && value.length > 0 && value.length <= 255);
  return name ?? sub.slice(0, 255);
}

/** The enrolment steps (see above). */
export function enrolmentSteps(setup: EnrolmentSetup) {
  const { path, factors, throttle } = setup;
  const by = (ctx: Context, enrolment: Enrolment): AuditContext => ({ actor: { type: 'user', id: enrolment.accountId }, address: setup.addressOf(ctx) });
  const ownerOf = (enrolment: Enrolment) => ({ tenant: enrolment.tenant, sub: enrolment.accountId });
  // The enrolment's secret belongs to this sign-in (its interaction) alone.
  const boundTo = (enrolment: Enrolment) => `sign-in:${enrolment.uid}`;

  async function showApp(ctx: Context, enrolment: Enrolment, app: AppRegistration, error?: (t: Messages) => string, status = 200): Promise<void> {
    const account = await setup.accounts?.findAccount(enrolment.accountId);
    const { qrSvg, secret } = await factors.authenticatorAppEnrolment(ownerOf(enrolment), accountName(account, enrolment.accountId), boundTo(enrolment));
    const locale = localeOf(ctx);
    sendPage(ctx, enrolmentPage({
      action: `${path}/${enrolment.uid}/enrol`, csrf: setup.issueCsrf(ctx), appName: app.name, redirectUris: app.redirectUris,
      qrSvg, secret, reset: enrolment.reset, ...(error ? { error: error(locale.t) } : {}), locale, branding: await setup.brands?.of(app.tenant),
    }), status);
  }

  async function showCodes(ctx: Context, enrolment: Enrolment, app: AppRegistration, codes?: readonly string[]): Promise<void> {
    sendPage(ctx, recoveryCodesPage({
      action: `${path}/${enrolment.uid}/enrolled`, csrf: setup.issueCsrf(ctx), redirectUris: app.redirectUris,
      ...(codes ? { codes } : {}), locale: localeOf(ctx), branding: await setup.brands?.of(app.tenant),
    }));
  }

  return {
    /**
     * Whether `account`, past her password, enrols now: her factors were asked to be reset, or
     * her tenant's rule makes her have one and she has none (an authenticator app or a passkey;
     * recovery codes alone are a way back in, not a factor).
     */
    async needed(account: Account): Promise<{ reset: boolean } | undefined> {
      const owner = { tenant: account.tenant, sub: account.sub };
      const [summary, rule] = await Promise.all([factors.summary(owner), setup.rules.of(account.tenant)]);
      if (summary.resetRequested) return { reset: true };
      return !holdsSecondFactor(summary) && mustHaveSecondFactor(rule.secondFactor, account) ? { reset: false } : undefined;
    },

    /** Starts the enrolment of an interaction whose password was right: its page comes next. */
    async begin(ctx: Context, interaction: EnrolmentInteraction, user: Omit<Enrolment, 'uid' | 'stage' | 'reset'>, reset: boolean): Promise<void> {
      const enrolment: Enrolment = { uid: interaction.uid, ...user, stage: 'app', reset };
      interaction.lastSubmission = { [ENROLMENT]: enrolment } as InteractionResults;
      await interaction.persist();
      // To the enrolment page (a reload shows it again, not the password form).
      ctx.status = 303;
      ctx.redirect(`${path}/${interaction.uid}`);
    },

    /** The page of the stage the enrolment is at. */
    async show(ctx: Context, enrolment: Enrolment, app: AppRegistration): Promise<void> {
      if (enrolment.stage === 'app') await showApp(ctx, enrolment, app);
      else await showCodes(ctx, enrolment, app);
    },

    /** POST `enrol`: the app's first code. */
    async confirm(ctx: Context, interaction: EnrolmentInteraction, app: AppRegistration, form: Form): Promise<void> {
      const enrolment = enrolmentOf(interaction);
      if (!enrolment) setup.stepOver();
      // The form sent again (the codes page reloaded: a browser posts again): the codes page, without them.
      if (enrolment.stage === 'codes') {
        await showCodes(ctx, enrolment, app);
        return;
      }
      const address = setup.addressOf(ctx);
      // The username's limit always holds here: a browser that signed in as her before (with the
      // password alone) must not guess at the code she is setting up past it.
      const wait = await throttle.wait(enrolment.hint, address, false);
      if (wait !== undefined) {
        setup.refused(app, address, wait);
        ctx.set('Retry-After', String(wait));
        await showApp(ctx, enrolment, app, (t) => t.tooManyFailedSignIns(wait), 429);
        return;
      }
      const check = await factors.confirmAuthenticatorApp(ownerOf(enrolment), form.get('code') ?? '', by(ctx, enrolment), { replaceAll: enrolment.reset, boundTo: boundTo(enrolment), onlyWhenNeeded: true });
      if (!check.accepted) {
        if (check.reason === 'malformed') {
          await showApp(ctx, enrolment, app, (t) => t.enrolMalformedCode, 400);
        } else if (check.reason === 'expired' || check.reason === 'not_enrolled') {
          await showApp(ctx, enrolment, app, (t) => t.enrolExpired, 400);
        } else {
          await throttle.failed(enrolment.hint, address, app.clientId);
          await showApp(ctx, enrolment, app, (t) => t.enrolWrongCode, 401);
        }
        return;
      }
      const codes = await factors.newRecoveryCodes(ownerOf(enrolment), by(ctx, enrolment));
      interaction.lastSubmission = { [ENROLMENT]: { ...enrolment, stage: 'codes' } } as InteractionResults;
      await interaction.persist();
      await showCodes(ctx, enrolment, app, codes);
    },

    /** POST `enrolled`: Continue, after the recovery codes: the sign-in finishes with both factors. */
    async finish(ctx: Context, interaction: EnrolmentInteraction, app: AppRegistration): Promise<void> {
      const enrolment = enrolmentOf(interaction);
      if (!enrolment || enrolment.stage !== 'codes') setup.stepOver();
      const { accountId, tenant, hint, first } = enrolment;
      await setup.signedIn(ctx, app, { accountId, tenant, hint, first }, setup.addressOf(ctx), ['pwd', 'otp']);
    },
  };
}

/** The enrolment steps, as the sign-in pages hold them. */
export type EnrolmentSteps = ReturnType<typeof enrolmentSteps>;
