import { randomBytes } from 'node:crypto';
import { createServer, type Server } from 'node:http';
import type { AddressInfo } from 'node:net';
import { decodeJwt, decodeProtectedHeader, exportJWK, generateKeyPair, importJWK, SignJWT, type JWK, type JWTPayload } from 'jose';
import Provider, { type ClientMetadata, type Configuration, type KoaContextWithOIDC } from 'oidc-provider';

/*
 * A TENANT'S IDENTITY PROVIDER FOR TESTS: a real, bare node-oidc-provider 9 on 127.0.0.1 (a free
 * port), with its own keys, statically registered clients and users, and its own minimal sign-in
 * page (a `username` field and a "Sign in" button; no password: the test names the user). Consent
 * is given without a page. Knobs: tamper with the token endpoint's ID token, slow every answer,
 * close the port.
 */

/** A user of the provider: the claims its ID token carries, and how her sign-in there counts. */
export interface UpstreamUser {
  sub: string;
  email?: string;
  email_verified?: boolean;
  name?: string;
  given_name?: string;
  family_name?: string;
  preferred_username?: string;
  locale?: string;
  /** Any other claim (released with the `profile` scope). */
  [claim: string]: unknown;
}

/** How the provider says a user signed in (its `amr` and `acr`): strong or weak. */
export interface UpstreamSignInStrength {
  amr?: string[];
  acr?: string;
}

/** A client registered at the provider (our server, or a stranger). */
export type UpstreamClient = ClientMetadata & { client_id: string };

export interface UpstreamProviderOptions {
  clients: UpstreamClient[];
  users: UpstreamUser[];
  /** Per sub: the `amr`/`acr` of her sign-in (default `{ amr: ['pwd'], acr: 'urn:upstream:password' }`). */
  strength?: Record<string, UpstreamSignInStrength>;
  /** Every answer (pages, discovery, keys, token) waits this long first (0: none). */
  delayMs?: number;
}

/** The ID token's claims as the tamper function sees them; return the ones to sign instead. */
export type Tamper = (claims: JWTPayload) => JWTPayload;

export interface RunningUpstreamProvider {
  /** `http://127.0.0.1:<port>` */
  issuer: string;
  port: number;
  provider: Provider;
  /**
   * From now on the token endpoint's ID token is decoded, passed through `fn`, and signed again:
   * with the provider's own key (same `kid`), or with `foreignKey` a key nobody published (a bad
   * signature). `undefined`: answers as they are.
   */
  tamper(fn: Tamper | undefined, options?: { foreignKey?: boolean }): void;
  /** Every answer waits this long (0: none). */
  delayMs: number;
  /** Token endpoint calls seen (client_id, grant_type), to assert what was exchanged. */
  readonly tokenRequests: Array<{ clientId: string | undefined; grantType: string | undefined }>;
  /** The `traceparent` header of every request received (undefined: none), oldest first. */
  readonly traceparents: Array<string | undefined>;
  /** The tokens the token endpoint answered with (as sent, after tampering), oldest first. */
  readonly issued: Array<{ idToken?: string; accessToken?: string }>;
  /** Closes the port (connections dropped); later requests are refused. */
  close(): Promise<void>;
}

const DEFAULT_STRENGTH: UpstreamSignInStrength = { amr: ['pwd'], acr: 'urn:upstream:password' };
const COOKIE_NAMES = { session: 'up_session', interaction: 'up_interaction', resume: 'up_interaction_resume' };

