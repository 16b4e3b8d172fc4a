import { createHmac, randomBytes } from 'node:crypto';
import Koa from 'koa';
import mount from 'koa-mount';
import Provider, { type KoaContextWithOIDC } from 'oidc-provider';
import type { Registry } from 'prom-client';
import { createMemoryStore } from '../adapters/memory.js';
import { createRedisStore } from '../adapters/redis/index.js';
import type { Store } from '../adapters/types.js';
import { ApiCatalog } from '../policies/catalog.js';
import { ValidationError } from '../policies/errors.js';
import { createLogger, type Logger } from './logger.js';
import { Metrics } from './observability/metrics.js';
import { resolveOptions, type AuthServerOptions, type ResolvedOptions } from './options.js';
import { ClientLookups } from './engine/client-cache.js';
import { DeliveryError } from './engine/backchannel-delivery.js';
import { patchEngine } from './engine/patches.js';
import { engineRequest } from './engine/request.js';
import { appRegistrationMetadata, ClientDirectory } from './engine/client-directory.js';
import { SingleUse, type RefreshTokenUse } from './engine/single-use.js';
import { RevokedChains } from './engine/revoked-chains.js';
import { AppRegistrations } from './records/app-registrations.js';
import { Consents, type Consent, type ConsentKey } from './records/consents.js';
import { interactionHandlers } from './endpoints/sign-in/pages.js';
import { engineConfiguration } from './engine/configuration.js';
import { accessTokenFormat, publicJwks, resolveSigningKeys, type SigningAlgorithm } from './engine/keys.js';
import { GrantTable } from './grants/index.js';
import { ClientConfigurations } from './records/client-configurations.js';
import { metadataAliasHandler, publicDocuments } from './endpoints/ops/discovery.js';
import { oauthErrors } from './http/oauth-errors.js';
import { tokenEndpointGuard } from './endpoints/token/token-endpoint.js';
import { publicAppCors } from './http/cors.js';
import { revocationHandler } from './endpoints/lifecycle/revocation.js';
import { introspectionHandler } from './endpoints/lifecycle/introspection.js';
import { userinfoHandler } from './endpoints/lifecycle/userinfo.js';
import { liveOnly, LiveTokens } from './engine/live-tokens.js';
import { Localizer, provideLocalizer } from './i18n/localizer.js';
import { Brands } from './pages/branding.js';
import { endSessionHandler } from './endpoints/sign-out/end-session.js';
import { Sealer } from './http/sealed.js';
import { tenantOfClient } from './endpoints/lifecycle/calling-client.js';
import { AuditTrail, OPERATOR, type AuditEventPage, type AuditQuery } from './audit/trail.js';
import { clientAuthRateLimited, refreshTokenPresentedAgain as refreshTokenPresentedAgainEvent, sessionEnded } from './audit/events.js';
import { engineRouteKey } from './http/engine-path.js';
import { failedClientAuthLimit } from './limits/client-auth.js';
import { clientAddress } from './http/client-address.js';
import { measureRequests } from './http/observability.js';
import { healthHandlers, metricsHandler } from './endpoints/ops/health.js';
import { refuseWhileStoreDown } from './http/store-availability.js';
import { consentHandlers } from './endpoints/consents/consent-api.js';
import { managementHandlers } from './endpoints/management/management-api.js';
import { openApiDocument, openApiHandler } from './http/openapi.js';
import { Router, type RouteHandler } from './http/router.js';
import { routeTable } from './http/routes.js';
import { createTokenVerifier } from './resource-server/verifier.js';
import { connectMiddleware, embeddingChecks, ownPaths, type ConnectMiddleware } from './http/embedding.js';
import { portalMiddleware, registerPortalApp } from './portal/index.js';
import { PortalSessions } from './portal/sessions.js';
import { OwnRecords } from './own-records.js';
import { ForwardedAddress, PORTAL_ADDRESS_HEADER } from './portal/address.js';
import type { PortalTextOverrides } from './portal/text.js';

