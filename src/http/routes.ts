import type { RouteGroup } from '../observability/metrics.js';

/** The name of a route of the table (handlers are attached by name). */
export type RouteName =
  | 'token' | 'authorize' | 'authorizeResume' | 'jwks' | 'openidConfiguration' | 'metadataAlias' | 'engine'
  | 'userinfo' | 'introspection' | 'revocation' | 'endSession' | 'endSessionConfirm' | 'endSessionSuccess'
  | 'interaction' | 'interactionStep'
  | 'consents' | 'consent'
  | 'clientConfigurations' | 'clientConfiguration' | 'clientConfigurationSecret'
  | 'appRegistrations' | 'appRegistration' | 'appRegistrationSecret' | 'auditEvents' | 'platformApps' | 'signInUnlock'
  | 'openapi' | 'healthz' | 'readyz' | 'metrics';

/** A row of the route table. */
export interface RouteDefinition {
  name: RouteName;
  /** The path, `{name}` for a path parameter, `{name*}` for the rest of the path. */
  path: string;
  /** The methods the route answers: the `Allow` of its 405. */
  methods: readonly string[];
  /** The metric label of its requests. */
  group: RouteGroup;
  /** Whether it needs the store: while the store is down it is answered 503 at once. */
  store: boolean;
  /** `engine`: matched as the engine matches (case-insensitively, trailing slashes ignored). */
  match: 'engine' | 'exact';
  /** How another method is refused: JSON 405, an HTML 405 page, or left to the engine. */
  refuse: 'json' | 'page' | 'engine';
  /** OPTIONS goes to the handler (a CORS preflight) without being an allowed method. */
  preflight?: boolean;
  /** The methods described in the OpenAPI document. */
  documented: readonly string[];
}

const GET = ['GET', 'HEAD'];

/**
 * THE ROUTE TABLE: every path the server answers, with its methods, metric label and whether it
 * needs the store. The router (src/http/router.ts) dispatches from it, the OpenAPI document
 * (src/http/openapi.ts) lists its documented rows, and the embedding checks know our paths by it.
 * The engine's own routes are rows too (it answers them), so that they are measured and guarded
 * like ours; a catch-all row covers what else the engine serves under `/oauth2`.
 */
