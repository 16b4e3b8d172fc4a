import { createServer } from 'node:http';
import type { AddressInfo } from 'node:net';
import type Koa from 'koa';

/** A Koa app on 127.0.0.1 at a free port, with `next` answered 418 "next" after its middleware. */
export async function serveWithNext(app: Koa): Promise<{ url: string; close(): Promise<void> }> {
  app.use((ctx) => {
    ctx.status = 418;
    ctx.body = 'next';
  });
  const http = createServer(app.callback());
  await new Promise<void>((resolve) => http.listen(0, '127.0.0.1', resolve));
  return {
    url: `http://127.0.0.1:${(http.address() as AddressInfo).port}`,
    close: async () => {
      http.closeAllConnections();
      await new Promise((resolve) => http.close(resolve));
    },
  };
}
