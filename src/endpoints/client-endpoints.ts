import { clientAuthRateLimited } from '../audit/events.js';
import { publicAppCors, type PublicAppCorsOptions } from '../http/cors.js';
import type { RouteHandler } from '../http/router.js';
import { failedClientAuthLimit } from '../limits/client-auth.js';
import { FedMarks } from '../records/fed-marks.js';
import { tenantOfClient } from './lifecycle/calling-client.js';
import type { ServerParts } from './endpoint.js';

/**
 * What the endpoints that take client credentials share (token, revocation, introspection, and
 * userinfo for CORS): CORS for the browser apps' origins, and the failed-authentication limit,
 * whose refusals are recorded (`client_auth.rate_limited`, once per key and window) in the tenant
 * of the client they name, if any.
 */
export function clientEndpoints(parts: ServerParts): ClientEndpoints {
  let shared = SHARED.get(parts);
  if (!shared) SHARED.set(parts, (shared = build(parts)));
  return shared;
}

/** The limit and CORS of the endpoints that take client credentials. */
export interface ClientEndpoints {
  /** The failed-authentication limit around a handler. */
  limited(handler: RouteHandler): RouteHandler;
  /** CORS around a handler: public apps call it from their pages (`options`: its methods, whose answer it is). */
  cors(handler: RouteHandler, options?: PublicAppCorsOptions): RouteHandler;
}

/** The record kind of an address held past its failed-authentication limit (id: the address). */
const HELD_ADDRESS = 'held-address';

/** One limit (one log of refusals) for all of a server's client endpoints. */
const SHARED = new WeakMap<ServerParts, ClientEndpoints>();

function build(parts: ServerParts): ClientEndpoints {
  const { settings, store, apps, addressOf, logger, metrics, audit, engine } = parts;
  const recordRefusal = async (clientId: string | undefined, address: string): Promise<void> => {
    const client = clientId ? await engine.findClient(clientId).catch(() => undefined) : undefined;
    const machine = client?.grantTypes?.includes('client_credentials') === true;
    audit.recordLater(clientAuthRateLimited(client ? { clientId: client.clientId, tenant: tenantOfClient(client), machine } : undefined, address));
  };
  const limits = settings.rateLimits.failedClientAuth;
  const limiter = limits
    ? failedClientAuthLimit(store.counters, limits, addressOf, logger, ({ clientId, address, firstInWindow }) => {
      metrics?.rateLimited.inc({ limit: 'client_auth' });
      if (firstInWindow) void recordRefusal(clientId, address);
    }, async (clientId) => (await engine.findClient(clientId)) !== undefined, new FedMarks(store.records, HELD_ADDRESS, 'address', 'serve'))
    : undefined;
  const origins = () => apps.publicWebOrigins();
  return {
    limited: (handler) => (limiter ? (ctx, params, next) => limiter(ctx, () => handler(ctx, params, next)) : handler),
    cors: (handler, options) => {
      const cors = publicAppCors(origins, options);
      return (ctx, params, next) => cors(ctx, () => handler(ctx, params, next));
    },
  };
}
