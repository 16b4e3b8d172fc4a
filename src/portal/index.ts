import { AsyncLocalStorage } from 'node:async_hooks';
import { createHash, createHmac, randomBytes } from 'node:crypto';
import type { Context, Next } from 'koa';
import { StoreUnavailable } from '../../adapters/types.js';
import type { ApiCatalog, ApiDefinition } from '../../policies/catalog.js';
import { MANAGEMENT_SCOPE } from '../../policies/management.js';
import type { AccountStore } from '../accounts.js';
import { negotiateLocale } from '../i18n/locale.js';
import type { Localizer } from '../i18n/localizer.js';
import { scopeWords } from '../pages/scope-words.js';
import type { Brands, CheckedBranding } from '../pages/branding.js';
import { checkRedirectUri } from '../../policies/redirect-uris.js';
import { AUDIT_CURSOR_SHAPE, AUDIT_EVENT_TYPES } from '../audit/trail.js';
import type { Logger } from '../logger.js';
import { escapeHtml, page, sendPage } from '../pages/html.js';
import type { AppRegistrations } from '../records/app-registrations.js';
import { PortalApiClient, SignedOut, type ApiAnswer } from './api-client.js';
import { PORTAL_ADDRESS_HEADER, type ForwardedAddress } from './address.js';
import { PortalSessions, type PendingSignIn, type PortalSession, type ShownSecret } from './sessions.js';
import { constantTimeEqual } from '../../policies/constant-time.js';
import { s256Challenge } from '../../policies/pkce.js';
import { PORTAL_TEXT, withOverrides, type PortalText, type PortalTextOverrides } from './text.js';
import { PORTAL_TEXT_DE } from './text-de.js';
import { PORTAL_TEXT_FR } from './text-fr.js';
import {
  activityPage, appFieldId, appFormPage, clientFieldId, clientFormPage, confirmPage, copyScript, dashboardPage, forbiddenPage, landingPage,
  PORTAL_STYLE, secretPageBody, unlockPage,
  type ActivityFilter, type ActivityNames, type AppFormValues, type AppRegistrationWire, type AuditEventWire, type ClientConfigurationWire,
  type ClientFormValues, type ConsentWire, type FieldErrors, type PlatformAppWire, type ViewContext,
} from './views.js';

/*
 * THE ADMINISTRATION PORTAL (`portal: { enabled: true }`), at `{pathPrefix}/portal`: a first-party
 * app of the server. It signs users in through our own authorization endpoint (code + PKCE, as its
 * own confidential app), keeps their tokens in an encrypted server-side session, and calls the
 * management and consent APIs with them, so a user can do nothing here that the APIs would not let
 * her do. Users holding "Create and update integration setup" manage their organisation's client
 * configurations and app registrations, see its Activity and the platform's apps that serve it, and
 * lift sign-in holds of its users; everyone sees and revokes her consents.
 *
 * What a user may do here is read from the scopes her access token was granted: without the
 * management right the portal calls no management API at all (no refusal to record) and answers
 * its forms and confirmations with a page (403) that names the permission she lacks.
 *
 * Pages are server-rendered forms that work without JavaScript, under a strict CSP (no script but
 * the copy button of the secret page, by nonce). A secret is shown once: it travels from the API's
 * answer into the encrypted session and out of it with the next GET of the secret page, never in a
 * URL, a log line or a page that can be shown again (no-store).
 */

/** What the portal needs of the server. */
export interface PortalSetup {
  /** `{baseUrl}`: the public origin and base path. */
  baseUrl: string;
  pathPrefix: string;
  /** The portal's path under the prefix, e.g. `/portal`. */
  path: string;
  /** Where this server reaches its own token endpoint and APIs (`{internalUrl or baseUrl}{pathPrefix}`). */
  internalBase: string;
  issuer: string;
  apis: readonly ApiDefinition[];
  /** What a scope allows, in words, per language. */
  catalog: ApiCatalog;
  /** The source address of a request (the server's rule: proxies trusted or not). */
  addressOf: (ctx: Context) => string;
  /** Signs the user's address for the APIs (their audit trail). */
  forwardedAddress: ForwardedAddress;
  /** The tenants' branding (the `branding` option). */
  brands: Brands;
  /** The sign-in pages' texts (OIDC scope words, in the host's words where it gave some). */
  localizer: Localizer;
  /** The host's portal texts (`portal.messages`). */
  messages?: Record<string, PortalTextOverrides> | undefined;
  apps: AppRegistrations;
  /** The host's users: the Activity names the users of the organisation who acted. */
  accounts?: AccountStore | undefined;
  /** Whether a tenant's admin can lift sign-in holds (the AccountStore has `findByUsername`). */
  canUnlock: boolean;
  sessions: PortalSessions;
  logger: Logger;
}

const SESSION_COOKIE = 'portal_session';
/** The sign-ins under way in this browser, sealed (nothing is stored before a user signs in). */
const SIGN_IN_COOKIE = 'portal_signin';
/** An unchanged session is written again (its idle lifetime renewed) at most this often. */
const RENEW_AFTER_MS = 5 * 60_000;
const SIGN_IN_TTL_MS = 10 * 60_000;
const FORM_LIMIT = 64 * 1024;
/** The portal asks for the management right explicitly; users without the permission get tokens without it. */
const SCOPE = 'openid profile manage.integrations';
/** Client IDs are UUIDs; anything else never reaches the APIs. */
const ID = /^[A-Za-z0-9-]{1,64}$/;
const MAX_URIS = 20;
/** A date of the Activity filter (UTC). */
const DATE = /^\d{4}-\d{2}-\d{2}$/;

/** The portal's own client ID: UUID-shaped, derived from the issuer, the same on every instance. */
export function portalClientId(issuer: string): string {
  const hex = createHash('sha256').update(`talent-auth portal ${issuer}`).digest('hex');
  return `${hex.slice(0, 8)}-${hex.slice(8, 12)}-5${hex.slice(13, 16)}-a${hex.slice(17, 20)}-${hex.slice(20, 32)}`;
}

