import { existsSync, mkdtempSync, rmSync, writeFileSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { Cluster, Redis } from 'ioredis';
import { startRedisCluster, type RedisClusterProcess } from '../../devtools/redis-cluster.js';
import { startRedisSentinel, type RedisSentinelProcess } from '../../devtools/redis-sentinel.js';
import { CLI_ENTRY, runCli, type CliRun } from '../support/cli.js';
import { freePort, startRedis, startTlsRedis, type RedisServer, type TlsRedisServer } from '../support/redis.js';

/** Every password of this file: no output of any run may hold one. */
const ADMIN_PASSWORD = 'admin-Pw-4e1c9b';
const OPERATOR_PASSWORD = 'op-Pw-7Qx2mZ';
const WRONG_PASSWORD = 'wrong-Pw-88d0aa';
const PASSWORDS = [ADMIN_PASSWORD, OPERATOR_PASSWORD, WRONG_PASSWORD];

/** No Redis setting of the environment the tests run in reaches the CLI unless a test sets it. */
const BARE_ENV: Record<string, string | undefined> = Object.fromEntries(
  Object.entries(process.env).filter(([name]) => !name.startsWith('REDIS_')),
);

/**
 * The CLI reaches every store the server does, from the example server's variables or a
 * `--store-config` file (the `store` option as JSON), and never prints a password.
 */
describe('talent-auth CLI on every kind of Redis store (built, as a subprocess)', () => {
  let dir: string;

  /** Runs the built CLI with exactly the Redis settings given, and checks that no password shows. */
  async function cli(args: string[], env: Record<string, string> = {}): Promise<CliRun> {
    const run = await runCli(args, dir, { ...BARE_ENV, ...env });
    for (const password of PASSWORDS) expect(`${run.stdout}${run.stderr}`).not.toContain(password);
    return run;
  }

  /** A `--store-config` file holding `option`. */
  function configFile(name: string, option: unknown): string {
    const file = join(dir, name);
    writeFileSync(file, typeof option === 'string' ? option : JSON.stringify(option));
    return file;
  }

  /** Registers an app through the CLI and answers its client_id (a write through the store). */
  async function createApp(name: string, args: string[], env: Record<string, string> = {}): Promise<string> {
    const created = await cli(['apps', 'create', '--name', name, '--type', 'public', '--redirect-uri', 'https://app.example/cb', '--json', ...args], env);
    expect(created.stderr).toBe('');
    expect(created.code).toBe(0);
    return created.json.client_id as string;
  }

  /** The client_ids `apps list` prints (a read through the store). */
  async function listApps(args: string[], env: Record<string, string> = {}): Promise<string[]> {
    const listed = await cli(['apps', 'list', '--json', ...args], env);
    expect(listed.stderr).toBe('');
    expect(listed.code).toBe(0);
    return (listed.json.apps as Array<{ client_id: string }>).map((app) => app.client_id);
  }

  beforeAll(() => {
    if (!existsSync(CLI_ENTRY)) throw new Error('run `npm run build` first');
    dir = mkdtempSync(join(tmpdir(), 'talent-auth-cli-stores-'));
  });
  afterAll(() => {
    rmSync(dir, { recursive: true, force: true });
  });

  describe('a Redis Cluster of 3 nodes, with a password', () => {
    let cluster: RedisClusterProcess;
    beforeAll(async () => {
      cluster = await startRedisCluster(3, { requirepass: ADMIN_PASSWORD });
    }, 60_000);
    afterAll(async () => {
      await cluster?.stop();
    });

    it('from REDIS_CLUSTER_NODES (one node given, the others found) and from a config file: the same store', async () => {
      const clientId = await createApp('On the cluster', [], { REDIS_CLUSTER_NODES: cluster.urls[0]!, REDIS_PASSWORD: ADMIN_PASSWORD });
      expect(await listApps([], { REDIS_CLUSTER_NODES: cluster.urls.join(','), REDIS_PASSWORD: ADMIN_PASSWORD })).toEqual([clientId]);
      const file = configFile('cluster.json', { type: 'redis', cluster: { nodes: cluster.urls.slice(1) }, password: ADMIN_PASSWORD });
      expect(await listApps(['--store-config', file])).toEqual([clientId]);
      // The password in the nodes' URLs, as the server takes it too.
      const inUrls = cluster.urls.map((url) => url.replace('redis://', `redis://:${ADMIN_PASSWORD}@`)).join(',');
      expect(await listApps([], { REDIS_CLUSTER_NODES: inUrls })).toEqual([clientId]);
      // Written where the server's store writes: the record's own slot, under the default prefix.
      const nodes = new Cluster(cluster.urls.slice(0, 1).map((url) => ({ host: new URL(url).hostname, port: Number(new URL(url).port) })), { redisOptions: { password: ADMIN_PASSWORD } });
      try {
        expect(await nodes.exists(`talent-auth:rec:{app:${clientId}}`)).toBe(1);
      } finally {
        nodes.disconnect();
      }
    });

    it('a wrong password or none: exit 2 at once, the cluster\'s nodes named, never the password', async () => {
      for (const env of [{ REDIS_PASSWORD: WRONG_PASSWORD }, {}] as Array<Record<string, string>>) {
        const started = performance.now();
        const run = await cli(['apps', 'list'], { REDIS_CLUSTER_NODES: cluster.urls[0]!, ...env });
        expect(run.code).toBe(2);
        expect(run.stderr).toMatch(new RegExp(`^talent-auth: the Redis Cluster of 127\\.0\\.0\\.1:${cluster.nodes[0]!.port} refused the credentials \\((WRONGPASS|NOAUTH) `));
        // Every node refused: not the 10 s a cluster is given to come up.
        expect(performance.now() - started).toBeLessThan(5000);
      }
    });
  });

  describe('a master that Redis Sentinel manages', () => {
    let sentinel: RedisSentinelProcess;
    beforeAll(async () => {
      sentinel = await startRedisSentinel();
    }, 30_000);
    afterAll(async () => {
      await sentinel?.stop();
    });

    it('from REDIS_SENTINELS and REDIS_SENTINEL_NAME, and from a config file', async () => {
      const [{ host, port }] = sentinel.sentinels as [{ host: string; port: number }];
      const env = { REDIS_SENTINELS: `${host}:${port}`, REDIS_SENTINEL_NAME: sentinel.name };
      const clientId = await createApp('Through the sentinel', [], env);
      expect(await listApps([], env)).toEqual([clientId]);
      const file = configFile('sentinel.json', { type: 'redis', sentinel: { sentinels: sentinel.sentinels, name: sentinel.name } });
      expect(await listApps(['--store-config', file])).toEqual([clientId]);
      // The master itself holds it.
      const master = new Redis(sentinel.master.url);
      try {
        expect(await master.exists(`talent-auth:rec:{app:${clientId}}`)).toBe(1);
      } finally {
        master.disconnect();
      }
    });

    it('a master name the sentinels do not know: exit 2 at once, naming the sentinels and the name', async () => {
      const [{ host, port }] = sentinel.sentinels as [{ host: string; port: number }];
      const started = performance.now();
      const run = await cli(['apps', 'list'], { REDIS_SENTINELS: `${host}:${port}`, REDIS_SENTINEL_NAME: 'no-such-master' });
      expect(run.code).toBe(2);
      expect(run.stderr).toMatch(new RegExp(`^talent-auth: cannot connect to the Redis master "no-such-master" of the sentinels ${host}:${port}: .*No such master`));
      // Not the server's 10 s of retries: a command line says it at once.
      expect(performance.now() - started).toBeLessThan(5000);
    });
  });

  describe('a Redis with an ACL user and a password', () => {
    let redis: RedisServer;
    let url: string;
    beforeAll(async () => {
      // The default user needs a password the CLI is never given; the operator may touch only the deployment's keys.
      redis = await startRedis(['--requirepass', ADMIN_PASSWORD]);
      url = `redis://127.0.0.1:${redis.port}`;
      const admin = new Redis({ port: redis.port, host: '127.0.0.1', password: ADMIN_PASSWORD });
      try {
        await admin.call('ACL', 'SETUSER', 'operator', 'on', `>${OPERATOR_PASSWORD}`, '~talent-auth:*', '&*', '+@all');
      } finally {
        admin.disconnect();
      }
    });
    afterAll(async () => {
      await redis?.stop();
    });

    it('from REDIS_USERNAME and REDIS_PASSWORD, from a config file, and from the file with the password in the environment', async () => {
      const clientId = await createApp('As the operator', [], { REDIS_URL: url, REDIS_USERNAME: 'operator', REDIS_PASSWORD: OPERATOR_PASSWORD });
      expect(await listApps([], { REDIS_URL: `redis://operator:${OPERATOR_PASSWORD}@127.0.0.1:${redis.port}` })).toEqual([clientId]);
      const whole = configFile('acl.json', { type: 'redis', url, username: 'operator', password: OPERATOR_PASSWORD });
      expect(await listApps(['--store-config', whole])).toEqual([clientId]);
      // A file that can be shown to anyone, the password from the environment.
      const shareable = configFile('acl-shareable.json', { url, username: 'operator' });
      expect(await listApps(['--store-config', shareable], { REDIS_PASSWORD: OPERATOR_PASSWORD })).toEqual([clientId]);
    });

    it('a wrong password: exit 2, the credentials refused at host:port, never the password', async () => {
      const fromEnv = await cli(['apps', 'list'], { REDIS_URL: url, REDIS_USERNAME: 'operator', REDIS_PASSWORD: WRONG_PASSWORD });
      expect(fromEnv.code).toBe(2);
      expect(fromEnv.stderr).toMatch(new RegExp(`^talent-auth: Redis at 127\\.0\\.0\\.1:${redis.port} refused the credentials \\(WRONGPASS`));
      expect(fromEnv.stderr.trim().split('\n')).toHaveLength(1);

      const fromFile = await cli(['apps', 'list', '--json', '--store-config', configFile('wrong.json', { url, username: 'operator', password: WRONG_PASSWORD })]);
      expect(fromFile.code).toBe(2);
      expect(JSON.parse(fromFile.stderr)).toMatchObject({ error: 'connection_failed', message: expect.stringContaining('refused the credentials') });

      const none = await cli(['apps', 'list'], { REDIS_URL: url });
      expect(none.code).toBe(2);
      expect(none.stderr).toMatch(/refused the credentials \(NOAUTH/);
    });

    it('a user without rights on the key prefix: exit 2 (a refused command), never the password', async () => {
      const run = await cli(['apps', 'list', '--key-prefix', 'other:'], { REDIS_URL: url, REDIS_USERNAME: 'operator', REDIS_PASSWORD: OPERATOR_PASSWORD });
      expect(run.code).not.toBe(0);
      expect(run.stderr).toMatch(/NOPERM/);
    });

    it('help and usage errors with a password set print none', async () => {
      const env = { REDIS_URL: url, REDIS_PASSWORD: OPERATOR_PASSWORD, REDIS_SENTINEL_PASSWORD: ADMIN_PASSWORD };
      const help = await cli(['apps', 'list', '--help'], env);
      expect(help.code).toBe(0);
      expect(help.stdout).toContain('--store-config <file>');
      expect((await cli(['--help'], env)).code).toBe(0);
      expect((await cli(['apps', 'list', '--tenant', 'x'], env)).code).toBe(1);
    });
  });

  describe('a Redis that speaks TLS only', () => {
    let tls: TlsRedisServer;
    let caFile: string;
    beforeAll(async () => {
      tls = await startTlsRedis();
      caFile = configFile('redis-ca.pem', tls.ca);
    });
    afterAll(async () => {
      await tls?.stop();
    });

    it('with its CA from REDIS_TLS_CA_FILE, from a config file (PEM text), and REDIS_TLS on a redis:// URL', async () => {
      const clientId = await createApp('Over TLS', [], { REDIS_URL: tls.url, REDIS_TLS_CA_FILE: caFile });
      const file = configFile('tls.json', { type: 'redis', url: tls.url, tls: { ca: tls.ca } });
      expect(await listApps(['--store-config', file])).toEqual([clientId]);
      // REDIS_TLS=1 and a CA: TLS on a plain redis:// URL.
      expect(await listApps([], { REDIS_URL: `redis://127.0.0.1:${tls.port}`, REDIS_TLS: '1', REDIS_TLS_CA_FILE: caFile })).toEqual([clientId]);
    });

    it('without its CA: exit 2, the handshake refused; a CA file that cannot be read: exit 1 naming the variable', async () => {
      const untrusted = await cli(['apps', 'list'], { REDIS_URL: tls.url.replace('rediss://', `rediss://:${WRONG_PASSWORD}@`) });
      expect(untrusted.code).toBe(2);
      expect(untrusted.stderr).toMatch(new RegExp(`^talent-auth: TLS handshake failed at 127\\.0\\.0\\.1:${tls.port}: self-signed certificate`));
      const missing = await cli(['apps', 'list', '--json'], { REDIS_URL: tls.url, REDIS_TLS_CA_FILE: join(dir, 'nope.pem') });
      expect(missing.code).toBe(1);
      expect(JSON.parse(missing.stderr)).toMatchObject({ error: 'usage_error', field: 'REDIS_TLS_CA_FILE', message: expect.stringContaining('(ENOENT)') });
    });
  });

  describe('settings that are wrong or in conflict: exit 1 before connecting, naming the setting', () => {
    let redis: RedisServer;
    beforeAll(async () => {
      redis = await startRedis();
    });
    afterAll(async () => {
      await redis?.stop();
    });

    /** Runs `apps list --json` and answers its error, after checking exit 1. */
    async function refused(args: string[], env: Record<string, string> = {}): Promise<{ error: string; message: string; field?: string }> {
      const run = await cli(['apps', 'list', '--json', ...args], env);
      expect(run.stdout).toBe('');
      expect(run.code).toBe(1);
      return JSON.parse(run.stderr);
    }

    it('a URL and cluster nodes (or sentinels) at once, in the environment or in a file', async () => {
      expect(await refused([], { REDIS_URL: redis.url, REDIS_CLUSTER_NODES: redis.url })).toEqual({
        error: 'usage_error',
        field: 'REDIS_URL',
        message: 'REDIS_URL and REDIS_CLUSTER_NODES both say where Redis is: give only one (a URL, cluster nodes or sentinels)',
      });
      const both = configFile('both.json', { url: redis.url, sentinel: { sentinels: [{ host: '127.0.0.1', port: 26379 }], name: 'm' } });
      expect(await refused(['--store-config', both])).toMatchObject({
        field: 'url',
        message: `${both}: url and sentinel both say where Redis is: give only one (a URL, cluster nodes or sentinels)`,
      });
    });

    it('a config file that is not JSON, or not an object: names the file and where, never quotes it', async () => {
      const broken = configFile('broken.json', `{"url": "${redis.url}", "password": "${OPERATOR_PASSWORD}" x}`);
      expect(await refused(['--store-config', broken])).toMatchObject({ field: '--store-config', message: expect.stringMatching(/broken\.json: not valid JSON/) });
      const unquoted = configFile('unquoted.json', `{"url": "${redis.url}", "password": ${OPERATOR_PASSWORD}}`);
      expect(await refused(['--store-config', unquoted])).toMatchObject({ field: '--store-config' });
      expect(await refused(['--store-config', configFile('array.json', [redis.url])])).toMatchObject({ message: expect.stringContaining('must hold a JSON object') });
      expect(await refused(['--store-config', join(dir, 'absent.json')])).toMatchObject({ message: expect.stringContaining('absent.json: cannot be read (ENOENT)') });
    });

    it('a config file that fails validation: names the field', async () => {
      const cases: Array<[unknown, string]> = [
        [{ url: redis.url, password: 42 }, 'password'],
        [{ url: redis.url, pasword: OPERATOR_PASSWORD }, 'pasword'],
        [{ url: redis.url, tls: { caa: 'x' } }, 'tls.caa'],
        [{ cluster: { nodes: [`http://:${OPERATOR_PASSWORD}@127.0.0.1:1`] } }, 'cluster.nodes.0'],
        [{ sentinel: { sentinels: [{ host: '127.0.0.1', port: 0 }], name: 'm' } }, 'sentinel.sentinels.0.port'],
        [{ type: 'memory', url: redis.url }, 'type'],
        [{ url: `${redis.url}/abc` }, 'url'],
      ];
      for (const [option, field] of cases) {
        const file = configFile('invalid.json', option);
        const error = await refused(['--store-config', file]);
        expect(error).toMatchObject({ error: 'usage_error', field });
        expect(error.message.startsWith(`${file}: ${field}: `)).toBe(true);
      }
      expect(await redis.client().dbsize()).toBe(0);
    });

    it('a variable that is malformed: names it', async () => {
      expect(await refused([], { REDIS_SENTINELS: '127.0.0.1:26379,:x' })).toMatchObject({ field: 'REDIS_SENTINELS', message: 'REDIS_SENTINELS: entry 2 is not host:port' });
      expect(await refused([], { REDIS_URL: redis.url, REDIS_TLS: 'yes' })).toMatchObject({ field: 'REDIS_TLS' });
      expect(await refused([], { REDIS_CLUSTER_NODES: `redis://:${OPERATOR_PASSWORD}@127.0.0.1:1/x` })).toMatchObject({ field: 'REDIS_CLUSTER_NODES' });
      expect(await refused([], {})).toMatchObject({ message: expect.stringContaining('no Redis store given') });
    });

    it('precedence: a flag over the file, the file over the environment, field by field', async () => {
      const closed = `redis://127.0.0.1:${await freePort()}`;
      const file = configFile('reachable.json', { url: redis.url, keyPrefix: 'from-file:' });
      // The file's URL wins over REDIS_URL; its key prefix over REDIS_KEY_PREFIX.
      const clientId = await createApp('By precedence', ['--store-config', file], { REDIS_URL: closed, REDIS_KEY_PREFIX: 'from-env:' });
      expect(await redis.client().exists(`from-file:rec:{app:${clientId}}`)).toBe(1);
      // --key-prefix wins over the file's; --redis over the file's URL.
      expect(await listApps(['--store-config', file, '--key-prefix', 'from-flag:'])).toEqual([]);
      const flagged = await cli(['apps', 'list', '--store-config', file, '--redis', closed]);
      expect(flagged.code).toBe(2);
      expect(flagged.stderr).toContain(`cannot connect to Redis at ${closed.replace('redis://', '')}`);
      // A flag's URL overrides a file's cluster (each source names one place; the highest counts).
      const clustered = configFile('clustered.json', { cluster: { nodes: [closed] } });
      expect(await listApps(['--store-config', clustered, '--redis', redis.url, '--key-prefix', 'from-file:'])).toEqual([clientId]);
    });
  });
});
