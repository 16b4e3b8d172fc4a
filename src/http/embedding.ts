import type { IncomingMessage, ServerResponse } from 'node:http';
import type Koa from 'koa';
import type { Context, Next } from 'koa';
import { engineRouteKey } from './engine-path.js';
import { Router } from './router.js';
import type { RouteDefinition } from './routes.js';
import type { Logger } from '../logger.js';
import { HOST_PARSED_BODY, MOUNT_BEFORE_BODY_PARSERS } from './request-body.js';
import { BodyConsumedByHost, MountedWrong } from '../../policies/errors.js';

/** Where a host mounted us: koa-mount's `ctx.mountPath`, Express's `req.baseUrl`; '' at the root. */
export function hostMountPath(ctx: { mountPath?: string | undefined; req: IncomingMessage }): string {
  const mounted = ctx.mountPath ?? (ctx.req as { baseUrl?: unknown }).baseUrl;
  return typeof mounted === 'string' ? mounted.replace(/\/+$/, '') : '';
}

/** The path part of `baseUrl` ('' for a host root): where a host must mount us, if anywhere. */
export function basePathOf(baseUrl: string): string {
  return new URL(baseUrl).pathname.replace(/\/+$/, '');
}

/** What to change when a host mounted us under a path that our published URLs do not have. */
export function mountAdvice(mounted: string, baseUrl: string, pathPrefix: string): string {
  const published = `${baseUrl}${pathPrefix}/oauth2`;
  return `talent-auth is mounted under '${mounted}' by the host application, but its baseUrl and pathPrefix `
    + `publish it at ${published}: mount it at the root (Koa: host.use(mount(auth.app)); Express: `
    + `app.use(auth.middleware)) and let pathPrefix add the prefix, or keep the mount and end baseUrl with "${mounted}"`;
}

/**
 * The first middleware of the app: catches the embedding mistakes a host can make, once each in
 * the log, with the fix.
 *
 * - Mounted under a path (koa-mount, Express's `app.use(path, ...)`) that `baseUrl` does not end
 *   with: every URL we publish (issuer, endpoints in discovery, redirects) would be wrong, the
 *   prefix typically doubled. Answered at once with 500 and what to change. Mounted at the root,
 *   nothing is checked: a proxy in front may strip the path of `baseUrl`.
 * - A host body parser read the request before us: it is served from what the parser kept (see
 *   readBody), or refused at once when it kept nothing usable, and the log says how to mount us
 *   so that we read requests ourselves.
 */
export function embeddingChecks(baseUrl: string, pathPrefix: string, logger: Logger) {
  const expected = basePathOf(baseUrl);
  let mountLogged = false;
  let bodyLogged = false;
  return async function checkEmbedding(ctx: Context, next: Next): Promise<void> {
    const mounted = hostMountPath(ctx);
    if (mounted !== '' && mounted !== expected) {
      const advice = mountAdvice(mounted, baseUrl, pathPrefix);
      if (!mountLogged) {
        mountLogged = true;
        logger.error('mounted under the wrong path', { mounted, expected: expected || '/', fix: advice });
      }
      throw new MountedWrong(advice);
    }
    try {
      await next();
    } catch (error) {
      if (error instanceof BodyConsumedByHost && !bodyLogged) {
        bodyLogged = true;
        logger.error('a host body parser read a request before talent-auth and kept nothing usable', { fix: MOUNT_BEFORE_BODY_PARSERS });
      }
      throw error;
    } finally {
      const state = ctx.state as Record<symbol, unknown>;
      if (state[HOST_PARSED_BODY] && !bodyLogged) {
        bodyLogged = true;
        logger.warn('a host body parser read a request before talent-auth; served from what it parsed', { fix: MOUNT_BEFORE_BODY_PARSERS });
      }
    }
  };
}

/** A Connect/Express-style request handler: `next` is called for requests that are not ours. */
export type ConnectMiddleware = (req: IncomingMessage, res: ServerResponse, next?: (error?: unknown) => void) => void;

/**
 * Whether a request path is one the app serves: a row of the route table (the engine's rows match
 * case-insensitively), or anything under the API path (ours to answer, if only with 404).
 */
export function ownPaths(routes: readonly RouteDefinition[], pathPrefix: string, portalPath?: string): (path: string) => boolean {
  const router = new Router(routes, {});
  const oauth = engineRouteKey(`${pathPrefix}/oauth2`);
  const api = `${pathPrefix}/api/oauth2`;
  const portal = portalPath === undefined ? undefined : `${pathPrefix}${portalPath}`;
  return (path) => {
    if (engineRouteKey(path) === oauth || path === api || path.startsWith(`${api}/`)) return true;
    if (portal !== undefined && (path === portal || path.startsWith(`${portal}/`))) return true;
    try {
      return router.match(path) !== undefined;
    } catch {
      // A badly encoded parameter of one of our paths: ours, answered 404.
      return true;
    }
  };
}

/**
 * The app as Express (or Connect, or plain `http.createServer`) middleware: our requests are
 * served, the host's go on to `next`. A request under a mount path that our URLs do not have is
 * served too, so that it gets the answer saying what to change instead of the host's 404.
 */
export function connectMiddleware(app: Koa, baseUrl: string, ours: (path: string) => boolean): ConnectMiddleware {
  const callback = app.callback();
  const expected = basePathOf(baseUrl);
  return (req, res, next) => {
    const mounted = hostMountPath({ req });
    if ((mounted !== '' && mounted !== expected) || ours((req.url ?? '/').split('?')[0]!)) {
      void callback(req, res);
    } else if (next) {
      next();
    } else {
      res.statusCode = 404;
      res.end();
    }
  };
}
