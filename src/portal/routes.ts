import type { Context } from 'koa';
import type { Form } from '../http/forms.js';
import type { Current } from './session-cookies.js';

/*
 * THE PORTAL'S ROUTES: every page and form of the portal, with the right it needs. Paths are under
 * the portal's path; `{id}` is a client ID (UUID-shaped: anything else is no page of ours and never
 * reaches the APIs). The first row that matches answers, so a fixed path comes before an `{id}`.
 *
 * The rights: `public` rows answer anyone (the sign-in's two steps); `session` rows need a signed-in
 * session (a browser without one is sent home, to sign in); `manage` rows are forms and
 * confirmations of the organisation's setup: a user whose token lacks the management right gets the
 * permission's page (403), and the APIs are not called at all. Every POST also needs the form's
 * CSRF token (src/portal/dispatch.ts). A `fresh` row destroys something (a record, a secret, a
 * factor) or decides who signs in (adding or changing an identity provider): it is done only within
 * PORTAL_REAUTH_SECONDS of the user's last sign-in, else after a sign-in again (src/portal/reauth.ts). The `security` rows are every user's own factors.
 *
 * The table is the portal's own rather than a part of the server's (src/endpoints/index.ts): its
 * refusals are the portal's pages in the user's language, and its rows need a session, not a route
 * metric or the store check of the server's rows.
 */

/** What a row needs of the request: nothing, a signed-in session, or the management right too. */
export type Right = 'public' | 'session' | 'manage';

/** A row of the table. */
export interface PortalRoute {
  method: 'GET' | 'POST';
  /** Under the portal's path; `{id}` is a client ID. */
  path: string;
  right: Right;
  /** The handler's name (src/portal/index.ts attaches the handlers). */
  name: string;
  /** Present only when the host allows it (the AccountStore has `findByUsername`). */
  when?: 'canUnlock';
  /** Destructive, or deciding who signs in: only after a recent sign-in (src/portal/reauth.ts). */
  fresh?: true;
}

/** The table. */
export const PORTAL_ROUTES = [
  // Signing in: the redirect to our authorization endpoint, and the way back.
  { method: 'GET', path: '/login', right: 'public', name: 'login' },
  { method: 'GET', path: '/callback', right: 'public', name: 'callback' },
  { method: 'GET', path: '/', right: 'session', name: 'home' },
  { method: 'GET', path: '/secret', right: 'session', name: 'secret' },
  { method: 'POST', path: '/logout', right: 'session', name: 'logout' },
  { method: 'POST', path: '/consents/{id}/revoke', right: 'session', name: 'revokeConsent' },
  // Her own factors (every user, with or without the management right): src/portal/security.ts.
  { method: 'GET', path: '/security', right: 'session', name: 'security' },
  { method: 'POST', path: '/security/authenticator-app', right: 'session', name: 'startApp' },
  { method: 'POST', path: '/security/authenticator-app/confirm', right: 'session', name: 'confirmApp' },
  { method: 'POST', path: '/security/recovery-codes', right: 'session', name: 'newRecoveryCodes' },
  { method: 'GET', path: '/security/passkeys/new', right: 'session', name: 'newPasskey' },
  { method: 'POST', path: '/security/passkeys', right: 'session', name: 'addPasskey' },
  { method: 'POST', path: '/security/remove', right: 'session', name: 'removeFactor', fresh: true },
  // The way to the sign-in again of a destructive action kept meanwhile (src/portal/reauth.ts):
  // a POST of the portal's own page (CSRF token), so that no link elsewhere can lead her on to it.
  { method: 'POST', path: '/reauth', right: 'session', name: 'signInAgain' },
  { method: 'GET', path: '/activity', right: 'manage', name: 'activity' },
  { method: 'GET', path: '/sign-ins/unlock', right: 'manage', name: 'unlockForm', when: 'canUnlock' },
  { method: 'POST', path: '/sign-ins/unlock', right: 'manage', name: 'unlock', when: 'canUnlock' },
  { method: 'GET', path: '/client-configurations/new', right: 'manage', name: 'newClient' },
  { method: 'POST', path: '/client-configurations', right: 'manage', name: 'createClient' },
  { method: 'GET', path: '/client-configurations/{id}', right: 'manage', name: 'editClient' },
  { method: 'POST', path: '/client-configurations/{id}', right: 'manage', name: 'updateClient' },
  { method: 'GET', path: '/client-configurations/{id}/delete', right: 'manage', name: 'confirmDeleteClient' },
  { method: 'POST', path: '/client-configurations/{id}/delete', right: 'manage', name: 'deleteClient', fresh: true },
  { method: 'GET', path: '/client-configurations/{id}/secret', right: 'manage', name: 'confirmRegenerateClient' },
  { method: 'POST', path: '/client-configurations/{id}/secret', right: 'manage', name: 'regenerateClient', fresh: true },
  // The organisation's identity providers and its SSO rule (src/portal/connections.ts); `{id}` a connection's.
  { method: 'GET', path: '/connections', right: 'manage', name: 'connections' },
  { method: 'GET', path: '/connections/new', right: 'manage', name: 'newConnection' },
  { method: 'POST', path: '/connections', right: 'manage', name: 'createConnection', fresh: true },
  { method: 'POST', path: '/connections/sso', right: 'manage', name: 'saveSso', fresh: true },
  // The tenant's security profile of its clients (beside the SSO rule: the tenant's settings).
  { method: 'POST', path: '/connections/profile', right: 'manage', name: 'saveProfile', fresh: true },
  { method: 'GET', path: '/connections/{id}', right: 'manage', name: 'editConnection' },
  { method: 'POST', path: '/connections/{id}', right: 'manage', name: 'updateConnection', fresh: true },
  { method: 'GET', path: '/connections/{id}/delete', right: 'manage', name: 'confirmDeleteConnection' },
  { method: 'POST', path: '/connections/{id}/delete', right: 'manage', name: 'deleteConnection', fresh: true },
  { method: 'GET', path: '/app-registrations/new', right: 'manage', name: 'newApp' },
  { method: 'POST', path: '/app-registrations', right: 'manage', name: 'createApp' },
  { method: 'GET', path: '/app-registrations/{id}', right: 'manage', name: 'editApp' },
  { method: 'POST', path: '/app-registrations/{id}', right: 'manage', name: 'updateApp' },
  { method: 'GET', path: '/app-registrations/{id}/delete', right: 'manage', name: 'confirmDeleteApp' },
  { method: 'POST', path: '/app-registrations/{id}/delete', right: 'manage', name: 'deleteApp', fresh: true },
  { method: 'GET', path: '/app-registrations/{id}/secret', right: 'manage', name: 'confirmRegenerateApp' },
  { method: 'POST', path: '/app-registrations/{id}/secret', right: 'manage', name: 'regenerateApp', fresh: true },
] as const satisfies readonly PortalRoute[];

