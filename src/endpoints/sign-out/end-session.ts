import { SIGN_OUT_CARRIED_SECONDS } from '../../../policies/lifetimes.js';
import type { Context, Next } from 'koa';
import type Provider from 'oidc-provider';
import { decodeJwt } from 'jose';
import { InvalidClient, InvalidRequest, OAuthError } from '../../../policies/errors.js';
import { MAX_STATE_OR_NONCE } from '../../../policies/request-limits.js';
import { engineAppOwner } from '../../engine/client-directory.js';
import type { SignOutLook } from '../../engine/sign-out.js';
import { oauthErrorPage, sendPage } from '../../pages/html.js';
import { notSignedInPage } from '../../pages/sign-out.js';
import { localeOf } from '../../i18n/localizer.js';
import { readForm } from '../../http/forms.js';
import type { RouteHandler } from '../../http/router.js';
import type { Sealer } from '../../records/sealed.js';

/*
 * THE END-SESSION ENDPOINT (`{issuer}/session/end`, OpenID Connect RP-Initiated Logout), in front
 * of the engine:
 *
 * - Anyone can call it, so it has the guard of the authorization endpoint (size, including `state`,
 *   and requests per address: src/limits/browser-requests.ts).
 * - A browser that is signed in here goes on to the engine: its confirmation page, then the
 *   sign-out (src/engine/sign-out.ts). The engine keeps the request (its CSRF value, `state`, the
 *   URI to return to) in that browser's session until the confirmation.
 * - A browser that is not signed in has nothing to end: it gets our "not signed in" page straight
 *   away, its button a GET back to the app's registered URI with `state`. The request is checked as
 *   the engine checks it (the ID token hint's signature and audience, the client, the URI
 *   registered exactly) and nothing is stored: the engine would store a session for it, a day long.
 * - A POST (which the logout specification allows) is carried to the GET that follows its 303 in
 *   a sealed, short-lived cookie, never in the URL: its `id_token_hint` must not end up in address
 *   bars, histories and logs. The redirect is needed because the sign-in session cookie is
 *   SameSite=Lax: a browser does not send it with a POST from another site, only with the
 *   top-level GET that follows (src/endpoints/sign-in/post-as-get.ts says the same of /authorize).
 */

/** The parameters of an end-session request, as the engine reads them. */
const PARAMS = ['id_token_hint', 'post_logout_redirect_uri', 'state', 'ui_locales', 'client_id', 'logout_hint'] as const;
type Params = Partial<Record<(typeof PARAMS)[number], string>>;

/** The cookie that carries a POST's parameters to its GET (its lifetime: policies/lifetimes.ts). */
const CARRIED_COOKIE = 'talent_auth_sign_out';
/** What a browser keeps of one cookie, with room for its name and attributes. */
const MAX_CARRIED = 3800;
const PURPOSE = 'sign-out request';

export interface EndSessionSetup {
  provider: Provider;
  look: SignOutLook;
  /** Seals a POST's parameters for its GET. */
  sealer: Sealer;
  /** The browser request guard of the endpoint (size and rate). */
  guard: (ctx: Context) => Promise<boolean>;
  /** The largest body of a POST, in bytes (the query limit of a GET). */
  bodyLimit: number;
}

/** Each parameter once, as the engine requires. */
function paramsOf(query: Record<string, string | string[] | undefined>): Params {
  const params: Params = {};
  for (const name of PARAMS) {
    const value = query[name];
    if (Array.isArray(value)) throw new InvalidRequest(`'${name}' parameter must not be provided twice`);
    if (value !== undefined && value !== '') params[name] = value;
  }
  return params;
}

