import { KNOWN_DEVICE_SECONDS } from '../../../policies/lifetimes.js';
import type { Context } from 'koa';
import type Provider from 'oidc-provider';
import type { InteractionResults } from 'oidc-provider';
import type { AccountStore } from '../../accounts.js';
import type { ApiCatalog } from '../../../policies/catalog.js';
import type { Logger } from '../../logger.js';
import type { TenantDisplayName } from '../../accounts.js';
import { errorPage, sendPage } from '../../pages/html.js';
import type { Brands } from '../../pages/branding.js';
import { knowsUiLocales, localeOf, rememberUiLocales } from '../../i18n/localizer.js';
import type { Messages } from '../../i18n/messages/en.js';
import { consentPage, loginPage, secondFactorPage } from '../../pages/sign-in.js';
import { isResourceScope, namedUserResourceScopes } from '../../../policies/scopes.js';
import { tenantPolicy, type TenantPolicyFunction } from '../../../policies/tenant-policy.js';
import { grantScopes } from '../../engine/consent-grants.js';
import type { AppRegistration, AppRegistrations } from '../../records/app-registrations.js';
import type { Consents } from '../../records/consents.js';
import { CsrfTokens } from '../../http/csrf.js';
import { readForm, type Form } from '../../http/forms.js';
import type { AuditTrail } from '../../audit/trail.js';
import type { RouteHandler } from '../../http/router.js';
import type { RouteName } from '../../http/routes.js';
import type { SignInThrottle } from '../../limits/sign-in.js';
import { signInFailed, signInSucceeded } from '../../audit/events.js';
import { signInSignals, type AuthenticationMethod } from '../../../policies/authentication-context.js';
import { holdsSecondFactor, type Factors } from '../../factors/index.js';
import type { PasskeyOffer } from '../../pages/sign-in.js';
import { PASSKEY_FORM_BYTES, type PasskeySteps } from './passkey-steps.js';
import type { SecondFactorRules } from '../../records/tenant-settings.js';
import { enrolmentOf, enrolmentSteps } from './enrolment.js';
import { federatedFirstFactorOf, federationSteps, type FederatedFirstFactor, type FederationInteraction, type FederatedUser, type FederationStepsSetup } from './federation-steps.js';
import { afterFirstFactor } from '../../../policies/upstream-sign-in.js';
import type { Connections } from '../../federation/connections.js';
import { ssoRule, tenantBeforePassword } from './sso-rule.js';

const CSRF_COOKIE = 'talent_auth_csrf';
/** A browser that signed in as a user before (see SignInThrottle). */
const DEVICE_COOKIE = 'talent_auth_device';

interface InteractionSetup {
  provider: Provider;
  /** Origin of the public base URL: forms must come from our own pages. */
  publicOrigin: string;
  /** The path of the sign-in pages (their forms post to it, their cookies are scoped to it). */
  path: string;
  accounts: AccountStore | undefined;
  apps: AppRegistrations;
  consents: Consents;
  /** The one resource (audience) whose scopes a grant holds. */
  audience: string;
  catalog: ApiCatalog;
  tenantPolicy: TenantPolicyFunction | undefined;
  tenantDisplayName: TenantDisplayName | undefined;
  logger: Logger;
  /** Largest form body accepted, in bytes. */
  formLimit: number;
  /** Failed sign-ins: counted, throttled, logged. */
  throttle: SignInThrottle;
  /** The source address of a request, as the rate limits count it. */
  addressOf: (ctx: Context) => string;
  /** Sign-ins and consents are recorded there. */
  audit?: AuditTrail;
  /** The tenants' branding of the sign-in and consent pages (none when absent). */
  brands?: Brands;
  /** The users' second factors: a user with an authenticator app gives its code after the password. */
  factors: Factors;
  /** Passkeys at sign-in: as the second factor, and alone where the tenant allows it (passkey-steps.ts). */
  passkeySteps: PasskeySteps;
  /** Each tenant's second-factor rule: who enrols after the password (src/endpoints/sign-in/enrolment.ts). */
  rules: SecondFactorRules;
  /** Enterprise sign-in through the tenants' identity providers (federation-steps.ts). */
  federation: Omit<FederationStepsSetup, 'provider' | 'path' | 'apps' | 'logger' | 'brands' | 'addressOf' | 'audit'>;
  /** The tenants' identity providers: where SSO is required, passwords are refused (sso-rule.ts). */
  connections: Connections;
}

