import { createHash, randomBytes } from 'node:crypto';
import type { Context, Next } from 'koa';
import type { AuthServerOptions } from '../src/index.js';
import { escapeHtml, page } from '../src/pages/html.js';
import { live, remember, same } from './session-store.js';

/**
 * The developer portal of the example server (`/portal`): a signed-in user holding "Create and
 * update integration setup" sees her tenant's client configurations and app registrations,
 * creates them, sees a secret once, regenerates it, and sees and revokes her own consents.
 *
 * It is a small server-side web app of its own: it signs users in as the first-party confidential
 * demo app ("Demo portal") with the authorization code flow + PKCE, keeps the tokens in a
 * server-side session (never in a page), and calls the HTTP management and consent APIs with the
 * user's access token, as any other platform UI would.
 */
export interface PortalSetup {
  /** The confidential first-party demo app; undefined when the demo apps could not be registered. */
  app: { clientId: string; clientSecret?: string } | undefined;
  /** `{baseUrl}` of the example server: the portal lives at `{baseUrl}/portal`. */
  baseUrl: string;
  /** The issuer (`{baseUrl}{pathPrefix}/oauth2`): authorize and token endpoints. */
  oauthUrl: string;
  /** `{baseUrl}{pathPrefix}/api/oauth2`: the management and consent APIs. */
  apiUrl: string;
  /** The API catalog, for the scope picker of the client configuration form. */
  apis: AuthServerOptions['apis'];
}

/** What the portal shows once, on the next GET /portal/secret, then forgets. */
interface ShownSecret {
  what: 'client configuration' | 'app registration';
  name: string;
  clientId: string;
  clientSecret: string;
  regenerated: boolean;
}

interface Notice {
  kind: 'ok' | 'error';
  text: string;
}

interface SignedInUser {
  sub: string;
  name?: string;
  tenant?: string;
}

/** One browser's portal session (cookie `portal_session`); the tokens never leave the server. */
interface PortalSession {
  csrf: string;
  expires: number;
  user?: SignedInUser;
  accessToken?: string;
  accessTokenExpires?: number;
  refreshToken?: string;
  /** A refresh under way: refresh tokens rotate, so two parallel refreshes would end the grant. */
  refreshing?: Promise<boolean>;
  secret?: ShownSecret;
  notice?: Notice;
}

interface PendingSignIn {
  sessionId: string;
  verifier: string;
  nonce: string;
  expires: number;
}

interface Current {
  id: string;
  session: PortalSession;
}

/** A form's submitted values and what was wrong with them, to render it again. */
interface FormState {
  values: Record<string, string>;
  error: string;
}

interface ApiAnswer {
  status: number;
  body: Record<string, unknown>;
}

interface ClientConfigurationWire {
  client_id: string;
  name: string;
  category: string;
  description?: string;
  resources: Record<string, { scopes: string[]; constraints?: Record<string, string[]> }>;
  created_at: string;
}

interface AppRegistrationWire {
  client_id: string;
  name: string;
  redirect_uris: string[];
  client_type: 'public' | 'confidential';
  pkce_enabled: boolean;
  created_at: string;
}

interface AuditEventWire {
  time: string;
  type: string;
  actor: { type: string; id?: string };
  target?: { type: string; id: string };
  address?: string;
}

interface ConsentWire {
  client_id: string;
  app_name: string | null;
  scopes: Array<{ scope: string; description: string; api?: string }>;
  created_at: string;
  updated_at: string;
}

const SESSION_COOKIE = 'portal_session';
const SESSION_TTL = 30 * 60_000;
const SIGN_IN_TTL = 5 * 60_000;
/** Refresh the access token this long before it expires. */
const TOKEN_MARGIN = 30_000;
const FORM_LIMIT = 16 * 1024;
/** The portal asks for the management right explicitly (policies/management.ts); users without the permission get tokens without it. */
const SCOPE = 'openid profile manage.integrations';
/** Client IDs are UUIDs; anything else never reaches the APIs. */
const ID = /^[A-Za-z0-9-]{1,64}$/;
const PERMISSION_MESSAGE = "You need the permission 'Create and update integration setup' to see and change your organisation's "
  + 'client configurations and app registrations. Ask an administrator of your organisation for it.';

/** Wider than the sign-in pages: the portal shows tables. */
const PORTAL_STYLE = `
main{max-width:60rem}
h2{font-size:1.2rem;margin:2rem 0 .6rem;border-top:1px solid #d6dae3;padding-top:1.2rem}
h3{font-size:1.05rem;margin:1.4rem 0 .4rem}
table{border-collapse:collapse;width:100%;font-size:.95rem}
th,td{text-align:left;vertical-align:top;padding:.45rem .5rem;border-bottom:1px solid #e3e6ec}
td code,p code{font-size:.85rem;word-break:break-all}
td form{margin:0}td button,.inline button{margin-top:0;padding:.35rem .8rem;font-size:.9rem}
select{width:100%;box-sizing:border-box;padding:.6rem;border:1px solid #8a93a6;border-radius:4px;font-size:1rem;background:#fff}
select:focus{outline:3px solid #2f6fde;outline-offset:1px}
.notice{color:#0f5132;background:#e3f4ea;padding:.6rem;border-radius:4px}
.permission{background:#fff4e0;color:#5c3b00;padding:.8rem;border-radius:4px}
.header{display:flex;justify-content:space-between;align-items:center;gap:1rem;flex-wrap:wrap}
.secret{font-family:ui-monospace,Menlo,Consolas,monospace}
`;

