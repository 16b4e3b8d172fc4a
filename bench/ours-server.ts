/**
 * Child process: our authorization server on a Redis store. Argv: <alg> <redis url> [clients JSON].
 * The first process of a run creates the client configurations and the app registrations (one per
 * ID-token algorithm) in Redis and reports their credentials; the parent hands them to the other
 * processes in the third argument.
 */
import { demoApis } from '../examples/demo-data.js';
import { constantTimeEqual } from '../policies/constant-time.js';
import { createAuthServer, type Account, type AccountStore, type Logger } from '../src/index.js';
import { listenOnFreePort } from './listen.js';
import { BENCH_USERS, mintCodes, namedUserCodeRequest } from './mint-codes.js';
import { ID_TOKEN_ALGORITHMS, parseAlgorithm, type AppClient, type ClientCredentials, type IdTokenAlgorithm } from './protocol.js';
import { serveUntilParentLeaves, type BenchServer } from './server-child.js';
import { clientPublicJwk, sharedKeys } from './shared-keys.js';
import { SOAK_ENVIRONMENT, SOAK_PASSWORD } from './soak-users.js';
import { setUpTracing, tracingMode } from './tracing.js';

const silent: Logger = { info() {}, warn() {}, error() {} };
const TENANT = 'bench';
const REDIRECT_URI = 'https://app.bench.example/callback';
const COOKIE_KEY = 'bench-cookie-key-0123456789abcdefghijklmnopqrstuvwxyz';

/** The benchmark's users, as a host platform's directory would answer (a new object per lookup). */
const users = new Set(BENCH_USERS);
const account = (sub: string): Account => ({ sub, tenant: TENANT, claims: { name: `Bench User ${sub.slice(11)}`, email: `${sub}@bench.example` } });
const benchAccounts: AccountStore = {
  // The soak's sign-ins (bench/soak-traffic.ts): every bench user has the one soak password.
  async authenticate({ username, password }) {
    return users.has(username) && constantTimeEqual(password, SOAK_PASSWORD) ? account(username) : undefined;
  },
  async findAccount(sub): Promise<Account | undefined> {
    return users.has(sub) ? account(sub) : undefined;
  },
};

interface Clients {
  service: ClientCredentials;
  app: AppClient;
  apps: Record<IdTokenAlgorithm, AppClient>;
  keyService: { clientId: string };
  dpopService: ClientCredentials;
}

function parseClients(raw: string | undefined): Clients | undefined {
  return raw ? (JSON.parse(raw) as Clients) : undefined;
}

async function start(): Promise<BenchServer> {
  const alg = parseAlgorithm(process.argv[2]);
  const redisUrl = process.argv[3];
  if (!redisUrl) throw new Error('missing redis url argument');
  const existing = parseClients(process.argv[4]);

  const { port, serve } = await listenOnFreePort();
  // The soak's instances share one public base URL, as behind a load balancer.
  const soakBaseUrl = process.env[SOAK_ENVIRONMENT];
  const tracing = setUpTracing(tracingMode());
  const auth = await createAuthServer({
    baseUrl: soakBaseUrl ?? `http://127.0.0.1:${port}`,
    apis: demoApis,
    // `cluster:<url>,<url>,...`: a Redis Cluster (BENCH_STORE=cluster).
    store: redisUrl.startsWith('cluster:')
      ? { type: 'redis', cluster: { nodes: redisUrl.slice('cluster:'.length).split(',') } }
      : { type: 'redis', url: redisUrl },
    keys: { jwks: sharedKeys() as never },
    accessTokenAlgorithm: alg,
    // A key for each (the shared key set has them): the apps below register one each.
    idTokenAlgorithms: [...ID_TOKEN_ALGORITHMS],
    accounts: benchAccounts,
    cookieKeys: [COOKIE_KEY],
    logger: silent,
    ...(tracing !== undefined ? { observability: { tracing } } : {}),
    // The soak's browsers each come from an address of their own (X-Forwarded-For), as users do
    // behind a load balancer, so the per-address limits stay on at their defaults and count each.
    ...(soakBaseUrl ? { proxy: true } : {}),
  });
  let clients = existing;
  if (!clients) {
    const like = {
      tenant: TENANT,
      category: 'benchmark',
      resources: { scim: { scopes: ['scim.read'], constraints: { group: ['eng'] } } },
    };
    const service = await auth.clientConfigurations.create({ ...like, name: 'Benchmark client' });
    // The client-authentication workloads: the same service with a key instead of a secret, and
    // with DPoP required (bench/workloads.ts).
    const keyService = await auth.clientConfigurations.create({
      ...like,
      name: 'Benchmark client with a key',
      tokenEndpointAuthMethod: 'private_key_jwt',
      jwks: { keys: [clientPublicJwk() as never] },
      dpop: 'optional',
    });
    const dpopService = await auth.clientConfigurations.create({ ...like, name: 'Benchmark client with DPoP', dpop: 'required' });
    // One app per ID-token algorithm, registered with it; RS256 is also the default's.
    const apps = {} as Record<IdTokenAlgorithm, AppClient>;
    for (const idTokenAlg of ID_TOKEN_ALGORITHMS) {
      const app = await auth.appRegistrations.create({
        name: `Benchmark app ${idTokenAlg}`, redirectUris: [REDIRECT_URI], clientType: 'confidential', idTokenSigningAlg: idTokenAlg,
      });
      if (!app.clientSecret) throw new Error('a confidential app registration came without a secret');
      apps[idTokenAlg] = { clientId: app.clientId, clientSecret: app.clientSecret, redirectUri: REDIRECT_URI };
    }
    clients = {
      service: { clientId: service.clientId, clientSecret: service.clientSecret },
      app: apps.RS256,
      apps,
      keyService: { clientId: keyService.clientId },
      dpopService: { clientId: dpopService.clientId, clientSecret: dpopService.clientSecret },
    };
  }
  serve(auth.app.callback());
  // One kind of code for every workload: its JWT access token (audience the API, scope with
  // `openid`) is also the one our userinfo and introspection take (their codes are the RS256 app's).
  const { apps } = clients;
  return {
    target: { listenUrl: `http://127.0.0.1:${port}`, tokenUrl: `${auth.issuer}/token`, userinfoUrl: `${auth.issuer}/userinfo`, introspectionUrl: `${auth.issuer}/introspect`, ...clients },
    mint: (count, _purpose, idTokenAlg) => mintCodes(auth.provider, namedUserCodeRequest(apps[idTokenAlg], auth.audience), count),
  };
}

await serveUntilParentLeaves(start);
