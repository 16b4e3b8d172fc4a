import type { Client, KoaContextWithOIDC, ResourceServer } from 'oidc-provider';

/** An access token as the engine hands it to `extraTokenClaims` and the JWT customizer. */
export interface EngineAccessToken {
  kind: string;
  scope?: string | undefined;
  accountId?: string | undefined;
}

/**
 * What the engine configuration asks of the grant a request is of (src/grants implements it):
 * the engine's hooks are the same for every grant, and each hook asks the request's grant.
 */
export interface EngineGrantHooks {
  /** The resource server of a token this request issues: its scopes, lifetime and format (RFC 8707). */
  resource(ctx: KoaContextWithOIDC, client: Client): Promise<ResourceServer>;
  /** An access token's own claims, besides the standard ones. */
  claims(ctx: KoaContextWithOIDC, token: EngineAccessToken): Promise<Record<string, unknown> | undefined>;
  /** The JWT access token's payload, last touch before it is signed. */
  customizeJwt?(ctx: KoaContextWithOIDC, token: EngineAccessToken, jwt: { payload: Record<string, unknown> }): void;
}

/** The grants of the server, as the engine configuration looks them up. */
export interface EngineGrants {
  /** The grant an engine request is of: by its `grant_type`; the authorization request is the code's. */
  of(ctx: KoaContextWithOIDC): EngineGrantHooks;
  /** Whether a client gets refresh tokens (the engine's `issueRefreshToken`). */
  issuesRefreshTokens(client: Client): boolean;
}
