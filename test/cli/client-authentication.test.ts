import { randomUUID } from 'node:crypto';
import { existsSync, mkdtempSync, rmSync, writeFileSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { JWT_BEARER_ASSERTION } from '../../policies/client-authentication.js';
import { CLI_ENTRY, runCli, type CliRun } from '../support/cli.js';
import { demoApis } from '../support/fixtures.js';
import { clientAssertion, clientKeyPair, type ClientKeyPair } from '../support/keys.js';
import { startRedis, type RedisServer } from '../support/redis.js';
import { basic, postToken, startServer, type RunningServer } from '../support/server.js';

const PREFIX = 'cli-keys:';
const SECRET = /^[A-Za-z0-9_-]{43}$/;

/**
 * `talent-auth clients|apps create|update` with `--auth-method`, `--jwks-file`, `--jwks-uri`,
 * `--dpop` and (apps) `--require-par` / `--no-require-par`: the built CLI as a subprocess on a real
 * redis-server, with a server on the same store that takes (or refuses) the client's assertions, so
 * that what the CLI registers is what the token endpoint uses: a key rotation without downtime, a
 * switch of method both ways (secret gone; a new one printed once), keys shown by ID and thumbprint
 * and never by their members, and every bad flag refused naming it.
 */
describe('talent-auth client authentication flags (built, on a real redis-server)', () => {
  let redis: RedisServer;
  let dir: string;
  let server: RunningServer;
  let k1: ClientKeyPair;
  let k2: ClientKeyPair;

  function cli(args: string[]): Promise<CliRun> {
    return runCli([...args, '--key-prefix', PREFIX], dir, { ...process.env, REDIS_URL: redis.url, TALENT_AUTH_APIS: join(dir, 'apis.json') });
  }
  const file = (name: string, content: unknown) => {
    const path = join(dir, name);
    writeFileSync(path, typeof content === 'string' ? content : JSON.stringify(content));
    return name;
  };

  beforeAll(async () => {
    if (!existsSync(CLI_ENTRY)) throw new Error('run `npm run build` first (the test command builds)');
    redis = await startRedis();
    dir = mkdtempSync(join(tmpdir(), 'talent-auth-cli-keys-'));
    writeFileSync(join(dir, 'apis.json'), JSON.stringify(demoApis));
    server = await startServer({ store: { type: 'redis', url: redis.url, keyPrefix: PREFIX } });
    [k1, k2] = await Promise.all([clientKeyPair('k1'), clientKeyPair('k2')]);
    file('k1.json', { keys: [k1.jwk] });
    file('k2.json', { keys: [k2.jwk] });
    file('both.json', { keys: [k1.jwk, k2.jwk] });
  });
  afterAll(async () => {
    await server.stop();
    await redis.stop();
    rmSync(dir, { recursive: true, force: true });
  });

  const assertion = (clientId: string, key: ClientKeyPair) => clientAssertion(clientId, key, server.auth.issuer);
  const tokenWithKey = async (clientId: string, key: ClientKeyPair) =>
    (await postToken(server.oauthUrl, { grant_type: 'client_credentials', client_assertion_type: JWT_BEARER_ASSERTION, client_assertion: await assertion(clientId, key) })).status;
  const payroll = ['clients', 'create', '--tenant', 'acme', '--name', 'Payroll', '--category', 'payroll', '--resource', 'scim:scim.read'];

  it('clients create --auth-method private_key_jwt --jwks-file: no secret, keys by kid and thumbprint, tokens with the key', async () => {
    const human = await cli([...payroll, '--auth-method', 'private_key_jwt', '--jwks-file', 'k1.json', '--dpop', 'required']);
    expect(human.stderr).toBe('');
    expect(human.code).toBe(0);
    expect(human.stdout).not.toContain('client_secret');
    expect(human.stdout).not.toContain('shown only now');
    expect(human.stdout).toContain('auth_method:   private_key_jwt');
    expect(human.stdout).toContain(`k1 (ES256, thumbprint ${k1.thumbprint})`);
    expect(human.stdout).toContain('dpop:          required');
    // Never the key's members.
    expect(human.stdout).not.toContain(k1.jwk.x!);

    const created = await cli([...payroll, '--auth-method', 'private_key_jwt', '--jwks-file', 'k1.json', '--json']);
    expect(created.code).toBe(0);
    expect(created.json).toMatchObject({ token_endpoint_auth_method: 'private_key_jwt', jwks: { keys: [k1.jwk] } });
    expect(created.json).not.toHaveProperty('client_secret');
    expect(await tokenWithKey(created.json.client_id, k1)).toBe(200);
  });

  it('keys rotate without downtime with clients update: old and new, then the new alone', async () => {
    const clientId = (await cli([...payroll, '--auth-method', 'private_key_jwt', '--jwks-file', 'k1.json', '--json'])).json.client_id as string;
    expect(await tokenWithKey(clientId, k2)).toBe(401);
    const both = await cli(['clients', 'update', clientId, '--jwks-file', 'both.json', '--actor', 'ops@example.com']);
    expect(both.code).toBe(0);
    expect(both.stdout).toContain(`k1 (ES256, thumbprint ${k1.thumbprint})`);
    expect(both.stdout).toContain(`k2 (ES256, thumbprint ${k2.thumbprint})`);
    expect(await tokenWithKey(clientId, k1)).toBe(200);
    expect(await tokenWithKey(clientId, k2)).toBe(200);
    expect((await cli(['clients', 'update', clientId, '--jwks-file', 'k2.json'])).code).toBe(0);
    expect(await tokenWithKey(clientId, k2)).toBe(200);
    expect(await tokenWithKey(clientId, k1)).toBe(401);
    const events = (await server.auth.audit.list({ tenant: 'acme', type: 'client_configuration.updated' })).events.filter((event) => event.target?.id === clientId);
    expect(events.map((event) => event.actor)).toEqual([{ type: 'operator' }, { type: 'operator', id: 'ops@example.com' }]);
  });

  it('switches a client Basic → private_key_jwt (secret gone) → Basic (a new secret printed once)', async () => {
    const created = await cli([...payroll, '--json']);
    expect(created.json).toMatchObject({ token_endpoint_auth_method: 'client_secret_basic', client_secret: expect.stringMatching(SECRET) });
    const clientId = created.json.client_id as string;
    const toKeys = await cli(['clients', 'update', clientId, '--auth-method', 'private_key_jwt', '--jwks-file', 'k1.json', '--json']);
    expect(toKeys.json).toMatchObject({ token_endpoint_auth_method: 'private_key_jwt' });
    expect(toKeys.json).not.toHaveProperty('client_secret');
    expect((await postToken(server.oauthUrl, 'grant_type=client_credentials', { authorization: basic(clientId, created.json.client_secret) })).status).toBe(401);
    const toBasic = await cli(['clients', 'update', clientId, '--auth-method', 'client_secret_basic']);
    expect(toBasic.code).toBe(0);
    const secret = /client_secret: (\S+)/.exec(toBasic.stdout)?.[1];
    expect(secret).toMatch(SECRET);
    expect(toBasic.stdout).toContain('shown only now');
    expect((await postToken(server.oauthUrl, 'grant_type=client_credentials', { authorization: basic(clientId, secret!) })).status).toBe(200);
    const events = (await server.auth.audit.list({ tenant: 'acme', type: 'client_configuration.updated' })).events.filter((event) => event.target?.id === clientId);
    expect(events.map((event) => event.details?.token_endpoint_auth_method)).toEqual([
      { from: 'private_key_jwt', to: 'client_secret_basic' },
      { from: 'client_secret_basic', to: 'private_key_jwt' },
    ]);
    // A client without a secret has none to rotate.
    const rotate = await cli(['clients', 'rotate-secret', (await cli([...payroll, '--auth-method', 'private_key_jwt', '--jwks-file', 'k1.json', '--json'])).json.client_id, '--json']);
    expect(rotate.code).toBe(1);
    expect(JSON.parse(rotate.stderr)).toMatchObject({ error: 'validation_error', field: 'tokenEndpointAuthMethod' });
  });

  it('apps: --jwks-uri (a loopback one is the operator\'s to name), --dpop, --require-par and --no-require-par on create and update', async () => {
    const created = await cli([
      'apps', 'create', '--name', 'Web', '--redirect-uri', 'https://app.example.com/cb', '--type', 'confidential',
      '--auth-method', 'private_key_jwt', '--jwks-uri', 'http://127.0.0.1:9/jwks', '--dpop', 'required', '--require-par',
    ]);
    expect(created.stderr).toBe('');
    expect(created.stdout).toContain('jwks_uri:      http://127.0.0.1:9/jwks');
    expect(created.stdout).toContain('require_par:   true');
    expect(created.stdout).not.toContain('client_secret');
    const clientId = /client_id: +(\S+)/.exec(created.stdout)![1]!;
    expect(await server.auth.appRegistrations.get(clientId)).toMatchObject({
      tokenEndpointAuthMethod: 'private_key_jwt', jwksUri: 'http://127.0.0.1:9/jwks', dpop: 'required', requirePushedAuthorizationRequests: true,
    });
    const updated = await cli(['apps', 'update', clientId, '--no-require-par', '--dpop', 'optional', '--jwks-file', 'k1.json', '--json']);
    expect(updated.code).toBe(0);
    expect(updated.json).toMatchObject({ require_pushed_authorization_requests: false, dpop: 'optional', jwks: { keys: [k1.jwk] } });
    expect(updated.json).not.toHaveProperty('jwks_uri');
    const toBasic = await cli(['apps', 'update', clientId, '--auth-method', 'client_secret_basic', '--json']);
    expect(toBasic.json).toMatchObject({ token_endpoint_auth_method: 'client_secret_basic', client_secret: expect.stringMatching(SECRET) });
    expect(toBasic.json).not.toHaveProperty('jwks');
  });

  it('refuses bad flags naming them, and stores nothing', async () => {
    file('private.json', { keys: [k1.privateJwk] });
    file('not-json.json', '{"keys": [');
    file('array.json', [k1.jwk]);
    file('huge.json', { keys: [k1.jwk], padding: 'x'.repeat(40_000) });
    const before = (await server.auth.clientConfigurations.list('refused')).length;
    const refused: Array<[string[], string, RegExp]> = [
      [['--auth-method', 'private_key_jwt', '--jwks-file', 'private.json'], 'jwks.keys.0', /private member/],
      [['--auth-method', 'private_key_jwt', '--jwks-file', 'not-json.json'], '--jwks-file', /not JSON/],
      [['--auth-method', 'private_key_jwt', '--jwks-file', 'array.json'], '--jwks-file', /not a JWK Set/],
      [['--auth-method', 'private_key_jwt', '--jwks-file', 'huge.json'], '--jwks-file', /larger than 32768 bytes/],
      [['--auth-method', 'private_key_jwt', '--jwks-file', 'missing.json'], '--jwks-file', /cannot read .*ENOENT/],
      [['--auth-method', 'private_key_jwt', '--jwks-file', 'k1.json', '--jwks-uri', 'https://keys.example.com/k'], 'jwksUri', /not both/],
      [['--auth-method', 'private_key_jwt'], 'jwks', /needs its public keys/],
      [['--auth-method', 'client_secret_post'], '--auth-method', /not one of client_secret_basic, private_key_jwt/],
      [['--dpop', 'always'], '--dpop', /not one of required, optional/],
      [['--require-par'], '--require-par', /does not take --require-par/],
    ];
    for (const [flags, field, message] of refused) {
      const run = await cli([...payroll, '--tenant', 'refused', ...flags, '--json']);
      expect([flags, run.code]).toEqual([flags, 1]);
      const body = JSON.parse(run.stderr) as { field: string; message: string };
      expect([flags, body.field]).toEqual([flags, field]);
      expect(body.message).toMatch(message);
    }
    expect((await server.auth.clientConfigurations.list('refused')).length).toBe(before);
    const app = ['apps', 'create', '--name', 'Web', '--redirect-uri', 'https://app.example.com/cb', '--type', 'confidential'];
    const both = await cli([...app, '--require-par', '--no-require-par', '--json']);
    expect(JSON.parse(both.stderr)).toMatchObject({ field: '--no-require-par' });
    const nothing = await cli(['apps', 'update', randomUUID()]);
    expect(nothing.stderr).toContain('apps update: nothing to change');
    const unknown = await cli(['clients', 'update', randomUUID(), '--dpop', 'required']);
    expect(unknown.code).toBe(1);
    expect(unknown.stderr).toMatch(/not found/);
  });

  it('documents the flags and the rotation order in the help', async () => {
    for (const command of ['clients create', 'clients update', 'apps create', 'apps update']) {
      const help = await cli([...command.split(' '), '--help']);
      expect(help.code).toBe(0);
      expect(help.stdout).toContain(`Usage: talent-auth ${command}`);
      for (const flag of ['--auth-method', '--jwks-file', '--jwks-uri', '--dpop']) expect([command, help.stdout.includes(flag)]).toEqual([command, true]);
    }
    expect((await cli(['apps', 'update', '--help'])).stdout).toContain('--no-require-par');
    expect((await cli(['clients', 'update', '--help'])).stdout).toMatch(/old-and-new\.json[\s\S]*starts signing[\s\S]*new\.json/);
    expect((await cli(['--help'])).stdout).toMatch(/clients update[\s\S]*apps update/);
  });
});
