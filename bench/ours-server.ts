/** Child process: our authorization server on a Redis store. Argv: <alg> <redis url>. */
import { demoApis } from '../examples/demo-data.js';
import { createAuthServer, type Logger } from '../src/index.js';
import { listenOnFreePort } from './listen.js';
import { parseAlgorithm, serveUntilParentLeaves, type TokenTarget } from './protocol.js';

const silent: Logger = { info() {}, warn() {}, error() {} };

async function start(): Promise<TokenTarget> {
  const alg = parseAlgorithm(process.argv[2]);
  const redisUrl = process.argv[3];
  if (!redisUrl) throw new Error('missing redis url argument');

  const { port, serve } = await listenOnFreePort();
  const baseUrl = `http://127.0.0.1:${port}`;
  const auth = await createAuthServer({
    baseUrl,
    apis: demoApis,
    store: redisUrl === 'memory' ? { type: 'memory' } : { type: 'redis', url: redisUrl },
    accessTokenAlgorithm: alg,
    logger: silent,
  });
  const client = await auth.clientConfigurations.create({
    tenant: 'bench',
    name: 'Benchmark client',
    category: 'benchmark',
    resources: { scim: { scopes: ['scim.read'], constraints: { group: ['eng'] } } },
  });
  serve(auth.app.callback());
  return { tokenUrl: `${auth.issuer}/token`, clientId: client.clientId, clientSecret: client.clientSecret };
}

await serveUntilParentLeaves(start);
