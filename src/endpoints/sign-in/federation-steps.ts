import { createHash, createHmac, randomBytes } from 'node:crypto';
import { FEDERATION_MAX_SECONDS } from '../../../policies/lifetimes.js';
import type { Context } from 'koa';
import type Provider from 'oidc-provider';
import type { InteractionResults } from 'oidc-provider';
import { constantTimeEqual } from '../../../policies/constant-time.js';
import { domainOfEmail, normalizeDomain } from '../../../policies/email-domains.js';
import { isMethodList, upstreamMethods } from '../../../policies/upstream-sign-in.js';
import type { AuthenticationMethod } from '../../../policies/authentication-context.js';
import type { AuditTrail } from '../../audit/trail.js';
import type { Connection, Connections } from '../../federation/connections.js';
import type { FederatedAccountRefusal, FederatedAccounts } from '../../federation/federated-accounts.js';
import type { SignedInThroughStore } from '../../federation/signed-in-through.js';
import { UpstreamFailure, type UpstreamFailureReason, type Upstreams } from '../../federation/upstreams.js';
import type { Form } from '../../http/forms.js';
import { localeOf, rememberUiLocales } from '../../i18n/localizer.js';
import type { Messages } from '../../i18n/messages/en.js';
import type { Logger } from '../../logger.js';
import type { Metrics } from '../../observability/metrics.js';
import type { Brands } from '../../pages/branding.js';
import { federationFailedPage, federationOnwardPage, type FederationOffer } from '../../pages/federation.js';
import { sendPage } from '../../pages/html.js';
import type { AppRegistration, AppRegistrations } from '../../records/app-registrations.js';

/*
 * ENTERPRISE SIGN-IN AT THE SIGN-IN PAGES: the user signs in at her organisation's identity
 * provider (a tenant's connection, src/federation/) instead of with a password.
 *
 * - Which connections apply to an app: a tenant's app (not open to all tenants), its tenant's only;
 *   a platform app, or a tenant's app open to all tenants, any tenant's. The login page shows an
 *   email field (home-realm discovery: the domain of the address names the connection) and, for a
 *   tenant's app, a "Continue with <name>" button per connection of its tenant. An address whose
 *   domain no applicable connection owns gets the login page again, the address as the username,
 *   saying to use the password: never which tenant, if any, owns the domain.
 * - `login_hint` (an address at an owned domain) or `domain_hint` (an owned domain) in the app's
 *   request goes straight to the provider, at the first showing of the sign-in only (a user who
 *   came back from a failure gets the page).
 * - The request to the provider is bound to the pending sign-in (the engine's interaction) and to
 *   this browser. The interaction keeps digests only: of the `state` (which carries the
 *   interaction's uid and a random part) and of the browser binding (a random value in an httpOnly
 *   cookie scoped to our callback); the PKCE verifier and the nonce are derived from the state with
 *   a key of ours (an HMAC under the cookie key), never stored.
 * - The callback (GET `{oauth}/federation/callback`, src/endpoints/federation/) finds the interaction
 *   by the state's uid (the engine's interaction cookie is scoped to the sign-in pages' path and is
 *   not sent there), checks the state's digest (constant time), the binding cookie, the age, the
 *   provider's `error`, then exchanges the code (src/federation/upstreams.ts: the ID token checked),
 *   maps the claims and finds the account (src/federation/federated-accounts.ts). A sign-in the
 *   provider calls multi-factor finishes it; a weaker one goes on to our second factor or to
 *   enrolment, as a password does (policies/upstream-sign-in.ts).
 * - Every failure is a page in the user's language saying what happened and what to do, with a
 *   link back to the sign-in (still pending: another try, another way), an audit event
 *   `sign_in.federation_failed` (counted, anonymous), a metric, and a log line without any code
 *   or token. A failure stores nothing.
 */

/** The browser binding's cookie (scoped to the callback's path). */
const BINDING_COOKIE = 'talent_auth_federation';
/** The key of FederationPending in the interaction's `lastSubmission`. */
const FEDERATION_PENDING = 'talentAuthFederation';
/** What a state, a binding value and an interaction uid look like. */
const TOKEN = /^[A-Za-z0-9_-]{16,128}$/;
const UID = /^[A-Za-z0-9_-]{1,128}$/;

/** Why a sign-in through a provider failed (the audit's `reason`, the metric's `outcome`). */
export type FederationFailureReason =
  | UpstreamFailureReason
  | FederatedAccountRefusal
  | 'provider_error' | 'state_mismatch' | 'binding_mismatch' | 'expired' | 'connection_gone';

