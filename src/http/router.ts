import type { Context, Next } from 'koa';
import { MethodNotAllowed, NotFound } from '../../policies/errors.js';
import { errorPage, sendPage } from '../pages/html.js';
import { localeOf } from '../i18n/localizer.js';
import type { RouteDefinition, RouteName } from './routes.js';

/** What a route's handler gets: the request, its path parameters (decoded), and the rest of the chain. */
export type RouteHandler = (ctx: Context, params: Readonly<Record<string, string>>, next: Next) => Promise<void>;

/** A route of the table, matched. */
export interface RouteMatch {
  route: RouteDefinition;
  params: Record<string, string>;
}

interface Compiled {
  route: RouteDefinition;
  pattern: RegExp;
  names: string[];
}

const MATCHED = Symbol('the route of this request');

function compile(route: RouteDefinition): Compiled {
  const names: string[] = [];
  const source = route.path
    .split(/(\{[a-zA-Z]+\*?\})/)
    .map((part) => {
      const param = /^\{([a-zA-Z]+)(\*?)\}$/.exec(part);
      if (!param) return part.replace(/[.*+?^${}()|[\]\\]/g, '\\$&');
      names.push(param[1]!);
      return param[2] ? '(.+)' : '([^/]+)';
    })
    .join('');
  // The engine routes case-insensitively and ignores trailing slashes: routes in front of it must too.
  return route.match === 'engine'
    ? { route, names, pattern: new RegExp(`^${source}/*$`, 'i') }
    : { route, names, pattern: new RegExp(`^${source}$`) };
}

/**
 * THE ROUTER: matches a request against the route table (src/endpoints/index.ts composes it), once per request,
 * and dispatches it. The same match gives the metric label, tells whether the request needs the
 * store, and answers a method the route does not have with 405 and `Allow`.
 */
export class Router {
  readonly #compiled: Compiled[];

  constructor(
    routes: readonly RouteDefinition[],
    private readonly handlers: Partial<Record<RouteName, RouteHandler>>,
  ) {
    // Catch-alls last: a specific row always wins over a prefix.
    this.#compiled = routes
      .map(compile)
      .sort((a, b) => Number(a.route.path.includes('*}')) - Number(b.route.path.includes('*}')));
  }

  /** The route of a path, if the table has one. @throws NotFound for a parameter that is not valid percent-encoding. */
  match(path: string): RouteMatch | undefined {
    for (const { route, pattern, names } of this.#compiled) {
      const found = pattern.exec(path);
      if (!found) continue;
      const params: Record<string, string> = {};
      try {
        names.forEach((name, index) => {
          params[name] = decodeURIComponent(found[index + 1]!);
        });
      } catch {
        throw new NotFound('resource');
      }
      return { route, params };
    }
    return undefined;
  }

  /**
   * The route of this request, matched once and remembered on it: the metric label, the store
   * check and the dispatch read the same match. Undefined when none (or, with `strict`, throws what
   * the match threw: NotFound for a badly encoded parameter).
   */
  routeOf(ctx: Context, strict = false): RouteMatch | undefined {
    const state = ctx.state as Record<symbol, { found?: RouteMatch; error?: unknown; path: string } | undefined>;
    let matched = state[MATCHED];
    // A route may rewrite the path (the RFC 8414 alias): a new path is matched anew.
    if (!matched || matched.path !== ctx.path) {
      try {
        matched = { found: this.match(ctx.path), path: ctx.path };
      } catch (error) {
        matched = { error, path: ctx.path };
      }
      state[MATCHED] = matched;
    }
    if (matched.error !== undefined && strict) throw matched.error;
    return matched.found;
  }

  /** Dispatches a request to its route's handler; requests of no route, or of the engine's, go on. */
  dispatch() {
    return async (ctx: Context, next: Next): Promise<void> => {
      const found = this.routeOf(ctx, true);
      if (!found) return next();
      const { route, params } = found;
      const handler = this.handlers[route.name];
      // A row of ours without a handler is turned off (e.g. health routes): not ours to answer.
      if (!handler && route.match !== 'engine') return next();
      const allowed = route.methods.includes(ctx.method) || (ctx.method === 'OPTIONS' && route.preflight === true);
      if (!allowed && route.refuse !== 'engine') {
        if (route.refuse === 'page') {
          ctx.set('Allow', route.methods.join(', '));
          const locale = localeOf(ctx);
          sendPage(ctx, errorPage(locale.t.methodNotAllowed, undefined, locale), 405);
          return;
        }
        throw new MethodNotAllowed(route.methods);
      }
      if (!handler) return next();
      return handler(ctx, params, next);
    };
  }
}
