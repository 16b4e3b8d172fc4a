import { createServer, type Server } from 'node:http';
import type { AddressInfo } from 'node:net';
import { createAuthServer, type AuthServer, type AuthServerOptions } from '../../src/index.js';
import { capturingLogger, demoApis } from './fixtures.js';

export interface RunningServer {
  auth: AuthServer;
  baseUrl: string;
  /** `{baseUrl}{pathPrefix}/oauth2` */
  oauthUrl: string;
  logLines: string[];
  /** The `store` option it was started with (a second instance on the same store takes it). */
  storeOption: AuthServerOptions['store'];
  stop(): Promise<void>;
}

/**
 * An auth server on a real socket at 127.0.0.1 on a free port. The socket is bound first so that
 * the issuer can carry the port. `hostName`: the name its base URL gives the loopback (WebAuthn
 * needs `localhost`, a domain, where 127.0.0.1 is no relying-party ID).
 */
export async function startServer(options: Partial<AuthServerOptions> = {}, { hostName = '127.0.0.1' }: { hostName?: string } = {}): Promise<RunningServer> {
  const http: Server = createServer();
  await new Promise<void>((resolve) => http.listen(0, '127.0.0.1', resolve));
  const { port } = http.address() as AddressInfo;
  const origin = `http://${hostName}:${port}`;
  const baseUrl = options.baseUrl ?? origin;
  const { lines, logger } = capturingLogger();
  // Suites start many sign-ins from 127.0.0.1: the authorize rate limit has tests of its own.
  let auth: AuthServer;
  try {
    auth = await createAuthServer({ baseUrl, apis: demoApis, logger, rateLimits: { authorize: false }, ...options });
  } catch (error) {
    await new Promise((resolve) => http.close(resolve));
    throw error;
  }
  http.on('request', auth.app.callback());
  return {
    auth,
    baseUrl: origin,
    oauthUrl: `${origin}${options.pathPrefix ?? ''}/oauth2`,
    logLines: lines,
    storeOption: options.store,
    async stop() {
      http.closeAllConnections();
      await new Promise((resolve) => http.close(resolve));
      await auth.close();
    },
  };
}

export function basic(clientId: string, clientSecret: string): string {
  return `Basic ${Buffer.from(`${encodeURIComponent(clientId)}:${encodeURIComponent(clientSecret)}`).toString('base64')}`;
}

export interface TokenCall {
  status: number;
  headers: Headers;
  body: Record<string, unknown>;
}

/** POST to the token endpoint; `body` is sent as given (a string) or form-encoded. */
export async function postToken(
  oauthUrl: string,
  body: string | Record<string, string>,
  headers: Record<string, string> = {},
): Promise<TokenCall> {
  const response = await fetch(`${oauthUrl}/token`, {
    method: 'POST',
    headers: { 'content-type': 'application/x-www-form-urlencoded', ...headers },
    body: typeof body === 'string' ? body : new URLSearchParams(body).toString(),
  });
  return tokenCallOf(response);
}

/** A token endpoint answer: status, headers and the JSON body (`{ raw }` when it is not JSON). */
export async function tokenCallOf(response: Response): Promise<TokenCall> {
  const text = await response.text();
  let parsed: Record<string, unknown>;
  try {
    parsed = JSON.parse(text) as Record<string, unknown>;
  } catch {
    parsed = { raw: text };
  }
  return { status: response.status, headers: response.headers, body: parsed };
}
