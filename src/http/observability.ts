import type { Context, Next } from 'koa';
import type { Store } from '../../adapters/types.js';
import type { RouteHandler } from './router.js';
import type { RouteName } from './routes.js';
import type { Metrics, RouteGroup } from '../observability/metrics.js';

/** Latency of every request and the OAuth error codes of the answers. */
export function measureRequests(metrics: Metrics, groupOf: (ctx: Context) => RouteGroup) {
  return async function measure(ctx: Context, next: Next): Promise<void> {
    const started = process.hrtime.bigint();
    const route = groupOf(ctx);
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
export function healthHandlers(store: Store): Partial<Record<RouteName, RouteHandler>> {
  return {
    async healthz(ctx) {
      ctx.set('Cache-Control', 'no-store');
      ctx.body = { status: 'ok' };
    },
    async readyz(ctx) {
      ctx.set('Cache-Control', 'no-store');
      // The store bounds its own operations (Redis: the command timeout, 500 ms by default).
      const storeUp = store.available && (await store.ping().then(() => true, () => false));
      ctx.status = storeUp ? 200 : 503;
      ctx.body = { status: storeUp ? 'ready' : 'unavailable', store: storeUp ? 'up' : 'down' };
    },
  };
}

/** Prometheus text exposition of the server's registry. */
export function metricsHandler(metrics: Metrics): RouteHandler {
  return async (ctx) => {
    ctx.set('Content-Type', metrics.registry.contentType);
    ctx.set('Cache-Control', 'no-store');
    ctx.body = await metrics.registry.metrics();
  };
}