/** How long a portal session lasts without use (its tokens are refreshed within it). */
const PORTAL_SESSION_SECONDS = 30 * 60;
import { cutStalledBodies } from './http/body-timeout.js';
import { browserRequestGuard } from './limits/browser-requests.js';
import { authorizeGuard } from './endpoints/sign-in/authorize.js';
import { SignInHolds, SignInThrottle, type SignInUnlockRequest, type SignInUnlockResult } from './limits/sign-in.js';

function cookieKeysOf(options: ResolvedOptions, logger: Logger): string[] {
  if (options.cookieKeys) return options.cookieKeys;
  logger.warn(
    'NO COOKIE KEYS CONFIGURED: generated a key for this process. Sign-in sessions end at restart and do '
      + 'not work across instances. Configure cookieKeys outside development.',
  );
  return [randomBytes(32).toString('base64url')];
}

/**
 * What the endpoints that take client credentials share (token, revocation, introspection, and
 * userinfo for CORS): CORS for the browser apps' origins, and the failed-authentication limit.
 */
function clientEndpoints(
  options: ResolvedOptions,
  store: Store,
  apps: AppRegistrations,
  addressOf: (ctx: Koa.Context) => string,
  logger: Logger,
  metrics: Metrics | undefined,
  clientRateLimited: (clientId: string | undefined, address: string) => Promise<void>,
) {
  const limits = options.rateLimits.failedClientAuth;
  const limiter = limits
    ? failedClientAuthLimit(store.counters, limits, addressOf, logger, ({ clientId, address, firstInWindow }) => {
      metrics?.rateLimited.inc({ limit: 'client_auth' });
      if (firstInWindow) void clientRateLimited(clientId, address);
    })
    : undefined;
  const cors = publicAppCors(() => apps.publicWebOrigins());
  return {
    /** The failed-authentication limit around a handler. */
    limited: (handler: RouteHandler): RouteHandler => (limiter ? (ctx, params, next) => limiter(ctx, () => handler(ctx, params, next)) : handler),
    /** CORS around a handler: public apps call it from their pages. */
    cors: (handler: RouteHandler): RouteHandler => (ctx, params, next) => cors(ctx, () => handler(ctx, params, next)),
  };
}

/**
 * The token endpoint's own middleware, in front of the engine: the request guard, then the engine,
 * then what the grant does after issuing. Straight on to the engine: nothing between the router
 * and it concerns a token request.
 */
function tokenEndpoint(engine: Koa.Middleware, options: ResolvedOptions, grants: GrantTable): RouteHandler {
  const guard = tokenEndpointGuard(options.limits.tokenRequestBytes, grants);
  return (ctx, _params, next) => guard(ctx, () => engine(ctx, next));
}

/** What a host may do with consents: list a user's, revoke one (same rules as the consent API). */
export interface ConsentsApi {
  list(key: ConsentKey): Promise<Consent[]>;
  revoke(key: ConsentKey & { clientId: string }): Promise<boolean>;
}

/** What the operator may do with sign-in throttling (docs/operations.md#sign-in-throttling). */
export interface SignInsApi {
  /**
   * Lifts a user's sign-in hold: clears the failed sign-ins counted for `username`, recorded as
   * `sign_in.unlocked` (actor `operator`) before it is done. With `tenant`, only a user of that
   * tenant is unlocked (the AccountStore's `findByUsername` tells whose she is; another tenant's or
   * an unknown username is answered `{ unlocked: false }` like one that is not held).
   * @throws ValidationError for an empty or overlong username, NotSupported for a `tenant` when the
   *   AccountStore has no `findByUsername`, StoreUnavailable when the store cannot be reached.
   */
  unlock(request: SignInUnlockRequest): Promise<SignInUnlockResult>;
}

/**
 * What `createAuthServer()` returns: the server to mount or listen with, and the services that
 * manage its records.
 */