/** A real node-oidc-provider on a free loopback port (see the module comment). */
export async function startUpstreamProvider(options: UpstreamProviderOptions): Promise<RunningUpstreamProvider> {
  const http: Server = createServer();
  await new Promise<void>((resolve) => http.listen(0, '127.0.0.1', resolve));
  const { port } = http.address() as AddressInfo;
  const issuer = `http://127.0.0.1:${port}`;

  const { privateKey } = await generateKeyPair('RS256', { extractable: true });
  const ownJwk = { ...(await exportJWK(privateKey)), kid: `up-${randomBytes(4).toString('hex')}`, alg: 'RS256', use: 'sig' } as JWK & { kid: string };
  const foreign = await generateKeyPair('RS256', { extractable: true });

  const users = new Map(options.users.map((user) => [user.sub, user]));
  const strength = options.strength ?? {};
  const acrValues = [...new Set([DEFAULT_STRENGTH.acr!, ...Object.values(strength).flatMap((entry) => (entry.acr ? [entry.acr] : []))])];

  const configuration: Configuration = {
    clients: options.clients,
    jwks: { keys: [ownJwk] } as Configuration['jwks'],
    cookies: { keys: [randomBytes(32).toString('base64url')], names: COOKIE_NAMES } as Configuration['cookies'],
    claims: {
      openid: ['sub', 'acr', 'amr', 'auth_time'],
      email: ['email', 'email_verified'],
      profile: ['name', 'given_name', 'family_name', 'preferred_username', 'locale', 'groups', 'department'],
    },
    // The identity claims in the ID token itself (our side reads the ID token only).
    conformIdTokenClaims: false,
    acrValues,
    features: {
      devInteractions: { enabled: false },
      rpInitiatedLogout: { enabled: true },
    },
    pkce: { required: () => true },
    ttl: { Interaction: 600, Session: 3600, Grant: 3600 },
    interactions: { url: (_ctx, interaction) => `/interaction/${interaction.uid}` },
    async findAccount(_ctx, sub) {
      const user = users.get(sub);
      if (!user) return undefined;
      return { accountId: sub, claims: async () => ({ ...user }) };
    },
    // Consent is given: every scope and claim the client asked for.
    async loadExistingGrant(ctx: KoaContextWithOIDC) {
      const accountId = ctx.oidc.session?.accountId;
      const clientId = ctx.oidc.client?.clientId;
      if (!accountId || !clientId) return undefined;
      const grant = new ctx.oidc.provider.Grant({ clientId, accountId });
      grant.addOIDCScope(String(ctx.oidc.params?.scope ?? 'openid'));
      grant.addOIDCClaims(['email', 'email_verified', 'name', 'given_name', 'family_name', 'preferred_username', 'locale']);
      await grant.save();
      return grant;
    },
  };
  const provider = new Provider(issuer, configuration);
  // Our redirect URIs end with the connection's id, known only once the connection is created with
  // this provider's issuer: a client registered with `.../federation/callback` also takes
  // `.../federation/callback/<one path segment>` (a test knob; a real provider registers the whole URI).
  const clientModel = provider.Client as unknown as { prototype: { redirectUriAllowed(value: string): boolean; redirectUris: string[] } };
  const exactly = clientModel.prototype.redirectUriAllowed;
  clientModel.prototype.redirectUriAllowed = function redirectUriAllowed(value: string) {
    return exactly.call(this, value) || this.redirectUris.some((uri) => value.startsWith(`${uri}/`) && /^[A-Za-z0-9_-]+$/.test(value.slice(uri.length + 1)));
  };

  let tamper: { fn: Tamper; foreignKey: boolean } | undefined;
  const tokenRequests: Array<{ clientId: string | undefined; grantType: string | undefined }> = [];
  const traceparents: Array<string | undefined> = [];
  const issued: Array<{ idToken?: string; accessToken?: string }> = [];
  /** Answers held back by delayMs: dropped at close (nothing keeps the process alive). */
  const delays = new Set<NodeJS.Timeout>();
  const state = { delayMs: options.delayMs ?? 0 };

  provider.use(async (ctx, next) => {
    traceparents.push(ctx.get('traceparent') || undefined);
    if (state.delayMs > 0) {
      await new Promise<void>((resolve) => {
        const timer = setTimeout(() => {
          delays.delete(timer);
          resolve();
        }, state.delayMs);
        delays.add(timer);
      });
    }
    const interaction = /^\/interaction\/([^/]+)$/.exec(ctx.path);
    if (interaction) {
      await signInPage(provider, ctx, (name) => users.has(name), strength);
      return;
    }
    await next();
    if (ctx.path === '/token' && ctx.method === 'POST') {
      const body = ctx.body as Record<string, unknown> | undefined;
      tokenRequests.push({ clientId: ctx.oidc?.client?.clientId, grantType: (ctx.oidc?.params?.grant_type as string | undefined) });
      if (tamper && body && typeof body.id_token === 'string') {
        const header = decodeProtectedHeader(body.id_token);
        const claims = tamper.fn({ ...decodeJwt(body.id_token) });
        const key = tamper.foreignKey ? foreign.privateKey : await importJWK(ownJwk, 'RS256');
        body.id_token = await new SignJWT(claims).setProtectedHeader({ alg: 'RS256', kid: header.kid ?? ownJwk.kid, typ: header.typ ?? 'JWT' }).sign(key);
        ctx.body = body;
      }
      if (body) issued.push({ ...(typeof body.id_token === 'string' ? { idToken: body.id_token } : {}), ...(typeof body.access_token === 'string' ? { accessToken: body.access_token } : {}) });
    }
  });

  provider.on('server_error', (_ctx, error) => { if (process.env.UPSTREAM_DEBUG) console.error('upstream server_error', error); });
  http.on('request', provider.callback());
  return {
    issuer,
    port,
    provider,
    tamper(fn, { foreignKey = false } = {}) {
      tamper = fn ? { fn, foreignKey } : undefined;
    },
    get delayMs() {
      return state.delayMs;
    },
    set delayMs(value: number) {
      state.delayMs = value;
    },
    tokenRequests,
    traceparents,
    issued,
    async close() {
      for (const timer of delays) clearTimeout(timer);
      delays.clear();
      http.closeAllConnections();
      await new Promise((resolve) => http.close(resolve));
    },
  };
}

