import { checkClientAuthentication, type BasicCredentials } from '../../policies/client-authentication.js';
import { InvalidRequest, UnsupportedGrantType } from '../../policies/errors.js';
import type { Client, KoaContextWithOIDC } from 'oidc-provider';
import type { EngineGrants } from '../engine/grants.js';
import { authorizationCode, authorizationCodeGrant } from './authorization-code.js';
import { clientCredentials, clientCredentialsGrant } from './client-credentials.js';
import { checkParameterSet, type Grant, type GrantSetup, type TokenRequestRule } from './grant.js';
import { issuesRefreshTokens, refreshToken, refreshTokenGrant } from './refresh-token.js';

/**
 * THE GRANTS the token endpoint has, one module each: client_credentials (machine clients),
 * authorization_code and refresh_token (apps acting for a user; named-user.ts holds what their
 * tokens carry). Any other `grant_type` is unsupported_grant_type.
 */
export const GRANTS: ReadonlyMap<string, TokenRequestRule> = new Map(
  [clientCredentials, authorizationCode, refreshToken].map((rule) => [rule.grantType, rule]),
);

/**
 * A token request against its grant's rules, before the engine sees it: the grant type, the
 * client authentication and the parameter set. `basicCredentials` reads the Authorization header
 * (once: it is shared with the failed-authentication limit), after the body is known to carry no secret.
 * @returns the grant type.
 * @throws InvalidRequest, UnsupportedGrantType, InvalidClient.
 */
export function checkTokenRequest(params: ReadonlyMap<string, string>, basicCredentials: () => BasicCredentials | undefined): string {
  const grantType = params.get('grant_type');
  if (grantType === undefined) throw new InvalidRequest(`missing required parameter 'grant_type'`);
  const rule = GRANTS.get(grantType);
  if (!rule) throw new UnsupportedGrantType();
  const credentials = checkClientAuthentication(rule.clientAuthentication, basicCredentials, params);
  checkParameterSet(rule, params, credentials === undefined);
  return grantType;
}

/**
 * The request as the engine is to see it (the grant's `normalize`, if it has one): true when the
 * parameters changed, and the body must be encoded again.
 */
export function normalizeTokenRequest(grantType: string, params: Map<string, string>): boolean {
  return GRANTS.get(grantType)?.normalize?.(params) === true;
}

/**
 * The grants, whole, as the engine configuration and the token endpoint look them up: by
 * `grant_type`; the authorization request (no `grant_type`) is the authorization code's.
 */
export class GrantTable implements EngineGrants {
  readonly #grants: ReadonlyMap<string, Grant>;
  readonly #authorization: Grant;

  constructor(setup: GrantSetup) {
    const grants = [clientCredentialsGrant(setup), authorizationCodeGrant(setup), refreshTokenGrant(setup)];
    this.#grants = new Map(grants.map((grant) => [grant.grantType, grant]));
    this.#authorization = this.#grants.get('authorization_code')!;
  }

  /** The grant of `grantType`, if the token endpoint has it. */
  get(grantType: string): Grant | undefined {
    return this.#grants.get(grantType);
  }

  of(ctx: KoaContextWithOIDC): Grant {
    const grantType = ctx.oidc.params?.grant_type;
    return (typeof grantType === 'string' ? this.#grants.get(grantType) : undefined) ?? this.#authorization;
  }

  issuesRefreshTokens(client: Client): boolean {
    return issuesRefreshTokens(client);
  }
}
