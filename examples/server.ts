/**
 * The example server: `npm start`. Memory store unless REDIS_URL is set.
 * Environment: HOST (127.0.0.1: it seeds demo users whose passwords are published), PORT (3000),
 * BASE_URL (http://localhost:PORT), PATH_PREFIX (''), JWKS_FILE, or KEY_ENCRYPTION_KEYS (comma-separated, at least 32
 * characters each: the signing keys are kept in the store, sealed under them, and rotated live with the CLI),
 * REDIS_URL (or REDIS_CLUSTER_NODES=redis://h1:7000,redis://h2:7000, or REDIS_SENTINELS=h1:26379,h2:26379
 * with REDIS_SENTINEL_NAME; REDIS_USERNAME, REDIS_PASSWORD, REDIS_TLS, REDIS_TLS_CA_FILE ...: docs/cli.md), COOKIE_KEYS (comma-separated, at least 32 characters each), TRUST_PROXY (1: behind a
 * proxy that sets X-Forwarded-*), METRICS (1: serve /metrics), LOG_LEVEL (info).
 */
import { readFileSync } from 'node:fs';
import { createServer } from 'node:http';
import Koa from 'koa';
import mount from 'koa-mount';
import {
  createAuthServer, createLogger, createTokenVerifier, type AuthServer, type AuthServerOptions, type PrivateJwks,
} from '../src/index.js';
import { RedisSettingsError, redisStoreFromEnv } from '../adapters/redis/settings.js';
import { demoAccountStore } from './demo-accounts.js';
import { demoAppRoutes, type DemoApp } from './demo-apps.js';
import { demoApis, demoApps, demoClient, demoUsers, DEMO_TENANT } from './demo-data.js';
import { demoScimApi } from './demo-scim.js';

/** A start-up failure: its message is the one line the operator sees. */
class StartError extends Error {}

function portOf(value: string | undefined): number {
  if (value === undefined) return 3000;
  const port = Number(value);
  if (!Number.isInteger(port) || port < 0 || port > 65535) throw new StartError(`PORT must be a port number (0..65535), not "${value}"`);
  return port;
}

const host = process.env.HOST ?? '127.0.0.1';
let port = 3000;
let baseUrl = '';
const pathPrefix = process.env.PATH_PREFIX ?? '';

function loadKeys(): AuthServerOptions['keys'] {
  const file = process.env.JWKS_FILE;
  const keks = process.env.KEY_ENCRYPTION_KEYS?.split(',').filter(Boolean);
  if (file && keks?.length) throw new StartError('set JWKS_FILE (keys in a file) or KEY_ENCRYPTION_KEYS (keys kept in the store), not both');
  // The key set kept in the store, sealed under these keys (the CLI's keys --store rotates it live).
  if (keks?.length) return { store: { keks } };
  if (!file) return undefined;
  let text: string;
  try {
    text = readFileSync(file, 'utf8');
  } catch (error) {
    throw new StartError(`JWKS_FILE ${file} cannot be read (${(error as NodeJS.ErrnoException).code ?? (error as Error).message})`);
  }
  try {
    return { jwks: JSON.parse(text) as PrivateJwks };
  } catch {
    throw new StartError(`JWKS_FILE ${file} is not JSON: it must hold a JSON Web Key Set ({"keys":[...]}); npx talent-auth keys generate writes one`);
  }
}

/** Listens, or fails with a sentence (a port in use, a host that is not this machine's). */
function listen(server: ReturnType<Koa['listen']>, listenHost: string, listenPort: number): Promise<void> {
  return new Promise((resolve, reject) => {
    server.once('error', (error: NodeJS.ErrnoException) => {
      const where = `${listenHost}:${listenPort}`;
      if (error.code === 'EADDRINUSE') reject(new StartError(`port ${listenPort} on ${listenHost} is in use: stop what uses it or set PORT`));
      else if (error.code === 'EACCES') reject(new StartError(`not allowed to listen on ${where}: use a port above 1023 or set PORT`));
      else if (error.code === 'EADDRNOTAVAIL' || error.code === 'ENOTFOUND') reject(new StartError(`HOST ${listenHost} is not an address of this machine`));
      else reject(new StartError(`cannot listen on ${where} (${error.code ?? error.message})`));
    });
    server.once('listening', resolve);
    server.listen(listenPort, listenHost);
  });
}