/**
 * Who passed the password step of an interaction that waits for the second factor. Kept in the
 * interaction itself, in the store (its `lastSubmission`, the one field of the engine's record we
 * may write that the login result does not read: finishing the login replaces it), never in the
 * browser: a form field could be forged, the record cannot. Bound to its interaction by the uid
 * (an interaction's record copied elsewhere does not pass) and, through the engine's interaction
 * cookie, to the browser that typed the password. Holds no secret: the user, and the username's
 * hint that the throttle counts guesses under (never the username).
 */
interface PasswordPassed {
  uid: string;
  accountId: string;
  tenant: string;
  hint: string;
  /** The first factor when it was a sign-in through a provider (federation-steps.ts), not the password. */
  first?: FederatedFirstFactor | undefined;
}

/** The key of PasswordPassed in the interaction's `lastSubmission`. */
const PASSWORD_PASSED = 'talentAuthPasswordPassed';

/** The PasswordPassed of this interaction, or undefined (none, or another interaction's). */
function passwordPassedOf(interaction: { uid: string; lastSubmission?: unknown }): PasswordPassed | undefined {
  const kept = (interaction.lastSubmission as Record<string, unknown> | undefined)?.[PASSWORD_PASSED] as Partial<PasswordPassed> | undefined;
  if (!kept || kept.uid !== interaction.uid) return undefined;
  const { accountId, tenant, hint } = kept;
  if (typeof accountId !== 'string' || typeof tenant !== 'string' || typeof hint !== 'string') return undefined;
  const first = federatedFirstFactorOf(kept.first);
  return { uid: kept.uid, accountId, tenant, hint, ...(first ? { first } : {}) };
}

/** Koa's http-errors carry `status`, the engine's and the store's `statusCode`. */
function httpStatusOf(error: unknown): number {
  const { status, statusCode } = error as { status?: unknown; statusCode?: unknown };
  if (typeof status === 'number') return status;
  return typeof statusCode === 'number' ? statusCode : 500;
}

/** The messages that are whole sentences (no values): what a PageError says. */
type Sentence = { [K in keyof Messages]: Messages[K] extends string ? K : never }[keyof Messages];

/** An error page in the user's language: the status and the message that says what happened. */
class PageError extends Error {
  constructor(
    readonly status: number,
    readonly text: Sentence,
  ) {
    super(text);
  }
}


/**
 * The sign-in pages the engine sends browsers to: GET shows the login, second-factor or consent
 * page of an interaction; POST .../login checks the password with the AccountStore (and, for a
 * user with an authenticator app, leads to the second-factor page); POST .../second-factor checks
 * the app's code or a recovery code; POST .../confirm records the consent (Allow) or ends the
 * request with access_denied (Deny).
 */
/** What an interaction id is (the engine's: base64url). */
const UID = /^[A-Za-z0-9_-]+$/;
/** The steps a form posts to. */
const STEPS: ReadonlySet<string> = new Set(['login', 'second-factor', 'passkey', 'passkey-sign-in', 'confirm', 'enrol', 'enrolled', 'federate']);


