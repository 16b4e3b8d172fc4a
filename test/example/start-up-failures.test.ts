import { spawn } from 'node:child_process';
import { mkdtempSync, rmSync, writeFileSync } from 'node:fs';
import { createServer, type Server } from 'node:net';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { testJwks } from '../support/keys.js';
import { freePort, startRedis, type RedisServer } from '../support/redis.js';

const entry = join(process.cwd(), 'dist/examples/server.js');

interface Ended {
  code: number | null;
  stdout: string;
  stderr: string;
}

/** Runs the built example server and waits for it to end (it must: each case is a failure to start). */
function runToEnd(env: Record<string, string>): Promise<Ended> {
  return new Promise((resolve, reject) => {
    const child = spawn(process.execPath, [entry], { env: { ...process.env, ...env }, stdio: ['ignore', 'pipe', 'pipe'] });
    let stdout = '';
    let stderr = '';
    child.stdout.on('data', (chunk: Buffer) => (stdout += chunk.toString()));
    child.stderr.on('data', (chunk: Buffer) => (stderr += chunk.toString()));
    const timer = setTimeout(() => {
      child.kill('SIGKILL');
      reject(new Error(`the example server did not end:\n${stdout}\n${stderr}`));
    }, 20_000);
    child.once('exit', (code) => {
      clearTimeout(timer);
      resolve({ code, stdout, stderr });
    });
  });
}

/** What a person sees: the one line the server wrote about the failure (engine warnings aside). */
function failureLines(ended: Ended): string[] {
  return ended.stderr
    .split('\n')
    .filter((line) => line.trim() !== '' && !line.includes('oidc-provider WARNING') && !line.startsWith('{'));
}

function expectOneClearLine(ended: Ended, pattern: RegExp): void {
  expect(ended.code).toBe(1);
  const lines = failureLines(ended);
  expect(lines).toHaveLength(1);
  expect(lines[0]).toMatch(/^talent-auth example server did not start: /);
  expect(lines[0]).toMatch(pattern);
  // No stack trace, on either stream.
  expect(`${ended.stdout}${ended.stderr}`).not.toMatch(/\n\s+at /);
}

