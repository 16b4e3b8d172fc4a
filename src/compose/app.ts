import Koa from 'koa';
import { endpointHandlers, routeTable } from '../endpoints/index.js';
import { pinPublicOrigin, publicDocuments } from '../endpoints/ops/discovery.js';
import { cutStalledBodies } from '../http/body-timeout.js';
import { embeddingChecks, ownPaths } from '../http/embedding.js';
import { oauthErrors } from '../http/oauth-errors.js';
import { measureRequests } from '../http/observability.js';
import { Router } from '../http/router.js';
import { refuseWhileStoreDown } from '../http/store-availability.js';
import { traceRequests } from '../http/tracing.js';
import { provideLocalizer } from '../i18n/localizer.js';
import type { AssembledServer } from './parts.js';

/** The Koa app of a server, and which request paths are its own (for mounting it in a host). */
export interface ServerApp {
  app: Koa;
  ours(path: string): boolean;
}

/**
 * The server as one Koa app: the middleware every request goes through (cookies signed with our
 * keys, the user's language, a span, metrics, errors as OAuth JSON, embedding checks, stalled bodies cut,
 * requests refused while the store is down), the portal when it is on, the endpoints dispatched by
 * the route table, and the engine last (its public documents pinned to our origin).
 */
export function createServerApp(server: AssembledServer, portal: Koa.Middleware | undefined): ServerApp {
  const { options, parts, engine } = server;
  const { logger, metrics, store } = parts;
  const oauthPath = `${options.pathPrefix}/oauth2`;
  const routes = routeTable(options.pathPrefix);
  const router = new Router(routes, endpointHandlers(parts));
  const ours = ownPaths(routes, options.pathPrefix, options.portal.enabled ? options.portal.path : undefined);

  const app = new Koa({ proxy: options.proxy, maxIpsCount: options.proxy ? options.trustedProxyHops : 0 });
  app.keys = parts.cookieKeys;
  app.silent = true;
  app.on('error', (error: Error & { code?: string }) => logger.info('connection error', { error: error.code ?? error.name }));
  // First: the request's span covers all the rest (src/observability/tracing.ts).
  if (parts.tracing.enabled) app.use(traceRequests(parts.tracing, (ctx) => router.routeOf(ctx)?.route));
  // Mounted in a host app, the context is the host's, and so are its cookies: sign-in cookies
  // must be signed with our keys whatever keys the host has.
  app.use((ctx, next) => {
    if (ctx.app !== app && ctx.path.startsWith(`${oauthPath}/`)) ctx.cookies = app.createContext(ctx.req, ctx.res).cookies;
    return next();
  });
  // Every page of ours (errors included) speaks the user's language (src/i18n/localizer.ts).
  app.use(provideLocalizer(parts.look.localizer));
  if (metrics) app.use(measureRequests(metrics, (ctx) => router.routeOf(ctx)?.route.group ?? 'other'));
  app.use(oauthErrors(options.issuer, logger));
  app.use(embeddingChecks(options.baseUrl, options.pathPrefix, logger));
  app.use(pinPublicOrigin(oauthPath, new URL(options.baseUrl).origin));
  app.use(cutStalledBodies(options.limits.bodyTimeoutMs, ours));
  app.use(refuseWhileStoreDown(store, (ctx) => router.routeOf(ctx)?.route.store === true, logger, {
    isAuthorize: (ctx) => router.routeOf(ctx)?.route.name === 'authorize',
    issuer: options.issuer,
    redirectUris: (clientId) => engine.knownClients.redirectUris(clientId),
  }));
  if (portal) app.use(portal);
  app.use(router.dispatch());
  const publicDocumentRoutes: ReadonlySet<string> = new Set(['jwks', 'openidConfiguration']);
  app.use(publicDocuments(oauthPath, new URL(options.baseUrl).origin, (ctx) => publicDocumentRoutes.has(router.routeOf(ctx)?.route.name ?? ''), {
    // The endpoints that are ours, not the engine's, in the discovery document too.
    userinfo_endpoint: `${options.issuer}/userinfo`,
    introspection_endpoint: `${options.issuer}/introspect`,
    introspection_endpoint_auth_methods_supported: ['client_secret_basic', 'private_key_jwt'],
    revocation_endpoint: `${options.issuer}/revoke`,
    revocation_endpoint_auth_methods_supported: ['client_secret_basic', 'private_key_jwt', 'none'],
  }));
  app.use(engine.serve);
  return { app, ours };
}
