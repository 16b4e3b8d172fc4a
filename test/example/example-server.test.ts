import { spawn, type ChildProcess } from 'node:child_process';
import { existsSync, mkdtempSync, rmSync, writeFileSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { createLocalJWKSet, decodeProtectedHeader, jwtVerify, type JSONWebKeySet } from 'jose';
import { testJwks } from '../support/keys.js';
import { freePort, startRedis, type RedisServer } from '../support/redis.js';
import { basic, postToken } from '../support/server.js';
import { UserAgent } from '../support/user-agent.js';

const entry = join(process.cwd(), 'dist/examples/server.js');

interface Example {
  child: ChildProcess;
  output: string;
  port: number;
  clientId: string;
  clientSecret: string;
  stop(): Promise<void>;
}

/** Runs the built example server (as `npm start` does) and reads the demo credentials it prints. */
async function runExample(env: Record<string, string>): Promise<Example> {
  const port = await freePort();
  const child = spawn(process.execPath, [entry], {
    env: { ...process.env, PORT: String(port), BASE_URL: `http://127.0.0.1:${port}`, ...env },
    stdio: ['ignore', 'pipe', 'pipe'],
  });
  let output = '';
  child.stdout!.on('data', (chunk: Buffer) => (output += chunk.toString()));
  child.stderr!.on('data', (chunk: Buffer) => (output += chunk.toString()));
  const deadline = Date.now() + 15_000;
  while (!/curl .*\n/.test(output)) {
    if (child.exitCode !== null || Date.now() > deadline) throw new Error(`example server did not start:\n${output}`);
    await new Promise((resolve) => setTimeout(resolve, 50));
  }
  const clientId = /client_id:\s+(\S+)/.exec(output)![1]!;
  const clientSecret = /client_secret:\s+(\S+)/.exec(output)![1]!;
  return {
    child,
    get output() {
      return output;
    },
    port,
    clientId,
    clientSecret,
    async stop() {
      if (child.exitCode !== null) return;
      const exited = new Promise((resolve) => child.once('exit', resolve));
      child.kill('SIGTERM');
      await exited;
    },
  };
}

describe('example server (npm start)', () => {
  let redis: RedisServer;
  let dir: string;

  beforeAll(async () => {
    if (!existsSync(entry)) throw new Error('run `npm run build` first (the test command does)');
    redis = await startRedis();
    dir = mkdtempSync(join(tmpdir(), 'talent-auth-example-'));
  });
  afterAll(async () => {
    await redis.stop();
    rmSync(dir, { recursive: true, force: true });
  });

  it('starts on the memory store and its printed credentials get a token', async () => {
    const example = await runExample({});
    try {
      expect(example.output).toContain('memory store');
      expect(example.output).toContain(`curl -s -u '${example.clientId}:${example.clientSecret}'`);
      expect(example.output).toContain(`http://127.0.0.1:${example.port}/oauth2/token`);
      const oauthUrl = `http://127.0.0.1:${example.port}/oauth2`;
      const response = await postToken(oauthUrl, 'grant_type=client_credentials&scope=scim.read', {
        authorization: basic(example.clientId, example.clientSecret),
      });
      expect(response.status).toBe(200);
      const jwks = (await (await fetch(`${oauthUrl}/jwks`)).json()) as JSONWebKeySet;
      const { payload } = await jwtVerify(response.body.access_token as string, createLocalJWKSet(jwks));
      expect(payload).toMatchObject({ tenant: 'demo', scope: 'scim.read', constraints: { scim: { group: ['engineering'] } } });
      expect(example.output).toContain('NO SIGNING KEYS CONFIGURED');
    } finally {
      await example.stop();
    }
  });

  it('serves the user-provisioning API: a constrained listing by group, and 403 without scim.read', async () => {
    const example = await runExample({});
    try {
      const origin = `http://127.0.0.1:${example.port}`;
      const token = async (scope: string) => (await postToken(`${origin}/oauth2`, `grant_type=client_credentials&scope=${scope}`, {
        authorization: basic(example.clientId, example.clientSecret),
      })).body.access_token as string;
      const users = await fetch(`${origin}/tenants/demo/scim/v2/Users`, { headers: { authorization: `Bearer ${await token('scim.read')}` } });
      expect(users.status).toBe(200);
      const list = (await users.json()) as { totalResults: number; Resources: Array<{ userName: string; groups: Array<{ value: string }> }> };
      expect(list.Resources.map((user) => user.userName)).toEqual(['grace', 'linus']);
      expect(list.Resources.every((user) => user.groups.some((group) => group.value === 'engineering'))).toBe(true);
      expect(list.totalResults).toBe(2);
      const noScope = await fetch(`${origin}/tenants/demo/scim/v2/Users`, { headers: { authorization: `Bearer ${await token('manage.subscriptions')}` } });
      expect(noScope.status).toBe(403);
      expect(noScope.headers.get('www-authenticate')).toContain('insufficient_scope');
      expect((await fetch(`${origin}/tenants/demo/scim/v2/Users`)).status).toBe(401);
    } finally {
      await example.stop();
    }
  });

  it('lets a newcomer click through the named-user flow of both demo apps', async () => {
    const example = await runExample({ PATH_PREFIX: '/auth2' });
    try {
      const origin = `http://127.0.0.1:${example.port}`;
      for (const kind of ['public', 'confidential']) {
        const agent = new UserAgent(origin);
        const login = await agent.request(`${origin}/demo/start/${kind}`);
        expect(login.html).toContain('name="password"');
        const consent = await agent.submit(login, { username: 'ben', password: 'ben-demo-password' });
        expect(consent.html).toContain(kind === 'public' ? 'Demo SPA' : 'Demo portal');
        const tokens = await agent.submit(consent, { decision: 'allow' });
        expect(tokens.url).toContain(`/demo/callback/${kind}`);
        expect(tokens.html).toContain('tokens received');
        expect(tokens.html).toMatch(/&quot;sub&quot;: &quot;ben&quot;/);
        expect(tokens.html).toMatch(/&quot;tenant&quot;: &quot;demo&quot;/);
        if (kind === 'confidential') {
          const refreshed = await agent.submit(tokens, {});
          expect(refreshed.html).toContain('tokens received');
        } else {
          expect(tokens.html).toContain('No refresh token');
        }
        // Sign out: the confirmation, then back at the demo page; the next sign-in asks again.
        const signOutLink = /<a href="([^"]+)">Sign out<\/a>/.exec(tokens.html)![1]!.replace(/&amp;/g, '&');
        const confirmation = await agent.request(signOutLink);
        expect(confirmation.html).toContain('Sign out');
        const back = await agent.submit(confirmation, {});
        expect(back.url).toBe(`${origin}/demo`);
        expect((await agent.request(`${origin}/demo/start/${kind}`)).html).toContain('name="password"');
      }
      expect(example.output).toContain('users: ada / ada-demo-password');
    } finally {
      await example.stop();
    }
  });

  it('binds the demo apps\' sign-in and refresh to the browser that started them', async () => {
    const example = await runExample({});
    const realFetch = globalThis.fetch;
    try {
      const origin = `http://127.0.0.1:${example.port}`;
      const agent = new UserAgent(origin);
      const consent = await agent.submit(await agent.request(`${origin}/demo/start/confidential`), {
        username: 'ben', password: 'ben-demo-password',
      });
      // Hold the redirect to the app's callback instead of following it: its state is still pending.
      let callback = '';
      globalThis.fetch = (async (input: string | URL | Request, init?: RequestInit) => {
        if (String(input).includes('/demo/callback/')) {
          callback = String(input);
          return new Response('held', { status: 200 });
        }
        return realFetch(input, init);
      }) as typeof fetch;
      await agent.submit(consent, { decision: 'allow' });
      globalThis.fetch = realFetch;
      expect(callback).toMatch(/\/demo\/callback\/confidential\?code=.*state=/);

      // Replayed in another browser, without a demo session or with one of its own: refused.
      const stranger = new UserAgent(origin);
      expect((await stranger.request(callback)).status).toBe(400);
      await stranger.request(`${origin}/demo/start/confidential`);
      const replayed = await stranger.request(callback);
      expect(replayed.status).toBe(400);
      expect(replayed.html).not.toContain('tokens received');

      // The browser that started it still completes it; the refresh token is not in the page.
      const tokens = await agent.request(callback);
      expect(tokens.status).toBe(200);
      expect(tokens.html).toContain('tokens received');
      expect(tokens.html).not.toContain('refresh_token');
      const csrf = /<input type="hidden" name="csrf" value="([^"]+)">/.exec(tokens.html)![1]!;

      // The refresh needs the session cookie and the session's CSRF token.
      const post = (body: string, headers: Record<string, string> = {}) => realFetch(`${origin}/demo/refresh`, {
        method: 'POST', headers: { 'content-type': 'application/x-www-form-urlencoded', ...headers }, body,
      });
      expect((await post(`csrf=${encodeURIComponent(csrf)}`)).status).toBe(403);
      expect((await stranger.submit(tokens, {})).status).toBe(403);
      expect((await agent.request('/demo/refresh', { method: 'POST', body: 'csrf=wrong' })).status).toBe(403);
      expect((await agent.request('/demo/refresh', { method: 'POST', body: '' })).status).toBe(403);
      expect((await (await realFetch(`${origin}/demo/refresh`)).text())).not.toContain('tokens received');
      const refreshed = await agent.submit(tokens, {});
      expect(refreshed.status).toBe(200);
      expect(refreshed.html).toContain('tokens received');
      // Again, with the rotated refresh token kept for this session.
      const again = await agent.submit(refreshed, {});
      expect(again.status).toBe(200);
      expect(again.html).toContain('tokens received');
    } finally {
      globalThis.fetch = realFetch;
      await example.stop();
    }
  });

  it('uses Redis, PATH_PREFIX and JWKS_FILE; a restart keeps the client and prints a fresh secret', async () => {
    const keys = await testJwks(['ES256', 'RS256']);
    const file = join(dir, 'jwks.json');
    writeFileSync(file, JSON.stringify(keys.jwks));
    const env = { REDIS_URL: redis.url, PATH_PREFIX: '/auth2', JWKS_FILE: file };
    const first = await runExample(env);
    await first.stop();
    const second = await runExample(env);
    try {
      expect(second.output).toContain('Redis store');
      expect(second.output).not.toContain('NO SIGNING KEYS CONFIGURED');
      expect(second.clientId).toBe(first.clientId);
      expect(second.clientSecret).not.toBe(first.clientSecret);
      const oauthUrl = `http://127.0.0.1:${second.port}/auth2/oauth2`;
      const stale = await postToken(oauthUrl, 'grant_type=client_credentials', { authorization: basic(first.clientId, first.clientSecret) });
      expect(stale.status).toBe(401);
      const response = await postToken(oauthUrl, 'grant_type=client_credentials', { authorization: basic(second.clientId, second.clientSecret) });
      expect(response.status).toBe(200);
      expect(decodeProtectedHeader(response.body.access_token as string).kid).toBe(keys.jwks.keys[0]!.kid);
    } finally {
      await second.stop();
    }
  });
});
