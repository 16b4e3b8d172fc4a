import Provider from 'oidc-provider';

/** The request the engine is serving now, as our hooks and patches read it. */
export interface EngineRequest {
  oidc?: { params?: Record<string, unknown> & { resource?: unknown; grant_type?: unknown; response_mode?: unknown } };
  state?: Record<PropertyKey, unknown>;
}

/**
 * The context of the request the engine is serving now (the engine keeps it in an
 * AsyncLocalStorage, `Provider.ctx`: read, never changed), if any.
 */
export function engineRequest(): EngineRequest | undefined {
  return (Provider as unknown as { ctx?: EngineRequest }).ctx;
}