/**
 * The store the environment names (the variables the CLI reads too: adapters/redis/settings.ts);
 * memory when it names none.
 */
function storeFromEnvironment(): NonNullable<AuthServerOptions['store']> {
  try {
    return redisStoreFromEnv(process.env) ?? { type: 'memory' };
  } catch (error) {
    if (error instanceof RedisSettingsError) throw new StartError(error.message);
    throw error;
  }
}

/** The demo client: created once; on a persistent store, found again and given a fresh secret. */
async function seedDemoClient(auth: AuthServer): Promise<{ clientId: string; clientSecret: string }> {
  const existing = (await auth.clientConfigurations.list(DEMO_TENANT)).find((c) => c.name === demoClient.name);
  if (existing) {
    const { clientSecret } = await auth.clientConfigurations.rotateSecret(existing.clientId);
    return { clientId: existing.clientId, clientSecret };
  }
  const { clientId, clientSecret } = await auth.clientConfigurations.create(demoClient);
  return { clientId, clientSecret };
}

/** The demo apps, whose redirect URIs are pages of this server; found again on a persistent store. */
async function seedDemoApps(auth: AuthServer): Promise<DemoApp[]> {
  const existing = await auth.appRegistrations.list();
  const apps: DemoApp[] = [];
  for (const kind of ['public', 'confidential'] as const) {
    const redirectUri = `${baseUrl}/demo/callback/${kind}`;
    const found = existing.find((app) => app.name === demoApps[kind].name);
    if (found) {
      await auth.appRegistrations.update(found.clientId, { redirectUris: [redirectUri], postLogoutRedirectUris: [`${baseUrl}/demo`] });
      const secret = kind === 'confidential' ? (await auth.appRegistrations.rotateSecret(found.clientId)).clientSecret : undefined;
      apps.push({ kind, clientId: found.clientId, redirectUri, ...(secret ? { clientSecret: secret } : {}) });
      continue;
    }
    // The demo apps stand for the platform's own UI: first-party, so they may manage all consents.
    const created = await auth.appRegistrations.create({
      ...demoApps[kind], redirectUris: [redirectUri], postLogoutRedirectUris: [`${baseUrl}/demo`], clientType: kind, firstParty: true,
    });
    apps.push({ kind, clientId: created.clientId, redirectUri, ...(created.clientSecret ? { clientSecret: created.clientSecret } : {}) });
  }
  return apps;
}

/**
 * Where the portal reaches this server from inside: loopback when it listens there (or on every
 * address); otherwise its public base URL.
 */
function internalUrlOf(listening: string, listeningPort: number): string | undefined {
  if (listening === '0.0.0.0' || listening === '::' || listening === '' || listening === '127.0.0.1' || listening === 'localhost') return `http://127.0.0.1:${listeningPort}`;
  return listening === '::1' ? `http://[::1]:${listeningPort}` : undefined;
}

