/**
 * The example server: `npm start`. Memory store unless REDIS_URL is set.
 * Environment: PORT (3000), BASE_URL (http://localhost:PORT), PATH_PREFIX (''), JWKS_FILE, REDIS_URL.
 */
import { readFileSync } from 'node:fs';
import { createAuthServer, type AuthServer, type PrivateJwks } from '../src/index.js';
import { demoApis, demoClient, DEMO_TENANT } from './demo-data.js';

const port = Number(process.env.PORT ?? 3000);
const baseUrl = process.env.BASE_URL ?? `http://localhost:${port}`;
const pathPrefix = process.env.PATH_PREFIX ?? '';

function loadKeys(): { jwks: PrivateJwks } | undefined {
  const file = process.env.JWKS_FILE;
  return file ? { jwks: JSON.parse(readFileSync(file, 'utf8')) as PrivateJwks } : undefined;
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

async function main(): Promise<void> {
  const keys = loadKeys();
  const auth = await createAuthServer({
    baseUrl,
    pathPrefix,
    apis: demoApis,
    store: process.env.REDIS_URL ? { type: 'redis', url: process.env.REDIS_URL } : { type: 'memory' },
    ...(keys ? { keys } : {}),
  });
  const { clientId, clientSecret } = await seedDemoClient(auth);
  const server = auth.app.listen(port);
  await new Promise<void>((resolve) => server.once('listening', resolve));

  const tokenUrl = `${baseUrl}${pathPrefix}/oauth2/token`;
  // Printed once, on purpose: this is the demo client's secret, shown to the operator at start.
  process.stdout.write(
    [
      `talent-auth example server on ${baseUrl}${pathPrefix} (${process.env.REDIS_URL ? 'Redis' : 'memory'} store)`,
      `  issuer:     ${auth.issuer}`,
      `  jwks:       ${auth.issuer}/jwks`,
      `  demo tenant "${DEMO_TENANT}", demo client configuration "${demoClient.name}":`,
      `  client_id:     ${clientId}`,
      `  client_secret: ${clientSecret}   (shown once)`,
      '',
      'Get a token:',
      `  curl -s -u '${clientId}:${clientSecret}' -d grant_type=client_credentials -d scope=scim.read ${tokenUrl}`,
      '',
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