/** The end-session route: guard, POST carried, signed-in browsers to the engine, the others answered here. */
export function endSessionHandler(setup: EndSessionSetup): RouteHandler {
  const { provider, look, sealer, guard } = setup;

  async function carryPost(ctx: Context): Promise<void> {
    const locale = localeOf(ctx, '');
    let carried: string;
    try {
      carried = sealer.seal((await readForm(ctx, setup.bodyLimit)).toQuery(), PURPOSE);
    } catch {
      sendPage(ctx, oauthErrorPage('invalid_request', locale.t.requestNotAForm, locale, true), 400);
      return;
    }
    if (carried.length > MAX_CARRIED) {
      sendPage(ctx, oauthErrorPage('invalid_request', locale.t.requestTooLarge(MAX_CARRIED), locale, true), 400);
      return;
    }
    ctx.cookies.set(CARRIED_COOKIE, carried, { httpOnly: true, sameSite: 'lax', path: ctx.path, maxAge: SIGN_OUT_CARRIED_SECONDS * 1000, signed: false, overwrite: true });
    ctx.status = 303;
    ctx.set('Cache-Control', 'no-store');
    ctx.redirect(ctx.path);
  }

  /** A GET without a query after a POST: the POST's parameters, once (the cookie is cleared). */
  function takeCarried(ctx: Context): void {
    const carried = ctx.cookies.get(CARRIED_COOKIE, { signed: false });
    if (carried === undefined) return;
    ctx.cookies.set(CARRIED_COOKIE, null, { path: ctx.path, signed: false, overwrite: true });
    const query = ctx.querystring === '' ? sealer.open<string>(carried, PURPOSE) : undefined;
    if (typeof query === 'string') ctx.querystring = query;
  }

  /** Checked as the engine checks an end-session request; throws its error. */
  async function check(params: Params) {
    let client;
    if (params.id_token_hint !== undefined) {
      let audience: unknown;
      try {
        audience = decodeJwt(params.id_token_hint).aud;
      } catch {
        throw new InvalidRequest('could not decode id_token_hint');
      }
      if (typeof audience !== 'string') throw new InvalidRequest('could not validate id_token_hint');
      if (params.client_id !== undefined && params.client_id !== audience) throw new InvalidRequest('client_id does not match the provided id_token_hint');
      client = await provider.Client.find(audience);
      if (!client) throw new InvalidClient('unrecognized id_token_hint audience');
      try {
        await provider.IdToken.validate(params.id_token_hint, client);
      } catch {
        throw new InvalidRequest('could not validate id_token_hint');
      }
    } else if (params.client_id !== undefined) {
      client = await provider.Client.find(params.client_id);
      if (!client) throw new InvalidClient('client is invalid');
    }
    // An unregistered URI never receives the browser (exact match: src/engine/patches.ts).
    if (client && params.post_logout_redirect_uri !== undefined && !client.postLogoutRedirectUriAllowed(params.post_logout_redirect_uri)) {
      throw new InvalidRequest('post_logout_redirect_uri not registered');
    }
    return client;
  }

  async function notSignedIn(ctx: Context, params: Params): Promise<void> {
    const locale = look.localizer.choose({ uiLocales: params.ui_locales, acceptLanguage: ctx.get('accept-language') });
    try {
      const client = await check(params);
      const branding = client && look.brands ? await look.brands.of(engineAppOwner(client).tenant) : undefined;
      sendPage(ctx, notSignedInPage({
        appName: client?.clientName,
        returnTo: client ? params.post_logout_redirect_uri : undefined,
        state: params.state,
        locale,
        branding,
      }));
    } catch (error) {
      if (!(error instanceof OAuthError)) throw error;
      sendPage(ctx, oauthErrorPage(error.error, error.description, locale), 400);
    }
  }

  return async (ctx: Context, _params: unknown, next: Next): Promise<void> => {
    if (await guard(ctx)) return;
    if (ctx.method === 'POST') return carryPost(ctx);
    takeCarried(ctx);
    const locale = localeOf(ctx, '');
    let params: Params;
    try {
      params = paramsOf(ctx.query);
      // What a signed-in browser's session keeps until the confirmation is bounded.
      if ((params.state?.length ?? 0) > MAX_STATE_OR_NONCE) throw new InvalidRequest(`state must be at most ${MAX_STATE_OR_NONCE} characters`);
    } catch (error) {
      sendPage(ctx, oauthErrorPage('invalid_request', (error as OAuthError).description, locale), 400);
      return;
    }
    const session = await provider.Session.get(ctx as never);
    if (session.accountId) return next();
    await notSignedIn(ctx, params);
  };
}
