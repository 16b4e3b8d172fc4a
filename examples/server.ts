/**
 * The example server: `npm start`. Memory store unless REDIS_URL is set.
 * Environment: PORT (3000), BASE_URL (http://localhost:PORT), PATH_PREFIX (''), JWKS_FILE,
 * REDIS_URL (or REDIS_CLUSTER_NODES=redis://h1:7000,redis://h2:7000, or REDIS_SENTINELS=h1:26379,h2:26379
 * with REDIS_SENTINEL_NAME), COOKIE_KEYS (comma-separated, at least 32 characters each), TRUST_PROXY (1: behind a
 * proxy that sets X-Forwarded-*), METRICS (1: serve /metrics), LOG_LEVEL (info).
 */
import { readFileSync } from 'node:fs';
import Koa from 'koa';
import mount from 'koa-mount';
import {
  createAuthServer, createLogger, createTokenVerifier, type AuthServer, type AuthServerOptions, type PrivateJwks,
} from '../src/index.js';
import { demoAccountStore } from './demo-accounts.js';
import { demoAppRoutes, type DemoApp } from './demo-apps.js';
import { demoApis, demoApps, demoClient, demoUsers, DEMO_TENANT } from './demo-data.js';
import { demoScimApi } from './demo-scim.js';
import { portalRoutes } from './portal.js';

const port = Number(process.env.PORT ?? 3000);
const baseUrl = (process.env.BASE_URL ?? `http://localhost:${port}`).replace(/\/+$/, '');
const pathPrefix = process.env.PATH_PREFIX ?? '';

function loadKeys(): { jwks: PrivateJwks } | undefined {
  const file = process.env.JWKS_FILE;
  return file ? { jwks: JSON.parse(readFileSync(file, 'utf8')) as PrivateJwks } : undefined;
}

/** The store the environment names; memory when it names none. */
function storeFromEnvironment(): NonNullable<AuthServerOptions['store']> {
  const { REDIS_URL, REDIS_CLUSTER_NODES, REDIS_SENTINELS, REDIS_SENTINEL_NAME } = process.env;
  if (REDIS_CLUSTER_NODES) return { type: 'redis', cluster: { nodes: REDIS_CLUSTER_NODES.split(',').filter(Boolean) } };
  if (REDIS_SENTINELS) {
    const sentinels = REDIS_SENTINELS.split(',').filter(Boolean).map((entry) => {
      const [host = '', port = '26379'] = entry.split(':');
      return { host, port: Number(port) };
    });
    return { type: 'redis', sentinel: { sentinels, name: REDIS_SENTINEL_NAME ?? 'mymaster' } };
  }
  return REDIS_URL ? { type: 'redis', url: REDIS_URL } : { type: 'memory' };
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
      await auth.appRegistrations.update(found.clientId, { redirectUris: [redirectUri] });
      const secret = kind === 'confidential' ? (await auth.appRegistrations.rotateSecret(found.clientId)).clientSecret : undefined;
      apps.push({ kind, clientId: found.clientId, redirectUri, ...(secret ? { clientSecret: secret } : {}) });
      continue;
    }
    // The demo apps stand for the platform's own UI: first-party, so they may manage all consents.
    const created = await auth.appRegistrations.create({ ...demoApps[kind], redirectUris: [redirectUri], clientType: kind, firstParty: true });
    apps.push({ kind, clientId: created.clientId, redirectUri, ...(created.clientSecret ? { clientSecret: created.clientSecret } : {}) });
  }
  return apps;
}

async function main(): Promise<void> {
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
  });
  const { clientId, clientSecret } = await seedDemoClient(auth);
  let apps: DemoApp[] = [];
  try {
    apps = await seedDemoApps(auth);
    // The developer portal (examples/portal.ts) signs in as the confidential demo app, on its own callback.
    const portalApp = apps.find((app) => app.kind === 'confidential');
    if (portalApp) await auth.appRegistrations.update(portalApp.clientId, { redirectUris: [portalApp.redirectUri, `${baseUrl}/portal/callback`] });
  } catch (error) {
    process.stderr.write(`demo apps not registered (${error instanceof Error ? error.message : String(error)}): use an https BASE_URL or localhost\n`);
  }

  // A host application embedding the authorization server, as a platform would.
  const host = new Koa();
  host.use(demoAppRoutes(apps, auth.issuer));
  host.use(portalRoutes({ app: apps.find((app) => app.kind === 'confidential'), baseUrl, oauthUrl: auth.issuer, apiUrl: `${baseUrl}${pathPrefix}/api/oauth2`, apis: demoApis }));
  // The platform's user-provisioning API, verifying our tokens with the published keys.
  host.use(demoScimApi(createTokenVerifier({ issuer: auth.issuer, audience: auth.audience, jwks: new URL(`${auth.issuer}/jwks`) })));
  host.use(mount(auth.app));
  const server = host.listen(port);
  await new Promise<void>((resolve) => server.once('listening', resolve));

  const tokenUrl = `${auth.issuer}/token`;
  // Printed once, on purpose: the demo credentials, shown to the operator at start.
  process.stdout.write(
    [
      `talent-auth example server on ${baseUrl}${pathPrefix} (${store.type === 'redis' ? 'Redis' : 'memory'} store)`,
      `  issuer:     ${auth.issuer}`,
      `  jwks:       ${auth.issuer}/jwks`,
      `  demo tenant "${DEMO_TENANT}", demo client configuration "${demoClient.name}":`,
      `  client_id:     ${clientId}`,
      `  client_secret: ${clientSecret}   (shown once)`,
      '',
      'Get a token:',
      `  curl -s -u '${clientId}:${clientSecret}' -d grant_type=client_credentials -d scope=scim.read ${tokenUrl}`,
      'Call the user-provisioning API with it (this client sees the "engineering" group only):',
      `  curl -s -H "Authorization: Bearer $TOKEN" ${baseUrl}/scim/v2/Users`,
      '',
      ...(apps.length
        ? [
          `Sign in as a user: open ${baseUrl}/demo`,
          `  users: ${demoUsers.map((user) => `${user.sub} / ${user.password}`).join(', ')}`,
          ...apps.map((app) => `  ${app.kind} app client_id: ${app.clientId}`),
          `Developer portal (client configurations, app registrations, consents; sign in as ada): open ${baseUrl}/portal`,
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

main().catch((error: unknown) => {
  process.stderr.write(`example server failed to start: ${error instanceof Error ? error.message : String(error)}\n`);
  process.exit(1);
});
