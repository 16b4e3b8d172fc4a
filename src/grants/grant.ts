import type { Context } from 'koa';
import type { ResourceServer } from 'oidc-provider';
import type { AccountStore } from '../accounts.js';
import type { ApiCatalog } from '../../policies/catalog.js';
import type { ClientAuthentication } from '../../policies/client-authentication.js';
import { InvalidRequest } from '../../policies/errors.js';
import type { TenantPolicyFunction } from '../../policies/tenant-policy.js';
import type { EngineGrantHooks } from '../engine/grants.js';
import type { SingleUse } from '../engine/single-use.js';
import type { SecondFactorRules } from '../records/tenant-settings.js';

/** What a token request of one grant type must and must not carry, and how its client authenticates. */
export interface TokenRequestRule {
  /** The `grant_type` value. */
  readonly grantType: string;
  /** `basic`: HTTP Basic only; `basic-or-none`: Basic (confidential app) or `client_id` alone (public app). */
  readonly clientAuthentication: ClientAuthentication;
  /** Parameters every request of the grant carries. */
  readonly required: readonly string[];
  /** Parameters a public client's request carries besides (it has no secret to prove anything with). */
  readonly requiredOfPublicClients: readonly string[];
  /** Optional parameters the grant takes. */
  readonly accepted: readonly string[];
  /** Parameters of other grants: sending one is a wrong parameter set, not something to ignore. */
  readonly foreign: readonly string[];
  /**
   * The request as the engine is to see it, when the grant reads a parameter otherwise than the
   * engine does; changes `params` in place and answers true when it changed something.
   */
  readonly normalize?: (params: Map<string, string>) => boolean;
}

/**
 * A GRANT, whole: its token request's rule (parameters, client authentication), what the engine
 * asks of it (scopes and lifetime at the resource, claims, the token's last touch), and what
 * happens once it answered with tokens. One module per grant builds one (src/grants/*.ts).
 */
export interface Grant extends TokenRequestRule, EngineGrantHooks {
  /** After the token endpoint answered with tokens (a code confirmed, a grant extended, the answer's scope). */
  afterIssue?(ctx: Context): Promise<void>;
  /** After the token endpoint answered with an error, not a 503 (a code used up all the same). */
  afterRefusal?(ctx: Context): Promise<void>;
}

/** What the grants are built with (src/server.ts composes it). */
export interface GrantSetup {
  catalog: ApiCatalog;
  /** The one resource (audience) of every access token. */
  audience: string;
  /** The access tokens' format at the resource: JWT, signed with the access-token key. */
  accessTokenFormat: Pick<ResourceServer, 'accessTokenFormat' | 'jwt'>;
  tenantPolicy: TenantPolicyFunction | undefined;
  accounts: AccountStore | undefined;
  /** Named-user access-token lifetime (before the tenant's and the management cap). */
  namedUserAccessTokenTtl: number;
  /** How long an unused grant lives; a refresh gives it this long again. */
  grantIdleSeconds: number;
  /** Single use of codes and refresh tokens (src/engine/single-use.ts). */
  singleUse: SingleUse;
  /** Each tenant's second-factor rule (the management right only after a second factor where it asks for one). */
  secondFactorRules: SecondFactorRules;
}

/**
 * The parameter set of a token request against its grant's rule. A parameter that no grant
 * defines is ignored (RFC 6749 §3.1: unrecognized request parameters are ignored); one of another
 * grant is refused, since it says the client meant something else.
 * @throws InvalidRequest naming the first missing or foreign parameter.
 */
export function checkParameterSet(rule: TokenRequestRule, params: ReadonlyMap<string, string>, publicClient: boolean): void {
  const required = publicClient ? [...rule.required, ...rule.requiredOfPublicClients] : rule.required;
  for (const name of required) {
    if (!params.has(name)) throw new InvalidRequest(`missing required parameter '${name}'`);
  }
  const wrong = rule.foreign.find((name) => params.has(name));
  if (wrong !== undefined) throw new InvalidRequest(`parameter '${wrong}' does not belong to grant_type ${rule.grantType}`);
}
