import type { AuditEventType } from '../audit/trail.js';
import type { Json } from '../http/openapi-parts.js';
import { openApiDocument as documentOf, openApiHandler, type OpenApiSetup } from '../http/openapi.js';
import type { RouteHandler } from '../http/router.js';
import type { RouteDefinition } from '../http/routes.js';
import { consentEndpoints } from './consents/index.js';
import { federationEndpoints } from './federation/index.js';
import { endpointPaths, type EndpointModule, type ServerParts } from './endpoint.js';
import { lifecycleEndpoints } from './lifecycle/index.js';
import { managementEndpoints } from './management/index.js';
import { opsEndpoints } from './ops/index.js';
import { signInEndpoints } from './sign-in/index.js';
import { signOutEndpoints } from './sign-out/index.js';
import { tokenEndpoint } from './token/index.js';

/**
 * EVERY ENDPOINT OF THE SERVER, by what it serves (src/endpoints/<module>): the route table, the
 * OpenAPI document, the audit events written and the handlers are their composition, here.
 */
export const ENDPOINT_MODULES: readonly EndpointModule[] = [
  tokenEndpoint,
  signInEndpoints,
  signOutEndpoints,
  lifecycleEndpoints,
  consentEndpoints,
  managementEndpoints,
  federationEndpoints,
  // Last: its catch-all row of the engine's paths.
  opsEndpoints,
] as readonly EndpointModule<string>[];

/**
 * THE ROUTE TABLE: every path the server answers, with its methods, metric label and whether it
 * needs the store: the rows of every endpoint module. The router (src/http/router.ts) dispatches
 * from it, the OpenAPI document lists its documented rows, and the embedding checks know our paths
 * by it. The engine's own routes are rows too (it answers them), so that they are measured and
 * guarded like ours; a catch-all row covers what else the engine serves under `/oauth2`.
 */
export function routeTable(pathPrefix: string): RouteDefinition[] {
  const paths = endpointPaths(pathPrefix);
  return ENDPOINT_MODULES.flatMap((module) => module.routes(paths));
}

/** The OpenAPI 3.1 document of every HTTP endpoint of a server with this issuer and path prefix. */
export function openApiDocument(setup: OpenApiSetup): Record<string, unknown> {
  const operations: Record<string, Json> = Object.assign({}, ...ENDPOINT_MODULES.map((module) => module.operations()));
  return documentOf(setup, routeTable(setup.pathPrefix), operations);
}

/** Every audit event type an endpoint writes. */
export function endpointAuditEvents(): ReadonlySet<AuditEventType> {
  return new Set(ENDPOINT_MODULES.flatMap((module) => module.audits));
}

/** Every endpoint's handlers, by route, and the OpenAPI document served at its row. */
export function endpointHandlers(parts: ServerParts): Record<string, RouteHandler> {
  const handlers: Record<string, RouteHandler> = Object.assign({}, ...ENDPOINT_MODULES.map((module) => module.handlers(parts)));
  handlers.openapi = openApiHandler(openApiDocument({
    issuer: parts.settings.issuer,
    baseUrl: parts.settings.baseUrl,
    pathPrefix: parts.settings.pathPrefix,
    apiBodyLimit: parts.settings.limits.apiRequestBytes,
  }));
  return handlers;
}
