import { createHmac } from 'node:crypto';
import type { SignedOutUsers } from '../records/signed-out-users.js';
import type Koa from 'koa';
import mount from 'koa-mount';
import Provider from 'oidc-provider';
import type { Store } from '../../adapters/types.js';
import type { ApiCatalog } from '../../policies/catalog.js';
import { refreshTokenPresentedAgain } from '../audit/events.js';
import type { AuditTrail } from '../audit/trail.js';
import { DeliveryError } from '../engine/backchannel-delivery.js';
import { ClientLookups } from '../engine/client-cache.js';
import { ClientDirectory } from '../engine/client-directory.js';
import { engineConfiguration } from '../engine/configuration.js';
import type { LiveKeys } from '../engine/live-keys.js';
import { createLocalJWKSet } from 'jose';
import { liveOnly, LiveTokens } from '../engine/live-tokens.js';
import { followKeys, patchEngine } from '../engine/patches.js';
import { engineRequest } from '../engine/request.js';
import { atomicReplayDetection } from '../engine/replay-detection.js';
import { RevokedChains } from '../engine/revoked-chains.js';
import type { SignOutLook } from '../engine/sign-out.js';
import { SingleUse, type RefreshTokenUse } from '../engine/single-use.js';
import type { EngineParts } from '../endpoints/endpoint.js';
import { GrantTable } from '../grants/index.js';
import type { Logger } from '../logger.js';
import type { Metrics } from '../observability/metrics.js';
import type { Tracing } from '../observability/tracing.js';
import type { ResolvedOptions } from '../options.js';
import type { Consents } from '../records/consents.js';
import type { SecondFactorRules } from '../records/tenant-settings.js';
import { verifierWithKeys } from '../resource-server/verifier.js';

/** What the engine is started with. */
export interface EngineStart {
  options: ResolvedOptions;
  logger: Logger;
  metrics: Metrics | undefined;
  tracing: Tracing;
  store: Store;
  catalog: ApiCatalog;
  audit: AuditTrail;
  consents: Consents;
  cookieKeys: string[];
  /** Our signing keys as they are now (src/engine/live-keys.ts). */
  keys: LiveKeys;
  look: SignOutLook;
  addressOf(ctx: Koa.Context): string;
  /** Each tenant's second-factor rule: the management right only after a second factor where it asks for one. */
  secondFactorRules: SecondFactorRules;
  /** Users signed out everywhere (src/records/signed-out-users.ts). */
  signedOutUsers?: SignedOutUsers;
}

/** The engine, started: what the endpoints use, and the client cache the store guard reads. */
export interface StartedEngine extends EngineParts {
  knownClients: ClientLookups;
}

/**
 * The engine (node-oidc-provider) with everything of ours around it: the grants, single use with
 * its audit events, the patches, the live-token checks of our APIs, and the engine's events
 * counted and logged (never with request data).
 */
