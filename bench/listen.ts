import { createServer, type RequestListener } from 'node:http';
import type { AddressInfo } from 'node:net';

/**
 * An HTTP server bound to 127.0.0.1 on a free port. The socket is bound before the application
 * exists, so that the issuer can carry the port; `serve` attaches the application afterwards.
 */
export async function listenOnFreePort(): Promise<{ port: number; serve(app: RequestListener): void }> {
  const server = createServer();
  await new Promise<void>((resolve, reject) => {
    server.once('error', reject);
    server.listen(0, '127.0.0.1', resolve);
  });
  const { port } = server.address() as AddressInfo;
  return { port, serve: (app) => server.on('request', app) };
}
