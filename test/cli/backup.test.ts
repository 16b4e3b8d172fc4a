import { chmodSync, existsSync, mkdtempSync, readFileSync, rmSync, statSync, truncateSync, writeFileSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { demoApis } from '../support/fixtures.js';
import { freePort, startRedis, type RedisServer } from '../support/redis.js';
import { basic, postToken, startServer } from '../support/server.js';
import { CLI_ENTRY, runCli, type CliRun } from '../support/cli.js';

const EMPTY_COUNTS = { created: 0, updated: 0, unchanged: 0 };

describe('talent-auth export and import (built, as a subprocess, on a real redis-server)', () => {
  let redis: RedisServer;
  let dir: string;
  let apisFile: string;

  function cli(args: string[], env: Record<string, string | undefined> = {}): Promise<CliRun> {
    return runCli(args, dir, { ...process.env, REDIS_URL: redis.url, TALENT_AUTH_APIS: apisFile, ...env });
  }

  beforeAll(async () => {
    if (!existsSync(CLI_ENTRY)) throw new Error('run `npx tsc -p tsconfig.build.json` first (the test command builds)');
    redis = await startRedis();
    dir = mkdtempSync(join(tmpdir(), 'talent-auth-backup-'));
    apisFile = join(dir, 'apis.json');
    writeFileSync(apisFile, JSON.stringify(demoApis));
  });
  afterAll(async () => {
    await redis.stop();
    rmSync(dir, { recursive: true, force: true });
  });

  it('exports to a 0600 file without any secret in clear, imports into an empty deployment (dry run, then for real, then again: unchanged), and the secret still authenticates there', async () => {
    const source = ['--key-prefix', 'src1:'];
    const created = await cli(['clients', 'create', ...source, '--tenant', 'acme', '--name', 'Payroll', '--category', 'sync', '--resource', 'scim:scim.read', '--json']);
    expect(created.code).toBe(0);
    const { client_id: clientId, client_secret: secret } = created.json as { client_id: string; client_secret: string };
    const app = await cli(['apps', 'create', ...source, '--name', 'Acme web', '--redirect-uri', 'https://acme.example/cb', '--type', 'confidential', '--json']);
    expect(app.code).toBe(0);

    const file = join(dir, 'backup.json');
    const exported = await cli(['export', ...source, '--consents', '--out', file, '--json']);
    expect(exported.stderr).toBe('');
    expect(exported.code).toBe(0);
    expect(exported.json).toEqual({ file, exported_at: expect.any(String), counts: { client_configurations: 1, app_registrations: 1, tenant_settings: 0, consents: 0 } });
    expect(statSync(file).mode & 0o777).toBe(0o600);
    const text = readFileSync(file, 'utf8');
    expect(text).not.toContain(secret);
    expect(text).not.toContain(app.json.client_secret);
    expect(JSON.parse(text)).toMatchObject({ format: 'talent-auth.backup', version: 1 });
    // Never over an existing file without --force.
    const again = await cli(['export', ...source, '--out', file]);
    expect(again.code).toBe(1);
    expect(again.stderr).toMatch(/exists; use --force/);
    expect((await cli(['export', ...source, '--out', file, '--force'])).code).toBe(0);
    // Without --out the document is the output.
    const printed = await cli(['export', ...source, '--tenant', 'acme']);
    expect(printed.code).toBe(0);
    expect(printed.json).toMatchObject({ format: 'talent-auth.backup', tenant: 'acme', records: { clientConfigurations: [{ clientId }], appRegistrations: [] } });

    const target = ['--key-prefix', 'dst1:'];
    const dry = await cli(['import', ...target, '--file', file, '--dry-run', '--json']);
    expect(dry.code).toBe(0);
    expect(dry.json).toEqual({
      dry_run: true,
      changed: 2,
      counts: { client_configurations: { ...EMPTY_COUNTS, created: 1 }, app_registrations: { ...EMPTY_COUNTS, created: 1 }, tenant_settings: EMPTY_COUNTS, consents: EMPTY_COUNTS },
    });
    expect((await cli(['clients', 'list', ...target, '--tenant', 'acme', '--json'])).json).toEqual({ clients: [] });

    const restored = await cli(['import', ...target, '--file', file, '--actor', 'restore-job']);
    expect(restored.stderr).toBe('');
    expect(restored.code).toBe(0);
    expect(restored.stdout).toMatch(/^RECORDS\s+CREATED\s+UPDATED\s+UNCHANGED\nclient configurations\s+1\s+0\s+0\n/);
    expect(restored.stdout).toContain('Imported: 2 record(s) written');
    const second = await cli(['import', ...target, '--file', file, '--json']);
    expect(second.code).toBe(0);
    expect(second.json).toMatchObject({ dry_run: false, changed: 0, counts: { client_configurations: { ...EMPTY_COUNTS, unchanged: 1 }, app_registrations: { ...EMPTY_COUNTS, unchanged: 1 } } });
    expect((await cli(['import', ...target, '--file', file])).stdout).toContain('Nothing to change');
    const audit = await cli(['audit', 'list', ...target, '--tenant', 'acme', '--json']);
    expect(audit.json.events).toEqual([expect.objectContaining({ type: 'client_configuration.created', actor: { type: 'operator', id: 'restore-job' }, details: expect.objectContaining({ imported: true }) })]);

    // A server on the restored deployment takes the secret given at creation on the source.
    const server = await startServer({ store: { type: 'redis', url: redis.url, keyPrefix: 'dst1:' } });
    try {
      const token = await postToken(server.oauthUrl, { grant_type: 'client_credentials', scope: 'scim.read' }, { authorization: basic(clientId, secret) });
      expect(token.status).toBe(200);
    } finally {
      await server.stop();
    }
  });

  it('refuses a document with one bad record, naming it and its field, and writes nothing (exit 1)', async () => {
    const source = ['--key-prefix', 'src2:'];
    expect((await cli(['clients', 'create', ...source, '--tenant', 'acme', '--name', 'One', '--category', 'sync', '--resource', 'scim:scim.read'])).code).toBe(0);
    expect((await cli(['clients', 'create', ...source, '--tenant', 'globex', '--name', 'Two', '--category', 'sync', '--resource', 'scim:scim.read'])).code).toBe(0);
    const document = (await cli(['export', ...source])).json;
    document.records.clientConfigurations[1].resources = { scim: { scopes: ['scim.delete'] } };
    const bad = join(dir, 'bad.json');
    writeFileSync(bad, JSON.stringify(document));
    const target = ['--key-prefix', 'dst2:'];
    const refused = await cli(['import', ...target, '--file', bad, '--json']);
    expect(refused.code).toBe(1);
    const error = JSON.parse(refused.stderr);
    expect(error).toMatchObject({ error: 'validation_error', field: 'records.clientConfigurations.1.resources.scim.scopes' });
    expect(error.message).toContain(document.records.clientConfigurations[1].clientId);
    const human = await cli(['import', ...target, '--file', bad]);
    expect(human.code).toBe(1);
    expect(human.stderr).toMatch(/^talent-auth: records\.clientConfigurations\.1\.resources\.scim\.scopes: /);
    // Not even the first, valid record was written.
    expect((await cli(['export', ...target])).json.records).toEqual({ clientConfigurations: [], appRegistrations: [], tenantSettings: [] });
  });

  it.each([
    [['import'], /--file is required/],
    [['import', '--file', 'missing.json'], /cannot read the file \(ENOENT\)/],
    [['import', '--file', 'apis.json', '--consents'], /import does not take --consents/],
    [['export', '--dry-run'], /export does not take --dry-run/],
    [['export', '--force'], /--force replaces the file of --out/],
    [['export', 'everything'], /unexpected argument "everything"/],
  ])('%j: a usage error (exit 1)', async (args, message) => {
    const run = await cli(args);
    expect(run.code).toBe(1);
    expect(run.stderr).toMatch(message);
  });

  it('refuses a file that is not JSON, or JSON that is not a backup (exit 1)', async () => {
    const notJson = join(dir, 'not.json');
    writeFileSync(notJson, 'client_id,secret\n');
    const run = await cli(['import', '--file', notJson]);
    expect(run.code).toBe(1);
    // JSON.parse quotes the start of this file and gives no position: said without either.
    expect(run.stderr).toMatch(/not valid JSON$/m);
    expect(run.stderr).not.toContain('client_id');
    // Where it breaks, never the text around it (a digest, a user's ID).
    const broken = join(dir, 'broken.json');
    writeFileSync(broken, '{\n  "records": {\n    "consents": [{ "sub": "ann.private@acme.example" ]\n');
    const quoted = await cli(['import', '--file', broken]);
    expect(quoted.code).toBe(1);
    expect(quoted.stderr).toMatch(/not valid JSON \(line 3, column \d+\)/);
    expect(quoted.stderr).not.toContain('ann.private');
    // A file above the bound is not read.
    const huge = join(dir, 'huge.json');
    writeFileSync(huge, '');
    truncateSync(huge, 64 * 1024 * 1024 + 1);
    const big = await cli(['import', '--file', huge]);
    expect(big.code).toBe(1);
    expect(big.stderr).toMatch(/larger than 67108864 bytes/);
    rmSync(huge);
    const other = await cli(['import', '--file', apisFile, '--json']);
    expect(other.code).toBe(1);
    expect(JSON.parse(other.stderr)).toMatchObject({ error: 'validation_error', field: 'document' });
  });

  it('needs the API catalog to import client configurations or consents, as `clients create` does (exit 1); apps alone import without it', async () => {
    const source = ['--key-prefix', 'src4:'];
    expect((await cli(['clients', 'create', ...source, '--tenant', 'acme', '--name', 'One', '--category', 'sync', '--resource', 'scim:scim.read'])).code).toBe(0);
    expect((await cli(['apps', 'create', ...source, '--name', 'Web', '--redirect-uri', 'https://acme.example/cb', '--type', 'confidential'])).code).toBe(0);
    const document = (await cli(['export', ...source])).json;
    const file = join(dir, 'catalog.json');
    writeFileSync(file, JSON.stringify(document));
    const target = ['--key-prefix', 'dst4:'];
    const refused = await cli(['import', ...target, '--file', file], { TALENT_AUTH_APIS: undefined });
    expect(refused.code).toBe(1);
    expect(refused.stderr).toMatch(/--apis <file> or TALENT_AUTH_APIS is required/);
    expect((await cli(['export', ...target])).json.records).toEqual({ clientConfigurations: [], appRegistrations: [], tenantSettings: [] });
    writeFileSync(file, JSON.stringify({ ...document, records: { ...document.records, clientConfigurations: [] } }));
    const apps = await cli(['import', ...target, '--file', file, '--json'], { TALENT_AUTH_APIS: undefined });
    expect(apps.stderr).toBe('');
    expect(apps.json).toMatchObject({ changed: 1, counts: { app_registrations: { ...EMPTY_COUNTS, created: 1 } } });
  });

  it('export --force writes the replacing file 0600, even over a group-readable one', async () => {
    const file = join(dir, 'shared.json');
    writeFileSync(file, '{}');
    chmodSync(file, 0o640);
    const run = await cli(['export', '--key-prefix', 'src5:', '--out', file, '--force']);
    expect(run.code).toBe(0);
    expect(statSync(file).mode & 0o777).toBe(0o600);
    expect(JSON.parse(readFileSync(file, 'utf8'))).toMatchObject({ format: 'talent-auth.backup' });
  });

  it('says when Redis cannot be reached (exit 2), and has help', async () => {
    const port = await freePort();
    const run = await cli(['export', '--redis', `redis://127.0.0.1:${port}`]);
    expect(run.code).toBe(2);
    for (const command of ['export', 'import']) {
      const help = await cli([command, '--help']);
      expect(help.code).toBe(0);
      expect(help.stdout).toMatch(new RegExp(`^Usage: talent-auth ${command} `));
    }
    expect((await cli(['--help'])).stdout).toMatch(/\n {2}export {17}/);
  });
});
