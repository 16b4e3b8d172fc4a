import { createHash, randomBytes } from 'node:crypto';
import type { Context, Next } from 'koa';
import { escapeHtml, page } from '../src/pages/html.js';
import { live, remember, same } from './session-store.js';

export interface DemoApp {
  kind: 'public' | 'confidential';
  clientId: string;
  clientSecret?: string;
  redirectUri: string;
}

/** A sign-in under way: bound to the browser (demo session) that started it. */
interface PendingSignIn {
  sessionId: string;
  kind: DemoApp['kind'];
  verifier: string;
  expires: number;
}

/**
 * One browser's demo session (cookie `demo_session`). What the apps received stays here, on the
 * server: the refresh token never goes into a page. `csrf` is echoed by the refresh form.
 */
interface DemoSession {
  csrf: string;
  expires: number;
  kind?: DemoApp['kind'];
  refreshToken?: string;
}

const SESSION_COOKIE = 'demo_session';
const SESSION_TTL = 30 * 60_000;
const SIGN_IN_TTL = 5 * 60_000;
/** Bounds on what strangers can make the demo remember (oldest entries go first). */


/**
 * The demo apps' own pages: /demo starts a sign-in; /demo/callback/<kind> shows what came back;
 * /demo/refresh (POST) uses the refresh token kept for this browser's demo session.
 */
