import type { RouteGroup } from '../observability/metrics.js';

/** The name of a route of the table (handlers are attached by name; each endpoint module names its own). */
export type RouteName = string;

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