export function interactionHandlers(setup: InteractionSetup): Partial<Record<RouteName, RouteHandler>> {
  const { provider, publicOrigin, path, accounts, apps, consents, audience, catalog, logger, throttle, factors, passkeySteps } = setup;
  const csrfTokens = new CsrfTokens(CSRF_COOKIE, path, publicOrigin);
  const issueCsrf = (ctx: Context) => csrfTokens.issue(ctx);
  const policyOf = setup.tenantPolicy;
  /** Whether the app's tenant lets its users sign in with a passkey alone. */
  // A passkey alone finds its user within one tenant: a platform app (no tenant) never offers it.
  const passkeyOnly = async (tenant: string | undefined) => tenant !== undefined && (await setup.rules.passkeyOnlyAllowed(tenant));
  const sso = ssoRule({ rules: setup.rules, connections: setup.connections, path, brands: setup.brands, issueCsrf });

  /** The passkey-alone offer of an app's login page: none where its tenant does not allow it. */
  async function passkeySignInOffer(ctx: Context, uid: string, app: AppRegistration): Promise<PasskeyOffer | undefined> {
    if (app.tenant === undefined || !(await passkeyOnly(app.tenant))) return undefined;
    // A tenant that signs its users in through its provider (SSO required) offers no other way in.
    if (await sso.required(app.tenant)) return undefined;
    return passkeySteps.signInOffer(uid, app.tenant, setup.addressOf(ctx));
  }

  async function details(ctx: Context) {
    try {
      const interaction = await provider.interactionDetails(ctx.req, ctx.res);
      // The pages of this sign-in, its error pages too, speak the language the app asked for.
      rememberUiLocales(ctx, interaction.params.ui_locales);
      return interaction;
    } catch {
      throw new PageError(400, 'signInExpired');
    }
  }

  /** `interaction`: finished where its cookie is not sent (the federation's callback), as the engine's interactionResult does. */
  async function finish(ctx: Context, result: InteractionResults, merge: boolean, interaction?: FinishableInteraction): Promise<void> {
    let to: string;
    if (interaction) {
      interaction.result = result;
      await interaction.save(interaction.exp - Math.floor(Date.now() / 1000));
      to = interaction.returnTo;
    } else {
      to = await provider.interactionResult(ctx.req, ctx.res, result, { mergeWithLastSubmission: merge });
    }
    ctx.status = 303;
    ctx.redirect(to);
  }

  async function appOf(clientId: unknown) {
    const app = typeof clientId === 'string' ? await apps.get(clientId) : undefined;
    if (!app) throw new PageError(400, 'appNotRegistered');
    return app;
  }

  async function show(ctx: Context, uid: string): Promise<void> {
    const interaction = await details(ctx);
    if (interaction.uid !== uid) throw new PageError(400, 'signInOtherBrowser');
    const app = await appOf(interaction.params.client_id);
    const enrolling = interaction.prompt.name === 'login' ? enrolmentOf(interaction) : undefined;
    if (enrolling) {
      await enrolment.show(ctx, enrolling, app);
      return;
    }
    const passed = interaction.prompt.name === 'login' ? passwordPassedOf(interaction) : undefined;
    if (passed) {
      await showSecondFactor(ctx, uid, app, passed, undefined, 200);
      return;
    }
    const csrf = issueCsrf(ctx);
    const look = { locale: localeOf(ctx), branding: await setup.brands?.of(app.tenant) };
    if (interaction.prompt.name === 'login') {
      if (await federation.hinted(ctx, interaction, app)) return;
      // A tenant that signs its users in through its provider: no password form (sso-rule.ts).
      if (await sso.offer(ctx, uid, app, tenantBeforePassword(app), 200)) return;
      const passkey = await passkeySignInOffer(ctx, uid, app);
      sendPage(ctx, loginPage({ action: `${path}/${uid}/login`, csrf, appName: app.name, redirectUris: app.redirectUris, passkey, federation: await federation.offer(uid, app), ...look }));
      return;
    }
    const account = accounts && interaction.session?.accountId
      ? await accounts.findAccount(interaction.session.accountId)
      : undefined;
    if (!account) throw new PageError(400, 'sessionEnded');
    sendPage(
      ctx,
      consentPage({
        action: `${path}/${uid}/confirm`,
        csrf,
        appName: app.name,
        ...(app.description ? { appDescription: app.description } : {}),
        // Absent: "the platform", in the page's language.
        registeredBy: app.tenant === undefined ? undefined : ((await setup.tenantDisplayName?.(app.tenant)) ?? app.tenant),
        requestedScopes: String(interaction.params.scope ?? '').split(' ').filter(Boolean),
        userScopes: new Set(namedUserResourceScopes(catalog, account, await tenantPolicy(policyOf, account.tenant), app.firstParty)),
        redirectUris: app.redirectUris,
        catalog,
        ...look,
      }),
    );
  }

  /** The login page again, with what went wrong. */
  async function loginAgain(
    ctx: Context, uid: string, app: AppRegistration, username: string, error: (t: Messages) => string, status: number, autofill = true,
  ): Promise<void> {
    // Under SSO required the page again is the SSO page (an address no connection owns included).
    if (await sso.offer(ctx, uid, app, tenantBeforePassword(app), status >= 400 ? 403 : 200, `${path}/${uid}`)) return;
    const csrf = issueCsrf(ctx);
    const locale = localeOf(ctx);
    const branding = await setup.brands?.of(app.tenant);
    const offer = await passkeySignInOffer(ctx, uid, app);
    const passkey = offer && { ...offer, autofill };
    const federationOffer = await federation.offer(uid, app);
    sendPage(ctx, loginPage({ action: `${path}/${uid}/login`, csrf, appName: app.name, redirectUris: app.redirectUris, username, error: error(locale.t), passkey, federation: federationOffer, locale, branding }), status);
  }

  /**
   * A refused sign-in, in the trail of the app's tenant (the platform's for its own apps): anonymous
   * (never the username: one typed by mistake may be a password, or name nobody), counted per
   * address and app and window (AuditTrail.recordRefusal).
   */
  function signInRefused(app: AppRegistration, address: string, reason: 'throttled' | 'wrong_credentials' | 'sso_required', windowSeconds?: number): void {
    setup.audit?.recordRefusal(signInFailed(app, address, reason), { who: address, where: `${app.clientId}:${reason}`, ...(windowSeconds !== undefined ? { windowSeconds } : {}) });
  }

  async function login(ctx: Context, uid: string, form: Form): Promise<void> {
    const interaction = await details(ctx);
    if (interaction.uid !== uid || interaction.prompt.name !== 'login') throw new PageError(400, 'signInStepOver');
    const username = form.get('username') ?? '';
    const app = await appOf(interaction.params.client_id);
    const clientId = app.clientId;
    const address = setup.addressOf(ctx);
    // SSO required (sso-rule.ts): a tenant's app refuses the password unread.
    if (await sso.offer(ctx, uid, app, tenantBeforePassword(app), 403, `${path}/${uid}`)) {
      signInRefused(app, address, 'sso_required');
      return;
    }
    const hint = throttle.hint(username);
    const wait = await throttle.wait(hint, address, ctx.cookies.get(DEVICE_COOKIE, { signed: true }) === hint);
    if (wait !== undefined) {
      signInRefused(app, address, 'throttled', wait);
      ctx.set('Retry-After', String(wait));
      await loginAgain(ctx, uid, app, username, (t) => t.tooManyFailedSignIns(wait), 429);
      return;
    }
    const account = accounts && username
      ? await accounts.authenticate({ username, password: form.get('password') ?? '' })
      : undefined;
    if (!account) {
      signInRefused(app, address, 'wrong_credentials');
      await throttle.failed(hint, address, clientId);
      await loginAgain(ctx, uid, app, username, (t) => t.wrongCredentials, 401);
      return;
    }
    // A platform app (or one open to all tenants) knows her tenant only now: refused after the password (sso-rule.ts says why).
    if (tenantBeforePassword(app) === undefined && (await sso.offer(ctx, uid, app, account.tenant, 403, `${path}/${uid}`))) {
      signInRefused({ ...app, tenant: account.tenant }, address, 'sso_required');
      return;
    }
    // A user who must have a second factor and has none, or whose factors were asked to be reset,
    // sets one up now (src/endpoints/sign-in/enrolment.ts).
    const enrol = await enrolment.needed(account);
    if (enrol) {
      await enrolment.begin(ctx, interaction, { accountId: account.sub, tenant: account.tenant, hint }, enrol.reset);
      return;
    }
    if (holdsSecondFactor(await factors.summary({ tenant: account.tenant, sub: account.sub }))) {
      // A second factor to come: the sign-in is not finished, and this browser is not yet one that
      // signed in as her (no device cookie: the guesses at her code stay held by the username limit).
      const passed: PasswordPassed = { uid, accountId: account.sub, tenant: account.tenant, hint };
      interaction.lastSubmission = { [PASSWORD_PASSED]: passed } as InteractionResults;
      await interaction.persist();
      // To the page of the code (a reload shows it again, not the password form).
      ctx.status = 303;
      ctx.redirect(`${path}/${uid}`);
      return;
    }
    await signedIn(ctx, app, { accountId: account.sub, tenant: account.tenant, hint }, address, ['pwd']);
  }

  /**
   * The end of a sign-in: the device cookie, `sign_in.succeeded`, and the login with the methods
   * used, in order (RFC 8176), from which `amr` and `acr` follow.
   */
  async function signedIn(
    ctx: Context, app: AppRegistration, user: Omit<PasswordPassed, 'uid'>, address: string, methods: AuthenticationMethod[], interaction?: FinishableInteraction,
  ): Promise<void> {
    // This browser may sign in as this user again even while someone else's guesses hold the
    // username (sign-in-throttle.ts). A passkey alone names no username: no hint, no cookie. Nor a
    // sign-in through a provider: its hint comes from the address the provider asserts, which a
    // tenant's provider could set to another tenant's user's (and so lift her username's limit).
    if (user.hint && !user.first) ctx.cookies.set(DEVICE_COOKIE, user.hint, { signed: true, httpOnly: true, sameSite: 'lax', path, maxAge: KNOWN_DEVICE_SECONDS * 1000, overwrite: true });
    const event = signInSucceeded({ sub: user.accountId, tenant: user.tenant }, app.clientId, address);
    setup.audit?.recordLater(user.first ? { ...event, details: { connection: user.first.connection } } : event);
    // After a provider's sign-in its methods stand for the password's (policies/upstream-sign-in.ts).
    await finish(ctx, { login: { accountId: user.accountId, ...signInSignals(afterFirstFactor(user.first?.methods, methods)) } }, false, interaction);
  }

  /**
   * A provider vouched for her (federation-steps.ts): a strong sign-in there finishes hers; after
   * a weak one she gives her second factor, or enrols where her tenant's rule makes her have one,
   * as after a password.
   */
  async function federatedPassed(ctx: Context, interaction: FederationInteraction, app: AppRegistration, user: FederatedUser, strong: boolean): Promise<void> {
    const passed: PasswordPassed = { uid: interaction.uid, accountId: user.accountId, tenant: user.tenant, hint: throttle.hint(user.username), first: user.first };
    const address = setup.addressOf(ctx);
    const finishable = interaction as unknown as FinishableInteraction;
    if (!strong) {
      const account = await accounts?.findAccount(user.accountId);
      const enrol = account && (await enrolment.needed(account));
      if (enrol) {
        await enrolment.begin(ctx, interaction, { accountId: passed.accountId, tenant: passed.tenant, hint: passed.hint, first: passed.first }, enrol.reset);
        return;
      }
      if (holdsSecondFactor(await factors.summary({ tenant: user.tenant, sub: user.accountId }))) {
        interaction.lastSubmission = { [PASSWORD_PASSED]: passed } as InteractionResults;
        await interaction.persist();
        ctx.status = 303;
        ctx.redirect(`${path}/${interaction.uid}`);
        return;
      }
    }
    await signedIn(ctx, app, passed, address, [], finishable);
  }

  /**
   * The second-factor page of `passed` (again, with what went wrong): the code field for a user with an
   * authenticator app or recovery codes, the "Use a passkey" button for one with a passkey.
   */
  async function showSecondFactor(
    ctx: Context, uid: string, app: AppRegistration, passed: PasswordPassed, error: ((t: Messages) => string) | undefined, status: number, errorOf: 'code' | 'passkey' = 'code',
  ): Promise<void> {
    const csrf = issueCsrf(ctx);
    const locale = localeOf(ctx);
    const branding = await setup.brands?.of(app.tenant);
    const owner = { tenant: passed.tenant, sub: passed.accountId };
    const held = await factors.summary(owner);
    const passkey = held.passkeys.length > 0 ? await passkeySteps.secondFactorOffer(uid, owner, setup.addressOf(ctx)) : undefined;
    sendPage(ctx, secondFactorPage({
      action: `${path}/${uid}/second-factor`, csrf, appName: app.name, redirectUris: app.redirectUris,
      code: held.authenticatorApp !== undefined || held.recoveryCodes !== undefined || !passkey,
      passkey, ...(error ? { error: error(locale.t), errorOf } : {}), locale, branding,
    }), status);
  }

  /** The PasswordPassed of a step posted to interaction `uid`, or a PageError: this step is not (or no longer) hers. */
  async function passedStep(ctx: Context, uid: string) {
    const interaction = await details(ctx);
    const passed = interaction.uid === uid && interaction.prompt.name === 'login' ? passwordPassedOf(interaction) : undefined;
    if (!passed) throw new PageError(400, 'signInStepOver');
    return { interaction, passed };
  }

  /**
   * The second factor, after the password: ONE field, `code`, the authenticator app's code or a
   * recovery code (Factors.checkCode tells them apart); either counts as `otp` (a one-time code).
   * Refused codes are audited by Factors (`sign_in.second_factor_failed`) and, as guesses,
   * counted by the sign-in throttle under the username's hint and the address, like wrong
   * passwords; a code of neither shape is refused unread and not counted. A code used already is
   * answered like a wrong one: telling them apart would confirm to whoever saw it that it was right.
   */
  async function secondFactor(ctx: Context, uid: string, form: Form): Promise<void> {
    const { interaction, passed } = await passedStep(ctx, uid);
    const app = await appOf(interaction.params.client_id);
    const address = setup.addressOf(ctx);
    // The username's limit always holds for codes: a browser that signed in as her before (a known
    // device, which the password step lets past someone else's guesses) is no reason to let it
    // guess at her second factor beyond that limit.
    const wait = await throttle.wait(passed.hint, address, false);
    if (wait !== undefined) {
      signInRefused(app, address, 'throttled', wait);
      ctx.set('Retry-After', String(wait));
      await showSecondFactor(ctx, uid, app, passed, (t) => t.tooManyFailedSignIns(wait), 429);
      return;
    }
    const check = await factors.checkCode({ tenant: passed.tenant, sub: passed.accountId }, form.get('code'));
    if (!check.accepted) {
      if (check.reason === 'malformed') {
        await showSecondFactor(ctx, uid, app, passed, (t) => t.malformedSecondFactorCode, 400);
        return;
      }
      await throttle.failed(passed.hint, address, app.clientId);
      await showSecondFactor(ctx, uid, app, passed, (t) => t.wrongSecondFactorCode, 401);
      return;
    }
    await signedIn(ctx, app, passed, address, ['pwd', 'otp']);
  }

  /**
   * A passkey as the second factor (passkey-steps.ts): one of her passkeys, for the ceremony of her
   * second-factor page. A refusal (not hers, another's, a copy, the ceremony over) shows the page
   * again with what happened; not counted by the throttle (nothing to guess: passkey-steps.ts).
   */
  async function passkeySecondFactor(ctx: Context, uid: string, form: Form): Promise<void> {
    const { interaction, passed } = await passedStep(ctx, uid);
    const app = await appOf(interaction.params.client_id);
    const outcome = await passkeySteps.secondFactor(form, { tenant: passed.tenant, sub: passed.accountId });
    if (!outcome.accepted) {
      await showSecondFactor(ctx, uid, app, passed, (t) => (outcome.malformed ? t.passkeyNotUsed : t.passkeyRefused), outcome.malformed ? 400 : 401, 'passkey');
      return;
    }
    await signedIn(ctx, app, passed, setup.addressOf(ctx), outcome.methods);
  }

  /**
   * A passkey alone (passkey-steps.ts), where the app's tenant allows it (403 elsewhere, before
   * anything is read). A refusal is a failed sign-in (`sign_in.failed`, anonymous) and the login
   * page again.
   */
  async function passkeySignIn(ctx: Context, uid: string, form: Form): Promise<void> {
    const interaction = await details(ctx);
    if (interaction.uid !== uid || interaction.prompt.name !== 'login') throw new PageError(400, 'signInStepOver');
    const app = await appOf(interaction.params.client_id);
    if (app.tenant === undefined || !(await passkeyOnly(app.tenant))) throw new PageError(403, 'passkeyOnlyNotAllowed');
    // SSO required: a passkey alone is no way around the tenant's provider (refused before it is read).
    const address = setup.addressOf(ctx);
    if (await sso.offer(ctx, uid, app, app.tenant, 403, `${path}/${uid}`)) {
      signInRefused(app, address, 'sso_required');
      return;
    }
    const outcome = await passkeySteps.alone(form, app.tenant);
    if (!outcome.accepted) {
      signInRefused(app, address, 'wrong_credentials');
      await loginAgain(ctx, uid, app, '', (t) => (outcome.malformed ? t.passkeyNotUsed : t.passkeyRefused), outcome.malformed ? 400 : 401, false);
      return;
    }
    await signedIn(ctx, app, { accountId: outcome.owner.sub, tenant: outcome.owner.tenant, hint: '' }, address, outcome.methods);
  }

  async function confirm(ctx: Context, uid: string, form: Form): Promise<void> {
    const interaction = await details(ctx);
    if (interaction.uid !== uid || interaction.prompt.name !== 'consent') throw new PageError(400, 'signInStepOver');
    const decision = form.get('decision');
    if (decision === 'deny') {
      await finish(ctx, { error: 'access_denied', error_description: 'the user denied the request' }, true);
      return;
    }
    if (decision !== 'allow') throw new PageError(400, 'chooseAllowOrDeny');
    const { prompt, params, session, grantId } = interaction;
    const account = accounts && session ? await accounts.findAccount(session.accountId) : undefined;
    if (!account) throw new PageError(400, 'sessionEnded');
    const grant = grantId
      ? await provider.Grant.find(grantId)
      : new provider.Grant({ accountId: session!.accountId, clientId: String(params.client_id) });
    if (!grant) throw new PageError(400, 'signInExpired');
    const missing = prompt.details as {
      missingOIDCScope?: string[];
      missingOIDCClaims?: string[];
      missingResourceScopes?: Record<string, string[]>;
    };
    // What the page listed is what she allowed: a resource scope she cannot give (the engine also
    // knows API scopes as OIDC scopes) is rejected, not granted, so that it is neither in her
    // consent nor asked again; gaining it later asks her at the resource (src/engine/configuration.ts).
    const app = await appOf(params.client_id);
    const userScopes = new Set(namedUserResourceScopes(catalog, account, await tenantPolicy(policyOf, account.tenant), app.firstParty));
    const canGive = (scope: string) => !isResourceScope(catalog, scope) || userScopes.has(scope);
    const oidc = missing.missingOIDCScope ?? [];
    if (oidc.some(canGive)) grant.addOIDCScope(oidc.filter(canGive).join(' '));
    if (oidc.some((scope) => !canGive(scope))) grant.rejectOIDCScope(oidc.filter((scope) => !canGive(scope)).join(' '));
    if (missing.missingOIDCClaims) grant.addOIDCClaims(missing.missingOIDCClaims);
    for (const [indicator, scopes] of Object.entries(missing.missingResourceScopes ?? {})) {
      if (scopes.some(canGive)) grant.addResourceScope(indicator, scopes.filter(canGive).join(' '));
    }
    const savedId = await grant.save();
    const clientId = String(params.client_id);
    await consents.record(
      { tenant: account.tenant, sub: account.sub, clientId, grantId: savedId, scopes: grantScopes(grant, audience) },
      { actor: { type: 'user', id: account.sub }, address: setup.addressOf(ctx) },
    );
    await finish(ctx, { consent: { grantId: savedId } }, true);
  }

  const enrolment = enrolmentSteps({
    path, accounts, factors, rules: setup.rules, throttle, brands: setup.brands, addressOf: setup.addressOf, issueCsrf,
    refused: (app, address, wait) => signInRefused(app, address, 'throttled', wait),
    signedIn,
    stepOver: () => {
      throw new PageError(400, 'signInStepOver');
    },
  });

  const federation = federationSteps(
    { ...setup.federation, provider, path, apps, logger, brands: setup.brands, addressOf: setup.addressOf, audit: setup.audit },
    { loginAgain: (ctx, uid, app, username, error, status) => loginAgain(ctx, uid, app, username, error, status), passed: federatedPassed },
  );

  /** POST `federate`: on to the organisation's identity provider (federation-steps.ts). */
  async function federate(ctx: Context, uid: string, form: Form): Promise<void> {
    const interaction = await details(ctx);
    if (interaction.uid !== uid || interaction.prompt.name !== 'login') throw new PageError(400, 'signInStepOver');
    const app = await appOf(interaction.params.client_id);
    await federation.federate(ctx, interaction, app, form);
  }

  /** POST `enrol` or `enrolled`: a step of the enrolment after the password. */
  async function enrolStep(ctx: Context, uid: string, step: 'enrol' | 'enrolled', form: Form): Promise<void> {
    const interaction = await details(ctx);
    if (interaction.uid !== uid || interaction.prompt.name !== 'login') throw new PageError(400, 'signInStepOver');
    const app = await appOf(interaction.params.client_id);
    await (step === 'enrol' ? enrolment.confirm(ctx, interaction, app, form) : enrolment.finish(ctx, interaction, app));
  }

  /** A page's answer, and every error of it as an error page (never JSON: a person reads it). */
  async function page(ctx: Context, answer: () => Promise<void>): Promise<void> {
    try {
      await answer();
    } catch (error) {
      const status = error instanceof PageError ? error.status : httpStatusOf(error);
      const text: Sentence = error instanceof PageError
        ? error.text
        : status === 503 ? 'serviceUnavailable' : status === 413 ? 'formTooLarge' : 'requestFailed';
      if (!(error instanceof PageError) && status >= 500) logger.error('sign-in page failed', { error: (error as Error).name });
      // A form refused before its sign-in was read (CSRF, encoding): the sign-in's language still.
      if (error instanceof PageError && status < 500 && !knowsUiLocales(ctx)) {
        await details(ctx).catch(() => undefined);
      }
      const locale = localeOf(ctx);
      sendPage(ctx, errorPage(locale.t[text], undefined, locale), status);
    }
  }

  // The router answers other methods with a 405 page (src/endpoints/sign-in/index.ts).
  return {
    interaction: (ctx, { uid }) => page(ctx, async () => {
      if (!UID.test(uid!)) throw new PageError(404, 'signInPageMissing');
      await show(ctx, uid!);
    }),
    interactionStep: (ctx, { uid, step }) => page(ctx, async () => {
      if (!UID.test(uid!) || !STEPS.has(step!)) throw new PageError(404, 'signInPageMissing');
      if (ctx.request.type.toLowerCase() !== 'application/x-www-form-urlencoded') throw new PageError(415, 'formEncoding');
      // A passkey's answer (a credential ID of up to 1,023 bytes, twice, a signature, all encoded
      // twice over) is larger than the other forms: its steps take up to PASSKEY_FORM_BYTES.
      const passkeyStep = step === 'passkey' || step === 'passkey-sign-in';
      const form = await readForm(ctx, passkeyStep ? Math.max(setup.formLimit, PASSKEY_FORM_BYTES) : setup.formLimit);
      const refusal = csrfTokens.refusal(ctx, form.get('csrf'));
      if (refusal) throw new PageError(403, refusal === 'other_site' ? 'formFromOtherSite' : 'formExpired');
      if (step === 'enrol' || step === 'enrolled') return enrolStep(ctx, uid!, step, form);
      const handler = { login, 'second-factor': secondFactor, passkey: passkeySecondFactor, 'passkey-sign-in': passkeySignIn, confirm, federate }[step!]!;
      await handler(ctx, uid!, form);
    }),
    // The provider's answer (src/endpoints/federation/): it finishes this module's sign-ins.
    federationCallback: (ctx, { connection }) => page(ctx, () => federation.callback(ctx, connection ?? '')),
  };
}

/** An interaction finished without its cookie (the engine's model, as `finish` uses it). */
interface FinishableInteraction {
  result?: unknown;
  exp: number;
  returnTo: string;
  save(ttl: number): Promise<unknown>;
}