/** GET: a form with `username` and "Sign in"; POST: that user signed in with her configured strength. */
async function signInPage(provider: Provider, ctx: Parameters<Parameters<Provider['use']>[0]>[0], known: (sub: string) => boolean, strength: Record<string, UpstreamSignInStrength>): Promise<void> {
  const details = await provider.interactionDetails(ctx.req, ctx.res);
  if (ctx.method === 'GET') {
    const hint = typeof details.params.login_hint === 'string' ? details.params.login_hint : '';
    ctx.type = 'html';
    ctx.body = `<!doctype html><html lang="en"><head><meta charset="utf-8"><title>Upstream sign-in</title></head><body><main>
<h1>Upstream provider</h1>
<form method="post" action="/interaction/${details.uid}">
<label for="username">Username</label> <input id="username" name="username" value="${escapeHtml(hint)}" autocomplete="username">
<button type="submit">Sign in</button>
</form></main></body></html>`;
    return;
  }
  if (ctx.method !== 'POST') {
    ctx.status = 405;
    return;
  }
  const form = new URLSearchParams(await readBody(ctx));
  const username = form.get('username') ?? '';
  if (details.prompt.name === 'login') {
    const account = known(username) ? username : undefined;
    if (!account) {
      ctx.status = 400;
      ctx.type = 'html';
      ctx.body = '<!doctype html><html lang="en"><head><title>Unknown user</title></head><body><main><p>Unknown user</p></main></body></html>';
      return;
    }
    const { amr, acr } = strength[account] ?? DEFAULT_STRENGTH;
    await provider.interactionFinished(ctx.req, ctx.res, { login: { accountId: account, ...(amr ? { amr } : {}), ...(acr ? { acr } : {}) } }, { mergeWithLastSubmission: false });
  } else {
    // Consent comes from loadExistingGrant; any other prompt just goes on.
    await provider.interactionFinished(ctx.req, ctx.res, {}, { mergeWithLastSubmission: true });
  }
  ctx.respond = false;
}

async function readBody(ctx: { req: AsyncIterable<unknown> }): Promise<string> {
  const chunks: Buffer[] = [];
  for await (const chunk of ctx.req) chunks.push(chunk as Buffer);
  return Buffer.concat(chunks).toString('utf8');
}

function escapeHtml(value: string): string {
  return value.replace(/&/g, '&amp;').replace(/</g, '&lt;').replace(/>/g, '&gt;').replace(/"/g, '&quot;').replace(/'/g, '&#39;');
}

/** What passing the provider's sign-in over plain HTTP gives: our callback URL with its query. */
export interface UpstreamPassage {
  /** Our callback URL the provider sent the browser to (code, state, iss). */
  callbackUrl: string;
}

/**
 * Passes the provider's sign-in over plain HTTP: starts at `authorizationUrl` (the provider's,
 * from our server's 303), keeps the provider's cookies, submits its form as `username`, and follows
 * redirects until one leaves the provider (to our callback). Returns that URL, not requested.
 */
export async function passUpstreamSignIn(authorizationUrl: string, username: string): Promise<UpstreamPassage> {
  const origin = new URL(authorizationUrl).origin;
  const jar = new Map<string, string>();
  const remember = (response: Response) => {
    for (const header of response.headers.getSetCookie()) {
      const [pair] = header.split(';');
      const eq = pair!.indexOf('=');
      const name = pair!.slice(0, eq).trim();
      const value = pair!.slice(eq + 1).trim();
      if (/expires=Thu, 01 Jan 1970/i.test(header) || value === '') jar.delete(name);
      else jar.set(name, value);
    }
  };
  const cookie = () => [...jar].map(([name, value]) => `${name}=${value}`).join('; ');
  let target = authorizationUrl;
  let method = 'GET';
  let body: string | undefined;
  for (let hops = 0; hops < 12; hops += 1) {
    const response = await fetch(target, {
      method,
      redirect: 'manual',
      headers: { cookie: cookie(), ...(body ? { 'content-type': 'application/x-www-form-urlencoded' } : {}) },
      ...(body ? { body } : {}),
    });
    remember(response);
    const location = response.headers.get('location');
    if (response.status >= 300 && response.status < 400 && location) {
      const next = new URL(location, target);
      if (next.origin !== origin) return { callbackUrl: next.href };
      target = next.href;
      method = 'GET';
      body = undefined;
      continue;
    }
    const html = await response.text();
    const action = /<form method="post" action="([^"]+)"/.exec(html)?.[1];
    if (response.status !== 200 || !action) throw new Error(`the upstream provider answered ${response.status} at ${target}: ${html.slice(0, 300)}`);
    target = new URL(action, target).href;
    method = 'POST';
    body = new URLSearchParams({ username }).toString();
  }
  throw new Error('too many redirects at the upstream provider');
}