/** The portal's client secret: derived from the cookie key, the same on every instance, never stored in clear. */
export function portalClientSecret(cookieKey: string): string {
  return createHmac('sha256', cookieKey).update('talent-auth portal client secret').digest('base64url');
}

/** Registers (or brings up to date) the portal's own first-party confidential app. */
export async function registerPortalApp(apps: AppRegistrations, issuer: string, portalUrl: string, cookieKey: string): Promise<{ clientId: string; clientSecret: string }> {
  const clientId = portalClientId(issuer);
  const clientSecret = portalClientSecret(cookieKey);
  await apps.ensureBuiltIn(clientId, {
    name: PORTAL_TEXT.product,
    redirectUris: [`${portalUrl}/callback`],
    postLogoutRedirectUris: [portalUrl],
    clientType: 'confidential',
    firstParty: true,
  }, clientSecret);
  return { clientId, clientSecret };
}

class FormTooLarge extends Error {}

async function readForm(ctx: Context): Promise<URLSearchParams> {
  if (!ctx.is('application/x-www-form-urlencoded')) return new URLSearchParams();
  const chunks: Buffer[] = [];
  let size = 0;
  for await (const chunk of ctx.req as AsyncIterable<Buffer>) {
    size += chunk.length;
    if (size > FORM_LIMIT) throw new FormTooLarge();
    chunks.push(chunk);
  }
  return new URLSearchParams(Buffer.concat(chunks).toString('utf8'));
}

function jwtPayload(jwt: unknown): Record<string, unknown> {
  if (typeof jwt !== 'string') return {};
  try {
    return JSON.parse(Buffer.from(jwt.split('.')[1] ?? '', 'base64url').toString('utf8')) as Record<string, unknown>;
  } catch {
    return {};
  }
}

/** The API's `error_description` (and field), or the status. */
function describe(answer: ApiAnswer): string {
  const description = typeof answer.body.error_description === 'string' ? answer.body.error_description : undefined;
  return description ?? (typeof answer.body.error === 'string' ? answer.body.error : `HTTP ${answer.status}`);
}

/** A validation error's description without the wire field name it starts with (the page shows it at the field). */
function fieldMessage(answer: ApiAnswer, field: string): string {
  const description = describe(answer);
  return field && description.startsWith(`${field}: `) ? description.slice(field.length + 2) : description;
}

/** The portal's own languages: the same three as the sign-in pages. */
const BUILT_IN: Readonly<Record<string, PortalText>> = { en: PORTAL_TEXT, de: PORTAL_TEXT_DE, fr: PORTAL_TEXT_FR };

/** Ours and the host's (`portal.messages`): a known tag gets the texts given; a new one is English underneath. */
function languagesOf(messages: Record<string, PortalTextOverrides> | undefined): Record<string, PortalText> {
  const languages: Record<string, PortalText> = { ...BUILT_IN };
  for (const [tag, overrides] of Object.entries(messages ?? {})) {
    const known = Object.keys(languages).find((existing) => existing.toLowerCase() === tag.toLowerCase());
    languages[known ?? tag] = withOverrides(languages[known ?? tag] ?? PORTAL_TEXT, overrides);
  }
  return languages;
}

/** The language and look of the request being answered (every page of it is rendered within it). */
interface RequestLook {
  lang: string;
  t: PortalText;
  branding?: CheckedBranding | undefined;
  /** The browser's address, for the APIs' audit trail. */
  address?: string;
}

interface Current {
  id: string;
  session: PortalSession;
  /** The session as it was read or last written (JSON): unchanged sessions are not written again. */
  stored?: string;
}

