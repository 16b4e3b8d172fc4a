import { mkdtempSync, rmSync, writeFileSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { exportJWK, generateKeyPair } from 'jose';
import { runCli, type CliRun } from '../support/cli.js';
import { demoApis } from '../support/fixtures.js';
import { startRedis, type RedisServer } from '../support/redis.js';

/**
 * `--profile` on `clients create` and `apps create` (policies/high-security.ts): the built CLI
 * on a real redis-server; a value other than the two profiles is a usage error, a record that does
 * not conform is refused naming the setting, and nothing is stored.
 */
describe('talent-auth CLI: --profile', () => {
  let redis: RedisServer;
  let dir: string;

  function cli(args: string[]): Promise<CliRun> {
    return runCli(args, dir, { ...process.env, REDIS_URL: redis.url, TALENT_AUTH_APIS: join(dir, 'apis.json') });
  }

  beforeAll(async () => {
    redis = await startRedis();
    dir = mkdtempSync(join(tmpdir(), 'talent-auth-cli-profile-'));
    writeFileSync(join(dir, 'apis.json'), JSON.stringify(demoApis));
  });
  afterAll(async () => {
    await redis.stop();
    rmSync(dir, { recursive: true, force: true });
  });

  const client = ['clients', 'create', '--tenant', 'acme', '--name', 'Payroll', '--category', 'payroll', '--resource', 'scim:scim.read'];

  it('a value other than standard or high-security is a usage error', async () => {
    const run = await cli([...client, '--profile', 'strict']);
    expect(run.code).toBe(1);
    expect(run.stderr).toContain('--profile must be standard or high-security');
  });

  it('a Basic client under the high-security profile is refused, naming the setting; none is stored', async () => {
    const run = await cli([...client, '--profile', 'high-security']);
    expect(run.code).toBe(1);
    expect(run.stderr).toContain('tokenEndpointAuthMethod: the high-security profile requires private_key_jwt');
    const list = await cli(['clients', 'list', '--tenant', 'acme', '--json']);
    expect(list.json).toEqual({ clients: [] });
  });

  it('a public app under the high-security profile is refused; standard is taken', async () => {
    const app = ['apps', 'create', '--name', 'SPA', '--type', 'public', '--redirect-uri', 'https://spa.example/cb'];
    const refused = await cli([...app, '--profile', 'high-security']);
    expect(refused.code).toBe(1);
    expect(refused.stderr).toContain('clientType: the high-security profile requires a confidential app');
    const standard = await cli([...app, '--profile', 'standard', '--json']);
    expect(standard.code).toBe(0);
    expect(standard.json).toMatchObject({ client_type: 'public' });
    expect(standard.json).not.toHaveProperty('profile');
  });

  it('a private_key_jwt client with DPoP required is created under the profile; update moves a client in and refuses a step out', async () => {
    const { publicKey } = await generateKeyPair('ES256');
    const jwksFile = join(dir, 'jwks.json');
    writeFileSync(jwksFile, JSON.stringify({ keys: [{ ...(await exportJWK(publicKey)), kid: 'k1' }] }));
    const keyed = [...client, '--auth-method', 'private_key_jwt', '--jwks-file', jwksFile, '--dpop', 'required', '--json'];
    const created = await cli([...keyed, '--profile', 'high-security']);
    expect(created.code).toBe(0);
    expect(created.json).toMatchObject({ profile: 'high-security', token_endpoint_auth_method: 'private_key_jwt', dpop: 'required' });
    const loosened = await cli(['clients', 'update', (created.json as { client_id: string }).client_id, '--dpop', 'optional']);
    expect(loosened.code).toBe(1);
    expect(loosened.stderr).toContain('dpop: the high-security profile requires');
    const standard = await cli(keyed);
    expect(standard.code).toBe(0);
    const moved = await cli(['clients', 'update', (standard.json as { client_id: string }).client_id, '--profile', 'high-security', '--json']);
    expect(moved.code).toBe(0);
    expect(moved.json).toMatchObject({ profile: 'high-security' });
  });
});
