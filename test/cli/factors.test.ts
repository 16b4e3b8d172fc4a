import { existsSync, mkdtempSync, rmSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { createRedisStore } from '../../adapters/redis/index.js';
import type { Store } from '../../adapters/types.js';
import { AuditTrail, DEFAULT_AUDIT_SETTINGS } from '../../src/audit/trail.js';
import { Factors } from '../../src/factors/index.js';
import { testAccounts } from '../support/accounts.js';
import { CLI_ENTRY, runCli, type CliRun } from '../support/cli.js';
import { capturingLogger } from '../support/fixtures.js';
import { startRedis, type RedisServer } from '../support/redis.js';
import { startServer, type RunningServer } from '../support/server.js';
import { pkcePair, UserAgent } from '../support/user-agent.js';

const PREFIX = 'cli-factors:';
const FACTOR_KEY = 'factor-key-of-the-server-0123456789abcdef';
const COOKIE_KEY = 'the-servers-first-cookie-key-0123456789';
const REDIRECT = 'http://127.0.0.1:5173/callback';
const carol = { sub: 'carol', password: 'carol-pw', tenant: 'acme' };
const dave = { sub: 'dave', password: 'dave-pw', tenant: 'acme' };

/**
 * `talent-auth factors list|reset` and `sign-ins unlock --tenant --actor`: the built CLI as a
 * subprocess on a real redis-server, against a server on the same store (what the CLI resets, the
 * server's next sign-in no longer asks for), audited with the operator and her name.
 */
describe('talent-auth factors and sign-ins unlock (built, on a real redis-server)', () => {
  let redis: RedisServer;
  let dir: string;
  let server: RunningServer;
  let other: Store;
  let factors: Factors;
  let app: string;
  /** Everything enrolment handed out: never printed by the CLI. */
  const secrets: string[] = [];

  function cli(args: string[], env: Record<string, string | undefined> = {}): Promise<CliRun> {
    return runCli([...args, '--key-prefix', PREFIX], dir, { ...process.env, REDIS_URL: redis.url, COOKIE_KEYS: undefined, ...env });
  }

  beforeAll(async () => {
    if (!existsSync(CLI_ENTRY)) throw new Error('run `npm run build` first (the test command builds)');
    redis = await startRedis();
    dir = mkdtempSync(join(tmpdir(), 'talent-auth-cli-factors-'));
    server = await startServer({
      store: { type: 'redis', url: redis.url, keyPrefix: PREFIX },
      accounts: testAccounts([carol, dave]),
      factorKeys: [FACTOR_KEY],
      cookieKeys: [COOKIE_KEY],
      rateLimits: { authorize: false, failedSignIn: { perUsername: { max: 2, windowSeconds: 600 }, perAddress: { max: 100, windowSeconds: 600 } } },
    });
    app = (await server.auth.appRegistrations.create({ name: 'App', redirectUris: [REDIRECT], clientType: 'public' })).clientId;
    other = await createRedisStore({ url: redis.url, keyPrefix: PREFIX });
    factors = new Factors(other.records, { keys: [FACTOR_KEY], issuerName: 'x' }, new AuditTrail(other, DEFAULT_AUDIT_SETTINGS, capturingLogger().logger, undefined));
  });
  afterAll(async () => {
    await other.close();
    await server.stop();
    await redis.stop();
    rmSync(dir, { recursive: true, force: true });
  });

  /** A sign-in from a new browser: where the password leads. */
  async function signIn(user: { sub: string; password: string }, password = user.password): Promise<'second factor' | 'signed in' | number> {
    const agent = new UserAgent(server.baseUrl);
    const query = new URLSearchParams({ response_type: 'code', client_id: app, redirect_uri: REDIRECT, scope: 'openid', state: 's', code_challenge: pkcePair().challenge, code_challenge_method: 'S256' });
    const step = await agent.submit(await agent.request(`${server.oauthUrl}/authorize?${query}`), { username: user.sub, password });
    if (step.html.includes('/second-factor"')) return 'second factor';
    return step.html.includes('value="allow"') ? 'signed in' : step.status;
  }

  const resets = async () => (await cli(['audit', 'list', '--tenant', 'acme', '--type', 'factor.reset', '--json'])).json.events as Array<Record<string, unknown>>;

  it("lists a user's factors (human and --json, never a secret), resets them with the actor named, and the server's next sign-in asks for the password alone", async () => {
    const enrolled = await server.auth.factors.enrollTotp({ tenant: 'acme', sub: 'carol' });
    const codes = await factors.newRecoveryCodes({ tenant: 'acme', sub: 'carol' }, { actor: { type: 'user', id: 'carol' } });
    secrets.push(enrolled.secret, enrolled.otpauthUri, ...codes);
    expect(await signIn(carol)).toBe('second factor');

    const listed = await cli(['factors', 'list', '--tenant', 'acme', '--sub', 'carol', '--json']);
    expect(listed.stderr).toBe('');
    expect(listed.code).toBe(0);
    const [app, set] = await server.auth.factors.list({ tenant: 'acme', sub: 'carol' });
    expect(listed.json).toEqual({
      tenant: 'acme',
      sub: 'carol',
      factors: [{ id: app!.id, type: 'totp', created_at: app!.createdAt }, { id: set!.id, type: 'recovery_codes', created_at: set!.createdAt }],
      reset_requested: false,
    });
    const human = await cli(['factors', 'list', '--tenant', 'acme', '--sub', 'carol']);
    expect(human.stdout).toMatch(/^ID\s+TYPE\s+LABEL\s+CREATED_AT\n/);
    expect(human.stdout).toContain(`${app!.id}  authenticator app`);
    expect(human.stdout).toContain('recovery codes');
    for (const secret of secrets) expect(listed.stdout + human.stdout).not.toContain(secret);

    const reset = await cli(['factors', 'reset', '--tenant', 'acme', '--sub', 'carol', '--actor', 'jane@ops.example', '--json']);
    expect(reset.stderr).toBe('');
    expect(reset.json).toEqual({ tenant: 'acme', sub: 'carol', reset: true });
    expect(await signIn(carol)).toBe('signed in');
    expect(await server.auth.factors.list({ tenant: 'acme', sub: 'carol' })).toEqual([]);
    expect((await resets())[0]).toMatchObject({
      tenant: 'acme', actor: { type: 'operator', id: 'jane@ops.example' }, target: { type: 'user', id: 'carol' }, details: { removed: ['authenticator_app', 'recovery_codes'] },
    });

    const empty = await cli(['factors', 'list', '--tenant', 'acme', '--sub', 'carol']);
    expect(empty.stdout).toBe('No second factors for user carol of tenant acme.\n');
    const again = await cli(['factors', 'reset', '--tenant', 'acme', '--sub', 'carol']);
    expect(again.code).toBe(0);
    expect(again.stdout).toBe('Nothing to reset: user carol of tenant acme holds no second factor.\n');
    expect(await resets()).toHaveLength(1);
  });

  it('without --actor the operator is unnamed; a reset asked for by an admin shows in the list until it is done', async () => {
    await server.auth.factors.enrollTotp({ tenant: 'acme', sub: 'dave' });
    expect(await factors.requestReset({ tenant: 'acme', sub: 'dave' }, { actor: { type: 'user', id: 'ada' } })).toBe(true);
    const listed = await cli(['factors', 'list', '--tenant', 'acme', '--sub', 'dave']);
    expect(listed.stdout).toContain('A reset was asked for: she enrols anew at her next sign-in.');
    expect((await cli(['factors', 'list', '--tenant', 'acme', '--sub', 'dave', '--json'])).json.reset_requested).toBe(true);
    const reset = await cli(['factors', 'reset', '--tenant', 'acme', '--sub', 'dave']);
    expect(reset.stdout).toMatch(/^Reset: every second factor of user dave of tenant acme is removed/);
    const [latest] = await resets();
    expect(latest).toMatchObject({ actor: { type: 'operator' }, target: { type: 'user', id: 'dave' } });
    expect(latest!.actor).not.toHaveProperty('id');
    expect((await cli(['factors', 'list', '--tenant', 'acme', '--sub', 'dave', '--json'])).json).toMatchObject({ factors: [], reset_requested: false });
  });

  it('a user of another tenant with the same sub is another user: listed and reset apart', async () => {
    await server.auth.factors.enrollTotp({ tenant: 'acme', sub: 'carol' });
    expect((await cli(['factors', 'list', '--tenant', 'globex', '--sub', 'carol', '--json'])).json.factors).toEqual([]);
    expect((await cli(['factors', 'reset', '--tenant', 'globex', '--sub', 'carol', '--json'])).json.reset).toBe(false);
    expect(await server.auth.factors.list({ tenant: 'acme', sub: 'carol' })).toHaveLength(1);
    expect(await server.auth.factors.reset({ tenant: 'acme', sub: 'carol' })).toBe(true);
  });

  it('refuses bad input with exit 1 naming the flag or field, before anything is changed; exit 2 without Redis', async () => {
    await server.auth.factors.enrollTotp({ tenant: 'acme', sub: 'carol' });
    const before = (await resets()).length;
    const cases: Array<[string[], RegExp, string?]> = [
      [['factors', 'reset', '--tenant', 'acme'], /factors reset: --sub is required/, '--sub'],
      [['factors', 'list', '--sub', 'carol'], /factors list: --tenant is required/, '--tenant'],
      [['factors', 'reset', '--tenant', 'acme', '--sub', 'carol', '--actor', 'jane\u001b[31m'], /actor: must not contain control, format or bidirectional characters \(U\+001B/, 'actor'],
      [['factors', 'reset', '--tenant', 'acme', '--sub', 'carol', '--actor', ' '], /actor: must be a name of 1 to 128 characters/, 'actor'],
      [['factors', 'reset', '--tenant', 'acme', '--sub', 'carol', '--actor', 'x'.repeat(129)], /actor: must be a name of 1 to 128 characters/, 'actor'],
      [['factors', 'reset', '--tenant', 'acme', '--sub', 'x'.repeat(256)], /sub: must be a string of 1 to 255 characters/, 'sub'],
      [['factors', 'list', '--tenant', 'acme', '--sub', 'carol', '--actor', 'jane'], /factors list does not take --actor/, '--actor'],
      [['factors', 'remove', '--tenant', 'acme'], /unknown command "factors remove"/],
    ];
    for (const [args, message, field] of cases) {
      const run = await cli([...args, '--json']);
      expect(run.code).toBe(1);
      const error = JSON.parse(run.stderr) as { message: string; field?: string };
      expect(error.message).toMatch(message);
      if (field) expect(error.field).toBe(field);
    }
    expect(await resets()).toHaveLength(before);
    expect(await server.auth.factors.list({ tenant: 'acme', sub: 'carol' })).toHaveLength(1);
    const unreachable = await runCli(['factors', 'list', '--tenant', 'acme', '--sub', 'carol'], dir, { ...process.env, REDIS_URL: 'redis://127.0.0.1:1' });
    expect(unreachable.code).toBe(2);
    expect(await server.auth.factors.reset({ tenant: 'acme', sub: 'carol' })).toBe(true);
  });

  it('sign-ins unlock --tenant --actor: lifts the hold, recorded in that tenant with the operator named (a hint, never the username)', async () => {
    expect([await signIn(dave, 'x'), await signIn(dave, 'y'), await signIn(dave)]).toEqual([401, 401, 429]);
    const done = await cli(['sign-ins', 'unlock', '--username', 'dave', '--tenant', 'acme', '--actor', 'jane@ops.example', '--json'], { COOKIE_KEYS: COOKIE_KEY });
    expect(done.stderr).toBe('');
    expect(done.json).toEqual({ unlocked: true });
    expect(await signIn(dave)).toBe('signed in');
    const events = (await cli(['audit', 'list', '--tenant', 'acme', '--type', 'sign_in.unlocked', '--json'])).json.events as Array<Record<string, unknown>>;
    expect(events).toEqual([expect.objectContaining({
      tenant: 'acme', actor: { type: 'operator', id: 'jane@ops.example' }, details: { failures: 2, user_hint: expect.stringMatching(/^[A-Za-z0-9_-]{22}$/) },
    })]);
    expect(JSON.stringify(events)).not.toContain('dave');
    const bad = await cli(['sign-ins', 'unlock', '--username', 'dave', '--actor', '', '--json'], { COOKIE_KEYS: COOKIE_KEY });
    expect(bad.code).toBe(1);
    expect(JSON.parse(bad.stderr)).toMatchObject({ error: 'validation_error', field: 'actor' });
  });

  it('has help for the factors commands and names them at the top', async () => {
    expect((await cli(['--help'])).stdout).toMatch(/factors list .*\n\s+factors reset /);
    expect((await cli(['factors', '--help'])).stdout).toContain('reset --tenant <id> --sub <sub> [--actor <name>]');
    for (const command of ['factors list', 'factors reset']) {
      const help = await cli([...command.split(' '), '--help'], { REDIS_URL: undefined });
      expect(help.code).toBe(0);
      expect(help.stdout).toContain(`Usage: talent-auth ${command} --tenant <id> --sub <sub>`);
    }
    expect((await cli(['factors', 'reset', '--help'])).stdout).toContain('--actor <name>');
    expect((await cli(['sign-ins', 'unlock', '--help'])).stdout).toContain('--tenant <id>');
  });
});
