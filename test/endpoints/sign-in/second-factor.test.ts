import * as client from 'openid-client';
import { Redis } from 'ioredis';
import { createRedisStore } from '../../../adapters/redis/index.js';
import type { Store } from '../../../adapters/types.js';
import { AuditTrail, DEFAULT_AUDIT_SETTINGS } from '../../../src/audit/trail.js';
import { Factors } from '../../../src/factors/index.js';
import { totpCode, totpStep } from '../../../src/factors/totp.js';
import { ACR_MFA, ACR_PASSWORD } from '../../../src/index.js';
import { testAccounts } from '../../support/accounts.js';
import { capturingLogger } from '../../support/fixtures.js';
import { startServer, type RunningServer } from '../../support/server.js';
import { useStore } from '../../support/stores.js';
import { pkcePair, UserAgent, type Step } from '../../support/user-agent.js';

const WEB = 'https://app.example.com/cb';
const FACTOR_KEY = 'factor-key-of-the-server-0123456789abcdef';
const TENANT = 'acme';
/** Users of the tests: each test that signs in with a code has its own (a code is accepted once). */
const USERS = ['ann', 'ben', 'cat', 'dan', 'eve', 'fay', 'gus', 'hal', 'ivy', 'jon'].map((sub) => ({
  sub, password: `${sub}-password`, tenant: TENANT, claims: { name: sub }, scopes: ['scim.read'],
}));
const passwordOf = (sub: string) => `${sub}-password`;
const SELF = { actor: { type: 'user' as const, id: 'test' } };

/**
 * The second factor of a sign-in (src/endpoints/sign-in/pages.ts): after a correct password, a user
 * with an authenticator app gives its code or a recovery code before the sign-in finishes; amr and
 * acr say so. Through the real pages over HTTP and openid-client, on a real Redis; the user's app is
 * enrolled by a second Factors instance on the same Redis (as another server process would), codes
 * computed here with otpauth (src/factors/totp.ts).
 */
