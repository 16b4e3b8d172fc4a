import type { Store } from '../../../adapters/types.js';
import type { Metrics } from '../../observability/metrics.js';
import type { RouteHandler } from '../../http/router.js';
import type { RouteName } from '../../http/routes.js';

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
