import type { Context, Next } from 'koa';
import type { Tracing } from '../observability/tracing.js';
import type { RouteDefinition } from './routes.js';

/**
 * A SERVER span for every request (src/observability/tracing.ts), named by the method and the
 * route's template: never the path as sent, which can carry a code, a session or an interaction
 * id. The spans of the rest of the chain are its children. Put in front of the chain only when
 * tracing is on.
 */
export function traceRequests(tracing: Tracing, routeOf: (ctx: Context) => RouteDefinition | undefined) {
  return async function traceRequest(ctx: Context, next: Next): Promise<void> {
    const route = routeOf(ctx)?.path ?? 'other';
    const span = tracing.startServerSpan(`${ctx.method} ${route}`, ctx.req.headers, { 'http.request.method': ctx.method, 'http.route': route });
    try {
      await tracing.within(span, next);
    } catch (error) {
      tracing.fail(span, error);
      throw error;
    } finally {
      span?.setAttribute('http.response.status_code', ctx.status);
      if (ctx.status >= 500) tracing.fail(span);
      span?.end();
    }
  };
}
