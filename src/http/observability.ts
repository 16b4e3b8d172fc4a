import type { Context, Next } from 'koa';
import type { Store } from '../../adapters/types.js';
import { engineRouteKey } from './engine-path.js';
import type { Metrics, RouteGroup } from '../observability/metrics.js';

export interface ObservedPaths {
  pathPrefix: string;
  oauthPath: string;
}

/** The route group of a path, for metric labels. */
export function routeGroupOf({ pathPrefix, oauthPath }: ObservedPaths): (path: string) => RouteGroup {
  const api = `${pathPrefix}/api/oauth2/`;
  return (path) => {
    if (path.startsWith(`${oauthPath}/`)) {
      const rest = engineRouteKey(path.slice(oauthPath.length + 1));
      if (rest === 'token') return 'token';
      if (rest === 'auth' || rest === 'authorize') return 'authorize';
      if (rest.startsWith('interaction/')) return 'interaction';
      if (rest === 'jwks') return 'jwks';
      if (rest.startsWith('.well-known/')) return 'discovery';
      return 'other';
    }
    if (path.startsWith(api)) return path.startsWith(`${api}consents`) ? 'consent_api' : 'management_api';
    if (path.startsWith(`${pathPrefix}/.well-known/`)) return 'discovery';
    if (path === `${pathPrefix}/healthz` || path === `${pathPrefix}/readyz`) return 'health';
    if (path === `${pathPrefix}/metrics`) return 'metrics';
    return 'other';
  };
}

/** Latency of every request and the OAuth error codes of the answers. */
export function measureRequests(metrics: Metrics, groupOf: (path: string) => RouteGroup) {
  return async function measure(ctx: Context, next: Next): Promise<void> {
    const started = process.hrtime.bigint();
    const route = groupOf(ctx.path);
    try {
      await next();
    } finally {
      const seconds = Number(process.hrtime.bigint() - started) / 1e9;
      metrics.requestDuration.observe({ route, method: ctx.method, status: String(ctx.status) }, seconds);
      const error = (ctx.body as { error?: unknown } | null | undefined)?.error;
      if (ctx.status >= 400 && typeof error === 'string') metrics.oauthErrors.inc({ error, route });
    }
  };
}

/**
 * `/healthz`: the process answers (liveness). `/readyz`: the store answers too (readiness: a load
 * balancer stops sending traffic while Redis is down, and sends it again when it is back).
 */
export function healthRoutes(pathPrefix: string, store: Store) {
  const live = `${pathPrefix}/healthz`;
  const ready = `${pathPrefix}/readyz`;
  return async function health(ctx: Context, next: Next): Promise<void> {
    if (ctx.path !== live && ctx.path !== ready) return next();
    if (ctx.method !== 'GET' && ctx.method !== 'HEAD') {
      ctx.set('Allow', 'GET, HEAD');
      ctx.status = 405;
      return;
    }
    ctx.set('Cache-Control', 'no-store');
    if (ctx.path === live) {
      ctx.body = { status: 'ok' };
      return;
    }
    // The store bounds its own operations (Redis: the command timeout, 500 ms by default).
    const storeUp = store.available && (await store.ping().then(() => true, () => false));
    ctx.status = storeUp ? 200 : 503;
    ctx.body = { status: storeUp ? 'ready' : 'unavailable', store: storeUp ? 'up' : 'down' };
  };
}

/** Prometheus text exposition of the server's registry. */
export function metricsRoute(path: string, metrics: Metrics) {
  return async function serveMetrics(ctx: Context, next: Next): Promise<void> {
    if (ctx.path !== path) return next();
    if (ctx.method !== 'GET' && ctx.method !== 'HEAD') {
      ctx.set('Allow', 'GET, HEAD');
      ctx.status = 405;
      return;
    }
    ctx.set('Content-Type', metrics.registry.contentType);
    ctx.set('Cache-Control', 'no-store');
    ctx.body = await metrics.registry.metrics();
  };
}