export function demoAppRoutes(apps: DemoApp[], oauthUrl: string) {
  const pending = new Map<string, PendingSignIn>();
  const sessions = new Map<string, DemoSession>();
  const byKind = new Map(apps.map((app) => [app.kind, app]));

  function setSessionCookie(ctx: Context, sessionId: string): void {
    // The host app has no cookie keys: the id is a random secret, so an unsigned cookie is enough.
    ctx.cookies.set(SESSION_COOKIE, sessionId, {
      httpOnly: true,
      sameSite: 'lax',
      signed: false,
      path: '/demo',
      maxAge: SESSION_TTL,
      overwrite: true,
    });
  }

  /** The caller's live demo session, if its cookie names one. */
  function currentSession(ctx: Context): { id: string; session: DemoSession } | undefined {
    const id = ctx.cookies.get(SESSION_COOKIE, { signed: false });
    const session = live(sessions, id);
    return id && session ? { id, session } : undefined;
  }

  function newSession(ctx: Context, carried: Omit<DemoSession, 'csrf' | 'expires'> = {}): { id: string; session: DemoSession } {
    const id = randomBytes(32).toString('base64url');
    const session: DemoSession = { ...carried, csrf: randomBytes(32).toString('base64url'), expires: Date.now() + SESSION_TTL };
    remember(sessions, id, session);
    setSessionCookie(ctx, id);
    return { id, session };
  }

  /** Keeps a session alive while it is used. */
  function touch(ctx: Context, id: string, session: DemoSession): void {
    session.expires = Date.now() + SESSION_TTL;
    remember(sessions, id, session);
    setSessionCookie(ctx, id);
  }

  function send(ctx: Context, title: string, body: string, status = 200): void {
    const rendered = page(title, body);
    ctx.status = status;
    ctx.type = 'html';
    ctx.set('Content-Security-Policy', rendered.csp);
    ctx.set('Cache-Control', 'no-store');
    ctx.body = rendered.html;
  }

  function start(ctx: Context, app: DemoApp): void {
    const current = currentSession(ctx);
    if (current) touch(ctx, current.id, current.session);
    const sessionId = current?.id ?? newSession(ctx).id;
    const verifier = randomBytes(32).toString('base64url');
    const state = randomBytes(16).toString('base64url');
    remember(pending, state, { sessionId, kind: app.kind, verifier, expires: Date.now() + SIGN_IN_TTL });
    const query = new URLSearchParams({
      response_type: 'code',
      client_id: app.clientId,
      redirect_uri: app.redirectUri,
      scope: 'openid profile email scim.read user.read',
      state,
      code_challenge: createHash('sha256').update(verifier).digest('base64url'),
      code_challenge_method: 'S256',
    });
    ctx.redirect(`${oauthUrl}/authorize?${query}`);
  }

  async function token(app: DemoApp, body: Record<string, string>): Promise<Record<string, unknown>> {
    const headers: Record<string, string> = { 'content-type': 'application/x-www-form-urlencoded' };
    if (app.clientSecret) {
      headers.authorization = `Basic ${Buffer.from(`${app.clientId}:${app.clientSecret}`).toString('base64')}`;
    } else {
      body.client_id = app.clientId;
    }
    const response = await fetch(`${oauthUrl}/token`, { method: 'POST', headers, body: new URLSearchParams(body) });
    return (await response.json()) as Record<string, unknown>;
  }

  /** Where the app sends the browser to sign out: the end-session endpoint, back to the demo page. */
  function signOutUrl(app: DemoApp, idToken: unknown): string {
    // The demo page, registered as the apps' post-logout redirect URI: `{baseUrl}/demo`.
    const demoPage = app.redirectUri.replace(/\/callback\/(public|confidential)$/, '');
    return `${oauthUrl}/session/end?${new URLSearchParams({ ...(typeof idToken === 'string' ? { id_token_hint: idToken } : {}), post_logout_redirect_uri: demoPage })}`;
  }

  function claims(jwt: unknown): string {
    if (typeof jwt !== 'string') return '';
    const payload = jwt.split('.')[1] ?? '';
    return JSON.stringify(JSON.parse(Buffer.from(payload, 'base64url').toString('utf8')), null, 2);
  }

  function tokenError(ctx: Context, tokens: Record<string, unknown>): boolean {
    if (typeof tokens.error !== 'string') return false;
    send(ctx, 'Token error', `<h1>Token request failed</h1><p class="error" role="alert">${escapeHtml(String(tokens.error))}: ${escapeHtml(String(tokens.error_description ?? ''))}</p><p><a href="/demo">Back</a></p>`, 400);
    return true;
  }

  /** Shows what the app received; the refresh token itself stays in the session. */
  function showTokens(ctx: Context, app: DemoApp, tokens: Record<string, unknown>, session: DemoSession): void {
    const refresh = session.refreshToken
      ? `<form method="post" action="/demo/refresh"><input type="hidden" name="csrf" value="${escapeHtml(session.csrf)}"><button class="primary" type="submit">Use the refresh token</button></form>`
      : '<p class="muted">No refresh token: public apps send the user through sign-in again.</p>';
    send(
      ctx,
      'Tokens received',
      `<h1>${escapeHtml(app.kind === 'public' ? 'Demo SPA' : 'Demo portal')}: tokens received</h1>
<p>token_type <strong>${escapeHtml(String(tokens.token_type))}</strong>, expires_in <strong>${escapeHtml(String(tokens.expires_in))}</strong> s, scope <strong>${escapeHtml(String(tokens.scope ?? ''))}</strong></p>
<h2>Access token claims</h2><pre id="access-token-claims">${escapeHtml(claims(tokens.access_token))}</pre>
<h2>ID token claims</h2><pre id="id-token-claims">${escapeHtml(claims(tokens.id_token))}</pre>
${refresh}
<p><a href="${escapeHtml(signOutUrl(app, tokens.id_token))}">Sign out</a> (RP-initiated: the sign-in service asks you to confirm, then sends you back here)</p>
<p><a href="/demo">Back to the demo</a></p>`,
    );
  }

  return async function demoRoutes(ctx: Context, next: Next): Promise<void> {
    if (ctx.path === '/demo' && ctx.method === 'GET') {
      const links = apps
        .map((app) => `<li><a href="/demo/start/${app.kind}">Sign in with the ${app.kind} demo app</a></li>`)
        .join('');
      send(ctx, 'talent-auth demo', `<h1>talent-auth demo</h1><p>Users: <code>ada</code> / <code>ada-demo-password</code> (holds integration setup: sets up an authenticator app at her first sign-in), <code>ben</code> / <code>ben-demo-password</code>.</p><ul>${links}</ul>`);
      return;
    }
    const started = /^\/demo\/start\/(public|confidential)$/.exec(ctx.path);
    const startApp = started && byKind.get(started[1] as DemoApp['kind']);
    if (startApp && ctx.method === 'GET') return start(ctx, startApp);
    const callback = /^\/demo\/callback\/(public|confidential)$/.exec(ctx.path);
    const callbackApp = callback && byKind.get(callback[1] as DemoApp['kind']);
    if (callbackApp && ctx.method === 'GET') {
      const state = String(ctx.query.state ?? '');
      const signIn = pending.get(state);
      const current = currentSession(ctx);
      // The app compares state exactly (its CSRF protection, RFC 6749 §10.12) and checks that this browser
      // started the sign-in before it uses the code: a callback URL from another browser (login
      // CSRF) is refused, without using up the state of the browser it belongs to.
      if (!signIn || signIn.expires < Date.now()) pending.delete(state);
      if (!signIn || signIn.kind !== callbackApp.kind || signIn.expires < Date.now() || !current || !same(signIn.sessionId, current.id)) {
        send(ctx, 'Unknown state', '<h1>Unknown or expired state</h1><p><a href="/demo">Start again</a></p>', 400);
        return;
      }
      pending.delete(state);
      if (ctx.query.error) {
        send(ctx, 'Not signed in', `<h1>The sign-in ended</h1><p role="alert" class="error">${escapeHtml(String(ctx.query.error))}</p><p><a href="/demo">Back</a></p>`);
        return;
      }
      const tokens = await token(callbackApp, {
        grant_type: 'authorization_code',
        code: String(ctx.query.code ?? ''),
        redirect_uri: callbackApp.redirectUri,
        code_verifier: signIn.verifier,
      });
      if (tokenError(ctx, tokens)) return;
      // Signed in: a fresh session id (and CSRF token) for what was received, so that an id
      // planted before the sign-in gives no access to it. Other sign-ins of this browser follow.
      sessions.delete(current.id);
      const { id, session } = newSession(ctx, {
        kind: callbackApp.kind,
        ...(typeof tokens.refresh_token === 'string' ? { refreshToken: tokens.refresh_token } : {}),
      });
      for (const entry of pending.values()) if (entry.sessionId === current.id) entry.sessionId = id;
      return showTokens(ctx, callbackApp, tokens, session);
    }
    if (ctx.path === '/demo/refresh' && ctx.method === 'POST') {
      const current = currentSession(ctx);
      const form = new URLSearchParams(await readForm(ctx));
      if (!current || !same(form.get('csrf') ?? '', current.session.csrf)) {
        send(ctx, 'Refused', '<h1>Refused</h1><p class="error" role="alert">This demo session has expired or the request did not come from its page.</p><p><a href="/demo">Start again</a></p>', 403);
        return;
      }
      const { id, session } = current;
      const app = session.kind && byKind.get(session.kind);
      const refreshToken = session.refreshToken;
      if (!app || !refreshToken) {
        send(ctx, 'No refresh token', '<h1>No refresh token</h1><p>This demo session holds no refresh token.</p><p><a href="/demo">Start again</a></p>', 400);
        return;
      }
      // Taken out while in use: a refresh token is used once (it is rotated).
      delete session.refreshToken;
      let tokens: Record<string, unknown>;
      try {
        tokens = await token(app, { grant_type: 'refresh_token', refresh_token: refreshToken });
      } catch (error) {
        session.refreshToken ??= refreshToken;
        throw error;
      }
      if (tokenError(ctx, tokens)) return;
      session.refreshToken = typeof tokens.refresh_token === 'string' ? tokens.refresh_token : refreshToken;
      touch(ctx, id, session);
      return showTokens(ctx, app, tokens, session);
    }
    return next();
  };
}

async function readForm(ctx: Context): Promise<string> {
  let text = '';
  for await (const chunk of ctx.req) {
    text += String(chunk);
    if (text.length > 8192) break;
  }
  return text;
}
