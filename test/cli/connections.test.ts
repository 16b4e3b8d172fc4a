import { existsSync, mkdtempSync, rmSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { createRedisStore } from '../../adapters/redis/index.js';
import type { Store } from '../../adapters/types.js';
import { AuditTrail, DEFAULT_AUDIT_SETTINGS } from '../../src/audit/trail.js';
import { Connections } from '../../src/federation/connections.js';
import { Sealer } from '../../src/records/sealed.js';
import { CLI_ENTRY, runCli, type CliRun } from '../support/cli.js';
import { capturingLogger } from '../support/fixtures.js';
import { startRedis, type RedisServer } from '../support/redis.js';

const PREFIX = 'cli-connections:';
const FACTOR_KEY = 'factor-key-of-the-server-0123456789abcdef';
const COOKIE_KEY = 'the-servers-first-cookie-key-0123456789';
const SECRET = 'okta-client-secret-5e7a9c1b3d5f7a9c1b3d';
const NEW_SECRET = 'okta-client-secret-next-2c4e6a8b0d2f4a';

/**
 * `talent-auth connections list|create|update|delete` (src/cli/connections.ts): the built CLI as a
 * subprocess on a real redis-server. The secret comes from stdin or an environment variable, never
 * from argv, is never printed, and is sealed as the server seals it (under its first factor key);
 * every change is audited with the operator and her --actor name; bad input exits 1 naming the field.
 */
describe('talent-auth connections (built, on a real redis-server)', () => {
  let redis: RedisServer;
  let dir: string;
  let store: Store;
  /** The server's view: its Connections, sealing under its factor key. */
  let server: Connections;
  let audit: AuditTrail;
  const runs: CliRun[] = [];

  async function cli(args: string[], env: Record<string, string | undefined> = {}, input?: string): Promise<CliRun> {
    const run = await runCli([...args, '--key-prefix', PREFIX], dir, { ...process.env, REDIS_URL: redis.url, COOKIE_KEYS: undefined, FACTOR_KEYS: FACTOR_KEY, OKTA_SECRET: undefined, ...env }, input);
    runs.push(run);
    return run;
  }
  const create = (extra: string[] = [], env: Record<string, string | undefined> = {}, input?: string) => cli([
    'connections', 'create', '--tenant', 'acme', '--name', 'Acme Okta', '--issuer', 'https://acme.okta.com', '--client-id', 'okta-client',
    '--domain', 'acme.example', '--json', ...extra,
  ], env, input);

  beforeAll(async () => {
    if (!existsSync(CLI_ENTRY)) throw new Error('run `npm run build` first (the test command builds)');
    redis = await startRedis();
    dir = mkdtempSync(join(tmpdir(), 'talent-auth-cli-connections-'));
    store = await createRedisStore({ url: redis.url, keyPrefix: PREFIX });
    audit = new AuditTrail(store, DEFAULT_AUDIT_SETTINGS, capturingLogger().logger, undefined);
    server = new Connections(store.records, new Sealer([FACTOR_KEY], 'connection-secrets'), audit);
  });
  afterEach(async () => {
    for (const connection of await server.list('acme')) await server.delete(connection.id);
  });
  afterAll(async () => {
    // No run ever printed a secret.
    for (const run of runs) {
      expect(run.stdout + run.stderr).not.toContain(SECRET);
      expect(run.stdout + run.stderr).not.toContain(NEW_SECRET);
    }
    await store.close();
    await redis.stop();
    rmSync(dir, { recursive: true, force: true });
  });

  it('creates with the secret from standard input, sealed under the server\'s factor key; never printed; audited with --actor', async () => {
    const run = await create(['--client-secret-stdin', '--scope', 'groups', '--claim', 'email=upn', '--sign-out-upstream', '--actor', 'jane'], {}, `${SECRET}\n`);
    expect(run.stderr).toBe('');
    expect(run.code).toBe(0);
    expect(run.json).toMatchObject({ tenant: 'acme', name: 'Acme Okta', client_id: 'okta-client', has_client_secret: true, scopes: ['openid', 'groups'], claim_mapping: { email: 'upn' }, sign_out_upstream: true, domains: ['acme.example'] });
    expect(run.json).not.toHaveProperty('client_secret');
    const id = run.json.id as string;
    // The server opens it (its line break was not the secret's).
    expect((await server.forSignIn(id))?.clientSecret).toBe(SECRET);
    const [event] = (await audit.list({ tenant: 'acme', type: 'connection.created' })).events;
    expect(event).toMatchObject({ actor: { type: 'operator', id: 'jane' }, target: { type: 'connection', id } });
    expect(JSON.stringify(event)).not.toContain(SECRET);
  });

  it('creates with the secret from a named environment variable; the human output says a secret is kept, not which', async () => {
    const run = await cli(['connections', 'create', '--tenant', 'acme', '--name', 'Acme Okta', '--issuer', 'https://acme.okta.com', '--client-id', 'okta-client', '--client-secret-env', 'OKTA_SECRET'], { OKTA_SECRET: SECRET });
    expect(run.code).toBe(0);
    expect(run.stdout).toMatch(/Created connection "Acme Okta" in tenant acme\./);
    expect(run.stdout).toMatch(/client_secret_basic \(client secret kept, sealed\)/);
    const [connection] = await server.list('acme');
    expect((await server.forSignIn(connection!.id))?.clientSecret).toBe(SECRET);
  });

  it('seals under the first cookie key when no factor key is given (the server without factorKeys)', async () => {
    const run = await create(['--client-secret-env', 'OKTA_SECRET'], { OKTA_SECRET: SECRET, FACTOR_KEYS: undefined, COOKIE_KEYS: `${COOKIE_KEY},older-key-0123456789abcdefghijklmno` });
    expect(run.code).toBe(0);
    const cookieSealed = new Connections(store.records, new Sealer([COOKIE_KEY], 'connection-secrets'));
    expect((await cookieSealed.forSignIn(run.json.id as string))?.clientSecret).toBe(SECRET);
  });

  it.each<[string, string[], Record<string, string | undefined>, string | undefined, string]>([
    ['a secret on the command line', ['--client-secret', SECRET], {}, undefined, '--client-secret'],
    ['stdin and env at once', ['--client-secret-stdin', '--client-secret-env', 'OKTA_SECRET'], { OKTA_SECRET: SECRET }, SECRET, '--client-secret-env'],
    ['an empty standard input', ['--client-secret-stdin'], {}, '', '--client-secret-stdin'],
    ['an environment variable not set', ['--client-secret-env', 'OKTA_SECRET'], {}, undefined, '--client-secret-env'],
    ['a secret but no key to seal it', ['--client-secret-env', 'OKTA_SECRET'], { OKTA_SECRET: SECRET, FACTOR_KEYS: undefined }, undefined, '--factor-key-env'],
    ['the sealing key on the command line', ['--client-secret-env', 'OKTA_SECRET', '--factor-key', FACTOR_KEY], { OKTA_SECRET: SECRET }, undefined, '--factor-key'],
    ['the sealing key on the command line, even without a secret', ['--factor-key', FACTOR_KEY], {}, undefined, '--factor-key'],
    ['--factor-key-env naming a variable not set', ['--client-secret-env', 'OKTA_SECRET', '--factor-key-env', 'SEALING_KEY'], { OKTA_SECRET: SECRET }, undefined, '--factor-key-env'],
    ['a base URL with a query', ['--base-url', 'https://auth.example.com/?x=1'], {}, undefined, '--base-url'],
    ['a base URL that is no http(s) URL', ['--base-url', 'auth.example.com'], {}, undefined, '--base-url'],
    ['a bad claim flag', ['--claim', 'groups=roles'], {}, undefined, '--claim'],
    ['an ftp issuer', ['--issuer', 'ftp://acme.okta.com'], {}, undefined, 'issuer'],
    ['a domain that is an IP address', ['--domain', '10.0.0.1'], {}, undefined, 'domains.1'],
    ['a method that needs a secret, without one', ['--token-endpoint-auth-method', 'client_secret_post'], {}, undefined, 'clientSecret'],
    ['an unknown method', ['--token-endpoint-auth-method', 'none'], {}, undefined, 'tokenEndpointAuthMethod'],
    ['an empty actor', ['--actor', ''], {}, undefined, 'actor'],
  ])('refuses %s: exit 1 naming the field, nothing stored', async (_name, extra, env, input, field) => {
    const run = await create(extra, env, input);
    expect(run.code).toBe(1);
    expect(JSON.parse(run.stderr)).toMatchObject({ field });
    expect(await server.list('acme')).toEqual([]);
  });

  it('refuses --factor-key saying why (ps), never echoing the key', async () => {
    const run = await create(['--client-secret-env', 'OKTA_SECRET', '--factor-key', FACTOR_KEY], { OKTA_SECRET: SECRET });
    expect(run.code).toBe(1);
    expect(JSON.parse(run.stderr)).toMatchObject({ field: '--factor-key' });
    expect(run.stderr).toMatch(/sealing key on the command line shows in ps/);
    expect(run.stderr).toContain('--factor-key-env');
    expect(run.stderr).not.toContain(FACTOR_KEY);
    expect(await server.list('acme')).toEqual([]);
    const update = await cli(['connections', 'update', '00000000-0000-4000-8000-000000000000', '--name', 'x', '--factor-key', FACTOR_KEY, '--json']);
    expect(update.code).toBe(1);
    expect(JSON.parse(update.stderr)).toMatchObject({ field: '--factor-key' });
  });

  it('takes the sealing key from the variable --factor-key-env names, before FACTOR_KEYS', async () => {
    const other = 'another-sealing-key-of-a-server-0123456789ab';
    const run = await create(['--client-secret-env', 'OKTA_SECRET', '--factor-key-env', 'SEALING_KEYS'], { OKTA_SECRET: SECRET, SEALING_KEYS: `${other},older-one-0123456789abcdefghijklmnopq` });
    expect(run.code).toBe(0);
    const id = run.json.id as string;
    const otherSealed = new Connections(store.records, new Sealer([other], 'connection-secrets'));
    expect((await otherSealed.forSignIn(id))?.clientSecret).toBe(SECRET);
    // Not under FACTOR_KEYS (also set): the server with that key could not open it.
    expect((await server.forSignIn(id))?.clientSecret).toBeUndefined();
  });

  it("prints the connection's own redirect URI to register: the template with its id, or whole with --base-url", async () => {
    const plain = await cli(['connections', 'create', '--tenant', 'acme', '--name', 'Acme Okta', '--issuer', 'https://acme.okta.com', '--client-id', 'okta-client', '--domain', 'acme.example']);
    expect(plain.code).toBe(0);
    const [first] = await server.list('acme');
    expect(plain.stdout).toContain(`Register its redirect URI at the provider:\n  <baseUrl><pathPrefix>/oauth2/federation/callback/${first!.id}\n`);
    expect(plain.stdout).toContain('--base-url');

    const whole = await cli(['connections', 'create', '--tenant', 'acme', '--name', 'Acme Entra', '--issuer', 'https://login.example.com', '--client-id', 'entra', '--base-url', 'https://auth.example.com/id/']);
    expect(whole.code).toBe(0);
    const second = (await server.list('acme')).find((each) => each.name === 'Acme Entra')!;
    expect(whole.stdout).toContain(`Register its redirect URI at the provider:\n  https://auth.example.com/id/oauth2/federation/callback/${second.id}\n`);
    expect(whole.stdout).not.toContain('<baseUrl>');

    const json = await cli(['connections', 'list', '--tenant', 'acme', '--base-url', 'https://auth.example.com', '--json']);
    expect((json.json.connections as Array<{ id: string; redirect_uri?: string }>).map((each) => each.redirect_uri))
      .toEqual([`https://auth.example.com/oauth2/federation/callback/${first!.id}`, `https://auth.example.com/oauth2/federation/callback/${second.id}`]);
    // Without --base-url the CLI does not know it: no redirect_uri rather than a wrong one.
    expect((await cli(['connections', 'list', '--tenant', 'acme', '--json'])).json.connections).toEqual([expect.not.objectContaining({ redirect_uri: expect.anything() }), expect.not.objectContaining({ redirect_uri: expect.anything() })]);
  });

  it('the operator may name a loopback provider over http (development); missing flags are named', async () => {
    expect((await create(['--issuer', 'http://127.0.0.1:4455'])).json).toMatchObject({ issuer: 'http://127.0.0.1:4455', token_endpoint_auth_method: 'private_key_jwt', has_client_secret: false });
    const missing = await cli(['connections', 'create', '--tenant', 'acme', '--name', 'x', '--json']);
    expect(missing.code).toBe(1);
    expect(JSON.parse(missing.stderr)).toMatchObject({ error: 'usage_error', field: '--issuer' });
  });

  it('lists a tenant\'s connections (a table, or JSON), updates and deletes them', async () => {
    const id = (await create(['--client-secret-env', 'OKTA_SECRET'], { OKTA_SECRET: SECRET })).json.id as string;
    const table = await cli(['connections', 'list', '--tenant', 'acme']);
    expect(table.code).toBe(0);
    expect(table.stdout).toMatch(/^ID\s+NAME\s+ISSUER\s+DOMAINS\s+SECRET\n/);
    expect(table.stdout).toContain(`${id}  Acme Okta  https://acme.okta.com  acme.example  kept`);
    expect((await cli(['connections', 'list', '--tenant', 'globex'])).stdout).toBe('No connections in tenant globex.\n');
    expect((await cli(['connections', 'list', '--tenant', 'acme', '--json'])).json).toEqual({ connections: [expect.objectContaining({ id, has_client_secret: true })] });

    const renamed = await cli(['connections', 'update', id, '--name', 'Okta', '--domain', 'acme.example', '--domain', 'acme.test', '--client-secret-stdin', '--actor', 'jane', '--json'], {}, NEW_SECRET);
    expect(renamed.code).toBe(0);
    expect(renamed.json).toMatchObject({ name: 'Okta', domains: ['acme.example', 'acme.test'], has_client_secret: true });
    expect((await server.forSignIn(id))?.clientSecret).toBe(NEW_SECRET);
    const [updated] = (await audit.list({ tenant: 'acme', type: 'connection.updated' })).events;
    expect(updated).toMatchObject({ actor: { type: 'operator', id: 'jane' }, details: { fields: ['name', 'domains', 'clientSecret'] } });

    const toKey = await cli(['connections', 'update', id, '--token-endpoint-auth-method', 'private_key_jwt', '--remove-client-secret', '--json']);
    expect(toKey.json).toMatchObject({ token_endpoint_auth_method: 'private_key_jwt', has_client_secret: false });
    expect((await cli(['connections', 'update', id])).code).toBe(1);
    expect(JSON.parse((await cli(['connections', 'update', id, '--sign-out-upstream', '--no-sign-out-upstream', '--json'])).stderr)).toMatchObject({ field: '--no-sign-out-upstream' });
    expect(JSON.parse((await cli(['connections', 'update', id, '--domain', 'gmail', '--json'])).stderr)).toMatchObject({ field: 'domains.0' });

    const deleted = await cli(['connections', 'delete', id, '--actor', 'jane']);
    expect(deleted.code).toBe(0);
    expect(deleted.stdout).toBe(`Deleted connection ${id}; its domains are free again.\n`);
    expect(await server.list('acme')).toEqual([]);
    const again = await cli(['connections', 'delete', id, '--json']);
    expect(again.code).toBe(1);
    expect(JSON.parse(again.stderr)).toMatchObject({ error: 'not_found' });
    expect((await audit.list({ tenant: 'acme', type: 'connection.deleted' })).events[0]).toMatchObject({ actor: { type: 'operator', id: 'jane' } });
  });

  it('has help for the group and each command; a flag of another command is refused', async () => {
    expect((await cli(['connections', '--help'])).stdout).toContain('talent-auth connections <command>');
    const help = await cli(['connections', 'create', '--help']);
    expect(help.stdout).toContain('--client-secret-stdin');
    expect(help.stdout).toContain('/oauth2/federation/callback/<id>');
    expect(help.stdout).toContain('--base-url');
    expect(help.stdout).toContain('--factor-key-env');
    expect(help.stdout).toMatch(/--factor-key is refused/);
    const wrong = await cli(['connections', 'list', '--tenant', 'acme', '--issuer', 'https://x.example', '--json']);
    expect(wrong.code).toBe(1);
    expect(JSON.parse(wrong.stderr)).toMatchObject({ field: '--issuer' });
  });
});
