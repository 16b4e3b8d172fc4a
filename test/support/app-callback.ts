import { createServer, type Server } from 'node:http';
import type { AddressInfo } from 'node:net';

/**
 * A stand-in for an app's redirect URI on 127.0.0.1: every request gets a small page headed "Back
 * at the app", so that a browser test sees it arrived. Stop it when done.
 */
export async function startAppServer(): Promise<{ callback: string; stop(): Promise<void> }> {
  const http: Server = createServer((_req, res) => {
    res.writeHead(200, { 'content-type': 'text/html; charset=utf-8' })
      .end('<!doctype html><html lang="en"><head><meta charset="utf-8"><title>App</title></head><body><h1>Back at the app</h1></body></html>');
  });
  await new Promise<void>((resolve) => http.listen(0, '127.0.0.1', resolve));
  return {
    callback: `http://127.0.0.1:${(http.address() as AddressInfo).port}/callback`,
    async stop() {
      http.closeAllConnections();
      await new Promise((resolve) => http.close(resolve));
    },
  };
}
