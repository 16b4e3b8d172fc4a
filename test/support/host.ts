import { createServer, type IncomingMessage, type ServerResponse } from 'node:http';
import type { AddressInfo } from 'node:net';
import { createAuthServer, type AuthServer, type AuthServerOptions } from '../../src/index.js';
import { alice, testAccounts } from './accounts.js';
import { capturingLogger, demoApis } from './fixtures.js';

export interface Host {
  /** The socket's origin. */
  baseUrl: string;
  auth: AuthServer;
  logLines: string[];
  stop(): Promise<void>;
}

/**
 * A host application on a real socket at 127.0.0.1: `build` wires the auth server into the host's
 * own app (Koa, Express, ...). `basePath` is appended to the socket's origin to make `baseUrl`.
 */
export async function startHost(
  build: (auth: AuthServer) => (req: IncomingMessage, res: ServerResponse) => void,
  options: Partial<AuthServerOptions> & { basePath?: string } = {},
): Promise<Host> {
  const http = createServer();
  await new Promise<void>((resolve) => http.listen(0, '127.0.0.1', resolve));
  const origin = `http://127.0.0.1:${(http.address() as AddressInfo).port}`;
  const { lines, logger } = capturingLogger();
  const { basePath, ...rest } = options;
  const auth = await createAuthServer({
    baseUrl: `${origin}${basePath ?? ''}`, pathPrefix: '/auth2', apis: demoApis,
    accounts: testAccounts([alice]), cookieKeys: ['a-cookie-key-of-at-least-32-characters'], logger, ...rest,
  });
  http.on('request', build(auth));
  return {
    baseUrl: origin,
    auth,
    logLines: lines,
    async stop() {
      http.closeAllConnections();
      await new Promise((resolve) => http.close(resolve));
      await auth.close();
    },
  };
}
