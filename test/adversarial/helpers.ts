/**
 * Shared by the adversarial suites: exact error assertions, code and refresh exchanges, and reads
 * of what the engine stored (codes, refresh tokens, grants), so that a test can show that a
 * refused request changed nothing.
 */
import { jest } from '@jest/globals';
import { alice } from '../support/accounts.js';
import { basic, postToken, tokenCallOf, type RunningServer, type TokenCall } from '../support/server.js';
import { pkcePair, UserAgent, type Step } from '../support/user-agent.js';

export const SPA = 'http://localhost:5173/cb';
export const WEB = 'https://portal.example.com/cb';
export const OTHER_WEB = 'https://other.example.com/cb';

export interface PublicApp {
  clientId: string;
  redirectUri: string;
}
export interface ConfidentialApp extends PublicApp {
  secret: string;
}

/** The exact OAuth error answer: status, `error`, no-store, and nothing issued. */
export function expectOAuthError(server: RunningServer, response: TokenCall, status: number, error: string): void {
  expect({ status: response.status, error: response.body.error }).toEqual({ status, error });
  expect(typeof response.body.error_description).toBe('string');
  expect(response.headers.get('cache-control')).toBe('no-store');
  expectNoTokens(response);
  if (error === 'invalid_client') {
    // Our guard's challenge, or the engine's, which adds a (generic) error_description.
    const challenge = response.headers.get('www-authenticate') ?? '';
    expect(challenge.startsWith(`Basic realm="${server.auth.issuer}", error="invalid_client"`)).toBe(true);
    expect(challenge.slice(`Basic realm="${server.auth.issuer}", error="invalid_client"`.length)).toMatch(/^(, error_description="[^"]*")?$/);
  } else {
    expect(response.headers.get('www-authenticate')).toBeNull();
  }
}

export function expectNoTokens(response: TokenCall): void {
  for (const field of ['access_token', 'refresh_token', 'id_token']) expect(response.body).not.toHaveProperty(field);
}

/** A successful token answer (200, Bearer, no-store). */
export function expectTokens(response: TokenCall): void {
  expect({ status: response.status, error: response.body.error }).toEqual({ status: 200, error: undefined });
  expect(response.body.token_type).toBe('Bearer');
  expect(typeof response.body.access_token).toBe('string');
  expect(response.headers.get('cache-control')).toBe('no-store');
}

export async function registerApps(server: RunningServer): Promise<{ spa: PublicApp; web: ConfidentialApp; other: ConfidentialApp }> {
  const apps = server.auth.appRegistrations;
  const spa = { clientId: (await apps.create({ name: 'SPA', redirectUris: [SPA], clientType: 'public' })).clientId, redirectUri: SPA };
  const w = await apps.create({ name: 'Portal', redirectUris: [WEB, `${WEB}2`], clientType: 'confidential' });
  const o = await apps.create({ name: 'Other', redirectUris: [OTHER_WEB, WEB], clientType: 'confidential' });
  return {
    spa,
    web: { clientId: w.clientId, redirectUri: WEB, secret: w.clientSecret! },
    other: { clientId: o.clientId, redirectUri: OTHER_WEB, secret: o.clientSecret! },
  };
}

/** A code exchange shaped for the app's type (Basic for confidential apps, client_id and verifier for public ones). */
export function exchangeCode(
  server: RunningServer,
  app: PublicApp | ConfidentialApp,
  code: string,
  verifier: string | undefined,
  extra: Record<string, string> = {},
): Promise<TokenCall> {
  const body: Record<string, string> = { grant_type: 'authorization_code', code, redirect_uri: app.redirectUri };
  if (verifier !== undefined) body.code_verifier = verifier;
  if ('secret' in app) return postToken(server.oauthUrl, { ...body, ...extra }, { authorization: basic(app.clientId, app.secret) });
  return postToken(server.oauthUrl, { ...body, client_id: app.clientId, ...extra });
}

export function refresh(server: RunningServer, app: ConfidentialApp, refreshToken: string, extra: Record<string, string> = {}): Promise<TokenCall> {
  return postToken(
    server.oauthUrl,
    { grant_type: 'refresh_token', refresh_token: refreshToken, ...extra },
    { authorization: basic(app.clientId, app.secret) },
  );
}

/** Runs authorize → login → consent (Allow) with the given authorize parameters; returns the app's redirect. */
export async function authorize(
  server: RunningServer,
  params: Record<string, string | undefined>,
  user: { sub: string; password: string } = alice,
  agent = new UserAgent(server.baseUrl),
): Promise<{ step: Step; back: URL | undefined; agent: UserAgent }> {
  const query = new URLSearchParams(Object.entries(params).filter((entry): entry is [string, string] => entry[1] !== undefined));
  let step: Step = await agent.request(`${server.oauthUrl}/authorize?${query}`);
  if (!step.location && step.html.includes('name="password"')) step = await agent.submit(step, { username: user.sub, password: user.password });
  if (!step.location && step.html.includes('value="allow"')) step = await agent.submit(step, { decision: 'allow' });
  return { step, back: step.location ? new URL(step.location) : undefined, agent };
}

/** Signs in with a PKCE challenge of our choosing (or none); returns the code. */
export async function codeWith(
  server: RunningServer,
  app: PublicApp,
  pkce: { challenge?: string; method?: string } = {},
  scope = 'openid scim.read',
): Promise<string> {
  const { back, step } = await authorize(server, {
    response_type: 'code', client_id: app.clientId, redirect_uri: app.redirectUri, scope, state: 's',
    code_challenge: pkce.challenge, code_challenge_method: pkce.challenge === undefined ? undefined : (pkce.method ?? 'S256'),
  });
  const code = back?.searchParams.get('code');
  if (!code) throw new Error(`no code (status ${step.status}, location ${step.location ?? '-'})`);
  return code;
}

export { pkcePair };

// What the engine stored: read through its own models (works for both stores).

type Found = { grantId?: string; consumed?: unknown } | undefined;
type Finder = { find(value: string, options?: { ignoreExpiration?: boolean }): Promise<Found> };

function model(server: RunningServer, name: 'AuthorizationCode' | 'RefreshToken' | 'Grant'): Finder {
  return (server.auth.provider as unknown as Record<string, Finder>)[name]!;
}

export async function storedCode(server: RunningServer, code: string): Promise<Found> {
  return model(server, 'AuthorizationCode').find(code, { ignoreExpiration: true });
}

export async function storedRefreshToken(server: RunningServer, refreshToken: string): Promise<Found> {
  return model(server, 'RefreshToken').find(refreshToken, { ignoreExpiration: true });
}

export async function grantExists(server: RunningServer, grantId: string): Promise<boolean> {
  return (await model(server, 'Grant').find(grantId, { ignoreExpiration: true })) !== undefined;
}

/** The grant a code belongs to, read before the code is used. */
export async function grantOfCode(server: RunningServer, code: string): Promise<string> {
  const stored = await storedCode(server, code);
  if (!stored?.grantId) throw new Error('code not stored');
  return stored.grantId;
}

/** POST to the token endpoint with exactly these bytes and headers (no content type added). */
export async function rawPost(
  server: RunningServer,
  body: RequestInit['body'] | undefined,
  headers: Record<string, string> = {},
  method = 'POST',
  query?: string,
): Promise<TokenCall> {
  const streamed = typeof ReadableStream !== 'undefined' && body instanceof ReadableStream;
  const response = await fetch(`${server.oauthUrl}/token${query === undefined ? '' : `?${query}`}`, {
    method,
    headers,
    ...(body !== undefined ? { body } : {}),
    ...(streamed ? { duplex: 'half' } : {}),
  } as RequestInit);
  return tokenCallOf(response);
}

export const FORM = { 'content-type': 'application/x-www-form-urlencoded' } as const;

/** Runs `fn` with the server's clock (Date.now, same process) moved forward by `offsetMs`. */
export async function withClockMoved<T>(offsetMs: number, fn: () => Promise<T>): Promise<T> {
  const realNow = Date.now.bind(Date);
  const spy = jest.spyOn(Date, 'now').mockImplementation(() => realNow() + offsetMs);
  try {
    return await fn();
  } finally {
    spy.mockRestore();
  }
}