/** The copy button of the secret page (allowed by this page's script nonce only). */
const COPY_SCRIPT = `
(function () {
  var status = document.getElementById('copy-status');
  function said(ok) { status.textContent = ok ? 'Copied.' : 'Copy failed: select the secret and copy it.'; }
  function fallback(input) { input.focus(); input.select(); try { said(document.execCommand('copy')); } catch (e) { said(false); } }
  var buttons = document.querySelectorAll('button[data-copy]');
  for (var i = 0; i < buttons.length; i += 1) {
    buttons[i].addEventListener('click', function (event) {
      var input = document.getElementById(event.currentTarget.getAttribute('data-copy'));
      if (navigator.clipboard && window.isSecureContext) {
        navigator.clipboard.writeText(input.value).then(function () { said(true); }, function () { fallback(input); });
      } else {
        fallback(input);
      }
    });
  }
})();
`;


function jwtPayload(jwt: unknown): Record<string, unknown> {
  if (typeof jwt !== 'string') return {};
  try {
    return JSON.parse(Buffer.from(jwt.split('.')[1] ?? '', 'base64url').toString('utf8')) as Record<string, unknown>;
  } catch {
    return {};
  }
}

function when(iso: string): string {
  return `${iso.slice(0, 16).replace('T', ' ')} UTC`;
}

class FormTooLarge extends Error {}

async function readForm(ctx: Context): Promise<URLSearchParams> {
  if (!ctx.is('application/x-www-form-urlencoded')) return new URLSearchParams();
  let text = '';
  for await (const chunk of ctx.req) {
    text += String(chunk);
    if (text.length > FORM_LIMIT) throw new FormTooLarge();
  }
  return new URLSearchParams(text);
}