type Row = (typeof PORTAL_ROUTES)[number];
/** The name of a row of the table. */
export type PortalRouteName = Row['name'];
/** The names of the rows that answer anyone. */
export type PublicRouteName = Extract<Row, { right: 'public' }>['name'];

/** What the handler of a signed-in row gets: the request, its session, its `{id}` ('' if none), its form (empty for a GET). */
export interface PortalCall {
  ctx: Context;
  now: Current;
  id: string;
  form: Form;
  /** The row's name (a destructive action kept for after a sign-in again names its row). */
  route?: PortalRouteName;
}

/** The handlers, by the names of the table. */
export type PortalHandlers =
  & { [Name in PublicRouteName]: (ctx: Context) => Promise<void> }
  & { [Name in Exclude<PortalRouteName, PublicRouteName>]: (call: PortalCall) => Promise<void> };

/** A row that matched a request, and its `{id}`. */
export interface PortalMatch {
  route: Row;
  id: string;
}

/** The fields a portal form may repeat: the scopes of a client configuration, an app's URI lists. */
export const REPEATABLE: ReadonlySet<string> = new Set(['scope', 'redirect_uri', 'post_logout_redirect_uri']);

/** What a client ID is (UUID-shaped); the pattern of `{id}`. */
const ID = '[A-Za-z0-9-]{1,64}';

/** Matches requests against the table. */
export class PortalRouter {
  readonly #rows: Array<{ route: Row; pattern: RegExp }>;

  constructor(options: { canUnlock: boolean }) {
    this.#rows = PORTAL_ROUTES
      .filter((route: PortalRoute) => route.when !== 'canUnlock' || options.canUnlock)
      .map((route) => ({ route, pattern: new RegExp(`^${route.path.replace('{id}', `(${ID})`)}$`) }));
  }

  /** The row of a request's method and path under the portal (`''` is its home, as `/`). */
  match(method: 'GET' | 'POST', path: string): PortalMatch | undefined {
    const wanted = path === '' ? '/' : path;
    for (const { route, pattern } of this.#rows) {
      const found = route.method === method ? pattern.exec(wanted) : null;
      if (found) return { route, id: found[1] ?? '' };
    }
    return undefined;
  }
}
