/** The request the engine is serving now, as our hooks and patches read it. */
export interface EngineRequest {
  oidc?: { params?: Record<string, unknown> & { resource?: unknown; grant_type?: unknown; response_mode?: unknown } };
  state?: Record<PropertyKey, unknown>;
}

/** Where the engine keeps the request it serves: the `ctx` getter of its Provider class. */
let engineClass: { ctx?: EngineRequest } | undefined;

/**
 * Tells this module which engine class serves requests (src/engine/patches.ts does, with the
 * provider it patches), so that reading the request needs no import of the engine here: modules
 * that only describe our rules (the wire schema, the CLI) do not load the engine for it.
 */
export function knowEngine(provider: object): void {
  engineClass = provider.constructor as { ctx?: EngineRequest };
}

/**
 * The context of the request the engine is serving now (the engine keeps it in an
 * AsyncLocalStorage, `Provider.ctx`: read, never changed), if any.
 */
export function engineRequest(): EngineRequest | undefined {
  return engineClass?.ctx;
}
