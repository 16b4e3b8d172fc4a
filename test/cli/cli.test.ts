import { createServer } from 'node:http';
import type { AddressInfo } from 'node:net';
import { existsSync, mkdtempSync, readFileSync, rmSync, statSync, writeFileSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { createLocalJWKSet, decodeProtectedHeader, jwtVerify, type JWK } from 'jose';
import { createAuthServer } from '../../src/index.js';
import { capturingLogger, demoApis } from '../support/fixtures.js';
import { freePort, startRedis, type RedisServer } from '../support/redis.js';
import { basic, postToken, startServer } from '../support/server.js';
import { CLI_ENTRY, runCli, type CliRun } from '../support/cli.js';
import { pkcePair, UserAgent } from '../support/user-agent.js';
import { testAccounts } from '../support/accounts.js';

const UUID = /^[0-9a-f]{8}-[0-9a-f]{4}-4[0-9a-f]{3}-[89ab][0-9a-f]{3}-[0-9a-f]{12}$/;
const SECRET = /^[A-Za-z0-9_-]{43}$/;

type Run = CliRun;

describe('talent-auth CLI (built, as a subprocess, on a real redis-server)', () => {
  let redis: RedisServer;
  let dir: string;
  let apisFile: string;

  /** Runs the built CLI with REDIS_URL and TALENT_AUTH_APIS set unless overridden. */
  function cli(args: string[], env: Record<string, string | undefined> = {}): Promise<Run> {
    return runCli(args, dir, { ...process.env, REDIS_URL: redis.url, TALENT_AUTH_APIS: apisFile, ...env });
  }

  const payroll = [
    'clients', 'create', '--tenant', 'acme', '--name', 'Payroll sync', '--category', 'payroll',
    '--resource', 'scim:scim.read,scim.write', '--resource', 'subscriptions:manage.subscriptions',
    '--constraint', 'scim:group=eng', '--constraint', 'scim:group=ops', '--constraint', 'scim:department=rnd',
  ];

  beforeAll(async () => {
    if (!existsSync(CLI_ENTRY)) throw new Error('run `npx tsc -p tsconfig.build.json` first (the test command builds)');
    redis = await startRedis();
    dir = mkdtempSync(join(tmpdir(), 'talent-auth-cli-'));
    apisFile = join(dir, 'apis.json');
    writeFileSync(apisFile, JSON.stringify(demoApis));
  });
  afterAll(async () => {
    await redis.stop();
    rmSync(dir, { recursive: true, force: true });
  });

  describe('clients', () => {
    it('creates a client with resources and constraints, lists it, rotates its secret and deletes it', async () => {
      const created = await cli([...payroll, '--description', 'Nightly export', '--json']);
      expect(created.stderr).toBe('');
      expect(created.code).toBe(0);
      expect(created.json).toEqual({
        client_id: expect.stringMatching(UUID),
        client_secret: expect.stringMatching(SECRET),
        tenant: 'acme',
        name: 'Payroll sync',
        category: 'payroll',
        description: 'Nightly export',
        resources: {
          scim: { scopes: ['scim.read', 'scim.write'], constraints: { group: ['eng', 'ops'], department: ['rnd'] } },
          subscriptions: { scopes: ['manage.subscriptions'] },
        },
        token_endpoint_auth_method: 'client_secret_basic',
        created_at: expect.any(String),
        updated_at: expect.any(String),
      });
      const { client_id: clientId, client_secret: secret } = created.json;

      const listed = await cli(['clients', 'list', '--tenant', 'acme', '--json']);
      expect(listed.code).toBe(0);
      const mine = listed.json.clients.find((client: { client_id: string }) => client.client_id === clientId);
      expect(mine).toMatchObject({ name: 'Payroll sync', resources: created.json.resources });
      expect(listed.stdout).not.toContain(secret);
      expect(mine).not.toHaveProperty('client_secret');

      const human = await cli(['clients', 'list', '--tenant', 'acme']);
      expect(human.code).toBe(0);
      expect(human.stdout).toMatch(/^CLIENT_ID\s+NAME\s+CATEGORY/);
      expect(human.stdout).toContain(clientId);
      expect(human.stdout).toContain('scim: scim.read, scim.write [group=eng|ops department=rnd]');
      expect((await cli(['clients', 'list', '--tenant', 'globex', '--json'])).json).toEqual({ clients: [] });

      const rotated = await cli(['clients', 'rotate-secret', clientId, '--json']);
      expect(rotated.code).toBe(0);
      expect(rotated.json).toEqual({ client_id: clientId, client_secret: expect.stringMatching(SECRET) });
      expect(rotated.json.client_secret).not.toBe(secret);

      const deleted = await cli(['clients', 'delete', clientId, '--json']);
      expect(deleted.code).toBe(0);
      expect(deleted.json).toEqual({ client_id: clientId, deleted: true });
      const after = await cli(['clients', 'list', '--tenant', 'acme', '--json']);
      expect(after.json.clients.map((client: { client_id: string }) => client.client_id)).not.toContain(clientId);

      const again = await cli(['clients', 'delete', clientId]);
      expect(again.code).toBe(1);
      expect(again.stderr).toContain(`client configuration ${clientId} not found`);
      const rotateGone = await cli(['clients', 'rotate-secret', clientId]);
      expect(rotateGone.code).toBe(1);
      expect(rotateGone.stderr).toContain('not found');
    });

    it('prints the secret once in human form', async () => {
      const created = await cli(payroll);
      expect(created.code).toBe(0);
      expect(created.stdout).toMatch(/client_id:\s+[0-9a-f-]{36}\n/);
      expect(created.stdout).toMatch(/client_secret:\s+[A-Za-z0-9_-]{43}\n/);
      expect(created.stdout).toContain('shown only now');
    });

    it('validates exactly as the server does: the field is named, exit 1', async () => {
      const unknownScope = await cli(['clients', 'create', '--tenant', 'acme', '--name', 'x', '--category', 'y', '--resource', 'scim:scim.read,scim.delete']);
      expect(unknownScope.code).toBe(1);
      expect(unknownScope.stdout).toBe('');
      expect(unknownScope.stderr).toContain('resources.scim.scopes');
      expect(unknownScope.stderr).toContain('scim.delete');

      const asJson = await cli(['clients', 'create', '--tenant', 'acme', '--name', 'x', '--category', 'y', '--resource', 'scim:scim.delete', '--json']);
      expect(asJson.code).toBe(1);
      expect(JSON.parse(asJson.stderr)).toMatchObject({ error: 'validation_error', field: 'resources.scim.scopes' });

      const dimension = await cli(['clients', 'create', '--tenant', 'acme', '--name', 'x', '--category', 'y', '--resource', 'scim:scim.read', '--constraint', 'scim:location=berlin']);
      expect(dimension.code).toBe(1);
      expect(dimension.stderr).toContain('resources.scim.constraints.location');

      const unknownApi = await cli(['clients', 'create', '--tenant', 'acme', '--name', 'x', '--category', 'y', '--resource', 'payroll:payroll.read']);
      expect(unknownApi.code).toBe(1);
      expect(unknownApi.stderr).toContain("resources.payroll.scopes: unknown API 'payroll'");

      const emptyName = await cli(['clients', 'create', '--tenant', 'acme', '--name', ' ', '--category', 'y', '--resource', 'scim:scim.read']);
      expect(emptyName.code).toBe(1);
      expect(emptyName.stderr).toContain('name: must not be empty');

      const missingTenant = await cli(['clients', 'create', '--name', 'x', '--category', 'y', '--resource', 'scim:scim.read']);
      expect(missingTenant.code).toBe(1);
      expect(missingTenant.stderr).toContain('--tenant is required');

      const badResource = await cli(['clients', 'create', '--tenant', 'acme', '--name', 'x', '--category', 'y', '--resource', 'scim.read']);
      expect(badResource.code).toBe(1);
      expect(badResource.stderr).toContain('--resource "scim.read": expected <api>:<scope>');

      const listAfter = await cli(['clients', 'list', '--tenant', 'acme', '--json']);
      expect(listAfter.json.clients.map((client: { name: string }) => client.name)).not.toContain('x');
    });

    it('needs the API catalog to create, and validates it with the server option schema', async () => {
      const none = await cli(payroll, { TALENT_AUTH_APIS: undefined });
      expect(none.code).toBe(1);
      expect(none.stderr).toContain('--apis');

      const broken = join(dir, 'broken-apis.json');
      writeFileSync(broken, JSON.stringify([{ id: 'scim', name: 'SCIM', scopes: {} }]));
      const invalid = await cli([...payroll, '--apis', broken]);
      expect(invalid.code).toBe(1);
      expect(invalid.stderr).toContain('apis.0.scopes: an API needs at least one scope');

      const wrapped = join(dir, 'options.json');
      writeFileSync(wrapped, JSON.stringify({ apis: demoApis }));
      const fromObject = await cli([...payroll, '--apis', wrapped, '--json'], { TALENT_AUTH_APIS: undefined });
      expect([fromObject.code, fromObject.stderr]).toEqual([0, ""]);
      expect(fromObject.json.client_id).toMatch(UUID);
    });

    it('keeps deployments apart by key prefix', async () => {
      const created = await cli([...payroll, '--key-prefix', 'other:', '--tenant', 'prefixed', '--json']);
      expect(created.code).toBe(0);
      expect((await cli(['clients', 'list', '--tenant', 'prefixed', '--json'])).json.clients).toEqual([]);
      const listed = await cli(['clients', 'list', '--tenant', 'prefixed', '--key-prefix', 'other:', '--json']);
      expect(listed.json.clients.map((client: { client_id: string }) => client.client_id)).toEqual([created.json.client_id]);
      expect(await redis.client().exists(`other:rec:{client:${created.json.client_id}}`)).toBe(1);
    });
  });

  describe('apps', () => {
    it('registers public and confidential apps, lists, rotates and deletes them', async () => {
      const spa = await cli(['apps', 'create', '--name', 'SPA', '--redirect-uri', 'http://127.0.0.1:5173/cb', '--type', 'public', '--json']);
      expect(spa.code).toBe(0);
      expect(spa.json).toMatchObject({
        client_id: expect.stringMatching(UUID),
        name: 'SPA',
        redirect_uris: ['http://127.0.0.1:5173/cb'],
        client_type: 'public',
        pkce_enabled: true,
        first_party: false,
      });
      expect(spa.json).not.toHaveProperty('client_secret');

      const web = await cli([
        'apps', 'create', '--name', 'Portal', '--description', 'Server-side', '--type', 'confidential',
        '--redirect-uri', 'https://portal.example/cb', '--redirect-uri', 'https://portal.example/cb2', '--no-pkce', '--first-party', '--json',
      ]);
      expect(web.code).toBe(0);
      expect(web.json).toMatchObject({
        client_type: 'confidential',
        client_secret: expect.stringMatching(SECRET),
        pkce_enabled: false,
        first_party: true,
        redirect_uris: ['https://portal.example/cb', 'https://portal.example/cb2'],
      });

      const human = await cli(['apps', 'create', '--name', 'Human', '--redirect-uri', 'https://h.example/cb', '--type', 'confidential']);
      expect(human.code).toBe(0);
      expect(human.stdout).toMatch(/client_secret:\s+[A-Za-z0-9_-]{43}\n/);

      const signOut = await cli([
        'apps', 'create', '--name', 'Sign-out', '--redirect-uri', 'https://s.example/cb', '--type', 'confidential',
        '--post-logout-redirect-uri', 'https://s.example/out', '--post-logout-redirect-uri', 'https://s.example/bye',
        '--backchannel-logout-uri', 'http://127.0.0.1:4000/backchannel',
      ]);
      expect(signOut.code).toBe(0);
      expect(signOut.stdout).toContain('post_logout_redirect_uris: https://s.example/out https://s.example/bye');
      expect(signOut.stdout).toContain('backchannel_logout_uri: http://127.0.0.1:4000/backchannel');
      const badSignOut = await cli(['apps', 'create', '--name', 'Bad', '--redirect-uri', 'https://s.example/cb', '--type', 'public', '--post-logout-redirect-uri', 'javascript:alert(1)']);
      expect(badSignOut.code).toBe(1);
      expect(badSignOut.stderr).toContain('postLogoutRedirectUris.0');

      const listed = await cli(['apps', 'list', '--json']);
      expect(listed.code).toBe(0);
      const ids = listed.json.apps.map((app: { client_id: string }) => app.client_id);
      expect(ids).toEqual(expect.arrayContaining([spa.json.client_id, web.json.client_id]));
      expect(listed.stdout).not.toContain(web.json.client_secret);
      const table = await cli(['apps', 'list']);
      expect(table.stdout).toMatch(/^CLIENT_ID\s+NAME\s+TYPE\s+PKCE/);
      expect(table.stdout).toContain(web.json.client_id);

      const rotated = await cli(['apps', 'rotate-secret', web.json.client_id, '--json']);
      expect(rotated.code).toBe(0);
      expect(rotated.json.client_secret).toMatch(SECRET);
      expect(rotated.json.client_secret).not.toBe(web.json.client_secret);
      const publicRotate = await cli(['apps', 'rotate-secret', spa.json.client_id]);
      expect(publicRotate.code).toBe(1);
      expect(publicRotate.stderr).toContain('clientType: public apps have no secret');

      for (const id of [spa.json.client_id, web.json.client_id]) {
        const deleted = await cli(['apps', 'delete', id, '--json']);
        expect(deleted.code).toBe(0);
        expect(deleted.json).toEqual({ client_id: id, deleted: true });
      }
      const after = await cli(['apps', 'list', '--json']);
      expect(after.json.apps.map((app: { client_id: string }) => app.client_id)).not.toContain(spa.json.client_id);
    });

    it('refuses an invalid redirect URI naming the URI and the rule, exit 1', async () => {
      const bad = await cli([
        'apps', 'create', '--name', 'Bad', '--type', 'public',
        '--redirect-uri', 'https://ok.example/cb', '--redirect-uri', 'http://evil.example/cb',
      ]);
      expect(bad.code).toBe(1);
      expect(bad.stderr).toContain('redirectUris.1');
      expect(bad.stderr).toContain("'http://evil.example/cb'");
      expect(bad.stderr).toContain('plain http is allowed only for localhost and 127.0.0.1');

      const fragment = await cli(['apps', 'create', '--name', 'Bad', '--type', 'public', '--redirect-uri', 'https://ok.example/cb#x', '--json']);
      expect(fragment.code).toBe(1);
      expect(JSON.parse(fragment.stderr)).toMatchObject({ field: 'redirectUris.0', message: expect.stringContaining('fragment') });

      const pkce = await cli(['apps', 'create', '--name', 'Bad', '--type', 'public', '--redirect-uri', 'https://ok.example/cb', '--no-pkce']);
      expect(pkce.code).toBe(1);
      expect(pkce.stderr).toContain('pkceEnabled: PKCE is always on for public apps');

      const type = await cli(['apps', 'create', '--name', 'Bad', '--type', 'spa', '--redirect-uri', 'https://ok.example/cb']);
      expect(type.code).toBe(1);
      expect(type.stderr).toContain('clientType');

      const listed = await cli(['apps', 'list', '--json']);
      expect(listed.json.apps.map((app: { name: string }) => app.name)).not.toContain('Bad');
    });
  });

  describe('keys generate', () => {
    it('writes a private ES256 + RS256 JWKS (0600) that createAuthServer accepts, and never overwrites by accident', async () => {
      const out = join(dir, 'jwks.json');
      const generated = await cli(['keys', 'generate', '--out', out, '--json'], { REDIS_URL: undefined });
      expect(generated.code).toBe(0);
      expect(statSync(out).mode & 0o777).toBe(0o600);
      const jwks = JSON.parse(readFileSync(out, 'utf8')) as { keys: JWK[] };
      expect(jwks.keys.map((key) => [key.alg, key.kty, key.use])).toEqual([['ES256', 'EC', 'sig'], ['RS256', 'RSA', 'sig']]);
      for (const key of jwks.keys) {
        expect(key.d).toEqual(expect.any(String));
        expect(key.kid).toMatch(/^[A-Za-z0-9_-]{43}$/);
      }
      expect(generated.json).toEqual({ file: out, keys: jwks.keys.map((key) => ({ kid: key.kid, alg: key.alg, kty: key.kty, ...(key.crv ? { crv: key.crv } : {}) })) });
      expect(generated.stdout).not.toContain(jwks.keys[0]!.d);

      const auth = await createAuthServer({ baseUrl: 'http://127.0.0.1:1', apis: demoApis, keys: { jwks }, logger: capturingLogger().logger });
      try {
        const http = createServer(auth.app.callback());
        await new Promise<void>((resolve) => http.listen(0, '127.0.0.1', resolve));
        const { port } = http.address() as AddressInfo;
        const published = (await (await fetch(`http://127.0.0.1:${port}/oauth2/jwks`)).json()) as { keys: JWK[] };
        http.closeAllConnections();
        await new Promise((resolve) => http.close(resolve));
        expect(published.keys.map((key) => key.kid).sort()).toEqual(jwks.keys.map((key) => key.kid).sort());
        expect(published.keys.every((key) => key.d === undefined)).toBe(true);
      } finally {
        await auth.close();
      }

      const refused = await cli(['keys', 'generate', '--out', out]);
      expect(refused.code).toBe(1);
      expect(refused.stderr).toContain('exists; use --force');
      expect(readFileSync(out, 'utf8')).toBe(`${JSON.stringify(jwks, null, 2)}\n`);

      const forced = await cli(['keys', 'generate', '--out', out, '--force', '--alg', 'EdDSA', '--alg', 'PS256', '--alg', 'RS256']);
      expect(forced.code).toBe(0);
      expect(forced.stdout).toContain('kid');
      expect(statSync(out).mode & 0o777).toBe(0o600);
      const replaced = JSON.parse(readFileSync(out, 'utf8')) as { keys: JWK[] };
      expect(replaced.keys.map((key) => key.alg)).toEqual(['EdDSA', 'PS256', 'RS256']);

      const badAlg = await cli(['keys', 'generate', '--out', join(dir, 'x.json'), '--alg', 'HS256']);
      expect(badAlg.code).toBe(1);
      expect(badAlg.stderr).toContain('--alg: "HS256" is not one of');
      expect(existsSync(join(dir, 'x.json'))).toBe(false);
    });
  });

  describe('usage and connection errors', () => {
    it('exits 2 when Redis cannot be reached', async () => {
      const port = await freePort();
      const closed = await cli(['clients', 'list', '--tenant', 'acme', '--redis', `redis://127.0.0.1:${port}`]);
      expect(closed.code).toBe(2);
      expect(closed.stderr).toMatch(new RegExp(`^talent-auth: cannot connect to Redis at 127\\.0\\.0\\.1:${port}: connect ECONNREFUSED`));
      expect(closed.stderr.trim().split('\n')).toHaveLength(1);
      expect(closed.stderr).not.toContain('[ioredis]');

      const fromEnv = await cli(['apps', 'list', '--json'], { REDIS_URL: `redis://:hunter2@127.0.0.1:${port}` });
      expect(fromEnv.code).toBe(2);
      expect(JSON.parse(fromEnv.stderr)).toMatchObject({ error: 'connection_failed' });
      expect(fromEnv.stderr).not.toContain('hunter2');
    });

    it('exits 2 naming the failed TLS handshake when rediss:// meets a Redis without TLS, in about a second', async () => {
      const started = performance.now();
      const refused = await cli(['apps', 'list', '--redis', `rediss://:hunter2@127.0.0.1:${redis.port}`]);
      expect(refused.code).toBe(2);
      expect(refused.stderr).toBe(`talent-auth: TLS handshake failed at 127.0.0.1:${redis.port}: Redis there answers without TLS (connect with redis:// and no tls option, or turn TLS on in Redis)\n`);
      expect(performance.now() - started).toBeLessThan(4000);
    });

    it('exits 1 on a Redis database index that is not a number, in one line, before connecting', async () => {
      for (const database of ['abc', '1x']) {
        const refused = await cli(['apps', 'list', '--redis', `redis://:hunter2@127.0.0.1:${redis.port}/${database}`]);
        expect(refused.code).toBe(1);
        expect(refused.stderr).toBe('talent-auth: --redis: the database (the path after host:port) must be a non-negative integer, like /0\n');
      }
      const fromEnv = await cli(['apps', 'list', '--json'], { REDIS_URL: `${redis.url}?db=one` });
      expect(fromEnv.code).toBe(1);
      expect(JSON.parse(fromEnv.stderr)).toMatchObject({ error: 'usage_error', field: 'REDIS_URL', message: 'REDIS_URL: the db parameter must be a non-negative integer, like db=0' });
    });

    it('exits 1 naming the flag for usage errors', async () => {
      const noRedis = await cli(['clients', 'list', '--tenant', 'acme'], { REDIS_URL: undefined });
      expect(noRedis.code).toBe(1);
      expect(noRedis.stderr).toContain('no Redis store given: --redis <url>, --store-config <file>, or REDIS_URL, REDIS_CLUSTER_NODES or REDIS_SENTINELS');

      const unknownFlag = await cli(['clients', 'list', '--tenat', 'acme']);
      expect(unknownFlag.code).toBe(1);
      expect(unknownFlag.stderr).toContain("Unknown option '--tenat'");

      const foreignFlag = await cli(['apps', 'list', '--tenant', 'acme']);
      expect(foreignFlag.code).toBe(1);
      expect(foreignFlag.stderr).toContain('apps list does not take --tenant');

      const missingId = await cli(['clients', 'delete', '--json']);
      expect(missingId.code).toBe(1);
      expect(JSON.parse(missingId.stderr)).toMatchObject({ error: 'usage_error', message: 'clients delete: missing <clientId>' });

      const unknown = await cli(['tenants', 'list']);
      expect(unknown.code).toBe(1);
      expect(unknown.stderr).toContain('unknown command "tenants"');
    });

    it('has help for every command', async () => {
      const top = await cli(['--help']);
      expect(top.code).toBe(0);
      expect(top.stdout).toContain('Usage: talent-auth <group> <command>');
      for (const command of ['clients create', 'clients list', 'clients update', 'clients rotate-secret', 'clients delete', 'apps create', 'apps list', 'apps update', 'apps rotate-secret', 'apps delete', 'keys generate']) {
        const help = await cli([...command.split(' '), '--help'], { REDIS_URL: undefined });
        expect(help.code).toBe(0);
        expect(help.stdout).toContain(`Usage: talent-auth ${command}`);
      }
      expect((await cli(['apps', '-h'])).stdout).toContain('Usage: talent-auth apps <command>');
    });
  });

  describe('audit', () => {
    it('records what the CLI changes as the operator, and lists a tenant\'s or the platform\'s events', async () => {
      const created = await cli([...payroll, '--tenant', 'audited', '--json']);
      expect(created.code).toBe(0);
      const id = created.json.client_id as string;
      expect((await cli(['clients', 'rotate-secret', id])).code).toBe(0);
      expect((await cli(['clients', 'delete', id])).code).toBe(0);
      const listed = await cli(['audit', 'list', '--tenant', 'audited', '--json']);
      expect(listed.code).toBe(0);
      expect(listed.json.events.map((event: { type: string }) => event.type)).toEqual([
        'client_configuration.deleted', 'client_configuration.secret_rotated', 'client_configuration.created',
      ]);
      expect(listed.json.events[0]).toMatchObject({ tenant: 'audited', actor: { type: 'operator' }, target: { type: 'client_configuration', id } });
      expect(listed.stdout).not.toContain(created.json.client_secret);
      const table = await cli(['audit', 'list', '--tenant', 'audited', '--type', 'client_configuration.created']);
      expect(table.stdout).toMatch(/^TIME\s+TYPE\s+ACTOR\s+TARGET\s+ADDRESS/);
      expect(table.stdout).toContain(`client_configuration:${id}`);
      const paged = await cli(['audit', 'list', '--tenant', 'audited', '--limit', '1']);
      expect(paged.stdout).toMatch(/More: talent-auth audit list --tenant audited --cursor [A-Za-z0-9_-]+\.[A-Za-z0-9_-]{22}/);
      // The cursor is sealed under a secret kept in the store: another process (the next command) takes it.
      const cursor = /--cursor (\S+)/.exec(paged.stdout)![1]!;
      const next = await cli(['audit', 'list', '--tenant', 'audited', '--limit', '1', '--cursor', cursor, '--json']);
      expect(next.code).toBe(0);
      expect(next.json.events.map((event: { type: string }) => event.type)).toEqual(['client_configuration.secret_rotated']);
      const forged = await cli(['audit', 'list', '--tenant', 'audited', '--cursor', '0-0']);
      expect(forged.code).toBe(1);
      expect(forged.stderr).toContain('cursor is not one this server gave');
      expect((await cli(['audit', 'list', '--tenant', 'nobody-here', '--json'])).json).toEqual({ events: [] });
    });

    it('records key changes when a store is given', async () => {
      const file = join(dir, 'audit-jwks.json');
      expect((await cli(['keys', 'generate', '--out', file])).code).toBe(0);
      const added = await cli(['keys', 'add', '--file', file, '--alg', 'ES256', '--json']);
      expect(added.stderr).toBe('');
      const kid = added.json.added[0].kid as string;
      expect((await cli(['keys', 'promote', '--file', file, '--kid', kid])).code).toBe(0);
      const platform = await cli(['audit', 'list', '--platform', '--json']);
      expect(platform.json.events.slice(0, 2)).toEqual([
        expect.objectContaining({ type: 'signing_key.promoted', actor: { type: 'operator' }, target: { type: 'signing_key', id: kid }, details: { alg: 'ES256' } }),
        expect.objectContaining({ type: 'signing_key.added', target: { type: 'signing_key', id: kid } }),
      ]);
    });

    it('refuses a list without a tenant, or with a bad query', async () => {
      for (const [args, message] of [
        [['audit', 'list'], /--tenant <id>/],
        [['audit', 'list', '--tenant', 'a', '--platform'], /--tenant <id>/],
        [['audit', 'list', '--tenant', 'a', '--limit', 'x'], /--limit must be a number/],
        [['audit', 'list', '--tenant', 'a', '--type', 'nope'], /type must be one of/],
        [['audit', 'list', '--tenant', 'a', '--since', 'yesterday'], /since must be an ISO 8601 time/],
      ] as const) {
        const run = await cli([...args]);
        expect(run.code).toBe(1);
        expect(run.stderr).toMatch(message);
      }
    });
  });

  describe('interoperability with the server', () => {
    it('a client made by the CLI gets a token from a server on the same store; rotation and deletion reach the server at once', async () => {
      const jwksFile = join(dir, 'server-jwks.json');
      expect((await cli(['keys', 'generate', '--out', jwksFile])).code).toBe(0);
      const jwks = JSON.parse(readFileSync(jwksFile, 'utf8')) as { keys: JWK[] };
      const prefix = 'interop:';
      const server = await startServer({ store: { type: 'redis', url: redis.url, keyPrefix: prefix }, apis: demoApis, keys: { jwks } });
      try {
        const created = await cli([...payroll, '--key-prefix', prefix, '--json']);
        expect(created.code).toBe(0);
        const { client_id: clientId, client_secret: secret } = created.json;

        const token = await postToken(server.oauthUrl, { grant_type: 'client_credentials', scope: 'scim.read' }, { authorization: basic(clientId, secret) });
        expect(token.status).toBe(200);
        const accessToken = token.body.access_token as string;
        expect(decodeProtectedHeader(accessToken).kid).toBe(jwks.keys.find((key) => key.alg === 'ES256')!.kid);
        const publicKeys = { keys: jwks.keys.map(({ d: _d, p: _p, q: _q, dp: _dp, dq: _dq, qi: _qi, ...rest }) => rest) };
        const { payload } = await jwtVerify(accessToken, createLocalJWKSet(publicKeys), { issuer: server.auth.issuer, audience: server.auth.audience });
        expect(payload).toMatchObject({
          client_id: clientId,
          tenant: 'acme',
          scope: 'scim.read',
          constraints: { scim: { group: ['eng', 'ops'], department: ['rnd'] } },
        });

        // The server caches client lookups; the CLI's writes publish the change message that drops them.
        const rotated = await cli(['clients', 'rotate-secret', clientId, '--key-prefix', prefix, '--json']);
        expect(rotated.code).toBe(0);
        const old = await postToken(server.oauthUrl, { grant_type: 'client_credentials' }, { authorization: basic(clientId, secret) });
        expect(old.status).toBe(401);
        const fresh = await postToken(server.oauthUrl, { grant_type: 'client_credentials' }, { authorization: basic(clientId, rotated.json.client_secret) });
        expect(fresh.status).toBe(200);
        expect((fresh.body.scope as string).split(' ').sort()).toEqual(['manage.subscriptions', 'scim.read', 'scim.write']);

        // The server's own service sees the CLI's record, and the CLI sees the server's.
        expect(await server.auth.clientConfigurations.get(clientId)).toMatchObject({ name: 'Payroll sync', tenant: 'acme' });
        const viaServer = await server.auth.clientConfigurations.create({ tenant: 'acme', name: 'From server', category: 'x', resources: { users: { scopes: ['user.read'] } } });
        const listed = await cli(['clients', 'list', '--tenant', 'acme', '--key-prefix', prefix, '--json']);
        expect(listed.json.clients.map((client: { client_id: string }) => client.client_id)).toEqual([clientId, viaServer.clientId]);

        expect((await cli(['clients', 'delete', clientId, '--key-prefix', prefix])).code).toBe(0);
        const gone = await postToken(server.oauthUrl, { grant_type: 'client_credentials' }, { authorization: basic(clientId, rotated.json.client_secret) });
        expect(gone.status).toBe(401);
        expect(gone.body.error).toBe('invalid_client');
      } finally {
        await server.stop();
      }
    });

    it('sign-ins unlock: lifts the hold a server keeps, with the server\'s cookie key (COOKIE_KEYS or --cookie-key), recorded with a hint', async () => {
      const prefix = 'interop-signins:';
      const cookieKeys = ['the-servers-first-cookie-key-0123456789', 'an-older-cookie-key-of-the-server-0123456'];
      const server = await startServer({
        store: { type: 'redis', url: redis.url, keyPrefix: prefix },
        accounts: testAccounts([{ sub: 'carol', password: 'carol-pw', tenant: 'acme' }]),
        cookieKeys,
        rateLimits: { authorize: false, failedSignIn: { perUsername: { max: 2, windowSeconds: 600 }, perAddress: { max: 100, windowSeconds: 600 } } },
      });
      try {
        const redirectUri = 'http://127.0.0.1:5173/callback';
        const app = await server.auth.appRegistrations.create({ name: 'App', redirectUris: [redirectUri], clientType: 'public' });
        const attempt = async (password: string, username = 'carol') => {
          const agent = new UserAgent(server.baseUrl);
          const query = new URLSearchParams({ response_type: 'code', client_id: app.clientId, redirect_uri: redirectUri, scope: 'openid', state: 's', code_challenge: pkcePair().challenge, code_challenge_method: 'S256' });
          const step = await agent.submit(await agent.request(`${server.oauthUrl}/authorize?${query}`), { username, password });
          return step.html.includes('value="allow"') ? 'signed in' : step.status;
        };
        expect([await attempt('x', 'Carol'), await attempt('y'), await attempt('carol-pw')]).toEqual([401, 401, 429]);

        const unlock = (args: string[], env: Record<string, string | undefined> = {}) => cli(['sign-ins', 'unlock', '--key-prefix', prefix, ...args], { COOKIE_KEYS: undefined, ...env });
        const noKey = await unlock(['--username', 'carol']);
        expect(noKey.code).toBe(1);
        expect(noKey.stderr).toMatch(/COOKIE_KEYS .*--cookie-key/);
        // Another key finds nothing: nothing unlocked, and it says what to check.
        const wrongKey = await unlock(['--username', 'carol', '--cookie-key', cookieKeys[1]!]);
        expect(wrongKey.code).toBe(0);
        expect(wrongKey.stdout).toMatch(/^Nothing to unlock: .*cookie key/);
        expect(await attempt('carol-pw')).toBe(429);
        const missing = await unlock(['--username', ''], { COOKIE_KEYS: cookieKeys.join(',') });
        expect(missing.code).toBe(1);
        expect(missing.stderr).toContain('username: must not be empty');

        const done = await unlock(['--username', 'CAROL', '--json'], { COOKIE_KEYS: cookieKeys.join(',') });
        expect(done.stderr).toBe('');
        expect(done.json).toEqual({ unlocked: true });
        expect(await attempt('carol-pw')).toBe('signed in');
        expect((await unlock(['--username', 'carol', '--cookie-key', cookieKeys[0]!])).stdout).toMatch(/^Nothing to unlock/);

        const events = await cli(['audit', 'list', '--platform', '--type', 'sign_in.unlocked', '--key-prefix', prefix, '--json']);
        expect(events.json.events.map((event: { details: unknown }) => event.details)).toEqual([
          { failures: 0, user_hint: expect.stringMatching(/^[A-Za-z0-9_-]{22}$/) },
          { failures: 2, user_hint: expect.stringMatching(/^[A-Za-z0-9_-]{22}$/) },
          { failures: 0, user_hint: expect.stringMatching(/^[A-Za-z0-9_-]{22}$/) },
        ]);
        expect(events.json.events[0]).toMatchObject({ actor: { type: 'operator' } });
        expect(events.stdout.toLowerCase()).not.toContain('carol');
        expect((await cli(['sign-ins', 'unlock', '--help'])).stdout).toContain('Usage: talent-auth sign-ins unlock --username');
      } finally {
        await server.stop();
      }
    });

    it('an app registered by the CLI is accepted by the engine at /oauth2/authorize', async () => {
      const prefix = 'interop-apps:';
      const server = await startServer({ store: { type: 'redis', url: redis.url, keyPrefix: prefix } });
      try {
        const redirectUri = 'http://127.0.0.1:5173/callback';
        for (const type of ['public', 'confidential']) {
          const app = await cli(['apps', 'create', '--name', `CLI ${type}`, '--redirect-uri', redirectUri, '--type', type, '--key-prefix', prefix, '--json']);
          expect(app.code).toBe(0);
          const query = new URLSearchParams({
            response_type: 'code', client_id: app.json.client_id, redirect_uri: redirectUri, scope: 'openid scim.read',
            state: 'the-state', code_challenge: pkcePair().challenge, code_challenge_method: 'S256',
          });
          const response = await fetch(`${server.oauthUrl}/authorize?${query}`, { redirect: 'manual' });
          expect(response.status).toBe(303);
          expect(response.headers.get('location')).toContain('/oauth2/interaction/');
          expect(await server.auth.appRegistrations.get(app.json.client_id)).toMatchObject({ clientType: type, redirectUris: [redirectUri] });
        }
        const deep = await cli(['apps', 'create', '--name', 'Mobile', '--redirect-uri', 'com.example.app://callback', '--type', 'public', '--key-prefix', prefix, '--json']);
        expect(deep.code).toBe(0);
        const query = new URLSearchParams({
          response_type: 'code', client_id: deep.json.client_id, redirect_uri: 'com.example.app://callback', scope: 'openid',
          state: 's', code_challenge: pkcePair().challenge, code_challenge_method: 'S256',
        });
        expect((await fetch(`${server.oauthUrl}/authorize?${query}`, { redirect: 'manual' })).status).toBe(303);
      } finally {
        await server.stop();
      }
    });
  });
});