export interface AuthServer {
  /** Koa application: mount it in a host app, or `auth.app.listen(port)`. */
  readonly app: Koa;
  /**
   * The same server as Express (Connect, plain `http`) middleware: requests for its paths are
   * served, every other request goes on to `next` (without `next`: 404). Mount it at the root:
   * `pathPrefix` adds the prefix.
   *
   * @example
   * ```ts
   * const host = express();
   * host.use(auth.middleware);   // before express.json() / express.urlencoded()
   * ```
   */
  readonly middleware: ConnectMiddleware;
  /** The oidc-provider instance, for advanced hooks. */
  readonly provider: Provider;
  readonly issuer: string;
  /** The `aud` of every access token: what resource servers verify. */
  readonly audience: string;
  readonly clientConfigurations: ClientConfigurations;
  readonly appRegistrations: AppRegistrations;
  readonly consents: ConsentsApi;
  /** The audit trail: one tenant's events (`tenant: null`: the platform's), newest first. */
  readonly audit: { list(query: AuditQuery): Promise<AuditEventPage> };
  /** Sign-in throttling: lift a user's hold (`signIns.unlock({ tenant?, username })`). */
  readonly signIns: SignInsApi;
  /**
   * The Prometheus registry when `observability.metrics` is on (also served at `{pathPrefix}/metrics`):
   * a host may serve it elsewhere, e.g. on an internal port.
   */
  readonly metrics: Registry | undefined;
  /** Closes the store connections. */
  close(): Promise<void>;
}

async function openStore(options: ResolvedOptions, logger: Logger, metrics: Metrics | undefined): Promise<Store> {
  if (options.store.type === 'memory') return createMemoryStore();
  const { type: _type, ...redis } = options.store;
  return createRedisStore({
    ...redis,
    // The code only: an error message could quote the URL, password included.
    onError: (error) => {
      const reason = error.code ?? error.name;
      metrics?.storeErrors.inc({ reason });
      logger.warn('redis connection error', { error: reason });
    },
    onWarning: (message) => logger.warn(message),
  });
}

/**
 * Creates the authorization server: validates the options (once, here), opens the store, loads or
 * generates the signing keys and wires the engine, the sign-in pages and the APIs.
 *
 * @throws TypeError naming the option when an option is invalid
 *   (`createAuthServer: invalid options: pathPrefix: ...`).
 * @throws Error when a key set has no private key for a needed algorithm, or a key is not private.
 * @throws StoreStartError when Redis cannot be reached, refuses the credentials or the database;
 *   its message names the host and port (never the password).
 *
 * @example
 * ```ts
 * const auth = await createAuthServer({
 *   baseUrl: 'https://platform.example.com',
 *   pathPrefix: '/auth2',
 *   store: { type: 'redis', url: process.env.REDIS_URL! },
 *   apis: [{ id: 'scim', name: 'User provisioning', scopes: { 'scim.read': 'Read users' } }],
 *   accounts,
 * });
 * host.use(mount(auth.app));
 * ```
 */