async function main(): Promise<void> {
  port = portOf(process.env.PORT);
  baseUrl = (process.env.BASE_URL ?? `http://localhost:${port}`).replace(/\/+$/, '');
  const keys = loadKeys();
  const cookieKeys = process.env.COOKIE_KEYS?.split(',').filter(Boolean);
  const store = storeFromEnvironment();
  const auth = await createAuthServer({
    baseUrl,
    pathPrefix,
    apis: demoApis,
    accounts: demoAccountStore(demoUsers),
    store,
    ...(keys ? { keys } : {}),
    ...(cookieKeys?.length ? { cookieKeys } : {}),
    proxy: process.env.TRUST_PROXY === '1',
    observability: { metrics: process.env.METRICS === '1' },
    logger: createLogger({ level: process.env.LOG_LEVEL ?? 'info' }),
    // The administration portal at {pathPrefix}/portal, reaching its own APIs on the loopback address.
    portal: { enabled: true, ...(internalUrlOf(host, port) ? { internalUrl: internalUrlOf(host, port) } : {}) },
  });
  const { clientId, clientSecret } = await seedDemoClient(auth);
  let apps: DemoApp[] = [];
  try {
    apps = await seedDemoApps(auth);
  } catch (error) {
    process.stderr.write(`demo apps not registered (${error instanceof Error ? error.message : String(error)}): use an https BASE_URL or localhost\n`);
  }

  // A host application embedding the authorization server, as a platform would.
  const hostApp = new Koa();
  hostApp.use(demoAppRoutes(apps, auth.issuer));
  // The platform's user-provisioning API, verifying our tokens with the published keys.
  hostApp.use(demoScimApi(createTokenVerifier({ issuer: auth.issuer, audience: auth.audience, jwks: new URL(`${auth.issuer}/jwks`) })));
  hostApp.use(mount(auth.app));
  const server = createServer(hostApp.callback());
  // Slow or stalled clients cannot hold connections for long (Node's defaults: 300 s per request).
  server.headersTimeout = 10_000;
  server.requestTimeout = 30_000;
  server.maxConnections = 1000;
  try {
    await listen(server, host, port);
  } catch (error) {
    await auth.close();
    throw error;
  }

  const tokenUrl = `${auth.issuer}/token`;
  // Printed once, on purpose: the demo credentials, shown to the operator at start.
  process.stdout.write(
    [
      `talent-auth example server on ${baseUrl}${pathPrefix} (${store.type === 'redis' ? 'Redis' : 'memory'} store, listening on ${host}:${port})`,
      `  issuer:     ${auth.issuer}`,
      `  jwks:       ${auth.issuer}/jwks`,
      `  demo tenant "${DEMO_TENANT}", demo client configuration "${demoClient.name}":`,
      `  client_id:     ${clientId}`,
      `  client_secret: ${clientSecret}   (shown once)`,
      '',
      'Get a token:',
      `  curl -s -u '${clientId}:${clientSecret}' -d grant_type=client_credentials -d scope=scim.read ${tokenUrl}`,
      'Call the user-provisioning API with it (this client sees the "engineering" group only):',
      `  curl -s -H "Authorization: Bearer $TOKEN" ${baseUrl}/tenants/${DEMO_TENANT}/scim/v2/Users`,
      '',
      ...(apps.length
        ? [
          `Sign in as a user: open ${baseUrl}/demo`,
          `  users: ${demoUsers.map((user) => `${user.sub} / ${user.password}`).join(', ')}`,
          ...apps.map((app) => `  ${app.kind} app client_id: ${app.clientId}`),
          `Developer portal (client configurations, app registrations, consents, activity; sign in as ada): open ${baseUrl}${pathPrefix}/portal`,
          '  ada holds integration setup: at her first sign-in she sets up an authenticator app (a QR code, then ten recovery codes),',
          '  as the default second-factor rule asks of users with a management permission; after that she gives its code.',
          '',
        ]
        : []),
    ].join('\n'),
  );

  const stop = () => {
    server.close();
    server.closeAllConnections();
    void auth.close().then(() => process.exit(0));
  };
  process.once('SIGINT', stop);
  process.once('SIGTERM', stop);
}

// One line that says what to change, never a stack trace: every start-up failure (options, keys,
// the store, the port) carries its reason in its message.
main().catch((error: unknown) => {
  const message = error instanceof Error ? error.message : String(error);
  process.stderr.write(`talent-auth example server did not start: ${message.split('\n')[0]}\n`);
  process.exit(1);
});
