import type { Context, Next } from 'koa';
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
