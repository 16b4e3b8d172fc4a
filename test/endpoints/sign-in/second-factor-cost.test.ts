import { Redis } from 'ioredis';
import { totpCode, totpStep } from '../../../src/factors/totp.js';
import type { Account } from '../../../src/index.js';
import { testAccounts } from '../../support/accounts.js';
import { startServer, type RunningServer } from '../../support/server.js';
import { useStore } from '../../support/stores.js';
import { passSecondFactor } from '../../support/second-factor.js';
import { pkcePair, UserAgent, type Step } from '../../support/user-agent.js';

const CB = 'https://app.example/cb';
const ROUNDS = 20;
const USERS: Array<Account & { password: string }> = Array.from({ length: ROUNDS }, (_, n) => [
  { sub: `pw${n}`, password: `pw${n}-password`, tenant: 'acme', claims: { name: `pw${n}` } },
  { sub: `tf${n}`, password: `tf${n}-password`, tenant: 'acme', claims: { name: `tf${n}` } },
  { sub: `en${n}`, password: `en${n}-password`, tenant: 'acme', claims: { name: `en${n}` }, permissions: ['integration_setup'] },
]).flat().concat([{ sub: 'warm', password: 'warm-password', tenant: 'acme', claims: { name: 'warm' } }]);

const median = (values: number[]) => [...values].sort((a, b) => a - b)[Math.floor(values.length / 2)]!;

/**
 * WHAT A SECOND FACTOR COSTS, measured over real sockets on Redis (reported, bounded loosely so a
 * regression shows): the median of 20 sign-ins with the password alone against 20 with the password
 * and an authenticator app's code (each from the login form's POST to the redirect back to the
 * app), and the Redis bytes of an enrolled user's factor record (MEMORY USAGE: the app sealed and
 * ten recovery-code HMACs).
 */
describe('the cost of a second factor (redis store)', () => {
  const redis = useStore('redis');
  let server: RunningServer;
  let clientId: string;
  let keyPrefix: string;

  beforeAll(async () => {
    const store = redis.option() as { type: 'redis'; url: string; keyPrefix: string };
    keyPrefix = store.keyPrefix;
    server = await startServer({ store, accounts: testAccounts(USERS), factorKeys: ['factor-key-of-the-cost-test-0123456789abcdef'] });
    ({ clientId } = await server.auth.appRegistrations.create({ name: 'Cost', tenant: 'acme', redirectUris: [CB], clientType: 'public' }));
  });
  afterAll(() => server.stop());

  async function loginPage(agent: UserAgent): Promise<Step> {
    const query = new URLSearchParams({ response_type: 'code', client_id: clientId, redirect_uri: CB, scope: 'openid', state: 's', code_challenge: pkcePair().challenge, code_challenge_method: 'S256' });
    return agent.request(`${server.oauthUrl}/authorize?${query}`);
  }

  /** From the login form's POST to the code at the app (each user's first sign-in: her consent in both kinds alike). */
  async function timed(sub: string, secret?: string): Promise<number> {
    const agent = new UserAgent(server.baseUrl);
    const login = await loginPage(agent);
    const started = performance.now();
    let step = await agent.submit(login, { username: sub, password: `${sub}-password` });
    if (secret) step = await agent.submit(step, { csrf: /name="csrf" value="([^"]+)"/.exec(step.html)![1]!, method: 'otp', code: totpCode(secret, totpStep(Date.now())) });
    if (step.html.includes('value="allow"')) step = await agent.submit(step, { decision: 'allow' });
    const elapsed = performance.now() - started;
    expect(new URL(step.location!).searchParams.get('code')).toBeTruthy();
    return elapsed;
  }

  it('a sign-in with an authenticator app\'s code, against the password alone (median of 20 each); Redis bytes per enrolled user', async () => {
    const secrets = new Map<string, string>();
    for (let n = 0; n < ROUNDS; n += 1) secrets.set(`tf${n}`, (await server.auth.factors.enrollTotp({ tenant: 'acme', sub: `tf${n}` })).secret);
    // A warm-up, not measured (a user of its own: the measured ones each sign in once).
    await timed('warm');
    const password: number[] = [];
    const withCode: number[] = [];
    for (let n = 0; n < ROUNDS; n += 1) {
      password.push(await timed(`pw${n}`));
      withCode.push(await timed(`tf${n}`, secrets.get(`tf${n}`)));
    }
    const [alone, both] = [median(password), median(withCode)];
    process.stdout.write(`second factor cost: password alone median ${alone.toFixed(1)} ms, password + code median ${both.toFixed(1)} ms, added ${(both - alone).toFixed(1)} ms (${ROUNDS} each)\n`);

    // A user enrolled through the sign-in's pages (app and ten recovery codes): her record's bytes.
    const agent = new UserAgent(server.baseUrl);
    await passSecondFactor(agent, await agent.submit(await loginPage(agent), { username: 'en0', password: 'en0-password' }), server.baseUrl, 'en0');
    const client = new Redis(redis.redis!.url);
    try {
      const key = `${keyPrefix}rec:{factors:acme:en0}`;
      const bytes = Number(await client.call('MEMORY', 'USAGE', key, 'SAMPLES', '0'));
      const appOnly = Number(await client.call('MEMORY', 'USAGE', `${keyPrefix}rec:{factors:acme:tf0}`, 'SAMPLES', '0'));
      process.stdout.write(`second factor storage: ${bytes} bytes of Redis per user enrolled at sign-in (app + 10 recovery codes), ${appOnly} bytes with an app only\n`);
      expect(bytes).toBeGreaterThan(appOnly);
      expect(bytes).toBeLessThan(4096);
    } finally {
      client.disconnect();
    }
    // Loose: a second factor is one more request and one compare-and-set, not a multiple of a sign-in.
    expect(both - alone).toBeLessThan(250);
  }, 120_000);
});