/** The portal's Koa middleware: answers under its path, passes everything else on. */
export function portalMiddleware(setup: PortalSetup, client: { clientId: string; clientSecret: string }) {
  const languages = languagesOf(setup.messages);
  const looks = new AsyncLocalStorage<RequestLook>();
  const look = (): RequestLook => looks.getStore() ?? { lang: 'en', t: PORTAL_TEXT };
  // The texts of the request's language, read where they are used: requests run concurrently, so
  // the language cannot be a variable of this closure; it is the request's (AsyncLocalStorage).
  const t = new Proxy({} as PortalText, { get: (_target, key) => look().t[key as keyof PortalText] });
  const base = `${setup.pathPrefix}${setup.path}`;
  const publicUrl = `${setup.baseUrl}${base}`;
  const redirectUri = `${publicUrl}/callback`;
  const secure = setup.baseUrl.startsWith('https:');
  const origin = new URL(setup.baseUrl).origin;
  const api = new PortalApiClient(setup.internalBase, client.clientId, client.clientSecret, (): Record<string, string> => {
    const { address } = look();
    return address ? { [PORTAL_ADDRESS_HEADER]: setup.forwardedAddress.sign(address) } : {};
  });
  const scopesOf = new Map(setup.apis.flatMap((entry) => Object.keys(entry.scopes).map((scope) => [scope, entry.id] as const)));

  // ---- sessions -------------------------------------------------------------------------------

  function setCookie(ctx: Context, id: string): void {
    // The ID is a random secret kept server-side (only its digest is a store key): unsigned is enough.
    ctx.cookies.set(SESSION_COOKIE, id, { httpOnly: true, sameSite: 'lax', signed: false, secure, path: base, maxAge: setup.sessions.ttlSeconds * 1000, overwrite: true });
  }

  function clearCookie(ctx: Context): void {
    ctx.cookies.set(SESSION_COOKIE, '', { httpOnly: true, sameSite: 'lax', signed: false, secure, path: base, maxAge: 0, overwrite: true });
  }

  /** The request's session, read once per request (the look needs it before the page does). */
  const read = new WeakMap<Context, Promise<Current | undefined>>();
  function current(ctx: Context): Promise<Current | undefined> {
    let reading = read.get(ctx);
    if (!reading) {
      const id = ctx.cookies.get(SESSION_COOKIE, { signed: false });
      reading = setup.sessions.get(id).then((session) => (id && session ? { id, session, stored: JSON.stringify(session) } : undefined));
      read.set(ctx, reading);
    }
    return reading;
  }

  /** A new session (written by the first `save`). */
  function fresh(carried: Partial<PortalSession> = {}): Current {
    return { id: PortalSessions.newId(), session: { ...carried, csrf: randomBytes(32).toString('base64url') } };
  }

  /**
   * Writes the session when it changed, or to renew its idle lifetime now and then. Requests of one
   * browser run concurrently: one that changed nothing must not write back what it read, over a
   * rotated refresh token that another request stored meanwhile.
   */
  async function save(ctx: Context, now: Current): Promise<void> {
    const { session } = now;
    const { savedAt, ...rest } = session;
    const unchanged = now.stored !== undefined && JSON.stringify({ ...JSON.parse(now.stored) as PortalSession, savedAt: undefined }) === JSON.stringify({ ...rest, savedAt: undefined });
    if (!unchanged || Date.now() - (savedAt ?? 0) > RENEW_AFTER_MS) {
      session.savedAt = Date.now();
      await setup.sessions.save(now.id, session);
      now.stored = JSON.stringify(session);
    }
    setCookie(ctx, now.id);
  }

  /** The sign-ins under way in this browser (at most three: tabs), from their sealed cookie. */
  function pendingSignIns(ctx: Context): PendingSignIn[] {
    const list = setup.sessions.open<PendingSignIn[]>(ctx.cookies.get(SIGN_IN_COOKIE, { signed: false }), 'sign-in');
    return Array.isArray(list) ? list.filter((entry) => entry.expires > Date.now()).slice(-3) : [];
  }

  function setPendingSignIns(ctx: Context, list: PendingSignIn[]): void {
    ctx.cookies.set(SIGN_IN_COOKIE, list.length ? setup.sessions.seal(list, 'sign-in') : '', {
      httpOnly: true, sameSite: 'lax', signed: false, secure, path: base, maxAge: list.length ? SIGN_IN_TTL_MS : 0, overwrite: true,
    });
  }

  /** Keeps a secret for the next secret page, then sends the browser there. */
  async function showSecret(ctx: Context, now: Current, shown: ShownSecret): Promise<void> {
    await setup.sessions.putSecret(now.id, shown);
    await save(ctx, now);
    seeOther(ctx, '/secret');
  }

  async function end(ctx: Context, id: string): Promise<void> {
    await setup.sessions.delete(id);
    clearCookie(ctx);
  }

  // ---- sending --------------------------------------------------------------------------------

  function send(ctx: Context, title: string, body: string, options: { status?: number; script?: string } = {}): void {
    const nonce = randomBytes(16).toString('base64');
    const script = options.script ? `\n<script nonce="${nonce}">${options.script}</script>` : '';
    const { lang, branding } = look();
    const product = branding?.productName ? `${t.product} – ${branding.productName}` : t.product;
    // The accent (a checked #rrggbb with AA contrast on white) also on the portal's own buttons and links.
    const accent = branding?.accentColor
      ? `a,a.button.secondary,.secondary{color:${branding.accentColor}}a.button,button{border-color:${branding.accentColor}}a.button.primary,.primary{background:${branding.accentColor};color:#fff}`
        + `a:focus,input:focus,select:focus,textarea:focus,button:focus{outline-color:${branding.accentColor}}`
      : '';
    const rendered = page(`${title} · ${product}`, `<style nonce="${nonce}">${PORTAL_STYLE}${accent}</style>\n${body}${script}`, [], { lang, branding });
    let csp = rendered.csp.replace("style-src 'nonce-", `style-src 'nonce-${nonce}' 'nonce-`);
    if (options.script) csp += `; script-src 'nonce-${nonce}'`;
    sendPage(ctx, { html: rendered.html, csp }, options.status ?? 200);
  }

  function seeOther(ctx: Context, path = ''): void {
    ctx.status = 303;
    ctx.redirect(`${base}${path}`);
  }

  function view(session: PortalSession): ViewContext {
    const { lang, branding } = look();
    return {
      t, base, csrf: session.csrf, apis: setup.apis,
      scopeWords: (scope) => setup.catalog.scopeWords(scope, lang) ?? scope,
      consentScopeWords: (scope) => scopeWords(setup.catalog, scope, setup.localizer.messages(lang), lang),
      productName: branding?.logoUrl ? undefined : branding?.productName,
    };
  }

  function landing(ctx: Context, notice = '', status = 200): void {
    send(ctx, t.product, landingPage({ t, base }, notice), { status });
  }

  function simple(ctx: Context, status: number, text: string): void {
    send(ctx, text, `<h1>${escapeHtml(t.product)}</h1><p class="error" role="alert">${escapeHtml(text)}</p><p><a href="${base}">${escapeHtml(t.back)}</a></p>`, { status });
  }

  // ---- sign-in ----------------------------------------------------------------------------------

  async function start(ctx: Context): Promise<void> {
    const state = randomBytes(24).toString('base64url');
    const verifier = randomBytes(32).toString('base64url');
    const nonce = randomBytes(24).toString('base64url');
    // A few sign-ins may be under way in one browser (tabs); the oldest go first. Sealed in a
    // cookie of this browser: a stranger's request stores nothing, and the state is bound to it.
    setPendingSignIns(ctx, [...pendingSignIns(ctx).slice(-2), { state, verifier, nonce, expires: Date.now() + SIGN_IN_TTL_MS }]);
    const query = new URLSearchParams({
      response_type: 'code', client_id: client.clientId, redirect_uri: redirectUri, scope: SCOPE, state, nonce,
      code_challenge: s256Challenge(verifier), code_challenge_method: 'S256',
      // The sign-in pages in the portal's language.
      ui_locales: look().lang,
    });
    ctx.redirect(`${setup.issuer}/authorize?${query}`);
  }

  async function callback(ctx: Context): Promise<void> {
    const state = typeof ctx.query.state === 'string' ? ctx.query.state : '';
    // State is compared exactly and must be one this browser started (no login CSRF).
    const pending = pendingSignIns(ctx);
    const signIn = pending.find((entry) => constantTimeEqual(entry.state, state));
    if (!signIn) return landing(ctx, t.signInUnknown, 400);
    setPendingSignIns(ctx, pending.filter((entry) => entry !== signIn));
    if (ctx.query.error) return landing(ctx, ctx.query.error === 'access_denied' ? t.signInDenied : t.signInFailed);
    const tokens = await api.token({ grant_type: 'authorization_code', code: String(ctx.query.code ?? ''), redirect_uri: redirectUri, code_verifier: signIn.verifier });
    const idToken = jwtPayload(tokens.id_token);
    // The tokens came straight from the token endpoint over our own connection; the nonce ties the ID token to this sign-in.
    if (typeof tokens.access_token !== 'string' || idToken.nonce !== signIn.nonce || typeof idToken.sub !== 'string') {
      setup.logger.warn('portal sign-in failed', { error: typeof tokens.error === 'string' ? tokens.error : 'unexpected_answer' });
      return landing(ctx, t.signInFailed, 400);
    }
    const access = jwtPayload(tokens.access_token);
    // Signed in: a new session ID and CSRF token, so an ID planted before gives no access.
    const before = await current(ctx);
    if (before) await setup.sessions.delete(before.id);
    const next = fresh({
      user: {
        sub: idToken.sub,
        ...(typeof idToken.name === 'string' ? { name: idToken.name } : {}),
        ...(typeof access.tenant === 'string' ? { tenant: access.tenant } : {}),
      },
    });
    PortalApiClient.keep(next.session, tokens);
    await save(ctx, next);
    seeOther(ctx);
  }

  // ---- pages of a signed-in user ----------------------------------------------------------------

  /**
   * Whether the session's access token carries the management right (refreshed first when due; a
   * refreshed token is kept at once, whatever the page does next).
   */
  async function mayManage(ctx: Context, now: Current): Promise<boolean> {
    const scopes = await api.grantedScopes(now.session);
    await save(ctx, now);
    return scopes.has(MANAGEMENT_SCOPE);
  }

  /** The page (403) of a user without the permission: what she asked for is neither shown nor sent. */
  async function forbidden(ctx: Context, now: Current): Promise<void> {
    await save(ctx, now);
    send(ctx, t.forbidden.title, forbiddenPage(view(now.session), now.session.user!), { status: 403 });
  }

  /**
   * The names behind the IDs of some events: the organisation's users who acted (by the host's
   * account store, only users of her tenant), and the records she can see (her tenant's and the
   * platform's apps that serve it, as the APIs list them).
   */
  async function namesOf(now: Current, events: AuditEventWire[], lists: {
    clients: ClientConfigurationWire[]; apps: AppRegistrationWire[]; platformApps: PlatformAppWire[];
  }): Promise<ActivityNames> {
    const records = new Map<string, string>();
    for (const record of [...lists.platformApps, ...lists.clients, ...lists.apps]) records.set(record.client_id, record.name);
    const subs = new Set<string>();
    for (const event of events) {
      if (event.actor.type === 'user' && event.actor.id) subs.add(event.actor.id);
      if (event.target?.type === 'user') subs.add(event.target.id);
      if (typeof event.details?.user === 'string') subs.add(event.details.user);
    }
    const users = new Map<string, string>();
    const tenant = now.session.user?.tenant;
    await Promise.all([...subs].map(async (sub) => {
      const account = await setup.accounts?.findAccount(sub).catch(() => undefined);
      if (account && account.tenant === tenant && typeof account.claims?.name === 'string') users.set(sub, account.claims.name);
    }));
    return { users, records };
  }

  /** A list of an API answer, or [] when it did not answer with one. */
  function listOf<T>(answer: ApiAnswer, key: string): T[] {
    return answer.status === 200 && Array.isArray(answer.body[key]) ? answer.body[key] as T[] : [];
  }

  async function dashboard(ctx: Context, now: Current): Promise<void> {
    const { session } = now;
    const notice = session.notice;
    if (notice) {
      delete session.notice;
      await save(ctx, now);
    }
    // Without the management right nothing of the organisation's setup is asked for: the APIs
    // would only refuse (and record the refusal).
    const manage = await mayManage(ctx, now);
    const [consents, clients, apps, platformApps, activity] = await Promise.all([
      api.call(session, 'GET', 'consents'),
      ...(manage
        ? [
          api.call(session, 'GET', 'client-configurations'),
          api.call(session, 'GET', 'app-registrations'),
          api.call(session, 'GET', 'platform-apps'),
          api.call(session, 'GET', 'audit-events?limit=10'),
        ]
        : []),
    ]);
    let setupView: Parameters<typeof dashboardPage>[3];
    if (!clients || !apps || clients.status === 403 || apps.status === 403) setupView = 'forbidden';
    else if (clients.status !== 200 || apps.status !== 200) setupView = 'failed';
    else {
      const lists = {
        clients: listOf<ClientConfigurationWire>(clients, 'client_configurations'),
        apps: listOf<AppRegistrationWire>(apps, 'app_registrations'),
        platformApps: listOf<PlatformAppWire>(platformApps!, 'platform_apps'),
      };
      const events = activity?.status === 200 ? listOf<AuditEventWire>(activity, 'events') : undefined;
      setupView = {
        ...lists,
        ...(platformApps?.status === 200 ? {} : { platformApps: undefined }),
        ...(events ? { events } : {}),
        names: await namesOf(now, events ?? [], lists),
        canUnlock: setup.canUnlock,
      };
    }
    await save(ctx, now);
    send(ctx, t.product, dashboardPage(view(session), session.user!, notice, setupView, consents!.status === 200 ? (consents!.body.consents ?? []) as ConsentWire[] : undefined));
  }

  /** The Activity filter of a query: each value once, as typed; what is wrong with it, at its field. */
  function activityFilter(query: Context['query']): { filter: ActivityFilter; errors: FieldErrors } {
    const one = (name: string) => (typeof query[name] === 'string' ? query[name].trim() : '');
    const type = (AUDIT_EVENT_TYPES as readonly string[]).includes(one('type')) ? one('type') : '';
    const filter = { type, since: one('since'), until: one('until') };
    const errors: FieldErrors = new Map();
    const valid = (value: string) => DATE.test(value) && !Number.isNaN(Date.parse(`${value}T00:00:00Z`)) && new Date(`${value}T00:00:00Z`).toISOString().startsWith(value);
    if (filter.since && !valid(filter.since)) errors.set('activity-since', t.activity.badDate(t.activity.since));
    if (filter.until && !valid(filter.until)) errors.set('activity-until', t.activity.badDate(t.activity.until));
    if (!errors.size && filter.since && filter.until && filter.until < filter.since) errors.set('activity-until', t.activity.badRange);
    return { filter, errors };
  }

  async function activity(ctx: Context, now: Current): Promise<void> {
    if (!(await mayManage(ctx, now))) return forbidden(ctx, now);
    const { filter, errors } = activityFilter(ctx.query);
    const noNames: ActivityNames = { users: new Map(), records: new Map() };
    if (errors.size) {
      await save(ctx, now);
      return send(ctx, t.activity.heading, activityPage(view(now.session), now.session.user!, AUDIT_EVENT_TYPES, filter, errors, undefined, noNames, undefined), { status: 400 });
    }
    const cursor = typeof ctx.query.cursor === 'string' && AUDIT_CURSOR_SHAPE.test(ctx.query.cursor) ? ctx.query.cursor : '';
    const query = new URLSearchParams({
      limit: '50',
      ...(filter.type ? { type: filter.type } : {}),
      // Whole days, in UTC (as the page shows times).
      ...(filter.since ? { since: `${filter.since}T00:00:00.000Z` } : {}),
      ...(filter.until ? { until: `${filter.until}T23:59:59.999Z` } : {}),
      ...(cursor ? { cursor } : {}),
    });
    const [answer, clients, apps, platformApps] = await Promise.all([
      api.call(now.session, 'GET', `audit-events?${query}`),
      api.call(now.session, 'GET', 'client-configurations'),
      api.call(now.session, 'GET', 'app-registrations'),
      api.call(now.session, 'GET', 'platform-apps'),
    ]);
    await save(ctx, now);
    if (answer.status !== 200) return failed(ctx, now, answer);
    const events = listOf<AuditEventWire>(answer, 'events');
    const names = await namesOf(now, events, {
      clients: listOf(clients, 'client_configurations'), apps: listOf(apps, 'app_registrations'), platformApps: listOf(platformApps, 'platform_apps'),
    });
    send(ctx, t.activity.heading, activityPage(view(now.session), now.session.user!, AUDIT_EVENT_TYPES, filter, undefined, events, names, typeof answer.body.next === 'string' ? answer.body.next : undefined));
  }

  async function secretPage(ctx: Context, now: Current): Promise<void> {
    // A HEAD or a prefetch (a browser's guess, a link scanner) must not use the one showing up.
    const purpose = `${ctx.get('sec-purpose')} ${ctx.get('purpose')}`;
    if (ctx.method === 'HEAD' || /prefetch|prerender/i.test(purpose)) {
      ctx.status = 204;
      return;
    }
    // Shown once: taken out of the store before the page is sent (of two requests, one gets it).
    const shown = await setup.sessions.takeSecret(now.id);
    await save(ctx, now);
    if (!shown) return seeOther(ctx);
    send(ctx, t.secret.title, secretPageBody(view(now.session), shown), { script: copyScript(t) });
  }

  /**
   * An API answer the portal can do no more with: a refusal (the permission withdrawn since the
   * token was issued) is the permission's page; anything else goes back home with the reason.
   */
  async function failed(ctx: Context, now: Current, answer: ApiAnswer): Promise<void> {
    if (answer.status === 403) return forbidden(ctx, now);
    now.session.notice = {
      kind: 'error',
      text: answer.status === 404 ? t.errors.gone : `${t.errors.failed} (${describe(answer)})`,
    };
    await save(ctx, now);
    seeOther(ctx);
  }

  // ---- client configurations ------------------------------------------------------------------

  function clientValues(form: URLSearchParams): ClientFormValues {
    const constraints: Record<string, string> = {};
    for (const entry of setup.apis) {
      for (const dimension of entry.constraints ?? []) constraints[`${entry.id}\n${dimension}`] = form.get(`constraint.${entry.id}.${dimension}`) ?? '';
    }
    return {
      name: form.get('name') ?? '',
      category: form.get('category') ?? '',
      description: form.get('description') ?? '',
      scopes: form.getAll('scope').filter((scope) => scopesOf.has(scope)),
      constraints,
    };
  }

  function clientValuesOf(record: ClientConfigurationWire): ClientFormValues {
    const constraints: Record<string, string> = {};
    for (const [apiId, resource] of Object.entries(record.resources)) {
      for (const [dimension, values] of Object.entries(resource.constraints ?? {})) constraints[`${apiId}\n${dimension}`] = values.join(', ');
    }
    return {
      name: record.name,
      category: record.category,
      description: record.description ?? '',
      scopes: Object.values(record.resources).flatMap((resource) => resource.scopes),
      constraints,
    };
  }

  function resourcesOf(values: ClientFormValues): Record<string, { scopes: string[]; constraints?: Record<string, string[]> }> {
    const resources: Record<string, { scopes: string[]; constraints?: Record<string, string[]> }> = {};
    for (const scope of values.scopes) {
      const apiId = scopesOf.get(scope)!;
      (resources[apiId] ??= { scopes: [] }).scopes.push(scope);
    }
    for (const [key, typed] of Object.entries(values.constraints)) {
      const [apiId, dimension] = key.split('\n') as [string, string];
      const list = typed.split(/[,\n]/).map((value) => value.trim()).filter(Boolean);
      if (resources[apiId] && list.length) (resources[apiId].constraints ??= {})[dimension] = list;
    }
    return resources;
  }

  function clientErrors(answer: ApiAnswer): FieldErrors {
    const field = typeof answer.body.field === 'string' ? answer.body.field : '';
    return new Map([[clientFieldId(setup.apis, field), fieldMessage(answer, field)]]);
  }

  async function saveClient(ctx: Context, now: Current, form: URLSearchParams, clientId?: string): Promise<void> {
    const values = clientValues(form);
    const errors: FieldErrors = new Map();
    if (!values.name.trim()) errors.set('client-name', t.required.name);
    if (!values.category.trim()) errors.set('client-category', t.required.category);
    if (!values.scopes.length) errors.set('apis', t.required.scopes);
    const existing = clientId ? { clientId, name: form.get('current_name') ?? values.name } : undefined;
    if (errors.size) return send(ctx, existing ? t.clients.editHeading(existing.name) : t.clients.create, clientFormPage(view(now.session), values, errors, existing), { status: 400 });
    const body = { name: values.name, category: values.category, description: values.description, resources: resourcesOf(values) };
    if (!clientId) {
      const { description, ...rest } = body;
      const answer = await api.call(now.session, 'POST', 'client-configurations', description ? body : rest);
      if (answer.status === 201 && typeof answer.body.client_secret === 'string') {
        return showSecret(ctx, now, { what: 'client_configuration', name: String(answer.body.name), clientId: String(answer.body.client_id), clientSecret: answer.body.client_secret, regenerated: false });
      }
      if (answer.status === 400) return send(ctx, t.clients.create, clientFormPage(view(now.session), values, clientErrors(answer)), { status: 400 });
      return failed(ctx, now, answer);
    }
    const answer = await api.call(now.session, 'PATCH', `client-configurations/${encodeURIComponent(clientId)}`, body);
    if (answer.status === 200) {
      now.session.notice = { kind: 'ok', text: t.clients.saved(String(answer.body.name)) };
      await save(ctx, now);
      return seeOther(ctx);
    }
    if (answer.status === 400) return send(ctx, t.clients.editHeading(existing!.name), clientFormPage(view(now.session), values, clientErrors(answer), existing), { status: 400 });
    return failed(ctx, now, answer);
  }

  // ---- app registrations ------------------------------------------------------------------------

  function appValues(form: URLSearchParams): AppFormValues {
    const uris = (name: string) => form.getAll(name).slice(0, MAX_URIS);
    return {
      name: form.get('name') ?? '',
      description: form.get('description') ?? '',
      redirectUris: uris('redirect_uri'),
      postLogoutRedirectUris: uris('post_logout_redirect_uri'),
      backchannelLogoutUri: form.get('backchannel_logout_uri') ?? '',
      clientType: form.get('client_type') === 'public' ? 'public' : 'confidential',
      pkceEnabled: form.get('pkce_enabled') === 'on',
    };
  }

  function appValuesOf(record: AppRegistrationWire): AppFormValues {
    return {
      name: record.name,
      description: record.description ?? '',
      redirectUris: [...record.redirect_uris, ''],
      postLogoutRedirectUris: [...record.post_logout_redirect_uris, ''],
      backchannelLogoutUri: record.backchannel_logout_uri ?? '',
      clientType: record.client_type,
      pkceEnabled: record.pkce_enabled,
    };
  }

  /** The non-empty URIs of a list, and the input each came from (to show the API's error at it). */
  function sent(uris: string[]): { values: string[]; inputs: number[] } {
    const inputs = uris.map((uri, index) => (uri.trim() ? index : -1)).filter((index) => index >= 0);
    return { values: inputs.map((index) => uris[index]!.trim()), inputs };
  }

  async function saveApp(ctx: Context, now: Current, form: URLSearchParams, existingApp?: AppRegistrationWire): Promise<void> {
    const values = appValues(form);
    const existing = existingApp ? { clientId: existingApp.client_id, name: existingApp.name } : undefined;
    const title = existing ? t.apps.editHeading(existing.name) : t.apps.create;
    const more = form.get('more');
    if (more === 'redirect' || more === 'logout') {
      // "Add another URI": the same form, one more field, nothing sent (works without JavaScript).
      const list = more === 'redirect' ? values.redirectUris : values.postLogoutRedirectUris;
      if (list.length < MAX_URIS) list.push('');
      return send(ctx, title, appFormPage(view(now.session), values, undefined, existing));
    }
    const redirect = sent(values.redirectUris);
    const logout = sent(values.postLogoutRedirectUris);
    const errors: FieldErrors = new Map();
    if (!values.name.trim()) errors.set('app-name', t.required.name);
    if (!redirect.values.length) errors.set('redirect-0', t.required.redirectUri);
    // Every refused URI at its own field at once (the API, which decides, stops at the first).
    for (const [list, uris] of [['redirect', redirect], ['logout', logout]] as const) {
      uris.values.forEach((uri, index) => {
        const verdict = checkRedirectUri(uri);
        if (!verdict.ok) errors.set(`${list}-${uris.inputs[index]!}`, `"${uri}" ${verdict.rule}`);
      });
    }
    if (errors.size) return send(ctx, title, appFormPage(view(now.session), values, errors, existing), { status: 400 });
    const body: Record<string, unknown> = {
      name: values.name,
      redirect_uris: redirect.values,
      post_logout_redirect_uris: logout.values,
      client_type: values.clientType,
      ...(values.clientType === 'confidential' ? { pkce_enabled: values.pkceEnabled } : {}),
    };
    if (values.description.trim() || existing) body.description = values.description.trim();
    if (values.backchannelLogoutUri.trim() || existingApp?.backchannel_logout_uri) body.backchannel_logout_uri = values.backchannelLogoutUri.trim();
    const answer = existing
      ? await api.call(now.session, 'PATCH', `app-registrations/${encodeURIComponent(existing.clientId)}`, body)
      : await api.call(now.session, 'POST', 'app-registrations', body);
    if (answer.status === 200 || answer.status === 201) {
      if (typeof answer.body.client_secret === 'string') {
        return showSecret(ctx, now, { what: 'app_registration', name: String(answer.body.name), clientId: String(answer.body.client_id), clientSecret: answer.body.client_secret, regenerated: false });
      }
      const name = String(answer.body.name);
      now.session.notice = { kind: 'ok', text: existing ? t.apps.saved(name) : t.apps.createdPublic(name) };
      await save(ctx, now);
      return seeOther(ctx);
    }
    if (answer.status === 400) {
      const field = typeof answer.body.field === 'string' ? answer.body.field : '';
      const id = appFieldId(field, (list, index) => (list === 'redirect' ? redirect : logout).inputs[index] ?? 0);
      return send(ctx, title, appFormPage(view(now.session), values, new Map([[id, fieldMessage(answer, field)]]), existing), { status: 400 });
    }
    return failed(ctx, now, answer);
  }

  // ---- routing ----------------------------------------------------------------------------------

  async function record(now: Current, collection: 'client-configurations' | 'app-registrations', id: string): Promise<ApiAnswer> {
    return api.call(now.session, 'GET', `${collection}/${encodeURIComponent(id)}`);
  }

  async function get(ctx: Context, path: string): Promise<void> {
    if (path === '/login') return start(ctx);
    if (path === '/callback') return callback(ctx);
    const now = await current(ctx);
    if (!now?.session.user) {
      if (path !== '' && path !== '/') return seeOther(ctx);
      return landing(ctx, ctx.query.state === 'signed-out' ? t.signedOut : '');
    }
    if (path === '' || path === '/') return dashboard(ctx, now);
    if (path === '/secret') return secretPage(ctx, now);
    if (path === '/activity') return activity(ctx, now);
    const v = view(now.session);
    const match = /^\/(client-configurations|app-registrations)\/([^/]+)(\/delete|\/secret)?$/.exec(path);
    const known = path === '/client-configurations/new' || path === '/app-registrations/new' || (path === '/sign-ins/unlock' && setup.canUnlock) || (match && ID.test(match[2]!));
    if (!known) return simple(ctx, 404, t.errors.notFound);
    // Every other page is a form or a confirmation of the organisation's setup: not for a user
    // without the management right (a page that says so, and no call to the APIs).
    if (!(await mayManage(ctx, now))) return forbidden(ctx, now);
    if (path === '/sign-ins/unlock') {
      await save(ctx, now);
      return send(ctx, t.unlock.title, unlockPage(v, '', undefined));
    }
    if (path === '/client-configurations/new') {
      await save(ctx, now);
      return send(ctx, t.clients.create, clientFormPage(v, { name: '', category: '', description: '', scopes: [], constraints: {} }, undefined));
    }
    if (path === '/app-registrations/new') {
      await save(ctx, now);
      return send(ctx, t.apps.create, appFormPage(v, { name: '', description: '', redirectUris: [''], postLogoutRedirectUris: [''], backchannelLogoutUri: '', clientType: 'confidential', pkceEnabled: true }, undefined));
    }
    if (!match) return simple(ctx, 404, t.errors.notFound);
    const collection = match[1] as 'client-configurations' | 'app-registrations';
    const answer = await record(now, collection, match[2]!);
    await save(ctx, now);
    if (answer.status !== 200) return failed(ctx, now, answer);
    const name = String(answer.body.name);
    const action = `${base}${path}`;
    if (match[3] === '/delete') {
      const texts = collection === 'client-configurations' ? t.clients : t.apps;
      return send(ctx, texts.deleteHeading(name), confirmPage(v, texts.deleteHeading(name), texts.deleteWarning, action, `${t.delete} ${name}`, true));
    }
    if (match[3] === '/secret') {
      return send(ctx, t.secret.regenerateHeading(name), confirmPage(v, t.secret.regenerateHeading(name), t.secret.regenerateWarning, action, t.regenerate, true));
    }
    if (collection === 'client-configurations') {
      const wire = answer.body as unknown as ClientConfigurationWire;
      return send(ctx, t.clients.editHeading(name), clientFormPage(v, clientValuesOf(wire), undefined, { clientId: wire.client_id, name }));
    }
    const wire = answer.body as unknown as AppRegistrationWire;
    return send(ctx, t.apps.editHeading(name), appFormPage(v, appValuesOf(wire), undefined, { clientId: wire.client_id, name }));
  }

  async function post(ctx: Context, path: string): Promise<void> {
    const now = await current(ctx);
    let form: URLSearchParams;
    try {
      form = await readForm(ctx);
    } catch (error) {
      if (!(error instanceof FormTooLarge)) throw error;
      return simple(ctx, 413, t.errors.tooLarge);
    }
    // Double-submit: the form's token must be this session's (constant-time); a browser's Origin,
    // when it sends one, must be ours.
    const sentOrigin = ctx.get('origin');
    if (!now?.session.user || (sentOrigin && sentOrigin !== origin) || !constantTimeEqual(form.get('csrf') ?? '', now.session.csrf)) {
      return simple(ctx, 403, t.errors.refused);
    }
    if (path === '/logout') {
      // The portal's grant ends with its refresh token (even if she cancels the sign-out below);
      if (now.session.refreshToken) await api.revoke(now.session.refreshToken).catch(() => undefined);
      // the portal's session ends here; the sign-in session (every app's single sign-on) ends at
      // our end-session endpoint, which asks the user and sends her back to the portal. By client
      // ID, not by ID token: a token has no place in a URL.
      await end(ctx, now.id);
      const query = new URLSearchParams({ client_id: client.clientId, post_logout_redirect_uri: publicUrl, state: 'signed-out', ui_locales: look().lang });
      ctx.status = 303;
      return ctx.redirect(`${setup.issuer}/session/end?${query}`);
    }
    const consent = /^\/consents\/([^/]+)\/revoke$/.exec(path);
    if (consent && ID.test(consent[1]!)) return revoke(ctx, now, consent[1]!);
    const match = /^\/(client-configurations|app-registrations)\/([^/]+)(\/delete|\/secret)?$/.exec(path);
    const known = path === '/client-configurations' || path === '/app-registrations' || (path === '/sign-ins/unlock' && setup.canUnlock) || (match && ID.test(match[2]!));
    if (!known) return simple(ctx, 404, t.errors.notFound);
    // Everything else changes the organisation's setup: refused here, with the permission's page,
    // for a user without the management right (never a silent return home, nor a refused API call).
    if (!(await mayManage(ctx, now))) return forbidden(ctx, now);
    if (path === '/sign-ins/unlock') return unlock(ctx, now, form);
    if (path === '/client-configurations') return saveClient(ctx, now, form);
    if (path === '/app-registrations') return saveApp(ctx, now, form);
    if (!match) return simple(ctx, 404, t.errors.notFound);
    const collection = match[1] as 'client-configurations' | 'app-registrations';
    const id = match[2]!;
    const existing = await record(now, collection, id);
    if (existing.status !== 200) return failed(ctx, now, existing);
    const name = String(existing.body.name);
    const resource = `${collection}/${encodeURIComponent(id)}`;
    if (match[3] === '/delete') {
      const answer = await api.call(now.session, 'DELETE', resource);
      if (answer.status !== 204) return failed(ctx, now, answer);
      now.session.notice = { kind: 'ok', text: (collection === 'client-configurations' ? t.clients : t.apps).deleted(name) };
      await save(ctx, now);
      return seeOther(ctx);
    }
    if (match[3] === '/secret') {
      const answer = await api.call(now.session, 'POST', `${resource}/secret`);
      if (answer.status !== 200 || typeof answer.body.client_secret !== 'string') return failed(ctx, now, answer);
      return showSecret(ctx, now, { what: collection === 'client-configurations' ? 'client_configuration' : 'app_registration', name, clientId: id, clientSecret: answer.body.client_secret, regenerated: true });
    }
    if (collection === 'client-configurations') {
      form.set('current_name', name);
      return saveClient(ctx, now, form, id);
    }
    return saveApp(ctx, now, form, existing.body as unknown as AppRegistrationWire);
  }

  /** Lifts a sign-in hold of a user of the organisation (the API decides whose she is). */
  async function unlock(ctx: Context, now: Current, form: URLSearchParams): Promise<void> {
    const username = form.get('username') ?? '';
    if (!username.trim()) {
      return send(ctx, t.unlock.title, unlockPage(view(now.session), username, new Map([['unlock-username', t.unlock.required]])), { status: 400 });
    }
    const answer = await api.call(now.session, 'POST', 'sign-ins/unlock', { username });
    if (answer.status === 400) {
      await save(ctx, now);
      return send(ctx, t.unlock.title, unlockPage(view(now.session), username, new Map([['unlock-username', fieldMessage(answer, 'username')]])), { status: 400 });
    }
    if (answer.status !== 200) return failed(ctx, now, answer);
    now.session.notice = { kind: 'ok', text: answer.body.unlocked === true ? t.unlock.unlocked(username) : t.unlock.notHeld(username) };
    await save(ctx, now);
    seeOther(ctx);
  }

  async function revoke(ctx: Context, now: Current, clientId: string): Promise<void> {
    const listed = await api.call(now.session, 'GET', 'consents');
    const consent = ((listed.body.consents ?? []) as ConsentWire[]).find((entry) => entry.client_id === clientId);
    const answer = await api.call(now.session, 'DELETE', `consents/${encodeURIComponent(clientId)}`);
    if (answer.status !== 204) return failed(ctx, now, answer);
    const name = consent?.app_name ?? t.consents.deletedApp;
    if (clientId === client.clientId) {
      // The portal's own grant (and refresh token) is gone: so is this sign-in.
      await end(ctx, now.id);
      return landing(ctx, t.consents.revokedPortal(name));
    }
    now.session.notice = { kind: 'ok', text: t.consents.revoked(name) };
    await save(ctx, now);
    seeOther(ctx);
  }

  return async function portal(ctx: Context, next: Next): Promise<void> {
    if (ctx.path !== base && !ctx.path.startsWith(`${base}/`)) return next();
    const lang = negotiateLocale({ acceptLanguage: ctx.get('accept-language'), available: Object.keys(languages), defaultLocale: 'en' });
    // The look of the user's organisation once she is signed in (the platform's before).
    const tenant = (await current(ctx).catch(() => undefined))?.session.user?.tenant;
    const branding = await setup.brands.of(tenant);
    return looks.run({ lang, t: languages[lang] ?? PORTAL_TEXT, branding, address: setup.addressOf(ctx) }, () => answer(ctx));
  };

  async function answer(ctx: Context): Promise<void> {
    const path = ctx.path.slice(base.length);
    try {
      if (ctx.method === 'GET' || ctx.method === 'HEAD') return await get(ctx, path);
      if (ctx.method === 'POST') return await post(ctx, path);
      ctx.set('Allow', 'GET, HEAD, POST');
      return simple(ctx, 405, t.errors.notAllowed);
    } catch (error) {
      if (error instanceof SignedOut) {
        const now = await current(ctx).catch(() => undefined);
        if (now) await end(ctx, now.id).catch(() => undefined);
        return landing(ctx, t.signInEnded, 401);
      }
      if (error instanceof StoreUnavailable) return simple(ctx, 503, t.errors.unavailable);
      // Only the error's class: a message could quote request data.
      setup.logger.error('portal error', { error: error instanceof Error ? error.name : 'unknown' });
      return simple(ctx, 502, t.errors.failed);
    }
  }
}
