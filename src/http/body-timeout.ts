import type { IncomingMessage } from 'node:http';
import type { Context, Next } from 'koa';
import { RequestTimeout } from '../../policies/errors.js';

/** Whether a request announces a body (a length above 0, or chunks). */
function announcesBody(req: IncomingMessage): boolean {
  const length = req.headers['content-length'];
  return (length !== undefined && length !== '0') || req.headers['transfer-encoding'] !== undefined;
}

/**
 * Cuts a request whose body has not arrived within `timeoutMs`: it is answered 408 at once and its
 * connection closed, whoever was reading the body (our parsers or the engine's). A client that
 * announces 16,000 bytes and sends 11 would otherwise hold a connection and a pending read for as
 * long as Node lets a request live (300 s by default). `ours` limits it to our own paths: a host
 * that mounts us keeps its own rules for its routes.
 */
export function cutStalledBodies(timeoutMs: number, ours: (path: string) => boolean) {
  const body = JSON.stringify(new RequestTimeout(Math.round(timeoutMs / 100) / 10));
  return async function cutStalled(ctx: Context, next: Next): Promise<void> {
    const { req, res } = ctx;
    if (req.complete || !announcesBody(req) || !ours(ctx.path)) return next();
    const timer = setTimeout(() => {
      if (req.complete || res.headersSent) return;
      res.writeHead(408, { 'content-type': 'application/json', 'cache-control': 'no-store', connection: 'close' });
      // Ending the answer with `Connection: close` closes the socket, which ends every pending read.
      res.end(body);
    }, timeoutMs);
    timer.unref();
    const stop = () => clearTimeout(timer);
    req.once('end', stop).once('close', stop);
    try {
      await next();
    } finally {
      stop();
    }
  };
}