export function portalRoutes({ app, baseUrl, oauthUrl, apiUrl, apis }: PortalSetup) {
  const pending = new Map<string, PendingSignIn>();
  const sessions = new Map<string, PortalSession>();
  const origin = new URL(baseUrl).origin;
  const redirectUri = `${baseUrl}/portal/callback`;
  const apiOfScope = new Map(apis.flatMap((api) => Object.keys(api.scopes).map((scope) => [scope, api.id] as const)));

  // ---- sessions -------------------------------------------------------------------------------

  function setSessionCookie(ctx: Context, id: string): void {
    // The id is a random secret kept server-side: an unsigned cookie is enough.
    ctx.cookies.set(SESSION_COOKIE, id, {
      httpOnly: true,
      sameSite: 'lax',
      signed: false,
      path: '/portal',
      maxAge: SESSION_TTL,
      overwrite: true,
    });
  }

  function clearSessionCookie(ctx: Context): void {
    ctx.cookies.set(SESSION_COOKIE, '', { httpOnly: true, sameSite: 'lax', signed: false, path: '/portal', maxAge: 0, overwrite: true });
  }

  function currentSession(ctx: Context): Current | undefined {
    const id = ctx.cookies.get(SESSION_COOKIE, { signed: false });
    const session = live(sessions, id);
    return id && session ? { id, session } : undefined;
  }

  function newSession(ctx: Context, carried: Partial<PortalSession> = {}): Current {
    const id = randomBytes(32).toString('base64url');
    const session: PortalSession = { ...carried, csrf: randomBytes(32).toString('base64url'), expires: Date.now() + SESSION_TTL };
    remember(sessions, id, session);
    setSessionCookie(ctx, id);
    return { id, session };
  }

  function touch(ctx: Context, { id, session }: Current): void {
    session.expires = Date.now() + SESSION_TTL;
    remember(sessions, id, session);
    setSessionCookie(ctx, id);
  }

  function endSession(ctx: Context, id: string): void {
    sessions.delete(id);
    clearSessionCookie(ctx);
  }

  // ---- pages ----------------------------------------------------------------------------------

  /** Renders with `page()`, adding the portal's stylesheet and, when given, a script, each by a nonce of their own. */
  function send(ctx: Context, title: string, body: string, options: { status?: number; script?: string } = {}): void {
    const nonce = randomBytes(16).toString('base64');
    const script = options.script ? `\n<script nonce="${nonce}">${options.script}</script>` : '';
    const rendered = page(title, `<style nonce="${nonce}">${PORTAL_STYLE}</style>\n${body}${script}`);
    let csp = rendered.csp.replace("style-src 'nonce-", `style-src 'nonce-${nonce}' 'nonce-`);
    if (options.script) csp += `; script-src 'nonce-${nonce}'`;
    ctx.status = options.status ?? 200;
    ctx.type = 'html';
    ctx.set('Content-Security-Policy', csp);
    ctx.set('Cache-Control', 'no-store');
    ctx.body = rendered.html;
  }

  function seeOther(ctx: Context, path: string): void {
    ctx.status = 303;
    ctx.redirect(path);
  }

  function csrfField(session: PortalSession): string {
    return `<input type="hidden" name="csrf" value="${escapeHtml(session.csrf)}">`;
  }

  function signedOutPage(ctx: Context, message: string, status = 200): void {
    send(
      ctx,
      'Developer portal',
      `<h1>Developer portal</h1>
${message ? `<p class="notice" role="status">${escapeHtml(message)}</p>` : ''}
<p>Manage your organisation's client configurations and app registrations, and the apps you allowed to access your account.</p>
<p><a href="/portal/login">Sign in</a></p>`,
      { status },
    );
  }

  function noticeHtml(notice: Notice | undefined): string {
    if (!notice) return '';
    return notice.kind === 'ok'
      ? `<p class="notice" role="status">${escapeHtml(notice.text)}</p>`
      : `<p class="error" role="alert">${escapeHtml(notice.text)}</p>`;
  }

  function field(id: string, label: string, name: string, values: Record<string, string>, extra = ''): string {
    return `<label for="${id}">${escapeHtml(label)}</label><input id="${id}" name="${name}" value="${escapeHtml(values[name] ?? '')}" required maxlength="200"${extra}>`;
  }

  function scopeOptions(selected: string | undefined): string {
    return apis
      .map((api) => {
        const options = Object.entries(api.scopes)
          .map(([scope, words]) => `<option value="${escapeHtml(scope)}"${scope === selected ? ' selected' : ''}>${escapeHtml(`${scope}: ${words}`)}</option>`)
          .join('');
        return `<optgroup label="${escapeHtml(api.name)}">${options}</optgroup>`;
      })
      .join('');
  }

  function clientsSection(session: PortalSession, clients: ClientConfigurationWire[], form: FormState | undefined): string {
    const rows = clients
      .map((client) => {
        const scopes = Object.entries(client.resources)
          .map(([api, resource]) => {
            const constraints = Object.entries(resource.constraints ?? {})
              .map(([dimension, values]) => `${dimension} = ${values.join(', ')}`)
              .join('; ');
            return `${escapeHtml(resource.scopes.join(', '))}${constraints ? ` (${escapeHtml(constraints)})` : ''} <span class="muted">${escapeHtml(api)}</span>`;
          })
          .join('<br>');
        return `<tr>
<th scope="row">${escapeHtml(client.name)}</th>
<td>${escapeHtml(client.category)}</td>
<td><code>${escapeHtml(client.client_id)}</code></td>
<td>${scopes}</td>
<td><form method="post" action="/portal/client-configurations/${encodeURIComponent(client.client_id)}/secret">${csrfField(session)}<button class="secondary" type="submit">Regenerate secret</button></form></td>
</tr>`;
      })
      .join('\n');
    const table = clients.length
      ? `<table aria-labelledby="clients-heading"><thead><tr><th scope="col">Name</th><th scope="col">Category</th><th scope="col">Client ID</th><th scope="col">Scopes</th><th scope="col"><span class="muted">Secret</span></th></tr></thead><tbody>
${rows}
</tbody></table>`
      : '<p class="muted">No client configurations yet.</p>';
    const values = form?.values ?? {};
    return `<section aria-labelledby="clients-heading">
<h2 id="clients-heading">Client configurations</h2>
<p class="muted">Machine-to-machine integrations: they get tokens with their client ID and secret.</p>
${table}
<h3 id="new-client-heading">Create a client configuration</h3>
<form method="post" action="/portal/client-configurations" aria-labelledby="new-client-heading">
${csrfField(session)}
${form ? `<p class="error" role="alert">${escapeHtml(form.error)}</p>` : ''}
${field('client-name', 'Name', 'name', values)}
${field('client-category', 'Category', 'category', values)}
<label for="client-scope">API scope</label><select id="client-scope" name="scope" required>${scopeOptions(values.scope)}</select>
<button class="primary" type="submit">Create client configuration</button>
</form>
</section>`;
  }

  function appsSection(session: PortalSession, appsList: AppRegistrationWire[], form: FormState | undefined): string {
    const rows = appsList
      .map((registration) => {
        const regenerate = registration.client_type === 'confidential'
          ? `<form method="post" action="/portal/app-registrations/${encodeURIComponent(registration.client_id)}/secret">${csrfField(session)}<button class="secondary" type="submit">Regenerate secret</button></form>`
          : '<span class="muted">no secret</span>';
        return `<tr>
<th scope="row">${escapeHtml(registration.name)}</th>
<td>${escapeHtml(registration.client_type)}</td>
<td><code>${escapeHtml(registration.client_id)}</code></td>
<td>${registration.redirect_uris.map((uri) => `<code>${escapeHtml(uri)}</code>`).join('<br>')}</td>
<td>${regenerate}</td>
</tr>`;
      })
      .join('\n');
    const table = appsList.length
      ? `<table aria-labelledby="apps-heading"><thead><tr><th scope="col">Name</th><th scope="col">Type</th><th scope="col">Client ID</th><th scope="col">Redirect URIs</th><th scope="col"><span class="muted">Secret</span></th></tr></thead><tbody>
${rows}
</tbody></table>`
      : '<p class="muted">No app registrations yet.</p>';
    const values = form?.values ?? {};
    const type = values.client_type ?? 'confidential';
    return `<section aria-labelledby="apps-heading">
<h2 id="apps-heading">App registrations</h2>
<p class="muted">Apps that users sign in to: they act on behalf of a user who allowed them.</p>
${table}
<h3 id="new-app-heading">Create an app registration</h3>
<form method="post" action="/portal/app-registrations" aria-labelledby="new-app-heading">
${csrfField(session)}
${form ? `<p class="error" role="alert">${escapeHtml(form.error)}</p>` : ''}
${field('app-name', 'Name', 'name', values)}
<label for="app-redirect-uri">Redirect URI</label><input id="app-redirect-uri" name="redirect_uri" value="${escapeHtml(values.redirect_uri ?? '')}" required maxlength="2000" placeholder="https://app.example.com/callback" aria-describedby="app-redirect-uri-hint">
<p id="app-redirect-uri-hint" class="muted">https, http://localhost, or an app's own scheme (myapp://callback); matched exactly.</p>
<label for="app-post-logout-uri">Post-logout redirect URI (optional)</label><input id="app-post-logout-uri" name="post_logout_redirect_uri" value="${escapeHtml(values.post_logout_redirect_uri ?? '')}" maxlength="2000" placeholder="https://app.example.com/signed-out" aria-describedby="app-post-logout-uri-hint">
<p id="app-post-logout-uri-hint" class="muted">Where the app may send users back after they sign out; the same rules, matched exactly.</p>
<label for="app-type">Type</label><select id="app-type" name="client_type">
<option value="confidential"${type === 'confidential' ? ' selected' : ''}>Confidential: a server-side app, with a secret</option>
<option value="public"${type === 'public' ? ' selected' : ''}>Public: a single-page or mobile app, no secret</option>
</select>
<button class="primary" type="submit">Create app registration</button>
</form>
</section>`;
  }

  function consentsSection(session: PortalSession, consents: ConsentWire[] | undefined): string {
    let content: string;
    if (!consents) {
      content = '<p class="error" role="alert">Your consents could not be loaded.</p>';
    } else if (!consents.length) {
      content = '<p class="muted">You have not allowed any app to access your account.</p>';
    } else {
      const rows = consents
        .map((consent) => {
          const name = consent.app_name ?? 'A deleted app';
          const scopes = consent.scopes
            .map((scope) => `<li>${escapeHtml(scope.api ? `${scope.api}: ${scope.description}` : scope.description)}</li>`)
            .join('');
          return `<tr>
<th scope="row">${escapeHtml(name)}<br><code>${escapeHtml(consent.client_id)}</code></th>
<td><ul>${scopes}</ul></td>
<td>${escapeHtml(when(consent.updated_at))}</td>
<td><form method="post" action="/portal/consents/${encodeURIComponent(consent.client_id)}/revoke">${csrfField(session)}<button class="secondary" type="submit">Revoke</button></form></td>
</tr>`;
        })
        .join('\n');
      content = `<table aria-labelledby="consents-heading"><thead><tr><th scope="col">App</th><th scope="col">May</th><th scope="col">Since</th><th scope="col"><span class="muted">Action</span></th></tr></thead><tbody>
${rows}
</tbody></table>`;
    }
    return `<section aria-labelledby="consents-heading">
<h2 id="consents-heading">My consents</h2>
<p class="muted">The apps you allowed to access your account. Revoking one signs that app out; it asks you again next time.</p>
${content}
</section>`;
  }

  /** The organisation's Activity: its latest audit events (who did what to which integration). */
  function activitySection(events: AuditEventWire[]): string {
    const rows = events
      .map((event) => {
        const who = event.actor.type === 'user' ? `user ${event.actor.id ?? ''}` : event.actor.type === 'client' ? `client ${event.actor.id ?? ''}` : event.actor.type;
        return `<tr><td>${escapeHtml(when(event.time))}</td><td><code>${escapeHtml(event.type)}</code></td><td>${escapeHtml(who)}</td>`
          + `<td>${event.target ? `<code>${escapeHtml(event.target.id)}</code>` : ''}</td><td>${escapeHtml(event.address ?? '')}</td></tr>`;
      })
      .join('\n');
    return `<section aria-labelledby="activity-heading">
<h2 id="activity-heading">Activity</h2>
<p class="muted">The latest changes and refusals in your organisation: who did what, to which integration, from where.</p>
${events.length
    ? `<table aria-labelledby="activity-heading"><thead><tr><th scope="col">When</th><th scope="col">What</th><th scope="col">Who</th><th scope="col">Target</th><th scope="col">From</th></tr></thead><tbody>
${rows}
</tbody></table>`
    : '<p class="muted">Nothing yet.</p>'}
</section>`;
  }

  // ---- OAuth client: sign-in, tokens ----------------------------------------------------------

  async function tokenRequest(body: Record<string, string>): Promise<Record<string, unknown>> {
    const response = await fetch(`${oauthUrl}/token`, {
      method: 'POST',
      headers: {
        'content-type': 'application/x-www-form-urlencoded',
        // RFC 6749 §2.3.1: form-urlencoded before Base64 (our IDs and secrets need no escaping).
        authorization: `Basic ${Buffer.from(`${encodeURIComponent(app!.clientId)}:${encodeURIComponent(app!.clientSecret ?? '')}`).toString('base64')}`,
      },
      body: new URLSearchParams(body),
    });
    try {
      return (await response.json()) as Record<string, unknown>;
    } catch {
      return { error: 'server_error', error_description: `the token endpoint answered ${response.status}` };
    }
  }

  function keepTokens(session: PortalSession, tokens: Record<string, unknown>): void {
    session.accessToken = String(tokens.access_token);
    session.accessTokenExpires = Date.now() + Number(tokens.expires_in ?? 300) * 1000;
    if (typeof tokens.refresh_token === 'string') session.refreshToken = tokens.refresh_token;
  }

  /** Uses the refresh token (once at a time per session); false when the sign-in has ended. */
  function refresh(session: PortalSession): Promise<boolean> {
    session.refreshing ??= (async () => {
      const refreshToken = session.refreshToken;
      if (!refreshToken) return false;
      delete session.refreshToken;
      const tokens = await tokenRequest({ grant_type: 'refresh_token', refresh_token: refreshToken });
      if (typeof tokens.access_token !== 'string') return false;
      keepTokens(session, tokens);
      return true;
    })().finally(() => {
      delete session.refreshing;
    });
    return session.refreshing;
  }

  async function accessToken(session: PortalSession): Promise<string | undefined> {
    if (session.accessToken && (session.accessTokenExpires ?? 0) - TOKEN_MARGIN > Date.now()) return session.accessToken;
    return (await refresh(session)) ? session.accessToken : undefined;
  }

  class SignedOut extends Error {}

  /** Calls the management or consent API as the signed-in user; a 401 gets one refresh and a retry. */
  async function callApi(session: PortalSession, method: string, path: string, body?: unknown): Promise<ApiAnswer> {
    for (let attempt = 0; attempt < 2; attempt += 1) {
      const token = attempt === 0 ? await accessToken(session) : ((await refresh(session)) ? session.accessToken : undefined);
      if (!token) throw new SignedOut();
      const response = await fetch(`${apiUrl}/${path}`, {
        method,
        headers: {
          authorization: `Bearer ${token}`,
          accept: 'application/json',
          ...(body !== undefined ? { 'content-type': 'application/json' } : {}),
        },
        ...(body !== undefined ? { body: JSON.stringify(body) } : {}),
      });
      if (response.status === 401 && attempt === 0) continue;
      if (response.status === 401) throw new SignedOut();
      const text = await response.text();
      let parsed: Record<string, unknown> = {};
      try {
        parsed = text ? (JSON.parse(text) as Record<string, unknown>) : {};
      } catch {
        parsed = {};
      }
      return { status: response.status, body: parsed };
    }
    throw new SignedOut();
  }

  function describe(answer: ApiAnswer): string {
    const description = typeof answer.body.error_description === 'string' ? answer.body.error_description : '';
    return description || `the server answered ${answer.status}`;
  }

  function start(ctx: Context): void {
    const current = currentSession(ctx) ?? newSession(ctx);
    touch(ctx, current);
    const verifier = randomBytes(32).toString('base64url');
    const state = randomBytes(16).toString('base64url');
    const nonce = randomBytes(16).toString('base64url');
    remember(pending, state, { sessionId: current.id, verifier, nonce, expires: Date.now() + SIGN_IN_TTL });
    const query = new URLSearchParams({
      response_type: 'code',
      client_id: app!.clientId,
      redirect_uri: redirectUri,
      scope: SCOPE,
      state,
      nonce,
      code_challenge: createHash('sha256').update(verifier).digest('base64url'),
      code_challenge_method: 'S256',
    });
    ctx.redirect(`${oauthUrl}/authorize?${query}`);
  }

  async function callback(ctx: Context): Promise<void> {
    const state = String(ctx.query.state ?? '');
    const signIn = pending.get(state);
    const current = currentSession(ctx);
    // State is compared exactly and must belong to this browser's session (no login CSRF); a
    // callback from another browser does not use up the state of the one it belongs to.
    if (!signIn || signIn.expires < Date.now()) pending.delete(state);
    if (!signIn || signIn.expires < Date.now() || !current || !same(signIn.sessionId, current.id)) {
      signedOutPage(ctx, 'That sign-in is unknown or has expired. Please sign in again.', 400);
      return;
    }
    pending.delete(state);
    if (ctx.query.error) {
      const denied = ctx.query.error === 'access_denied';
      signedOutPage(ctx, denied ? 'You did not allow the portal to access your account.' : `The sign-in ended: ${String(ctx.query.error)}.`);
      return;
    }
    const tokens = await tokenRequest({
      grant_type: 'authorization_code',
      code: String(ctx.query.code ?? ''),
      redirect_uri: redirectUri,
      code_verifier: signIn.verifier,
    });
    const idToken = jwtPayload(tokens.id_token);
    // The tokens came straight from the token endpoint; the nonce ties the ID token to this sign-in.
    if (typeof tokens.access_token !== 'string' || idToken.nonce !== signIn.nonce || typeof idToken.sub !== 'string') {
      signedOutPage(ctx, `The sign-in failed: ${String(tokens.error_description ?? tokens.error ?? 'unexpected token response')}.`, 400);
      return;
    }
    const access = jwtPayload(tokens.access_token);
    // Signed in: a fresh session id (and CSRF token), so an id planted before gives no access.
    sessions.delete(current.id);
    const user: SignedInUser = {
      sub: idToken.sub,
      ...(typeof idToken.name === 'string' ? { name: idToken.name } : {}),
      ...(typeof access.tenant === 'string' ? { tenant: access.tenant } : {}),
    };
    const { session } = newSession(ctx, { user });
    keepTokens(session, tokens);
    seeOther(ctx, '/portal');
  }

  // ---- the portal's own pages -----------------------------------------------------------------

  async function dashboard(
    ctx: Context,
    current: Current,
    forms: { client?: FormState; app?: FormState } = {},
    status = 200,
  ): Promise<void> {
    const { session } = current;
    const notice = session.notice;
    delete session.notice;
    const [clients, appsAnswer, consents, activity] = await Promise.all([
      callApi(session, 'GET', 'client-configurations'),
      callApi(session, 'GET', 'app-registrations'),
      callApi(session, 'GET', 'consents'),
      callApi(session, 'GET', 'audit-events?limit=20'),
    ]);
    let setup: string;
    if (clients.status === 403 || appsAnswer.status === 403) {
      setup = `<section aria-labelledby="setup-heading">
<h2 id="setup-heading">Integration setup</h2>
<p class="permission">${escapeHtml(PERMISSION_MESSAGE)}</p>
</section>`;
    } else if (clients.status !== 200 || appsAnswer.status !== 200) {
      setup = `<p class="error" role="alert">The integration setup could not be loaded: ${escapeHtml(describe(clients.status !== 200 ? clients : appsAnswer))}.</p>`;
    } else {
      setup = clientsSection(session, (clients.body.client_configurations ?? []) as ClientConfigurationWire[], forms.client)
        + '\n' + appsSection(session, (appsAnswer.body.app_registrations ?? []) as AppRegistrationWire[], forms.app)
        + (activity.status === 200 ? `\n${activitySection((activity.body.events ?? []) as AuditEventWire[])}` : '');
    }
    const user = session.user!;
    send(
      ctx,
      'Developer portal',
      `<div class="header"><h1>Developer portal</h1>
<form class="inline" method="post" action="/portal/logout">${csrfField(session)}<button class="secondary" type="submit">Sign out</button></form></div>
<p>Signed in as <strong>${escapeHtml(user.name ?? user.sub)}</strong> (<code>${escapeHtml(user.sub)}</code>)${user.tenant ? `, organisation <code>${escapeHtml(user.tenant)}</code>` : ''}.</p>
${noticeHtml(notice)}
${setup}
${consentsSection(session, consents.status === 200 ? ((consents.body.consents ?? []) as ConsentWire[]) : undefined)}`,
      { status },
    );
  }

  function secretPage(ctx: Context, shown: ShownSecret): void {
    send(
      ctx,
      'Client secret',
      `<h1>${shown.regenerated ? 'New secret' : 'Created'}: ${escapeHtml(shown.name)}</h1>
<p>${shown.regenerated ? `The ${shown.what}'s previous secret no longer works.` : `The ${shown.what} was created.`}</p>
<p>Client ID <code id="client-id">${escapeHtml(shown.clientId)}</code></p>
<label for="secret">Client secret</label>
<input id="secret" class="secret" value="${escapeHtml(shown.clientSecret)}" readonly autocomplete="off" spellcheck="false" aria-describedby="secret-once">
<button class="primary" type="button" data-copy="secret">Copy secret</button>
<p id="copy-status" role="status" aria-live="polite"></p>
<p id="secret-once"><strong>This secret is shown once.</strong> Store it somewhere safe now: it cannot be shown again. If it is lost, regenerate it.</p>
<p><a href="/portal">Back to the portal</a></p>`,
      { script: COPY_SCRIPT },
    );
  }

  async function createClient(ctx: Context, current: Current, form: URLSearchParams): Promise<void> {
    const values = { name: form.get('name') ?? '', category: form.get('category') ?? '', scope: form.get('scope') ?? '' };
    const apiId = apiOfScope.get(values.scope);
    if (!apiId) return dashboard(ctx, current, { client: { values, error: 'Choose an API scope.' } }, 400);
    const answer = await callApi(current.session, 'POST', 'client-configurations', {
      name: values.name,
      category: values.category,
      resources: { [apiId]: { scopes: [values.scope] } },
    });
    if (answer.status === 201 && typeof answer.body.client_secret === 'string') {
      current.session.secret = {
        what: 'client configuration',
        name: String(answer.body.name),
        clientId: String(answer.body.client_id),
        clientSecret: answer.body.client_secret,
        regenerated: false,
      };
      return seeOther(ctx, '/portal/secret');
    }
    if (answer.status === 400) return dashboard(ctx, current, { client: { values, error: `Not created: ${describe(answer)}.` } }, 400);
    return failed(ctx, current, answer, 'The client configuration was not created');
  }

  async function createApp(ctx: Context, current: Current, form: URLSearchParams): Promise<void> {
    const values = {
      name: form.get('name') ?? '',
      redirect_uri: form.get('redirect_uri') ?? '',
      post_logout_redirect_uri: form.get('post_logout_redirect_uri') ?? '',
      client_type: form.get('client_type') ?? '',
    };
    if (values.client_type !== 'public' && values.client_type !== 'confidential') {
      return dashboard(ctx, current, { app: { values, error: 'Choose the type of the app.' } }, 400);
    }
    const answer = await callApi(current.session, 'POST', 'app-registrations', {
      name: values.name,
      redirect_uris: [values.redirect_uri],
      ...(values.post_logout_redirect_uri ? { post_logout_redirect_uris: [values.post_logout_redirect_uri] } : {}),
      client_type: values.client_type,
    });
    if (answer.status === 201) {
      if (typeof answer.body.client_secret === 'string') {
        current.session.secret = {
          what: 'app registration',
          name: String(answer.body.name),
          clientId: String(answer.body.client_id),
          clientSecret: answer.body.client_secret,
          regenerated: false,
        };
        return seeOther(ctx, '/portal/secret');
      }
      current.session.notice = { kind: 'ok', text: `App registration "${String(answer.body.name)}" created (public: it has no secret).` };
      return seeOther(ctx, '/portal');
    }
    if (answer.status === 400) return dashboard(ctx, current, { app: { values, error: `Not created: ${describe(answer)}.` } }, 400);
    return failed(ctx, current, answer, 'The app registration was not created');
  }

  async function regenerate(ctx: Context, current: Current, collection: 'client-configurations' | 'app-registrations', id: string): Promise<void> {
    const what = collection === 'client-configurations' ? 'client configuration' : 'app registration';
    const path = `${collection}/${encodeURIComponent(id)}`;
    const record = await callApi(current.session, 'GET', path);
    if (record.status !== 200) return failed(ctx, current, record, 'The secret was not regenerated');
    const answer = await callApi(current.session, 'POST', `${path}/secret`);
    if (answer.status !== 200 || typeof answer.body.client_secret !== 'string') {
      return failed(ctx, current, answer, 'The secret was not regenerated');
    }
    current.session.secret = { what, name: String(record.body.name), clientId: id, clientSecret: answer.body.client_secret, regenerated: true };
    seeOther(ctx, '/portal/secret');
  }

  async function revoke(ctx: Context, current: Current, clientId: string): Promise<void> {
    const listed = await callApi(current.session, 'GET', 'consents');
    const consent = ((listed.body.consents ?? []) as ConsentWire[]).find((entry) => entry.client_id === clientId);
    const answer = await callApi(current.session, 'DELETE', `consents/${encodeURIComponent(clientId)}`);
    if (answer.status !== 204) return failed(ctx, current, answer, 'The consent was not revoked');
    const name = consent?.app_name ?? 'the app';
    if (clientId === app!.clientId) {
      // The portal's own grant (and refresh token) is gone: so is this sign-in.
      endSession(ctx, current.id);
      signedOutPage(ctx, `You revoked the consent of ${name}, so you are signed out of the portal.`);
      return;
    }
    current.session.notice = { kind: 'ok', text: `Consent of ${name} revoked: it can no longer refresh its access to your account.` };
    seeOther(ctx, '/portal');
  }

  /** An API answer the portal cannot do more with: back to the dashboard with the reason. */
  function failed(ctx: Context, current: Current, answer: ApiAnswer, what: string): void {
    current.session.notice = {
      kind: 'error',
      text: answer.status === 403 ? PERMISSION_MESSAGE : answer.status === 404 ? `${what}: it no longer exists.` : `${what}: ${describe(answer)}.`,
    };
    seeOther(ctx, '/portal');
  }

  function refused(ctx: Context): void {
    send(
      ctx,
      'Refused',
      '<h1>Refused</h1><p class="error" role="alert">Your portal session has expired or the request did not come from its page.</p><p><a href="/portal">Back to the portal</a></p>',
      { status: 403 },
    );
  }

  async function post(ctx: Context): Promise<void> {
    const current = currentSession(ctx);
    const sentOrigin = ctx.get('origin');
    let form: URLSearchParams;
    try {
      form = await readForm(ctx);
    } catch (error) {
      if (!(error instanceof FormTooLarge)) throw error;
      send(ctx, 'Too large', '<h1>Too large</h1><p class="error" role="alert">The form was too large.</p><p><a href="/portal">Back</a></p>', { status: 413 });
      return;
    }
    // Double-submit: the form's token must be this session's (constant-time); a browser's Origin,
    // when it sends one, must be ours.
    if (!current || !current.session.user || (sentOrigin && sentOrigin !== origin) || !same(form.get('csrf') ?? '', current.session.csrf)) {
      refused(ctx);
      return;
    }
    touch(ctx, current);
    if (ctx.path === '/portal/logout') {
      endSession(ctx, current.id);
      signedOutPage(ctx, 'You are signed out of the portal.');
      return;
    }
    if (ctx.path === '/portal/client-configurations') return createClient(ctx, current, form);
    if (ctx.path === '/portal/app-registrations') return createApp(ctx, current, form);
    const secret = /^\/portal\/(client-configurations|app-registrations)\/([^/]+)\/secret$/.exec(ctx.path);
    if (secret && ID.test(secret[2]!)) {
      return regenerate(ctx, current, secret[1] as 'client-configurations' | 'app-registrations', secret[2]!);
    }
    const consent = /^\/portal\/consents\/([^/]+)\/revoke$/.exec(ctx.path);
    if (consent && ID.test(consent[1]!)) return revoke(ctx, current, consent[1]!);
    send(ctx, 'Not found', '<h1>Not found</h1><p><a href="/portal">Back to the portal</a></p>', { status: 404 });
  }

  async function get(ctx: Context): Promise<void> {
    if (ctx.path === '/portal/login') return start(ctx);
    if (ctx.path === '/portal/callback') return callback(ctx);
    const current = currentSession(ctx);
    if (!current?.session.user) {
      if (ctx.path === '/portal' || ctx.path === '/portal/') return signedOutPage(ctx, '');
      return seeOther(ctx, '/portal');
    }
    touch(ctx, current);
    if (ctx.path === '/portal/secret') {
      const shown = current.session.secret;
      // Shown once: taken out of the session as it is rendered.
      delete current.session.secret;
      if (!shown) return seeOther(ctx, '/portal');
      return secretPage(ctx, shown);
    }
    if (ctx.path === '/portal' || ctx.path === '/portal/') return dashboard(ctx, current);
    send(ctx, 'Not found', '<h1>Not found</h1><p><a href="/portal">Back to the portal</a></p>', { status: 404 });
  }

  return async function portal(ctx: Context, next: Next): Promise<void> {
    if (ctx.path !== '/portal' && !ctx.path.startsWith('/portal/')) return next();
    if (!app?.clientSecret) {
      send(ctx, 'Developer portal', '<h1>Developer portal</h1><p class="error" role="alert">The portal is not available: the demo apps are not registered (use an https BASE_URL or localhost).</p>', { status: 503 });
      return;
    }
    try {
      if (ctx.method === 'GET' || ctx.method === 'HEAD') return await get(ctx);
      if (ctx.method === 'POST') return await post(ctx);
      ctx.set('Allow', 'GET, POST');
      send(ctx, 'Not allowed', '<h1>Method not allowed</h1>', { status: 405 });
    } catch (error) {
      if (error instanceof SignedOut) {
        const current = currentSession(ctx);
        if (current) endSession(ctx, current.id);
        signedOutPage(ctx, 'Your sign-in has ended. Please sign in again.', 401);
        return;
      }
      // The portal's own errors are shown without details (they may quote request data).
      send(ctx, 'Error', '<h1>Something went wrong</h1><p class="error" role="alert">The portal could not complete the request.</p><p><a href="/portal">Back to the portal</a></p>', { status: 502 });
    }
  };
}