export async function createAuthServer(input: AuthServerOptions): Promise<AuthServer> {
  const options = resolveOptions(input);
  const logger = options.logger ?? createLogger();
  const metrics = options.observability.metrics ? new Metrics() : undefined;
  const catalog = new ApiCatalog(options.apis);
  // ID tokens are RS256 (OIDC's default) whatever the access-token algorithm is.
  const algorithms: SigningAlgorithm[] = [options.accessTokenAlgorithm, 'RS256'];
  const jwks = await resolveSigningKeys(options.keys?.jwks, algorithms, logger);
  const store = await openStore(options, logger, metrics);
  // What this server writes for itself at start, written again should the store be emptied.
  const ownRecords = new OwnRecords(store, logger, () => metrics?.storeEmptied.inc());
  const clients = new ClientDirectory(store.records);
  const audit = new AuditTrail(store, options.audit, logger, options.onAuditEvent);
  const consents = new Consents(store, catalog, audit);
  const cookieKeys = cookieKeysOf(options, logger);
  const oauthPath = `${options.pathPrefix}/oauth2`;
  const interactionPath = `${oauthPath}/interaction`;
  // The pages' languages and the tenants' branding (src/i18n/, src/pages/branding.ts).
  const localizer = new Localizer(options.i18n);
  const brands = new Brands(options.branding, logger);
  const look = { localizer, brands };

  /** A rotated refresh token presented again, in the trail of its user's tenant. */
  const refreshTokenPresentedAgain = (type: 'refresh_token.reuse_detected' | 'refresh_token.retried', token: RefreshTokenUse): void => {
    const request = engineRequest() as unknown as Koa.Context | undefined;
    const address = request ? addressOf(request) : undefined;
    void (async () => {
      const account = token.accountId && options.accounts ? await options.accounts.findAccount(token.accountId).catch(() => undefined) : undefined;
      audit.recordLater(refreshTokenPresentedAgainEvent(type, token, account?.tenant, address));
    })();
  };

  const revokedChains = new RevokedChains(store.records);
  const singleUse = new SingleUse(store, {
    // A refresh token reused (its grant ends: the engine, or single use) or retried: recorded.
    onReuse: (token) => refreshTokenPresentedAgain('refresh_token.reuse_detected', token),
    onRetry: (token) => refreshTokenPresentedAgain('refresh_token.retried', token),
    reuseWindowSeconds: options.refreshTokenReuseWindowSeconds,
    revokedChains,
    successorKey: createHmac('sha256', cookieKeys[0]!).update('talent-auth refresh token successors').digest(),
  });
  const grants = new GrantTable({
    catalog,
    audience: options.audience,
    accessTokenFormat: accessTokenFormat(jwks, options.accessTokenAlgorithm, algorithms),
    tenantPolicy: options.tenantPolicy,
    accounts: options.accounts,
    namedUserAccessTokenTtl: options.namedUserAccessTokenTtl,
    grantIdleSeconds: options.grantIdleSeconds,
    singleUse,
  });
  const provider = new Provider(
    options.issuer,
    engineConfiguration({ options, catalog, store, clients, jwks, algorithms, interactionPath, cookieKeys, consents, look, grants }),
  );
  provider.proxy = options.proxy;
  const knownClients = new ClientLookups(store.records);
  patchEngine(provider, { clients: knownClients, singleUse });

  const clientConfigurations = new ClientConfigurations(store.records, catalog, audit);
  const appRegistrations = new AppRegistrations(store.records, async (app) => {
    try {
      await provider.Client.validate(appRegistrationMetadata(app) as never);
    } catch (error) {
      const description = (error as { error_description?: string }).error_description ?? 'invalid app registration';
      const fields: Array<[string, string]> = [
        ['redirect_uris', 'redirectUris'],
        ['post_logout_redirect_uris', 'postLogoutRedirectUris'],
        ['backchannel_logout_uri', 'backchannelLogoutUri'],
        ['id_token_signed_response_alg', 'idTokenSigningAlg'],
      ];
      const field = fields.find(([engine]) => description.startsWith(engine))?.[1] ?? 'appRegistration';
      throw new ValidationError(field, description);
    }
  }, (clientId, by, reason) => consents.endAllOf(clientId, by, reason), audit);

  // Only the error's class: engine and socket errors can quote request data.
  provider.on('server_error', (_ctx: unknown, error: Error) => logger.error('engine error', { error: error.name }));
  // A sign-out: the session ended (src/engine/sign-out.ts). Recorded with its user and tenant.
  provider.on('end_session.success', (ctx: KoaContextWithOIDC) => {
    const accountId = ctx.oidc.session?.accountId;
    const clientId = ctx.oidc.client?.clientId;
    void (async () => {
      const account = accountId && options.accounts ? await options.accounts.findAccount(accountId).catch(() => undefined) : undefined;
      audit.recordLater(sessionEnded(accountId ? { sub: accountId, tenant: account?.tenant } : undefined, clientId, addressOf(ctx)));
    })();
  });
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
  const addressOf = clientAddress(options.proxy ? options.trustedProxyHops : 0);
  // The portal tells our APIs the browser's address (signed): theirs for the audit trail.
  const forwardedAddress = new ForwardedAddress(cookieKeys[cookieKeys.length - 1]!);
  const apiAddressOf = options.portal.enabled
    ? (ctx: Koa.Context) => forwardedAddress.verify(ctx.get(PORTAL_ADDRESS_HEADER) || undefined) ?? addressOf(ctx)
    : addressOf;
  const ownTokens = createTokenVerifier({
    issuer: options.issuer,
    audience: options.audience,
    jwks: publicJwks(jwks),
    realm: options.issuer,
  });
  const isFirstParty = async (clientId: string) => (await appRegistrations.get(clientId))?.firstParty === true;
  const engine = mount(oauthPath, provider);
  const findClient = (clientId: string) => provider.Client.find(clientId);
  const liveTokens = new LiveTokens(ownTokens, store, findClient, revokedChains);
  const ownApis = liveOnly(ownTokens, liveTokens);
  /** Failed client authentications past their limit: recorded in the tenant of the client they name, if any. */
  const clientRateLimited = async (clientId: string | undefined, address: string): Promise<void> => {
    const client = clientId ? await findClient(clientId).catch(() => undefined) : undefined;
    const tenant = client ? tenantOfClient(client) : undefined;
    const machine = client?.grantTypes?.includes('client_credentials') === true;
    audit.recordLater(clientAuthRateLimited(client ? { clientId: client.clientId, tenant, machine } : undefined, address));
  };
  const signInHolds = new SignInHolds(store.counters, cookieKeys, options.accounts, audit);
  const clientEndpoint = clientEndpoints(options, store, appRegistrations, addressOf, logger, metrics, clientRateLimited);
  const formLimit = options.limits.tokenRequestBytes;
  const router = new Router(routeTable(options.pathPrefix), {
    token: clientEndpoint.cors(clientEndpoint.limited(tokenEndpoint(engine, options, grants))),
    revocation: clientEndpoint.cors(clientEndpoint.limited(revocationHandler({ provider, store, liveTokens, findClient, bodyLimit: formLimit }))),
    introspection: clientEndpoint.limited(introspectionHandler({ liveTokens, findClient, bodyLimit: formLimit })),
    userinfo: clientEndpoint.cors(userinfoHandler({ liveTokens, accounts: options.accounts, realm: ownTokens.realm, bodyLimit: formLimit })),
    endSession: endSessionHandler({
      provider,
      look,
      sealer: new Sealer(cookieKeys, 'talent-auth sign-out requests'),
      bodyLimit: options.limits.authorizeQueryBytes,
      guard: browserRequestGuard(
        { queryBytes: options.limits.authorizeQueryBytes, perAddress: options.rateLimits.authorize },
        'signout',
        store.counters,
        addressOf,
        logger,
        () => metrics?.rateLimited.inc({ limit: 'sign_out' }),
      ),
    }),
    authorize: authorizeGuard(
      { queryBytes: options.limits.authorizeQueryBytes, perAddress: options.rateLimits.authorize },
      store.counters,
      addressOf,
      logger,
      () => metrics?.rateLimited.inc({ limit: 'authorize' }),
    ),
    metadataAlias: metadataAliasHandler(oauthPath),
    ...interactionHandlers({
      provider,
      publicOrigin: new URL(options.baseUrl).origin,
      path: interactionPath,
      accounts: options.accounts,
      apps: appRegistrations,
      consents,
      audience: options.audience,
      catalog,
      tenantPolicy: options.tenantPolicy,
      tenantDisplayName: options.tenantDisplayName,
      logger,
      formLimit: options.limits.formRequestBytes,
      addressOf,
      audit,
      brands,
      throttle: new SignInThrottle(store.counters, options.rateLimits.failedSignIn, cookieKeys, logger, {
        failed: () => metrics?.signInFailures.inc(),
        refused: () => metrics?.rateLimited.inc({ limit: 'sign_in' }),
      }),
    }),
    ...consentHandlers(ownApis, consents, options.accounts, isFirstParty, apiAddressOf),
    ...managementHandlers({
      audit,
      addressOf: apiAddressOf,
      bodyLimit: options.limits.apiRequestBytes,
      verifier: ownApis,
      accounts: options.accounts,
      clients: clientConfigurations,
      apps: appRegistrations,
      isFirstParty,
      holds: signInHolds,
      tenantPolicy: options.tenantPolicy,
    }),
    openapi: openApiHandler(openApiDocument({
      issuer: options.issuer,
      baseUrl: options.baseUrl,
      pathPrefix: options.pathPrefix,
      apiBodyLimit: options.limits.apiRequestBytes,
    })),
    ...(options.observability.health ? healthHandlers(store) : {}),
    ...(metrics ? { metrics: metricsHandler(metrics) } : {}),
  });

  const app = new Koa({ proxy: options.proxy, maxIpsCount: options.proxy ? options.trustedProxyHops : 0 });
  app.keys = cookieKeys;
  app.silent = true;
  app.on('error', (error: Error & { code?: string }) => logger.info('connection error', { error: error.code ?? error.name }));
  // Mounted in a host app, the context is the host's, and so are its cookies: sign-in cookies
  // must be signed with our keys whatever keys the host has.
  app.use((ctx, next) => {
    if (ctx.app !== app && ctx.path.startsWith(`${oauthPath}/`)) ctx.cookies = app.createContext(ctx.req, ctx.res).cookies;
    return next();
  });
  // Every page of ours (errors included) speaks the user's language (src/i18n/localizer.ts).
  app.use(provideLocalizer(localizer));
  if (metrics) app.use(measureRequests(metrics, (ctx) => router.routeOf(ctx)?.route.group ?? 'other'));
  app.use(oauthErrors(options.issuer, logger));
  app.use(embeddingChecks(options.baseUrl, options.pathPrefix, logger));
  const portalPath = options.portal.enabled ? options.portal.path : undefined;
  app.use(cutStalledBodies(options.limits.bodyTimeoutMs, ownPaths(options.pathPrefix, portalPath)));
  app.use(refuseWhileStoreDown(store, (ctx) => router.routeOf(ctx)?.route.store === true, logger, {
    isAuthorize: (ctx) => router.routeOf(ctx)?.route.name === 'authorize',
    issuer: options.issuer,
    redirectUris: (clientId) => knownClients.redirectUris(clientId),
  }));
  if (options.portal.enabled) {
    const portalUrl = `${options.baseUrl}${options.pathPrefix}${options.portal.path}`;
    // The portal's secret comes from the oldest cookie key: a new key is added first, so adding
    // one (the usual rotation) leaves the secret as every running instance has it.
    const portalApp = await ownRecords.add(() => registerPortalApp(appRegistrations, options.issuer, portalUrl, cookieKeys[cookieKeys.length - 1]!));
    app.use(portalMiddleware({
      baseUrl: options.baseUrl,
      pathPrefix: options.pathPrefix,
      path: options.portal.path,
      internalBase: `${options.portal.internalUrl ?? options.baseUrl}${options.pathPrefix}`,
      issuer: options.issuer,
      apis: options.apis,
      catalog,
      brands,
      localizer,
      addressOf,
      forwardedAddress,
      messages: options.portal.messages as Record<string, PortalTextOverrides> | undefined,
      apps: appRegistrations,
      accounts: options.accounts,
      canUnlock: signInHolds.byTenant,
      sessions: new PortalSessions(store.engine('PortalSession'), store.engine('PortalSecret'), cookieKeys, PORTAL_SESSION_SECONDS),
      logger,
    }, portalApp));
  }
  app.use(router.dispatch());
  const publicDocumentRoutes: ReadonlySet<string> = new Set(['jwks', 'openidConfiguration']);
  app.use(publicDocuments(oauthPath, new URL(options.baseUrl).origin, (ctx) => publicDocumentRoutes.has(router.routeOf(ctx)?.route.name ?? ''), {
    // The endpoints that are ours, not the engine's, in the discovery document too.
    userinfo_endpoint: `${options.issuer}/userinfo`,
    introspection_endpoint: `${options.issuer}/introspect`,
    introspection_endpoint_auth_methods_supported: ['client_secret_basic'],
    revocation_endpoint: `${options.issuer}/revoke`,
    revocation_endpoint_auth_methods_supported: ['client_secret_basic', 'none'],
  }));
  app.use(engine);

  return {
    app,
    middleware: connectMiddleware(app, options.baseUrl, options.pathPrefix, portalPath),
    provider,
    issuer: options.issuer,
    audience: options.audience,
    clientConfigurations,
    appRegistrations,
    consents: {
      list: (key) => consents.list(key),
      revoke: (key) => consents.revoke(key),
    },
    audit: { list: (query) => audit.list(query) },
    signIns: { unlock: (request) => signInHolds.unlock(request, OPERATOR) },
    metrics: metrics?.registry,
    close: () => {
      ownRecords.close();
      return store.close();
    },
  };
}