/** The first factor of a sign-in that went through a provider, as the steps after it keep it. */
export interface FederatedFirstFactor {
  /** The methods of the provider's sign-in (`fed` first). */
  methods: AuthenticationMethod[];
  /** The connection's id. */
  connection: string;
}

/** A FederatedFirstFactor read back from a pending sign-in's record, or undefined. */
export function federatedFirstFactorOf(value: unknown): FederatedFirstFactor | undefined {
  const { methods, connection } = (value ?? {}) as Partial<FederatedFirstFactor>;
  return isMethodList(methods) && typeof connection === 'string' ? { methods, connection } : undefined;
}

/** The request to a provider a pending sign-in waits for: digests only (see above). */
interface FederationPending {
  uid: string;
  connection: string;
  /** SHA-256 of the state, base64url. */
  state: string;
  /** SHA-256 of the browser binding, base64url. */
  binding: string;
  /** When it was sent (epoch seconds). */
  at: number;
}

/** The interaction as these steps read and write it. */
export interface FederationInteraction {
  uid: string;
  params: Record<string, unknown>;
  prompt: { name: string };
  lastSubmission?: unknown;
  persist(): Promise<unknown>;
}

function pendingOf(interaction: { uid: string; lastSubmission?: unknown }): FederationPending | undefined {
  const kept = (interaction.lastSubmission as Record<string, unknown> | undefined)?.[FEDERATION_PENDING] as Partial<FederationPending> | undefined;
  if (!kept || kept.uid !== interaction.uid) return undefined;
  const { connection, state, binding, at } = kept;
  if (typeof connection !== 'string' || typeof state !== 'string' || typeof binding !== 'string' || typeof at !== 'number') return undefined;
  return { uid: kept.uid, connection, state, binding, at };
}

const digest = (value: string) => createHash('sha256').update(value).digest('base64url');

/** What the federation steps need of the server. */
export interface FederationStepsSetup {
  provider: Provider;
  /** The sign-in pages' path. */
  path: string;
  /** The base of our callback URLs: each connection's is `{callbackBase}/{connection id}` (Upstreams.redirectUriOf). */
  callbackBase: string;
  apps: AppRegistrations;
  connections: Connections;
  upstreams: Upstreams;
  signedInThrough: SignedInThroughStore;
  federatedAccounts: FederatedAccounts;
  cookieKeys: readonly string[];
  audit?: AuditTrail | undefined;
  metrics?: Metrics | undefined;
  logger: Logger;
  brands?: Brands | undefined;
  addressOf: (ctx: Context) => string;
  now?: () => number;
}

/** A user a provider vouched for, handed to the sign-in pages to go on. */
export interface FederatedUser {
  accountId: string;
  tenant: string;
  /** The name the throttle counts her second-factor guesses under (her address, else her sub). */
  username: string;
  first: FederatedFirstFactor;
}

/** What the federation steps use of the sign-in pages (src/endpoints/sign-in/pages.ts). */
export interface FederationContinuation {
  /** The login page again, with the username filled in and what to do. */
  loginAgain(ctx: Context, uid: string, app: AppRegistration, username: string, error: (t: Messages) => string, status: number): Promise<void>;
  /** The provider vouched for her: finish the sign-in (`strong`), or go on to our second factor or enrolment. */
  passed(ctx: Context, interaction: FederationInteraction, app: AppRegistration, user: FederatedUser, strong: boolean): Promise<void>;
}

/** The failure page's text for each reason. */
function failureText(reason: FederationFailureReason, providerError: string | undefined): { text: keyof Messages; status: number } {
  switch (reason) {
    case 'unreachable': return { text: 'federationUnreachable', status: 502 };
    case 'timeout': return { text: 'federationTimeout', status: 504 };
    case 'refused':
    case 'bad_metadata': return { text: 'federationMisconfigured', status: 502 };
    case 'error_response': return { text: 'federationRefusedByProvider', status: 502 };
    case 'invalid_response': return { text: 'federationInvalidAnswer', status: 502 };
    case 'provider_error': return { text: providerError === 'access_denied' ? 'federationCancelled' : 'federationRefusedByProvider', status: 400 };
    case 'state_mismatch':
    case 'binding_mismatch': return { text: 'federationNotThisBrowser', status: 400 };
    case 'expired': return { text: 'federationExpired', status: 400 };
    case 'connection_gone': return { text: 'federationConnectionGone', status: 400 };
    case 'wrong_tenant': return { text: 'federationNotForThisApp', status: 403 };
    case 'domain_not_owned':
    case 'no_email': return { text: 'federationDomainNotAccepted', status: 403 };
    case 'no_account': return { text: 'federationNoAccount', status: 403 };
  }
}