describe('example server start-up failures: one line that says what to change, exit 1', () => {
  let dir: string;
  let redis: RedisServer;

  beforeAll(async () => {
    dir = mkdtempSync(join(tmpdir(), 'talent-auth-start-'));
    redis = await startRedis();
  });
  afterAll(async () => {
    rmSync(dir, { recursive: true, force: true });
    await redis.stop();
  });

  it('a port in use', async () => {
    const blocker: Server = createServer();
    await new Promise<void>((resolve) => blocker.listen(0, '127.0.0.1', resolve));
    const { port } = blocker.address() as { port: number };
    try {
      const ended = await runToEnd({ PORT: String(port) });
      expectOneClearLine(ended, new RegExp(`port ${port} on 127\\.0\\.0\\.1 is in use`));
    } finally {
      await new Promise((resolve) => blocker.close(resolve));
    }
  });

  it('Redis unreachable: names the host and port, never the password', async () => {
    const port = await freePort();
    const ended = await runToEnd({ PORT: String(await freePort()), REDIS_URL: `redis://user:s3cret-pass@127.0.0.1:${port}/2` });
    expectOneClearLine(ended, new RegExp(`cannot connect to Redis at 127\\.0\\.0\\.1:${port}, database 2: .*ECONNREFUSED`));
    expect(`${ended.stdout}${ended.stderr}`).not.toContain('s3cret-pass');
  });

  it('Redis refusing the credentials', async () => {
    const guarded = await startRedis(['--requirepass', 'right-password']);
    try {
      const ended = await runToEnd({ PORT: String(await freePort()), REDIS_URL: guarded.url.replace('redis://', 'redis://:wrong-password@') });
      expectOneClearLine(ended, /Redis at 127\.0\.0\.1:\d+ refused the credentials \(WRONGPASS/);
      expect(`${ended.stdout}${ended.stderr}`).not.toContain('wrong-password');
    } finally {
      await guarded.stop();
    }
  });

  it('a URL and cluster nodes at once, or a CA file that cannot be read: names the variables, before any connection', async () => {
    const both = await runToEnd({ PORT: String(await freePort()), REDIS_URL: redis.url, REDIS_CLUSTER_NODES: `redis://:s3cret-pass@127.0.0.1:${redis.port}` });
    expectOneClearLine(both, /REDIS_URL and REDIS_CLUSTER_NODES both say where Redis is: give only one/);
    expect(`${both.stdout}${both.stderr}`).not.toContain('s3cret-pass');
    const ca = await runToEnd({ PORT: String(await freePort()), REDIS_URL: redis.url, REDIS_PASSWORD: 's3cret-pass', REDIS_TLS_CA_FILE: join(dir, 'nope.pem') });
    expectOneClearLine(ca, /REDIS_TLS_CA_FILE: cannot read .*nope\.pem \(ENOENT\)$/);
    expect(`${ca.stdout}${ca.stderr}`).not.toContain('s3cret-pass');
  });

  it('a Redis database the server does not have', async () => {
    const ended = await runToEnd({ PORT: String(await freePort()), REDIS_URL: `${redis.url}/99` });
    expectOneClearLine(ended, /Redis at 127\.0\.0\.1:\d+, database 99: the database cannot be selected/);
  });

  it.each(['abc', '1x'])('a Redis database index that is not a number (/%s), before any connection', async (database) => {
    const ended = await runToEnd({ PORT: String(await freePort()), REDIS_URL: `redis://:s3cret-pass@127.0.0.1:${redis.port}/${database}` });
    expectOneClearLine(ended, /REDIS_URL: the database \(the path after host:port\) must be a non-negative integer, like \/0$/);
    expect(`${ended.stdout}${ended.stderr}`).not.toContain('s3cret-pass');
    // Refused before connecting: nothing was written to database 0 (or 1).
    expect(await redis.client().dbsize()).toBe(0);
  });

  it('rediss:// against a Redis without TLS: the failed handshake, at once (not "no answer within 10 s")', async () => {
    const started = performance.now();
    const ended = await runToEnd({ PORT: String(await freePort()), REDIS_URL: `rediss://:s3cret-pass@127.0.0.1:${redis.port}` });
    expectOneClearLine(ended, new RegExp(`TLS handshake failed at 127\\.0\\.0\\.1:${redis.port}: Redis there answers without TLS`));
    expect(`${ended.stdout}${ended.stderr}`).not.toContain('s3cret-pass');
    expect(performance.now() - started).toBeLessThan(5000);
  });

  it('a key file that is missing, not JSON, or holds no private key', async () => {
    const missing = await runToEnd({ PORT: String(await freePort()), JWKS_FILE: join(dir, 'nope.json') });
    expectOneClearLine(missing, /JWKS_FILE .*nope\.json cannot be read \(ENOENT\)/);
    const garbled = join(dir, 'garbled.json');
    writeFileSync(garbled, '{"keys": [');
    expectOneClearLine(await runToEnd({ PORT: String(await freePort()), JWKS_FILE: garbled }), /garbled\.json is not JSON/);
    const publicOnly = join(dir, 'public.json');
    writeFileSync(publicOnly, JSON.stringify({ keys: [{ kty: 'EC', crv: 'P-256', x: 'f83OJ3D2xF1Bg8vub9tLe1gHMzV76e8Tus9uPHvRVEU', y: 'x_FEzRu9m36HLN_tue659LNpXW6pCyStikYjKIWI5a0' }] }));
    expectOneClearLine(await runToEnd({ PORT: String(await freePort()), JWKS_FILE: publicOnly }), /keys\.jwks\.keys\[0\] is not a private key/);
    // The private part of one key beside the public part of another: it would sign tokens nobody can verify.
    const { jwks } = await testJwks(['ES256', 'RS256']);
    const other = (await testJwks(['ES256'])).jwks.keys[0]!;
    const halves = join(dir, 'halves.json');
    writeFileSync(halves, JSON.stringify({ keys: [{ ...jwks.keys[0], x: other.x, y: other.y }, jwks.keys[1]] }));
    expectOneClearLine(await runToEnd({ PORT: String(await freePort()), JWKS_FILE: halves }), /keys\.jwks\.keys\[0\] \(kid [^)]+\): its private part does not match its public part/);
  });

  it('invalid options', async () => {
    const ended = await runToEnd({ PORT: String(await freePort()), PATH_PREFIX: 'auth2/' });
    expectOneClearLine(ended, /invalid options: pathPrefix: must be '' or start with '\/'/);
    expectOneClearLine(await runToEnd({ PORT: 'eighty' }), /PORT must be a port number/);
  });
});

describe('example server binding', () => {
  it('listens on 127.0.0.1 unless HOST says otherwise', async () => {
    const port = await freePort();
    const child = spawn(process.execPath, [entry], { env: { ...process.env, PORT: String(port) }, stdio: ['ignore', 'pipe', 'pipe'] });
    let output = '';
    child.stdout.on('data', (chunk: Buffer) => (output += chunk.toString()));
    try {
      const deadline = Date.now() + 15_000;
      while (!output.includes('listening on')) {
        if (Date.now() > deadline || child.exitCode !== null) throw new Error(`did not start:\n${output}`);
        await new Promise((resolve) => setTimeout(resolve, 50));
      }
      expect(output).toContain(`listening on 127.0.0.1:${port}`);
      expect((await fetch(`http://127.0.0.1:${port}/healthz`)).status).toBe(200);
    } finally {
      const exited = new Promise((resolve) => child.once('exit', resolve));
      child.kill('SIGTERM');
      await exited;
    }
  });
});
