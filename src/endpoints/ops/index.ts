import { ENGINE_ROW, GET, row, type EndpointModule } from '../endpoint.js';
import { metadataAliasHandler } from './discovery.js';
import { healthHandlers, metricsHandler } from './health.js';
import { opsOperations } from './openapi.js';
import { PASSKEY_SCRIPT_PATH } from '../../pages/passkey-script.js';
import { passkeyScriptHandler } from './assets.js';

type OpsRoute = 'jwks' | 'openidConfiguration' | 'metadataAlias' | 'engine' | 'openapi' | 'healthz' | 'readyz' | 'metrics' | 'passkeyScript';

/**
 * WHAT OPERATORS AND CLIENTS READ: the keys and metadata (the engine's, pinned to our origin and
 * cacheable: src/endpoints/ops/discovery.ts), the RFC 8414 form of the metadata, the OpenAPI
 * document (composed of every module's operations: src/endpoints/index.ts serves it), health and
 * Prometheus metrics; the passkey script our pages load (src/pages/passkey-script.ts); and the row that leaves the rest under `/oauth2` to the engine.
 */
export const opsEndpoints: EndpointModule<OpsRoute> = {
  routes: ({ prefix, oauth, api }) => [
    row({ name: 'jwks', path: `${oauth}/jwks`, methods: GET, group: 'jwks', store: false, ...ENGINE_ROW, documented: ['GET'] }),
    row({ name: 'openidConfiguration', path: `${oauth}/.well-known/openid-configuration`, methods: GET, group: 'discovery', store: false, ...ENGINE_ROW, documented: ['GET'] }),
    // RFC 8414 §3: the metadata of issuer `{base}{path}` is also at `/.well-known/oauth-authorization-server{path}`.
    row({ name: 'metadataAlias', path: `/.well-known/oauth-authorization-server${oauth}`, methods: GET, group: 'discovery', store: false, refuse: 'engine', documented: ['GET'] }),
    row({ name: 'engine', path: `${oauth}/{rest*}`, methods: [], group: 'other', store: true, ...ENGINE_ROW }),
    row({ name: 'openapi', path: `${api}/openapi.json`, methods: ['GET'], group: 'management_api', store: false, refuse: 'engine', documented: ['GET'] }),
    row({ name: 'healthz', path: `${prefix}/healthz`, methods: GET, group: 'health', store: false }),
    row({ name: 'readyz', path: `${prefix}/readyz`, methods: GET, group: 'health', store: false }),
    row({ name: 'metrics', path: `${prefix}/metrics`, methods: GET, group: 'metrics', store: false }),
    row({ name: 'passkeyScript', path: `${prefix}${PASSKEY_SCRIPT_PATH}`, methods: GET, group: 'other', store: false }),
  ],
  operations: opsOperations,
  audits: [],
  handlers: ({ settings, store, metrics }) => ({
    metadataAlias: metadataAliasHandler(`${settings.pathPrefix}/oauth2`),
    passkeyScript: passkeyScriptHandler,
    ...(settings.observability.health ? healthHandlers(store) : {}),
    ...(metrics ? { metrics: metricsHandler(metrics) } : {}),
  }),
};