/** An OAuth error code as we repeat it (audit, log): the characters RFC 6749 §A.7 allows it, bounded. */
function errorCode(value: unknown): string | undefined {
  return typeof value === 'string' && /^[\x20-\x21\x23-\x5b\x5d-\x7e]{1,64}$/.test(value) ? value : value === undefined ? undefined : 'malformed';
}

/** The federation steps of the sign-in pages (see above). */
export function federationSteps(setup: FederationStepsSetup, pages: FederationContinuation) {
  const { provider, path, connections, upstreams, logger } = setup;
  const now = setup.now ?? Date.now;
  // The binding cookie is sent to every connection's callback (the path is their common prefix).
  const callbackPath = new URL(setup.callbackBase).pathname;
  const secure = setup.callbackBase.startsWith('https:');
  /**
   * Sets (or, empty, clears) the binding cookie: Secure under an https public URL, which is what
   * the browser used even where the TLS ended at a proxy we were not told to trust.
   */
  const setBinding = (ctx: Context, value: string) => {
    if (secure) ctx.cookies.secure = true;
    ctx.cookies.set(BINDING_COOKIE, value, { httpOnly: true, sameSite: 'lax', secure, path: callbackPath, maxAge: value ? FEDERATION_MAX_SECONDS * 1000 : 0, overwrite: true, signed: false });
  };
  // The key the PKCE verifier and the nonce are derived under: never stored, never sent.
  const checksKey = createHmac('sha256', setup.cookieKeys[0] ?? '').update('talent-auth federation checks').digest();
  const derive = (purpose: string, state: string) => createHmac('sha256', checksKey).update(`${purpose}\0${state}`).digest('base64url');
  const checksOf = (state: string) => ({ state, nonce: derive('nonce', state), codeVerifier: derive('pkce', state) });

  /** Whether a connection may sign users in to an app (see above). */
  const applies = (app: AppRegistration, connection: Pick<Connection, 'tenant'>) =>
    app.tenant === undefined || app.openToAllTenants || connection.tenant === app.tenant;

  /**
   * The connection that owns the domain of `email` (or the domain itself) and applies to the app:
   * at an app of the connection's own tenant any domain it lists, at an app open to every tenant
   * (the platform's, or another tenant's open one) only a domain the operator verified (a domain a
   * tenant merely named sends nobody else's users to its provider: src/federation/connections.ts).
   */
  async function owner(app: AppRegistration, domain: string | undefined): Promise<Connection | undefined> {
    const connection = domain ? await connections.byDomain(domain) : undefined;
    if (!connection || !applies(app, connection)) return undefined;
    return connection.tenant === app.tenant || connection.verifiedDomains.includes(domain!) ? connection : undefined;
  }

  interface Failure {
    reason: FederationFailureReason;
    app?: AppRegistration | undefined;
    connection?: Pick<Connection, 'id' | 'tenant'> | undefined;
    /** The pending sign-in, when known: the page links back to it. */
    uid?: string | undefined;
    /** For the log (never a code or token). */
    detail?: string | undefined;
    /** The provider's OAuth error code. */
    error?: string | undefined;
  }

  /** A failed sign-in through a provider: audited (counted), measured, logged, and its page. */
  async function failed(ctx: Context, failure: Failure): Promise<void> {
    const { reason, app, connection, uid, error } = failure;
    const address = setup.addressOf(ctx);
    const tenant = connection?.tenant ?? app?.tenant;
    setup.audit?.recordRefusal({
      type: 'sign_in.federation_failed',
      ...(tenant !== undefined ? { tenant } : {}),
      actor: { type: 'anonymous' },
      ...(connection ? { target: { type: 'connection', id: connection.id } } : app ? { target: { type: 'app_registration', id: app.clientId } } : {}),
      address,
      details: { reason, ...(connection ? { connection: connection.id } : {}), ...(error ? { error } : {}) },
    }, { who: address, where: `${connection?.id ?? app?.clientId ?? ''}:${reason}` });
    setup.metrics?.federatedSignIns.inc({ outcome: reason });
    logger.warn('federated sign-in failed', { reason, ...(connection ? { connection: connection.id } : {}), ...(error ? { error } : {}), ...(failure.detail ? { detail: failure.detail } : {}) });
    const { text, status } = failureText(reason, error);
    const locale = localeOf(ctx);
    const message = locale.t[text] as string;
    sendPage(ctx, federationFailedPage({ message, backTo: uid ? `${path}/${uid}` : undefined, locale, branding: await setup.brands?.of(app?.tenant) }), status);
  }

  /**
   * Sends the browser to the provider of `connection` for this pending sign-in: the request bound
   * to it and to this browser (see above). `fromForm`: the login page's form led here, whose CSP
   * names the issuers of the app's tenant's connections only; another authorization endpoint gets
   * a page that leads on.
   */
  async function start(ctx: Context, interaction: FederationInteraction, app: AppRegistration, connection: Connection, loginHint: string | undefined, fromForm: boolean): Promise<void> {
    const forSignIn = await connections.forSignIn(connection.id);
    if (!forSignIn) {
      await failed(ctx, { reason: 'connection_gone', app, connection, uid: interaction.uid });
      return;
    }
    const state = `${interaction.uid}.${randomBytes(24).toString('base64url')}`;
    const kept = ctx.cookies.get(BINDING_COOKIE);
    // One binding per browser: two sign-ins started in two tabs both come back.
    const binding = kept && TOKEN.test(kept) ? kept : randomBytes(32).toString('base64url');
    let url: URL;
    try {
      url = await upstreams.authorizationUrl(forSignIn, checksOf(state), loginHint);
    } catch (error) {
      const failure = error instanceof UpstreamFailure ? error : new UpstreamFailure('invalid_response', (error as Error).name);
      await failed(ctx, { reason: failure.reason, app, connection, uid: interaction.uid, detail: failure.detail });
      return;
    }
    const pending: FederationPending = { uid: interaction.uid, connection: connection.id, state: digest(state), binding: digest(binding), at: Math.floor(now() / 1000) };
    interaction.lastSubmission = { [FEDERATION_PENDING]: pending } as InteractionResults;
    await interaction.persist();
    setBinding(ctx, binding);
    // The login page's CSP lets its forms lead to the issuers of the app's tenant's connections
    // (FederationOffer.formTargets): a redirect elsewhere after a form would be blocked.
    if (fromForm && (connection.tenant !== app.tenant || url.origin !== new URL(connection.issuer).origin)) {
      ctx.set('Refresh', `0;url=${url.href}`);
      sendPage(ctx, federationOnwardPage(url.href, connection.name, localeOf(ctx), await setup.brands?.of(app.tenant)));
      return;
    }
    ctx.status = 303;
    ctx.redirect(url.href);
  }

  return {
    /** What the login page of `app` offers (undefined: nothing, no connection can apply). */
    async offer(uid: string, app: AppRegistration): Promise<FederationOffer | undefined> {
      const own = app.tenant !== undefined ? await connections.list(app.tenant) : [];
      if (app.tenant !== undefined && !app.openToAllTenants && own.length === 0) return undefined;
      const origins = [...new Set(own.map((connection) => new URL(connection.issuer).origin))];
      return { action: `${path}/${uid}/federate`, discovery: true, connections: own.map(({ id, name }) => ({ id, name })), formTargets: origins };
    },

    /**
     * At the first showing of a sign-in: its `login_hint` (an address) or `domain_hint` naming an
     * applicable connection's domain sends the browser to that provider. False: show the page.
     */
    async hinted(ctx: Context, interaction: FederationInteraction, app: AppRegistration): Promise<boolean> {
      if (interaction.prompt.name !== 'login' || pendingOf(interaction)) return false;
      const { login_hint: loginHint, domain_hint: domainHint } = interaction.params;
      const email = typeof loginHint === 'string' ? domainOfEmail(loginHint) && loginHint : undefined;
      const connection = email
        ? await owner(app, domainOfEmail(email))
        : typeof domainHint === 'string' ? await owner(app, normalizeDomain(domainHint)) : undefined;
      if (!connection) return false;
      await start(ctx, interaction, app, connection, email, false);
      return true;
    },

    /** POST `federate`: an address (`email`) or a connection's button (`connection`). */
    async federate(ctx: Context, interaction: FederationInteraction, app: AppRegistration, form: Form): Promise<void> {
      const chosen = form.get('connection');
      if (chosen !== undefined) {
        const connection = chosen.length <= 128 ? await connections.get(chosen) : undefined;
        if (!connection) {
          await failed(ctx, { reason: 'connection_gone', app, uid: interaction.uid });
          return;
        }
        if (!applies(app, connection)) {
          await failed(ctx, { reason: 'wrong_tenant', app, connection, uid: interaction.uid });
          return;
        }
        await start(ctx, interaction, app, connection, undefined, true);
        return;
      }
      const email = (form.get('email') ?? '').trim();
      const connection = await owner(app, domainOfEmail(email));
      if (!connection) {
        await pages.loginAgain(ctx, interaction.uid, app, email.slice(0, 320), (t) => t.federationUsePassword, 200);
        return;
      }
      await start(ctx, interaction, app, connection, email, true);
    },

    /**
     * GET `{oauth}/federation/callback/{connection}`: the provider's answer (see above), taken only
     * at the callback of the connection the pending sign-in was sent to (a mix-up defence:
     * src/endpoints/federation/index.ts).
     */
    async callback(ctx: Context, at: string): Promise<void> {
      const { state, error } = ctx.query;
      const uid = typeof state === 'string' ? state.split('.')[0] : undefined;
      if (typeof state !== 'string' || !uid || !UID.test(uid) || !TOKEN.test(state.slice(uid.length + 1))) {
        await failed(ctx, { reason: 'state_mismatch', detail: 'no state of ours' });
        return;
      }
      const interaction = await provider.Interaction.find(uid);
      if (!interaction) {
        await failed(ctx, { reason: 'expired', detail: 'the sign-in is over' });
        return;
      }
      rememberUiLocales(ctx, interaction.params.ui_locales);
      const clientId = interaction.params.client_id;
      const app = typeof clientId === 'string' ? await setup.apps.get(clientId) : undefined;
      const pending = pendingOf(interaction);
      if (!app || !pending || interaction.prompt.name !== 'login' || !constantTimeEqual(digest(state), pending.state)) {
        await failed(ctx, { reason: 'state_mismatch', app, uid, detail: 'the state is not this sign-in\'s' });
        return;
      }
      const binding = ctx.cookies.get(BINDING_COOKIE);
      if (!binding || !constantTimeEqual(digest(binding), pending.binding)) {
        await failed(ctx, { reason: 'binding_mismatch', app, uid, detail: 'another browser' });
        return;
      }
      // The answer of another connection's provider (relayed to this browser by a provider that
      // mixes them up) is refused before anything is sent anywhere.
      if (!constantTimeEqual(at, pending.connection)) {
        await failed(ctx, { reason: 'state_mismatch', app, uid, detail: "the answer came back at another connection's callback" });
        return;
      }
      const connection = await connections.forSignIn(pending.connection);
      if (!connection) {
        await failed(ctx, { reason: 'connection_gone', app, uid });
        return;
      }
      if (Math.floor(now() / 1000) - pending.at > FEDERATION_MAX_SECONDS) {
        await failed(ctx, { reason: 'expired', app, connection, uid });
        return;
      }
      if (!applies(app, connection)) {
        await failed(ctx, { reason: 'wrong_tenant', app, connection, uid });
        return;
      }
      if (error !== undefined) {
        await failed(ctx, { reason: 'provider_error', app, connection, uid, error: errorCode(error) });
        return;
      }
      const callbackUrl = new URL(upstreams.redirectUriOf(connection.id));
      callbackUrl.search = ctx.querystring;
      let identity;
      try {
        identity = await upstreams.exchange(connection, callbackUrl, checksOf(state));
      } catch (failure) {
        const upstream = failure instanceof UpstreamFailure ? failure : new UpstreamFailure('invalid_response', (failure as Error).name);
        await failed(ctx, { reason: upstream.reason, app, connection, uid, detail: upstream.detail, error: upstream.error });
        return;
      }
      const outcome = await setup.federatedAccounts.accountOf(connection, identity.claims as Record<string, unknown>);
      if (!outcome.found) {
        await failed(ctx, { reason: outcome.reason, app, connection, uid });
        return;
      }
      const { account, claims } = outcome;
      const methods = upstreamMethods(identity.claims as { amr?: unknown; acr?: unknown }, connection.mfaAcrValues);
      await setup.signedInThrough.remember({ tenant: account.tenant, sub: account.sub }, { connectionId: connection.id, idToken: identity.idToken, at: Math.floor(now() / 1000) });
      setBinding(ctx, '');
      setup.metrics?.federatedSignIns.inc({ outcome: 'succeeded' });
      await pages.passed(ctx, interaction as unknown as FederationInteraction, app, {
        accountId: account.sub, tenant: account.tenant, username: claims.email ?? account.sub, first: { methods, connection: connection.id },
      }, methods.includes('mfa'));
    },
  };
}

/** The federation steps, as the sign-in pages hold them. */
export type FederationSteps = ReturnType<typeof federationSteps>;
