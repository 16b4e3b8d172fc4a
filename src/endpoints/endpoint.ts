import type Koa from 'koa';
import type { Connections } from '../federation/connections.js';
import type { Upstreams } from '../federation/upstreams.js';
import type { SignedInThroughStore } from '../federation/signed-in-through.js';
import type { SignedOutUsers } from '../records/signed-out-users.js';
import type Provider from 'oidc-provider';
import type { Store } from '../../adapters/types.js';
import type { ApiCatalog } from '../../policies/catalog.js';
import type { TenantPolicyFunction } from '../../policies/tenant-policy.js';
import type { AccountStore, TenantDisplayName } from '../accounts.js';
import type { AuditEventType, AuditTrail } from '../audit/trail.js';
import type { EngineClient } from '../engine/client-cache.js';
import type { LiveTokens } from '../engine/live-tokens.js';
import type { GrantTable } from '../grants/index.js';
import type { Json } from '../http/openapi-parts.js';
import type { RouteHandler } from '../http/router.js';
import type { RouteDefinition } from '../http/routes.js';
import type { Localizer } from '../i18n/localizer.js';
import type { WindowLimit } from '../limits/window-limits.js';
import type { FailedClientAuthLimits } from '../limits/client-auth.js';
import type { SignInHolds } from '../limits/sign-in.js';
import type { Logger } from '../logger.js';
import type { Metrics } from '../observability/metrics.js';
import type { Tracing } from '../observability/tracing.js';
import type { Brands } from '../pages/branding.js';
import type { AppRegistrations } from '../records/app-registrations.js';
import type { ClientConfigurations } from '../records/client-configurations.js';
import type { Consents } from '../records/consents.js';
import type { Factors } from '../factors/index.js';
import type { Passkeys } from '../factors/passkeys.js';
import type { SecondFactorRules, TenantSettings } from '../records/tenant-settings.js';
import type { TokenVerifier } from '../resource-server/verifier.js';

/** Where the server's paths are: `{prefix}`, `{prefix}/oauth2` (the engine's), `{prefix}/api/oauth2` (our APIs'). */
export interface EndpointPaths {
  prefix: string;
  oauth: string;
  api: string;
}

/** The paths of a server with `pathPrefix`. */
export function endpointPaths(pathPrefix: string): EndpointPaths {
  return { prefix: pathPrefix, oauth: `${pathPrefix}/oauth2`, api: `${pathPrefix}/api/oauth2` };
}

/** The settings the endpoints read (the server's resolved options hold them). */
export interface EndpointSettings {
  issuer: string;
  baseUrl: string;
  pathPrefix: string;
  audience: string;
  accounts?: AccountStore | undefined;
  tenantPolicy?: TenantPolicyFunction | undefined;
  tenantDisplayName?: TenantDisplayName | undefined;
  limits: { tokenRequestBytes: number; apiRequestBytes: number; formRequestBytes: number; authorizeQueryBytes: number };
  rateLimits: {
    failedClientAuth: FailedClientAuthLimits | false;
    authorize: WindowLimit | false;
    failedSignIn: false | { perUsername: WindowLimit; perAddress: WindowLimit };
    /** Passkey ceremonies the sign-in pages start per address (src/limits/passkey-ceremonies.ts). */
    passkeySignIn: WindowLimit | false;
  };
  observability: { health: boolean; metrics: boolean };
}

/** The engine, as the endpoints use it. */
export interface EngineParts {
  provider: Provider;
  /** The engine mounted at `{prefix}/oauth2`: the endpoints it answers go on to it. */
  serve: Koa.Middleware;
  grants: GrantTable;
  liveTokens: LiveTokens;
  /** Our own APIs' verifier: live tokens only (src/engine/live-tokens.ts). */
  ownApis: TokenVerifier;
  findClient(clientId: string): Promise<EngineClient | undefined>;
  /** The sign-in pages' path, where the engine sends browsers. */
  interactionPath: string;
}

/** What every endpoint module's handlers are built from (src/server.ts composes it). */
export interface ServerParts {
  settings: EndpointSettings;
  logger: Logger;
  metrics: Metrics | undefined;
  /** The spans of requests, the engine's token issuance, store and outgoing calls (off: NO_TRACING). */
  tracing: Tracing;
  store: Store;
  audit: AuditTrail;
  catalog: ApiCatalog;
  cookieKeys: string[];
  look: { localizer: Localizer; brands: Brands };
  /** A request's source address (the rate limits', the audit trail's). */
  addressOf(ctx: Koa.Context): string;
  /** The address our APIs record: the browser's when the portal states it (signed), else the request's. */
  apiAddressOf(ctx: Koa.Context): string;
  clients: ClientConfigurations;
  apps: AppRegistrations;
  consents: Consents;
  holds: SignInHolds;
  /** The users' second factors (src/factors/). */
  factors: Factors;
  /** The users' passkeys (src/factors/passkeys.ts): the relying party pinned to `baseUrl`. */
  passkeys: Passkeys;
  /** The tenants' own settings (their admins', through the management API). */
  tenantSettings: TenantSettings;
  /** Each tenant's second-factor rule: the host's policy combined with the tenant's settings. */
  secondFactorRules: SecondFactorRules;
  /** The tenants' identity providers (src/federation/connections.ts). */
  connections: Connections;
  /** Our relying party at those providers (src/federation/upstreams.ts). */
  upstreams: Upstreams;
  /** The provider each user last signed in through (for the provider's sign-out). */
  signedInThrough: SignedInThroughStore;
  /** When each user was signed out everywhere ("the user left": src/records/user-sign-out.ts). */
  signedOutUsers: SignedOutUsers;
  engine: EngineParts;
}

/**
 * AN ENDPOINT MODULE: what it serves and how (its rows of the route table and their handlers),
 * what it documents (its operations of the OpenAPI document) and what it records (the audit event
 * types its handlers write). The route table, the OpenAPI document and the server are their
 * composition (src/endpoints/index.ts, src/server.ts).
 */
export interface EndpointModule<Name extends string = string> {
  /** Its rows of the route table. */
  routes(paths: EndpointPaths): Array<RouteDefinition & { name: Name }>;
  /** Its operations of the OpenAPI document, by route (its documented rows). */
  operations(): Partial<Record<Name, Json>>;
  /** The audit event types its handlers write. */
  audits: readonly AuditEventType[];
  /** Its handlers, by route (a route without one goes on to the engine). */
  handlers(parts: ServerParts): Partial<Record<Name, RouteHandler>>;
}

/** A row of the route table, with the defaults of ours (exact match, JSON 405, not documented). */
export function row<Name extends string>(
  definition: Omit<RouteDefinition, 'name' | 'documented' | 'refuse' | 'match'> & Partial<RouteDefinition> & { name: Name },
): RouteDefinition & { name: Name } {
  return { match: 'exact', refuse: 'json', documented: [], ...definition };
}

/** What the engine's own rows share: matched as the engine matches, other methods left to it. */
export const ENGINE_ROW = { match: 'engine', refuse: 'engine' } as const;

/** GET, and HEAD with it. */
export const GET: readonly string[] = ['GET', 'HEAD'];
