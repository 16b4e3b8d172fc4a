import type { PortalSession } from './sessions.js';

/*
 * The portal is a client of our HTTP APIs like any other: it gets tokens at the token endpoint
 * with its own client ID and secret and calls the management and consent APIs with the user's
 * access token, so it can do nothing the APIs would not let that user do.
 */

/** An answer of the management or consent API. */
export interface ApiAnswer {
  status: number;
  body: Record<string, unknown>;
}

/** The user's sign-in has ended (the refresh token no longer works): sign in again. */
export class SignedOut extends Error {}

/** The `scope` claim of one of our JWT access tokens ('' when it has none). */
function scopeClaimOf(jwt: string): string {
  try {
    const payload = JSON.parse(Buffer.from(jwt.split('.')[1] ?? '', 'base64url').toString('utf8')) as { scope?: unknown };
    return typeof payload.scope === 'string' ? payload.scope : '';
  } catch {
    return '';
  }
}

/** Refresh the access token this long before it expires. */
const TOKEN_MARGIN_MS = 30_000;
const TIMEOUT_MS = 10_000;

/** Token-endpoint and API calls of the portal. */
export class PortalApiClient {
  /** Refreshes under way per refresh token: tokens rotate, so two parallel refreshes would end the grant. */
  private readonly refreshing = new Map<string, Promise<Record<string, unknown>>>();

  constructor(
    /** `{url}{pathPrefix}`: where the token endpoint and the APIs are reached from this server. */
    private readonly base: string,
    private readonly clientId: string,
    private readonly clientSecret: string,
    /** Headers for every API call of the request being answered (the user's address). */
    private readonly extraHeaders: () => Record<string, string> = () => ({}),
  ) {}

  /** A token request with the portal's credentials (HTTP Basic); the answer's JSON. */
  async token(fields: Record<string, string>): Promise<Record<string, unknown>> {
    const response = await fetch(`${this.base}/oauth2/token`, {
      method: 'POST',
      headers: {
        authorization: `Basic ${Buffer.from(`${encodeURIComponent(this.clientId)}:${encodeURIComponent(this.clientSecret)}`).toString('base64')}`,
        'content-type': 'application/x-www-form-urlencoded',
        accept: 'application/json',
      },
      body: new URLSearchParams(fields).toString(),
      signal: AbortSignal.timeout(TIMEOUT_MS),
    });
    return (await response.json().catch(() => ({}))) as Record<string, unknown>;
  }

  /** Revokes a token of the portal's (RFC 7009): a refresh token ends its grant. */
  async revoke(token: string): Promise<void> {
    await fetch(`${this.base}/oauth2/revoke`, {
      method: 'POST',
      headers: {
        authorization: `Basic ${Buffer.from(`${encodeURIComponent(this.clientId)}:${encodeURIComponent(this.clientSecret)}`).toString('base64')}`,
        'content-type': 'application/x-www-form-urlencoded',
      },
      body: new URLSearchParams({ token, token_type_hint: 'refresh_token' }).toString(),
      signal: AbortSignal.timeout(TIMEOUT_MS),
    });
  }

  /**
   * Keeps the tokens of a token response in the session, with the scopes the access token was
   * granted (the answer's `scope`, RFC 6749 §5.1): what the portal may ask the APIs for.
   */
  static keep(session: PortalSession, tokens: Record<string, unknown>): void {
    if (typeof tokens.access_token !== 'string') return;
    session.accessToken = tokens.access_token;
    session.accessTokenExpires = Date.now() + (typeof tokens.expires_in === 'number' ? tokens.expires_in : 300) * 1000;
    session.scopes = (typeof tokens.scope === 'string' ? tokens.scope : scopeClaimOf(tokens.access_token)).split(' ').filter(Boolean);
    if (typeof tokens.refresh_token === 'string') session.refreshToken = tokens.refresh_token;
  }

  /**
   * The scopes of the session's live access token (refreshed first when it is about to expire: a
   * permission withdrawn meanwhile is gone from the new one). @throws SignedOut
   */
  async grantedScopes(session: PortalSession): Promise<ReadonlySet<string>> {
    const token = await this.accessToken(session);
    return new Set(session.scopes ?? scopeClaimOf(token).split(' ').filter(Boolean));
  }

  /** A live access token for the session, refreshed when it is about to expire. @throws SignedOut */
  private async accessToken(session: PortalSession): Promise<string> {
    if (session.accessToken && (session.accessTokenExpires ?? 0) - TOKEN_MARGIN_MS > Date.now()) return session.accessToken;
    const refreshToken = session.refreshToken;
    if (!refreshToken) throw new SignedOut();
    let refresh = this.refreshing.get(refreshToken);
    if (!refresh) {
      refresh = this.token({ grant_type: 'refresh_token', refresh_token: refreshToken }).finally(() => this.refreshing.delete(refreshToken));
      this.refreshing.set(refreshToken, refresh);
    }
    const tokens = await refresh;
    if (typeof tokens.access_token !== 'string') throw new SignedOut();
    PortalApiClient.keep(session, tokens);
    return session.accessToken!;
  }

  /** Calls `{base}/api/oauth2/{path}` as the session's user. @throws SignedOut */
  async call(session: PortalSession, method: string, path: string, body?: unknown): Promise<ApiAnswer> {
    const send = async (token: string) => fetch(`${this.base}/api/oauth2/${path}`, {
      method,
      headers: {
        authorization: `Bearer ${token}`,
        accept: 'application/json',
        ...this.extraHeaders(),
        ...(body !== undefined ? { 'content-type': 'application/json' } : {}),
      },
      ...(body !== undefined ? { body: JSON.stringify(body) } : {}),
      signal: AbortSignal.timeout(TIMEOUT_MS),
    });
    let response = await send(await this.accessToken(session));
    if (response.status === 401) {
      // Revoked or expired early: one refresh, then give up.
      delete session.accessToken;
      response = await send(await this.accessToken(session));
      if (response.status === 401) throw new SignedOut();
    }
    const text = await response.text();
    let parsed: unknown = {};
    try {
      parsed = text ? JSON.parse(text) : {};
    } catch {
      parsed = {};
    }
    return { status: response.status, body: typeof parsed === 'object' && parsed !== null ? (parsed as Record<string, unknown>) : {} };
  }
}

/** The API's `error_description` (and field), or the status. */
export function reasonOf(answer: ApiAnswer): string {
  const description = typeof answer.body.error_description === 'string' ? answer.body.error_description : undefined;
  return description ?? (typeof answer.body.error === 'string' ? answer.body.error : `HTTP ${answer.status}`);
}

/** A validation error's description without the wire field name it starts with (the page shows it at the field). */
export function fieldMessage(answer: ApiAnswer, field: string): string {
  const description = reasonOf(answer);
  return field && description.startsWith(`${field}: `) ? description.slice(field.length + 2) : description;
}

/** The field a validation error names (`field` of the API's 400), or '' (the whole form). */
export function fieldOf(answer: ApiAnswer): string {
  return typeof answer.body.field === 'string' ? answer.body.field : '';
}

/** A list of an API answer, or [] when it did not answer with one. */
export function listOf<T>(answer: ApiAnswer | undefined, key: string): T[] {
  return answer?.status === 200 && Array.isArray(answer.body[key]) ? answer.body[key] as T[] : [];
}
