import { createHash, randomBytes } from 'node:crypto';
import type { Context, Next } from 'koa';
import { escapeHtml, page } from '../src/pages/html.js';

export interface DemoApp {
  kind: 'public' | 'confidential';
  clientId: string;
  clientSecret?: string;
  redirectUri: string;
}

interface PendingSignIn {
  kind: DemoApp['kind'];
  verifier: string;
  expires: number;
}

/** The demo apps' own pages: /demo starts a sign-in; /demo/callback/<kind> shows what came back. */
export function demoAppRoutes(apps: DemoApp[], oauthUrl: string) {
  const pending = new Map<string, PendingSignIn>();
  const byKind = new Map(apps.map((app) => [app.kind, app]));

  function send(ctx: Context, title: string, body: string, status = 200): void {
    const rendered = page(title, body);
    ctx.status = status;
    ctx.type = 'html';
    ctx.set('Content-Security-Policy', rendered.csp);
    ctx.set('Cache-Control', 'no-store');
    ctx.body = rendered.html;
  }

  function start(ctx: Context, app: DemoApp): void {
    const verifier = randomBytes(32).toString('base64url');
    const state = randomBytes(16).toString('base64url');
    const now = Date.now();
    for (const [key, entry] of pending) if (entry.expires < now) pending.delete(key);
    pending.set(state, { kind: app.kind, verifier, expires: now + 300_000 });
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

  function claims(jwt: unknown): string {
    if (typeof jwt !== 'string') return '';
    const payload = jwt.split('.')[1] ?? '';
    return JSON.stringify(JSON.parse(Buffer.from(payload, 'base64url').toString('utf8')), null, 2);
  }

  function showTokens(ctx: Context, app: DemoApp, tokens: Record<string, unknown>): void {
    if (typeof tokens.error === 'string') {
      send(ctx, 'Token error', `<h1>Token request failed</h1><p class="error" role="alert">${escapeHtml(String(tokens.error))}: ${escapeHtml(String(tokens.error_description ?? ''))}</p><p><a href="/demo">Back</a></p>`, 400);
      return;
    }
    const refresh = typeof tokens.refresh_token === 'string'
      ? `<form method="post" action="/demo/refresh"><input type="hidden" name="refresh_token" value="${escapeHtml(tokens.refresh_token)}"><button class="primary" type="submit">Use the refresh token</button></form>`
      : '<p class="muted">No refresh token: public apps send the user through sign-in again.</p>';
    send(
      ctx,
      'Tokens received',
      `<h1>${escapeHtml(app.kind === 'public' ? 'Demo SPA' : 'Demo portal')}: tokens received</h1>
<p>token_type <strong>${escapeHtml(String(tokens.token_type))}</strong>, expires_in <strong>${escapeHtml(String(tokens.expires_in))}</strong> s, scope <strong>${escapeHtml(String(tokens.scope ?? ''))}</strong></p>
<h2>Access token claims</h2><pre id="access-token-claims">${escapeHtml(claims(tokens.access_token))}</pre>
<h2>ID token claims</h2><pre id="id-token-claims">${escapeHtml(claims(tokens.id_token))}</pre>
${refresh}
<p><a href="/demo">Back to the demo</a></p>`,
    );
  }

  return async function demoRoutes(ctx: Context, next: Next): Promise<void> {
    if (ctx.path === '/demo' && ctx.method === 'GET') {
      const links = apps
        .map((app) => `<li><a href="/demo/start/${app.kind}">Sign in with the ${app.kind} demo app</a></li>`)
        .join('');
      send(ctx, 'talent-auth demo', `<h1>talent-auth demo</h1><p>Users: <code>ada</code> / <code>ada-demo-password</code> (holds integration setup), <code>ben</code> / <code>ben-demo-password</code>.</p><ul>${links}</ul>`);
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
      pending.delete(state);
      // The app compares state exactly (spec: CSRF protection) before it uses the code.
      if (!signIn || signIn.kind !== callbackApp.kind || signIn.expires < Date.now()) {
        send(ctx, 'Unknown state', '<h1>Unknown or expired state</h1><p><a href="/demo">Start again</a></p>', 400);
        return;
      }
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
      return showTokens(ctx, callbackApp, tokens);
    }
    const confidential = byKind.get('confidential');
    if (ctx.path === '/demo/refresh' && ctx.method === 'POST' && confidential) {
      const form = new URLSearchParams(await readForm(ctx));
      const tokens = await token(confidential, { grant_type: 'refresh_token', refresh_token: form.get('refresh_token') ?? '' });
      return showTokens(ctx, confidential, tokens);
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