describe('the second factor of a sign-in (redis store)', () => {
  const redis = useStore('redis');
  let server: RunningServer;
  let config: client.Configuration;
  let other: Store;
  let factors: Factors;
  /** Every secret and code the tests handled: none may appear in a log line or an audit event. */
  const secrets: string[] = [];

  async function serverOn(options: Parameters<typeof startServer>[0] = {}) {
    const store = redis.option() as { type: 'redis'; url: string; keyPrefix: string };
    const started = await startServer({ accounts: testAccounts(USERS), store, factorKeys: [FACTOR_KEY], ...options });
    const app = await started.auth.appRegistrations.create({ name: 'Second factor app', tenant: TENANT, redirectUris: [WEB], clientType: 'confidential' });
    const configuration = await client.discovery(new URL(started.oauthUrl), app.clientId, undefined, client.ClientSecretBasic(app.clientSecret!), {
      execute: [client.allowInsecureRequests],
    });
    const otherStore = await createRedisStore({ url: store.url, keyPrefix: store.keyPrefix });
    const otherFactors = new Factors(otherStore.records, { keys: [FACTOR_KEY], issuerName: 'x' }, new AuditTrail(otherStore, DEFAULT_AUDIT_SETTINGS, capturingLogger().logger, undefined));
    return { started, configuration, otherStore, otherFactors };
  }

  beforeAll(async () => {
    ({ started: server, configuration: config, otherStore: other, otherFactors: factors } = await serverOn());
  });
  afterAll(async () => {
    await other.close();
    await server.stop();
  });

  /** Enrols `sub`'s app, confirmed with the code of the step before now: now's and the next one's sign in. */
  async function enrolled(sub: string, on = factors): Promise<string> {
    const owner = { tenant: TENANT, sub };
    const { secret } = await on.startAuthenticatorApp(owner, sub);
    secrets.push(secret);
    expect(await on.confirmAuthenticatorApp(owner, totpCode(secret, totpStep(Date.now()) - 1), SELF)).toEqual({ accepted: true });
    return secret;
  }

  const codeNow = (secret: string, ahead = 0) => {
    const code = totpCode(secret, totpStep(Date.now()) + ahead);
    secrets.push(code);
    return code;
  };

  interface Started { step: Step; verifier: string; state: string }

  async function start(agent: UserAgent, extra: Record<string, string> = {}, on = config): Promise<Started> {
    const { verifier, challenge } = pkcePair();
    const state = client.randomState();
    const url = client.buildAuthorizationUrl(on, {
      redirect_uri: WEB, scope: 'openid scim.read', state, code_challenge: challenge, code_challenge_method: 'S256', ...extra,
    });
    return { step: await agent.request(url.href), verifier, state };
  }

  /** The password of `sub` on the login page: the second-factor page when she has an app. */
  async function password(agent: UserAgent, step: Step, sub: string): Promise<Step> {
    expect(step.html).toContain('name="password"');
    return agent.submit(step, { username: sub, password: passwordOf(sub) });
  }

  const isSecondFactorPage = (step: Step) => step.html.includes('name="code"') && !step.html.includes('name="password"');

  /** The page's code form, as a browser submits it: the CSRF token and the one field, `code`. */
  function submitCode(agent: UserAgent, step: Step, value: string): Promise<Step> {
    const action = /<form method="post" action="([^"]+\/second-factor)"/.exec(step.html)?.[1];
    const csrf = /name="csrf" value="([^"]+)"/.exec(step.html)?.[1];
    if (!action || !csrf) throw new Error(`not the second-factor page:\n${step.html}`);
    return agent.request(action, { method: 'POST', body: new URLSearchParams({ csrf, code: value }).toString() });
  }

  /** A code on the second-factor page (the app's or a recovery code, in the same field), then the consent if asked. */
  async function code(agent: UserAgent, step: Step, value: string): Promise<Step> {
    let next = await submitCode(agent, step, value);
    if (next.html.includes('value="allow"')) next = await agent.submit(next, { decision: 'allow' });
    return next;
  }

  function tokensOf({ step, verifier, state }: Started, on = config) {
    expect(step.location).toBeDefined();
    return client.authorizationCodeGrant(on, new URL(step.location!), { pkceCodeVerifier: verifier, expectedState: state });
  }

  /**
   * The user's events of a type, once `count` of them are written (refusals and sign-ins are
   * written after the answer: waited for, up to 3 s), and no more after a further moment.
   */
  async function events(type: string, sub: string, count = 1) {
    const read = async () => (await server.auth.audit.list({ tenant: TENANT, type: type as never })).events
      .filter((event) => event.actor.type === 'user' && event.actor.id === sub);
    const until = Date.now() + 3000;
    let found = await read();
    while (found.length < count && Date.now() < until) {
      await new Promise((resolve) => setTimeout(resolve, 25));
      found = await read();
    }
    await new Promise((resolve) => setTimeout(resolve, 50));
    return read();
  }

  it('a right code after the password signs in with amr [pwd, otp, mfa] and the mfa class; the password alone finishes nothing', async () => {
    const secret = await enrolled('ann');
    const agent = new UserAgent(server.baseUrl);
    const started = await start(agent);
    const afterPassword = await password(agent, started.step, 'ann');
    expect(afterPassword.status).toBe(200);
    expect(afterPassword.location).toBeUndefined();
    expect(isSecondFactorPage(afterPassword)).toBe(true);
    // The contract's page: one form, one field named code (the app's code or a recovery code, so
    // not numeric only), the browser's one-time-code autofill; no passkey button (she has none).
    expect(afterPassword.html.match(/<form /g)).toHaveLength(1);
    expect(afterPassword.html.match(/<input [^>]*>/g)!.filter((input) => !input.includes('type="hidden"'))).toEqual([
      expect.stringMatching(/^<input id="code" name="code" type="text" inputmode="text" autocomplete="one-time-code"/),
    ]);
    expect(afterPassword.html).not.toContain('name="method"');
    expect(afterPassword.html).not.toContain('Use a passkey');
    expect(await events('sign_in.succeeded', 'ann', 0)).toEqual([]);
    // Not yet a browser that signed in as her: no known-device cookie (it would lift the username
    // limit off the guesses at her code).
    const deviceCookies = () => agent.setCookieHeaders.filter((header) => header.startsWith('talent_auth_device='));
    expect(deviceCookies()).toEqual([]);
    // A reload shows the code page again, not the password form.
    const reloaded = await agent.request(afterPassword.url);
    expect(isSecondFactorPage(reloaded)).toBe(true);

    const back = await code(agent, reloaded, codeNow(secret));
    const tokens = await tokensOf({ ...started, step: back });
    expect(tokens.claims()).toMatchObject({ sub: 'ann', amr: ['pwd', 'otp', 'mfa'], acr: ACR_MFA });
    expect(await events('sign_in.succeeded', 'ann')).toHaveLength(1);
    expect(deviceCookies()).toHaveLength(1);
  });

  it('a wrong code is refused (401, the page again), audited as sign_in.second_factor_failed; the right one then signs in', async () => {
    const secret = await enrolled('ben');
    const agent = new UserAgent(server.baseUrl);
    const started = await start(agent);
    const page = await password(agent, started.step, 'ben');
    const right = codeNow(secret);
    const wrong = right === '000000' ? '111111' : '000000';
    const refused = await submitCode(agent, page, wrong);
    expect(refused.status).toBe(401);
    expect(refused.location).toBeUndefined();
    expect(refused.html).toContain('That code is not right.');
    expect(isSecondFactorPage(refused)).toBe(true);
    expect(await events('sign_in.second_factor_failed', 'ben')).toEqual([
      expect.objectContaining({ target: { type: 'user', id: 'ben' }, details: expect.objectContaining({ factor: 'authenticator_app', reason: 'wrong' }) }),
    ]);
    const back = await code(agent, refused, right);
    expect((await tokensOf({ ...started, step: back })).claims()).toMatchObject({ amr: ['pwd', 'otp', 'mfa'], acr: ACR_MFA });
  });

  it('a code used once is refused at the next sign-in, answered like a wrong one', async () => {
    const secret = await enrolled('cat');
    const used = codeNow(secret);
    const first = new UserAgent(server.baseUrl);
    const started = await start(first);
    await tokensOf({ ...started, step: await code(first, await password(first, started.step, 'cat'), used) });

    const second = new UserAgent(server.baseUrl);
    const again = await start(second);
    const replayed = await submitCode(second, await password(second, again.step, 'cat'), used);
    expect(replayed.status).toBe(401);
    expect(replayed.location).toBeUndefined();
    expect(replayed.html).toContain('That code is not right.');
    expect(await events('sign_in.second_factor_failed', 'cat')).toEqual([
      expect.objectContaining({ details: expect.objectContaining({ factor: 'authenticator_app', reason: 'replayed' }) }),
    ]);
  });

  it.each([['letters', '12ab56'], ['five digits', '12345'], ['seven digits', '1234567'], ['a short recovery code', 'ABCD-EFGH-JKMN'], ['empty', ''], ['overlong', '1'.repeat(100)]])(
    'a code of neither shape, six digits or a recovery code (%s), is refused unread: 400, the page says what a code is',
    async (_name, value) => {
      const agent = new UserAgent(server.baseUrl);
      await enrolled('dan');
      const started = await start(agent);
      const refused = await submitCode(agent, await password(agent, started.step, 'dan'), value);
      expect(refused.status).toBe(400);
      expect(refused.html).toContain('A code from your authenticator app has 6 digits; a recovery code has 16 letters and digits.');
      expect(await events('sign_in.second_factor_failed', 'dan', 0)).toEqual([]);
      expect(isSecondFactorPage(refused)).toBe(true);
    },
  );

  it('a recovery code signs in once (amr [pwd, otp, mfa]), recovery_code.used audited; the same code again is refused', async () => {
    await enrolled('eve');
    const codes = await factors.newRecoveryCodes({ tenant: TENANT, sub: 'eve' }, SELF);
    secrets.push(...codes);
    const agent = new UserAgent(server.baseUrl);
    const started = await start(agent);
    // Typed in lower case, without its hyphens: still the code.
    const back = await code(agent, await password(agent, started.step, 'eve'), codes[3]!.toLowerCase().replace(/-/g, ''));
    expect((await tokensOf({ ...started, step: back })).claims()).toMatchObject({ amr: ['pwd', 'otp', 'mfa'], acr: ACR_MFA });
    expect(await events('recovery_code.used', 'eve')).toEqual([expect.objectContaining({ details: { remaining: 9 } })]);

    const second = new UserAgent(server.baseUrl);
    const again = await start(second);
    const refused = await submitCode(second, await password(second, again.step, 'eve'), codes[3]!);
    expect(refused.status).toBe(401);
    expect(refused.html).toContain('That code is not right.');
    expect(isSecondFactorPage(refused)).toBe(true);
    expect(refused.html).toContain('aria-describedby="code-error"');
    expect(await events('sign_in.second_factor_failed', 'eve')).toEqual([
      expect.objectContaining({ details: expect.objectContaining({ factor: 'recovery_codes', reason: 'wrong' }) }),
    ]);
    expect(await server.auth.factors.list({ tenant: TENANT, sub: 'eve' })).toEqual([expect.objectContaining({ type: 'totp' }), expect.objectContaining({ type: 'recovery_codes' })]);
  });

  it('no second-factor step without the password first: a POST to it, or to another interaction\'s, is refused (400); a POST without the CSRF token 403', async () => {
    await enrolled('fay');
    const agent = new UserAgent(server.baseUrl);
    const started = await start(agent);
    // The login page, no password typed: its interaction waits for none.
    const uid = /interaction\/([A-Za-z0-9_-]+)\/login/.exec(started.step.html)![1]!;
    const csrf = /name="csrf" value="([^"]+)"/.exec(started.step.html)![1]!;
    const post = (path: string, body: Record<string, string>) => agent.request(path, { method: 'POST', body: new URLSearchParams(body).toString() });
    const early = await post(`${server.oauthUrl}/interaction/${uid}/second-factor`, { csrf, code: '123456' });
    expect(early.status).toBe(400);
    expect(early.html).toContain('This sign-in step is over.');

    // The password passed in one browser's interaction: another interaction of the same browser does not pass.
    const page = await password(agent, started.step, 'fay');
    expect(isSecondFactorPage(page)).toBe(true);
    const otherStart = await start(agent);
    const otherUid = /interaction\/([A-Za-z0-9_-]+)\/login/.exec(otherStart.step.html)![1]!;
    const otherCsrf = /name="csrf" value="([^"]+)"/.exec(otherStart.step.html)![1]!;
    const elsewhere = await post(`${server.oauthUrl}/interaction/${otherUid}/second-factor`, { csrf: otherCsrf, code: '123456' });
    expect(elsewhere.status).toBe(400);
    expect(elsewhere.html).toContain('This sign-in step is over.');
    // The second interaction's login page knows nothing of the first's password.
    expect(otherStart.step.html).toContain('name="password"');

    const noCsrf = await post(`${server.oauthUrl}/interaction/${otherUid}/second-factor`, { code: '123456' });
    expect(noCsrf.status).toBe(403);
  });

  it('acr_values asking for the mfa class: a user with an app reaches it; one without ends with unmet_authentication_requirements', async () => {
    const secret = await enrolled('gus');
    const agent = new UserAgent(server.baseUrl);
    const asked = await start(agent, { acr_values: ACR_MFA });
    const back = await code(agent, await password(agent, asked.step, 'gus'), codeNow(secret));
    expect((await tokensOf({ ...asked, step: back })).claims()).toMatchObject({ amr: ['pwd', 'otp', 'mfa'], acr: ACR_MFA });
    // The mfa session answers a later request asking for the mfa class without a sign-in.
    const later = await start(agent, { acr_values: ACR_MFA });
    const withConsent = later.step.html.includes('value="allow"') ? await agent.submit(later.step, { decision: 'allow' }) : later.step;
    expect((await tokensOf({ ...later, step: withConsent })).claims()).toMatchObject({ acr: ACR_MFA });

    // hal has no app: the password alone, and the class is not reached.
    const plain = new UserAgent(server.baseUrl);
    const hal = await start(plain, { acr_values: ACR_MFA });
    let after = await password(plain, hal.step, 'hal');
    if (after.html.includes('value="allow"')) after = await plain.submit(after, { decision: 'allow' });
    expect(await tokensOf({ ...hal, step: after }).catch((caught: unknown) => caught)).toMatchObject({ error: 'unmet_authentication_requirements' });
    // Without acr_values, hal signs in with the password class.
    const plainAgain = new UserAgent(server.baseUrl);
    const halAgain = await start(plainAgain);
    let afterAgain = await password(plainAgain, halAgain.step, 'hal');
    if (afterAgain.html.includes('value="allow"')) afterAgain = await plainAgain.submit(afterAgain, { decision: 'allow' });
    expect((await tokensOf({ ...halAgain, step: afterAgain })).claims()).toMatchObject({ amr: ['pwd'], acr: ACR_PASSWORD });
  });

  it('wrong codes count against the sign-in throttle: past the username limit even the right code waits (429, Retry-After); malformed ones are not counted', async () => {
    const limited = await serverOn({ rateLimits: { authorize: false, failedSignIn: { perUsername: { max: 3, windowSeconds: 60 }, perAddress: { max: 100, windowSeconds: 60 } } } });
    try {
      const secret = await enrolled('ivy', limited.otherFactors);
      const agent = new UserAgent(limited.started.baseUrl);
      const started = await start(agent, {}, limited.configuration);
      let page = await password(agent, started.step, 'ivy');
      const right = codeNow(secret);
      const wrong = right === '000000' ? '111111' : '000000';
      // Malformed codes: refused, not counted.
      for (let i = 0; i < 4; i += 1) expect((page = await submitCode(agent, page, 'abc')).status).toBe(400);
      for (let i = 0; i < 3; i += 1) expect((page = await submitCode(agent, page, wrong)).status).toBe(401);
      const held = await submitCode(agent, page, right);
      expect(held.status).toBe(429);
      expect(held.html).toContain('Too many failed sign-ins.');
      expect(held.location).toBeUndefined();
      expect(limited.started.logLines.filter((line) => line.includes('"sign-in failed"'))).toHaveLength(3);
    } finally {
      await limited.otherStore.close();
      await limited.started.stop();
    }
  });

  it('a browser that signed in as her before (known device) is held by the username limit on codes all the same', async () => {
    const limited = await serverOn({ rateLimits: { authorize: false, failedSignIn: { perUsername: { max: 3, windowSeconds: 60 }, perAddress: { max: 100, windowSeconds: 60 } } } });
    try {
      const secret = await enrolled('jon', limited.otherFactors);
      const agent = new UserAgent(limited.started.baseUrl);
      // A whole sign-in first: this browser is now a known device of hers.
      const first = await start(agent, {}, limited.configuration);
      const signedIn = await code(agent, await password(agent, first.step, 'jon'), codeNow(secret));
      expect(signedIn.location).toBeDefined();
      const again = await start(agent, { prompt: 'login' }, limited.configuration);
      let page = await password(agent, again.step, 'jon');
      expect(isSecondFactorPage(page)).toBe(true);
      const wrong = codeNow(secret) === '000000' ? '111111' : '000000';
      for (let i = 0; i < 3; i += 1) expect((page = await submitCode(agent, page, wrong)).status).toBe(401);
      expect((await submitCode(agent, page, wrong)).status).toBe(429);
    } finally {
      await limited.otherStore.close();
      await limited.started.stop();
    }
  });

  it('nothing secret in the logs, the audit trail or the store\'s interaction records: no factor secret, no code, no recovery code', async () => {
    expect(secrets.length).toBeGreaterThan(10);
    const { events: all } = await server.auth.audit.list({ tenant: TENANT });
    const redisClient = new Redis(redis.redis!.url);
    try {
      const keys = await redisClient.keys('*');
      const values = await Promise.all(keys.map(async (key) => {
        const type = await redisClient.type(key);
        if (type === 'string') return redisClient.get(key);
        if (type === 'hash') return JSON.stringify(await redisClient.hgetall(key));
        if (type === 'list') return JSON.stringify(await redisClient.lrange(key, 0, -1));
        if (type === 'zset') return JSON.stringify(await redisClient.zrange(key, 0, -1));
        if (type === 'set') return JSON.stringify(await redisClient.smembers(key));
        if (type === 'stream') return JSON.stringify(await redisClient.xrange(key, '-', '+'));
        return '';
      }));
      const written = [...server.logLines, JSON.stringify(all), ...keys, ...values].join('\n');
      for (const secret of secrets) {
        // A 6-digit code could be part of any number (a time in ms): looked for as a value of its own.
        const forms = /^\d{6}$/.test(secret) ? [`"${secret}"`, `=${secret}`] : [secret, secret.replace(/-/g, '')];
        expect({ secret, found: forms.some((form) => written.includes(form)) }).toEqual({ secret, found: false });
      }
    } finally {
      redisClient.disconnect();
    }
  });
});