export function startEngine(start: EngineStart): StartedEngine {
  const { options, logger, metrics, store, catalog, audit, consents, cookieKeys, keys, look } = start;
  const interactionPath = `${options.pathPrefix}/oauth2/interaction`;
  /** A rotated refresh token presented again, recorded in the trail of its user's tenant. */
  const presentedAgain = (type: 'refresh_token.reuse_detected' | 'refresh_token.retried') => (token: RefreshTokenUse): void => {
    const request = engineRequest() as unknown as Koa.Context | undefined;
    const address = request ? start.addressOf(request) : undefined;
    void (async () => {
      const account = token.accountId && options.accounts ? await options.accounts.findAccount(token.accountId).catch(() => undefined) : undefined;
      audit.recordLater(refreshTokenPresentedAgain(type, token, account?.tenant, address));
    })();
  };
  const revokedChains = new RevokedChains(store.records);
  const singleUse = new SingleUse(store, {
    onReuse: presentedAgain('refresh_token.reuse_detected'),
    onRetry: presentedAgain('refresh_token.retried'),
    reuseWindowSeconds: options.refreshTokenReuseWindowSeconds,
    revokedChains,
    successorKey: createHmac('sha256', cookieKeys[0]!).update('talent-auth refresh token successors').digest(),
  });
  const grants = new GrantTable({
    catalog,
    audience: options.audience,
    accessTokenFormat: keys.accessTokenFormat(options.accessTokenAlgorithm),
    tenantPolicy: options.tenantPolicy,
    accounts: options.accounts,
    namedUserAccessTokenTtl: options.namedUserAccessTokenTtl,
    grantIdleSeconds: options.grantIdleSeconds,
    singleUse,
    secondFactorRules: start.secondFactorRules,
  });
  // Each client's metadata carries its tenant's security profile (policies/high-security.ts).
  const clients = new ClientDirectory(store.records, (tenant) => start.secondFactorRules.profile(tenant));
  const provider = new Provider(
    options.issuer,
    engineConfiguration({ options, catalog, store, clients, keys, interactionPath, cookieKeys, consents, look, grants, singleUse, secondFactorRules: start.secondFactorRules, signedOutUsers: start.signedOutUsers, tracing: start.tracing,
      // Derived from the cookie keys as the other secrets every instance shares (32 bytes: the engine's requirement).
      dpopNonceSecret: createHmac('sha256', cookieKeys[0]!).update('talent-auth DPoP nonces').digest() }),
  );
  provider.proxy = options.proxy;
  const knownClients = new ClientLookups(store.records);
  patchEngine(provider, { clients: knownClients, singleUse });
  atomicReplayDetection(provider, store);
  observeEngine(provider, logger, metrics);

  followKeys(provider, keys);
  // Our own APIs verify with the key set as it is now (rebuilt only when it changes).
  let ownKeySet = createLocalJWKSet(keys.publicJwks);
  keys.onChange(() => {
    ownKeySet = createLocalJWKSet(keys.publicJwks);
  });
  const ownTokens = verifierWithKeys({ issuer: options.issuer, audience: options.audience, realm: options.issuer }, (header, token) => ownKeySet(header, token));
  const findClient = (clientId: string) => provider.Client.find(clientId);
  const liveTokens = new LiveTokens(ownTokens, store, findClient, revokedChains);
  return {
    provider,
    serve: mount(`${options.pathPrefix}/oauth2`, provider),
    grants,
    liveTokens,
    ownApis: liveOnly(ownTokens, liveTokens),
    findClient,
    interactionPath,
    knownClients,
  };
}

/** The engine's events: errors logged by class, back-channel deliveries and tokens counted. */
function observeEngine(provider: Provider, logger: Logger, metrics: Metrics | undefined): void {
  // Only the error's class: engine and socket errors can quote request data.
  provider.on('server_error', (_ctx: unknown, error: Error) => logger.error('engine error', { error: error.name }));
  // Back-channel logout (src/engine/backchannel-delivery.ts): each one that did not arrive is
  // logged with the app, the host and why (never the token, its sid or the user); all are counted.
  provider.on('backchannel.success', () => metrics?.backchannelLogouts.inc({ outcome: 'delivered' }));
  provider.on('backchannel.error', (_ctx: unknown, error: Error & { response?: { status?: number } }, client: { clientId: string; backchannelLogoutUri?: string }) => {
    const host = URL.parse(client.backchannelLogoutUri ?? '')?.host ?? '';
    const outcome = error instanceof DeliveryError ? error.failure : error.response ? 'rejected' : 'error';
    const detail = error instanceof DeliveryError ? error.detail : error.response ? `${host} answered ${String(error.response.status)}` : error.name;
    metrics?.backchannelLogouts.inc({ outcome });
    logger.warn('back-channel logout not delivered', { client_id: client.clientId, host, outcome, detail });
  });
  if (metrics) {
    provider.on('grant.success', (ctx: { oidc?: { params?: { grant_type?: unknown } } }) => {
      metrics.tokensIssued.inc({ grant_type: String(ctx.oidc?.params?.grant_type ?? 'unknown') });
    });
  }
}