export function routeTable(pathPrefix: string): RouteDefinition[] {
  const oauth = `${pathPrefix}/oauth2`;
  const api = `${pathPrefix}/api/oauth2`;
  const row = (definition: Omit<RouteDefinition, 'documented' | 'refuse' | 'match'> & Partial<RouteDefinition>): RouteDefinition => ({
    match: 'exact',
    refuse: 'json',
    documented: [],
    ...definition,
  });
  const engine = { match: 'engine', refuse: 'engine' } as const;
  const management = (name: 'client' | 'app', collection: string): RouteDefinition[] => {
    const [list, one, secret] = name === 'client'
      ? (['clientConfigurations', 'clientConfiguration', 'clientConfigurationSecret'] as const)
      : (['appRegistrations', 'appRegistration', 'appRegistrationSecret'] as const);
    const common = { group: 'management_api', store: true } as const;
    return [
      row({ ...common, name: list, path: `${api}/${collection}`, methods: ['GET', 'POST'], documented: ['GET', 'POST'] }),
      row({ ...common, name: one, path: `${api}/${collection}/{clientId}`, methods: ['GET', 'PATCH', 'DELETE'], documented: ['GET', 'PATCH', 'DELETE'] }),
      row({ ...common, name: secret, path: `${api}/${collection}/{clientId}/secret`, methods: ['POST'], documented: ['POST'] }),
    ];
  };
  return [
    row({ name: 'token', path: `${oauth}/token`, methods: ['POST'], group: 'token', store: true, match: 'engine', preflight: true, documented: ['POST'] }),
    // OpenID Connect Core §3.1.2.1: the authorization endpoint takes GET and POST alike.
    row({ name: 'authorize', path: `${oauth}/authorize`, methods: ['GET', 'POST'], group: 'authorize', store: true, ...engine, documented: ['GET', 'POST'] }),
    row({ name: 'authorizeResume', path: `${oauth}/authorize/{uid}`, methods: ['GET'], group: 'authorize', store: true, ...engine }),
    row({ name: 'jwks', path: `${oauth}/jwks`, methods: GET, group: 'jwks', store: false, ...engine, documented: ['GET'] }),
    row({ name: 'openidConfiguration', path: `${oauth}/.well-known/openid-configuration`, methods: GET, group: 'discovery', store: false, ...engine, documented: ['GET'] }),
    // RFC 8414 §3: the metadata of issuer `{base}{path}` is also at `/.well-known/oauth-authorization-server{path}`.
    row({ name: 'metadataAlias', path: `/.well-known/oauth-authorization-server${oauth}`, methods: GET, group: 'discovery', store: false, refuse: 'engine', documented: ['GET'] }),
    row({ name: 'userinfo', path: `${oauth}/userinfo`, methods: ['GET', 'POST'], group: 'userinfo', store: true, match: 'engine', preflight: true, documented: ['GET', 'POST'] }),
    row({ name: 'introspection', path: `${oauth}/introspect`, methods: ['POST'], group: 'introspection', store: true, match: 'engine', documented: ['POST'] }),
    row({ name: 'revocation', path: `${oauth}/revoke`, methods: ['POST'], group: 'revocation', store: true, match: 'engine', preflight: true, documented: ['POST'] }),
    // Sign-out: the engine's end_session endpoint and its steps (browser pages, not in the document).
    row({ name: 'endSession', path: `${oauth}/session/end`, methods: ['GET', 'POST'], group: 'sign_out', store: true, ...engine }),
    row({ name: 'endSessionConfirm', path: `${oauth}/session/end/confirm`, methods: ['POST'], group: 'sign_out', store: true, ...engine }),
    row({ name: 'endSessionSuccess', path: `${oauth}/session/end/success`, methods: GET, group: 'sign_out', store: false, ...engine }),
    row({ name: 'interaction', path: `${oauth}/interaction/{uid}`, methods: GET, group: 'interaction', store: true, refuse: 'page' }),
    row({ name: 'interactionStep', path: `${oauth}/interaction/{uid}/{step}`, methods: ['POST'], group: 'interaction', store: true, refuse: 'page' }),
    row({ name: 'engine', path: `${oauth}/{rest*}`, methods: [], group: 'other', store: true, ...engine }),
    row({ name: 'consents', path: `${api}/consents`, methods: ['GET'], group: 'consent_api', store: true, documented: ['GET'] }),
    row({ name: 'consent', path: `${api}/consents/{clientId}`, methods: ['DELETE'], group: 'consent_api', store: true, documented: ['DELETE'] }),
    ...management('client', 'client-configurations'),
    ...management('app', 'app-registrations'),
    row({ name: 'auditEvents', path: `${api}/audit-events`, methods: ['GET'], group: 'management_api', store: true, documented: ['GET'] }),
    row({ name: 'platformApps', path: `${api}/platform-apps`, methods: ['GET'], group: 'management_api', store: true, documented: ['GET'] }),
    row({ name: 'signInUnlock', path: `${api}/sign-ins/unlock`, methods: ['POST'], group: 'management_api', store: true, documented: ['POST'] }),
    row({ name: 'openapi', path: `${api}/openapi.json`, methods: ['GET'], group: 'management_api', store: false, refuse: 'engine', documented: ['GET'] }),
    row({ name: 'healthz', path: `${pathPrefix}/healthz`, methods: GET, group: 'health', store: false }),
    row({ name: 'readyz', path: `${pathPrefix}/readyz`, methods: GET, group: 'health', store: false }),
    row({ name: 'metrics', path: `${pathPrefix}/metrics`, methods: GET, group: 'metrics', store: false }),
  ];
}
