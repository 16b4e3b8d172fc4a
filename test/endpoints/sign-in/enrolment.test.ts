import * as client from 'openid-client';
import { Redis } from 'ioredis';
import { createRedisStore } from '../../../adapters/redis/index.js';
import { AuditTrail, DEFAULT_AUDIT_SETTINGS } from '../../../src/audit/trail.js';
import { Factors } from '../../../src/factors/index.js';
import { totpCode, totpStep } from '../../../src/factors/totp.js';
import { ACR_MFA, ACR_PASSWORD, type TenantPolicy } from '../../../src/index.js';
import { testAccounts } from '../../support/accounts.js';
import { capturingLogger } from '../../support/fixtures.js';
import { recoveryCodesOnPage, secretOnPage } from '../../support/second-factor.js';
import { startServer, type RunningServer } from '../../support/server.js';
import { STORE_KINDS, useStore } from '../../support/stores.js';
import { pkcePair, UserAgent, type Step } from '../../support/user-agent.js';

const PORTAL = 'https://portal.example/cb';
const FACTOR_KEY = 'factor-key-of-the-enrolment-tests-0123456789';
const ADMIN = ['integration_setup'];
/** Each test its own users (an enrolment happens once per user). */
const USERS = [
  ...['ada', 'abe', 'amy', 'art', 'ava', 'axl', 'rex'].map((sub) => ({ sub, tenant: 'acme', permissions: ADMIN })),
  { sub: 'pia', tenant: 'soft', permissions: ADMIN },
  { sub: 'pat', tenant: 'soft', permissions: ADMIN },
  { sub: 'ben', tenant: 'acme', permissions: [] as string[] },
  { sub: 'bo', tenant: 'strict', permissions: [] as string[] },
].map((user) => ({ ...user, password: `${user.sub}-password`, claims: { name: user.sub, email: `${user.sub}@${user.tenant}.example` } }));

/**
 * ENROLMENT AFTER THE PASSWORD (src/endpoints/sign-in/enrolment.ts), over HTTP through the real
 * pages and openid-client, on both stores: who is led through it (the second-factor rule of her
 * tenant: policies/second-factor-rule.ts), the QR code and the secret, the first code (wrong ones
 * throttled), the recovery codes shown once, the sign-in finished with amr [pwd, otp, mfa]; the
 * management right only after a second factor.
 */
describe.each(STORE_KINDS)('enrolment after the password (%s store)', (kind) => {
  const store = useStore(kind);
  let server: RunningServer;
  let config: client.Configuration;
  /** The host's policy per tenant: `soft` makes the second factor optional, `strict` required. */
  const hostPolicies = new Map<string, TenantPolicy>([['soft', { secondFactor: 'optional' }], ['strict', { secondFactor: 'required' }]]);
  /** Every secret and code the tests saw: none may be in a log line or an audit event. */
  const secrets: string[] = [];
  const logs = capturingLogger();

  /** The store's option (Redis: its key prefix, to read everything written). */
  let storeOption: ReturnType<typeof store.option>;

  beforeAll(async () => {
    storeOption = store.option();
    server = await startServer({
      store: storeOption,
      accounts: testAccounts(USERS),
      factorKeys: [FACTOR_KEY],
      logger: logs.logger,
      tenantPolicy: (tenant) => hostPolicies.get(tenant),
      rateLimits: { authorize: false, failedSignIn: { perUsername: { max: 3, windowSeconds: 60 }, perAddress: { max: 1000, windowSeconds: 60 } } },
    });
    const portal = await server.auth.appRegistrations.create({ name: 'Portal', redirectUris: [PORTAL], clientType: 'confidential', firstParty: true });
    config = await client.discovery(new URL(server.oauthUrl), portal.clientId, undefined, client.ClientSecretBasic(portal.clientSecret!), {
      execute: [client.allowInsecureRequests],
    });
  });
  afterAll(() => server.stop());

  interface Started { step: Step; verifier: string; state: string; agent: UserAgent }

  async function start(scope = 'openid manage.integrations', agent = new UserAgent(server.baseUrl), extra: Record<string, string> = {}): Promise<Started> {
    const { verifier, challenge } = pkcePair();
    const state = client.randomState();
    const url = client.buildAuthorizationUrl(config, { redirect_uri: PORTAL, scope, state, code_challenge: challenge, code_challenge_method: 'S256', ...extra });
    return { step: await agent.request(url.href), verifier, state, agent };
  }

  async function password(started: Started, sub: string): Promise<Step> {
    expect(started.step.html).toContain('name="password"');
    return started.agent.submit(started.step, { username: sub, password: `${sub}-password` });
  }

  const isEnrolment = (step: Step) => step.html.includes('<code id="secret">') && step.html.includes('/enrol"');
  const isCodesPage = (step: Step) => step.html.includes('/enrolled"');
  const isSecondFactor = (step: Step) => step.html.includes('/second-factor"');

  function code(secret: string, ahead = 0): string {
    const value = totpCode(secret, totpStep(Date.now()) + ahead);
    secrets.push(value);
    return value;
  }

  /** Allows the consent when asked, then the code exchange with openid-client. */
  async function tokensOf(started: Started, step: Step) {
    const back = step.html.includes('value="allow"') ? await started.agent.submit(step, { decision: 'allow' }) : step;
    expect(back.location).toBeDefined();
    const tokens = await client.authorizationCodeGrant(config, new URL(back.location!), { pkceCodeVerifier: started.verifier, expectedState: started.state });
    secrets.push(tokens.access_token);
    return tokens;
  }

  /** The enrolment page answered with the app's code; the codes page's codes; Continue. */
  async function enrol(started: Started, page: Step): Promise<{ secret: string; codes: string[]; after: Step }> {
    const secret = secretOnPage(page);
    secrets.push(secret);
    const codesPage = await started.agent.submit(page, { code: code(secret) });
    expect(codesPage.status).toBe(200);
    const codes = recoveryCodesOnPage(codesPage);
    secrets.push(...codes);
    return { secret, codes, after: await started.agent.submit(codesPage, {}) };
  }

  const api = (path: string, token: string, init: { method?: string; body?: unknown } = {}) => fetch(`${server.baseUrl}/api/oauth2/${path}`, {
    method: init.method ?? 'GET',
    headers: { authorization: `Bearer ${token}`, ...(init.body !== undefined ? { 'content-type': 'application/json' } : {}) },
    ...(init.body !== undefined ? { body: JSON.stringify(init.body) } : {}),
  });

  /** The user's events of a type in her tenant (written after the answer: waited for). */
  async function events(tenant: string, type: string, sub: string, count = 1) {
    const read = async () => (await server.auth.audit.list({ tenant, type: type as never })).events.filter((event) => event.actor.id === sub);
    const until = Date.now() + 3000;
    let found = await read();
    while (found.length < count && Date.now() < until) {
      await new Promise((resolve) => setTimeout(resolve, 25));
      found = await read();
    }
    return found;
  }

  const scopesOf = (tokens: { scope?: string }) => (tokens.scope ?? '').split(' ');

  it('an admin without a factor enrols right after the password: QR code and secret, first code, ten codes once, then amr [pwd, otp, mfa] and the management right', async () => {
    const started = await start();
    const page = await password(started, 'ada');
    expect(page.status).toBe(200);
    expect(page.location).toBeUndefined();
    expect(isEnrolment(page)).toBe(true);
    // The QR code is an SVG drawn here, inline (no image request, nothing for the CSP to allow).
    expect(page.html).toMatch(/<svg role="img" aria-label="QR code for your authenticator app"[^>]*viewBox=/);
    expect(page.html).not.toMatch(/data:|<img/);
    expect(secretOnPage(page)).toMatch(/^[A-Z2-7]{32}$/);
    // Nothing signed in yet.
    expect(await events('acme', 'sign_in.succeeded', 'ada', 0)).toEqual([]);
    // A reload shows the same enrolment (the app she scanned stays the one to confirm).
    const reloaded = await started.agent.request(page.url);
    expect(secretOnPage(reloaded)).toBe(secretOnPage(page));

    const { secret, codes, after } = await enrol(started, reloaded);
    expect(codes).toHaveLength(10);
    expect(new Set(codes).size).toBe(10);
    const tokens = await tokensOf(started, after);
    expect(tokens.claims()).toMatchObject({ sub: 'ada', amr: ['pwd', 'otp', 'mfa'], acr: ACR_MFA });
    expect(scopesOf(tokens)).toContain('manage.integrations');
    expect((await api('tenant-settings', tokens.access_token)).status).toBe(200);

    // What she holds now: the app and the codes, added by herself.
    expect((await server.auth.factors.list({ tenant: 'acme', sub: 'ada' })).map((factor) => factor.type).sort()).toEqual(['recovery_codes', 'totp']);
    const added = await events('acme', 'factor.added', 'ada', 2);
    expect(added.map((event) => event.details?.factor).sort()).toEqual(['authenticator_app', 'recovery_codes']);
    expect(added.every((event) => event.actor.type === 'user')).toBe(true);

    // Once: her next sign-in asks for the code, not for an enrolment.
    const next = await start();
    const second = await password(next, 'ada');
    expect(isSecondFactor(second)).toBe(true);
    expect(isEnrolment(second)).toBe(false);
    const again = await next.agent.submit(second, { csrf: /name="csrf" value="([^"]+)"/.exec(second.html)![1]!, method: 'otp', code: code(secret, 1) });
    expect((await tokensOf(next, again)).claims()).toMatchObject({ amr: ['pwd', 'otp', 'mfa'] });
  });

  it('the recovery codes are shown once: the page reloaded says so, without them', async () => {
    const started = await start();
    const page = await password(started, 'abe');
    const codesPage = await started.agent.submit(page, { code: code(secretOnPage(page)) });
    const codes = recoveryCodesOnPage(codesPage);
    expect(codes).toHaveLength(10);
    secrets.push(...codes);
    const reloaded = await started.agent.request(page.url);
    expect(reloaded.status).toBe(200);
    expect(isCodesPage(reloaded)).toBe(true);
    expect(recoveryCodesOnPage(reloaded)).toEqual([]);
    expect(reloaded.html).toContain('were shown once and are not shown again');
    for (const one of codes) expect(reloaded.html).not.toContain(one);
    // Continue from the reloaded page finishes the sign-in all the same.
    expect((await tokensOf(started, await started.agent.submit(reloaded, {}))).claims()).toMatchObject({ amr: ['pwd', 'otp', 'mfa'] });
  });

  it('a wrong first code: 401, the same enrolment again, counted by the sign-in throttle (429 after 3); a code that is not one: 400, not counted', async () => {
    const started = await start();
    let page = await password(started, 'amy');
    const secret = secretOnPage(page);
    for (const typed of ['12ab56', '', '1234567', 'x'.repeat(100)]) {
      page = await started.agent.submit(page, { code: typed });
      expect(page.status).toBe(400);
      expect(page.html).toContain('A code from your authenticator app has 6 digits.');
    }
    const right = code(secret);
    const wrong = right === '000000' ? '111111' : '000000';
    for (let n = 0; n < 3; n += 1) {
      page = await started.agent.submit(page, { code: wrong });
      expect(page.status).toBe(401);
      expect(page.html).toContain('That code is not right.');
      expect(page.html).toContain('aria-invalid="true"');
      expect(secretOnPage(page)).toBe(secret);
    }
    // Held now, even with the right code; nothing enrolled.
    page = await started.agent.submit(page, { code: right });
    expect(page.status).toBe(429);
    expect(page.html).toContain('Too many failed sign-ins');
    expect(await server.auth.factors.list({ tenant: 'acme', sub: 'amy' })).toEqual([]);
    await server.auth.signIns.unlock({ username: 'amy' });
    const { after } = await enrol(started, page);
    expect((await tokensOf(started, after)).claims()).toMatchObject({ amr: ['pwd', 'otp', 'mfa'] });
  });

  it('the enrolment steps only in their turn: Continue before the code and the second-factor step: 400; the code sent again: the codes page without the codes', async () => {
    const started = await start();
    const page = await password(started, 'art');
    let csrf = /name="csrf" value="([^"]+)"/.exec(page.html)![1]!;
    const post = (step: string, body: Record<string, string>) => started.agent.request(page.url.replace(/\/?$/, `/${step}`), { method: 'POST', body: new URLSearchParams({ csrf, ...body }).toString() });
    expect((await post('enrolled', {})).status).toBe(400);
    expect((await post('second-factor', { method: 'otp', code: '123456' })).status).toBe(400);
    const secret = secretOnPage(page);
    const codesPage = await started.agent.submit(page, { code: code(secret) });
    secrets.push(...recoveryCodesOnPage(codesPage));
    csrf = /name="csrf" value="([^"]+)"/.exec(codesPage.html)![1]!;
    // The code sent again (a reload of the codes page posts it again): the codes page, without the codes.
    const again = await post('enrol', { code: code(secret, 1) });
    expect(again.status).toBe(200);
    expect(isCodesPage(again)).toBe(true);
    expect(recoveryCodesOnPage(again)).toEqual([]);
    // An interaction that never passed the password: nothing to enrol.
    const other = await start();
    const otherCsrf = /name="csrf" value="([^"]+)"/.exec(other.step.html)![1]!;
    const early = await other.agent.request(other.step.url.replace(/\/?$/, '/enrol'), { method: 'POST', body: new URLSearchParams({ csrf: otherCsrf, code: '123456' }).toString() });
    expect(early.status).toBe(400);
    expect(early.html).toContain('Sign-in cannot continue');
  });

  it('a user without a management permission enrols only where the rule is required (the host\'s strict tenant; the tenant\'s own setting)', async () => {
    // acme, default rule: ben holds no management permission, the password alone signs him in.
    const plain = await start('openid');
    const signedIn = await tokensOf(plain, await password(plain, 'ben'));
    expect(signedIn.claims()).toMatchObject({ amr: ['pwd'], acr: ACR_PASSWORD });
    // strict (host: required): bo enrols.
    const strict = await start('openid');
    const page = await password(strict, 'bo');
    expect(isEnrolment(page)).toBe(true);
    const { after } = await enrol(strict, page);
    expect((await tokensOf(strict, after)).claims()).toMatchObject({ amr: ['pwd', 'otp', 'mfa'] });

    // acme's admin (with her app) makes it required for everyone of acme: ben enrols at his next sign-in.
    const { secret } = await server.auth.factors.enrollTotp({ tenant: 'acme', sub: 'axl' });
    secrets.push(secret);
    const admin = await start();
    const second = await password(admin, 'axl');
    const token = (await tokensOf(admin, await admin.agent.submit(second, { csrf: /name="csrf" value="([^"]+)"/.exec(second.html)![1]!, method: 'otp', code: code(secret) }))).access_token;
    // Ben's session (the password alone) does while the rule lets it...
    const silentBen = await start('openid', plain.agent, { prompt: 'none' });
    expect(new URL(silentBen.step.location!).searchParams.get('code')).toBeTruthy();
    expect((await api('tenant-settings', token, { method: 'PUT', body: { second_factor: 'required' } })).status).toBe(200);
    try {
      // ...and no longer once it asks him for a second factor: he signs in again.
      const stale = await start('openid', plain.agent, { prompt: 'none' });
      expect(new URL(stale.step.location!).searchParams.get('error')).toBe('login_required');
      const now = await start('openid');
      const benPage = await password(now, 'ben');
      expect(isEnrolment(benPage)).toBe(true);
      expect(benPage.html).toContain('Your organization asks for a second step');
    } finally {
      expect((await api('tenant-settings', token, { method: 'PUT', body: {} })).status).toBe(200);
    }
    const after2 = await start('openid');
    expect((await tokensOf(after2, await password(after2, 'ben'))).claims()).toMatchObject({ amr: ['pwd'] });
  });

  it('optional (the host\'s soft tenant): an admin without a factor signs in with her password and gets the management right; her tenant asks for more: the refreshed token loses it (403), a sign-in with a second factor gets it back', async () => {
    const started = await start();
    const tokens = await tokensOf(started, await password(started, 'pia'));
    expect(tokens.claims()).toMatchObject({ amr: ['pwd'], acr: ACR_PASSWORD });
    expect(scopesOf(tokens)).toContain('manage.integrations');
    const before = await api('tenant-settings', tokens.access_token);
    expect(await before.json()).toEqual({ effective: { second_factor: 'optional', passkey_only_sign_in: false, sso: 'optional' } });

    // Her tenant now asks a second factor of its admins (stricter than the host's optional: applies).
    const put = await api('tenant-settings', tokens.access_token, { method: 'PUT', body: { second_factor: 'required_for_permissions' } });
    expect(put.status).toBe(200);
    expect(await put.json()).toEqual({ second_factor: 'required_for_permissions', effective: { second_factor: 'required_for_permissions', passkey_only_sign_in: false, sso: 'optional' } });

    // The refresh keeps the password-only sign-in: no management right in it any more.
    const refreshed = await client.refreshTokenGrant(config, tokens.refresh_token!);
    secrets.push(refreshed.access_token);
    expect(scopesOf(refreshed)).not.toContain('manage.integrations');
    const refused = await api('tenant-settings', refreshed.access_token);
    expect(refused.status).toBe(403);
    expect(refused.headers.get('www-authenticate')).toContain('insufficient_scope');

    // The same browser asks again: her session (the password alone) does not do any more, not even
    // for a request without the right (a session is no way around a rule made stricter).
    const plainAgain = await start('openid', started.agent, { prompt: 'none' });
    expect(new URL(plainAgain.step.location!).searchParams.get('error')).toBe('login_required');
    const silent = await start('openid manage.integrations', started.agent, { prompt: 'none' });
    expect(new URL(silent.step.location!).searchParams.get('error')).toBe('login_required');
    const again = await start('openid manage.integrations', started.agent);
    const page = await password(again, 'pia');
    expect(isEnrolment(page)).toBe(true);
    const { after } = await enrol(again, page);
    const strong = await tokensOf(again, after);
    expect(strong.claims()).toMatchObject({ amr: ['pwd', 'otp', 'mfa'], acr: ACR_MFA });
    expect(scopesOf(strong)).toContain('manage.integrations');
    expect((await api('tenant-settings', strong.access_token)).status).toBe(200);
    // And a user who must have one refreshes a token that keeps it (the sign-in had mfa).
    const kept = await client.refreshTokenGrant(config, strong.refresh_token!);
    secrets.push(kept.access_token);
    expect(scopesOf(kept)).toContain('manage.integrations');
  });

  it('optional: an admin who has an app still gives it (and it counts as mfa)', async () => {
    const { secret } = await server.auth.factors.enrollTotp({ tenant: 'soft', sub: 'pat' });
    secrets.push(secret);
    const started = await start();
    const page = await password(started, 'pat');
    expect(isSecondFactor(page)).toBe(true);
    const back = await started.agent.submit(page, { csrf: /name="csrf" value="([^"]+)"/.exec(page.html)![1]!, method: 'otp', code: code(secret) });
    expect((await tokensOf(started, back)).claims()).toMatchObject({ amr: ['pwd', 'otp', 'mfa'] });
  });

  it('an admin who has an app is not asked to enrol: the second-factor page comes', async () => {
    const { secret } = await server.auth.factors.enrollTotp({ tenant: 'acme', sub: 'ava' });
    secrets.push(secret);
    const started = await start();
    expect(isSecondFactor(await password(started, 'ava'))).toBe(true);
  });

  it('what the tests saw is in no log line, no audit event and (Redis) nothing stored', async () => {
    const trail = JSON.stringify([
      ...(await server.auth.audit.list({ tenant: 'acme', limit: 200 })).events,
      ...(await server.auth.audit.list({ tenant: 'soft', limit: 200 })).events,
      ...(await server.auth.audit.list({ tenant: 'strict', limit: 200 })).events,
    ]);
    const logged = JSON.stringify(logs.lines);
    expect(secrets.length).toBeGreaterThan(20);
    let stored = '';
    if (storeOption.type === 'redis') {
      const client = new Redis(storeOption.url);
      try {
        for (const key of await client.keys(`${storeOption.keyPrefix}*`)) {
          const type = await client.type(key);
          stored += key + (type === 'string' ? await client.get(key) : type === 'hash' ? JSON.stringify(await client.hgetall(key))
            : type === 'zset' ? JSON.stringify(await client.zrange(key, 0, -1)) : type === 'set' ? JSON.stringify(await client.smembers(key))
              : type === 'list' ? JSON.stringify(await client.lrange(key, 0, -1)) : JSON.stringify(await client.xrange(key, '-', '+')));
        }
      } finally {
        client.disconnect();
      }
      expect(stored).toContain('factors');
    }
    for (const secret of secrets) {
      // A code is six digits: looked for as a value of its own (any longer run of digits, a time
      // or a revision, may hold six that match by chance).
      const seen = /^\d{6}$/.test(secret) ? new RegExp(`(^|[^0-9])${secret}([^0-9]|$)`) : undefined;
      for (const written of [trail, logged, stored]) {
        if (seen) expect(written).not.toMatch(seen);
        else expect(written).not.toContain(secret);
      }
    }
  });
});

/**
 * A reset an admin asked for (Factors.requestReset), completed at the user's next sign-in: on Redis,
 * where a second Factors on the same store asks for it (as the management API will, on another
 * instance).
 */
describe('a reset completed at the next sign-in (redis store)', () => {
  const redis = useStore('redis');
  let server: RunningServer;
  let config: client.Configuration;
  let closeOther: () => Promise<void>;
  let factors: Factors;

  beforeAll(async () => {
    const store = redis.option() as { type: 'redis'; url: string; keyPrefix: string };
    server = await startServer({ store, accounts: testAccounts(USERS), factorKeys: [FACTOR_KEY] });
    const portal = await server.auth.appRegistrations.create({ name: 'Portal', redirectUris: [PORTAL], clientType: 'confidential', firstParty: true });
    config = await client.discovery(new URL(server.oauthUrl), portal.clientId, undefined, client.ClientSecretBasic(portal.clientSecret!), {
      execute: [client.allowInsecureRequests],
    });
    const other = await createRedisStore({ url: store.url, keyPrefix: store.keyPrefix });
    factors = new Factors(other.records, { keys: [FACTOR_KEY], issuerName: 'x' }, new AuditTrail(other, DEFAULT_AUDIT_SETTINGS, capturingLogger().logger, undefined));
    closeOther = () => other.close();
  });
  afterAll(async () => {
    await closeOther();
    await server.stop();
  });

  it('she is not asked for her old factor: she enrols anew, what she held goes, the request is cleared; audited by her', async () => {
    const owner = { tenant: 'acme', sub: 'rex' };
    const old = await server.auth.factors.enrollTotp(owner);
    const oldCodes = await factors.newRecoveryCodes(owner, { actor: { type: 'operator' } });
    const before = await server.auth.factors.list(owner);
    expect(await factors.requestReset(owner, { actor: { type: 'user', id: 'the-admin' } })).toBe(true);

    const agent = new UserAgent(server.baseUrl);
    const { verifier, challenge } = pkcePair();
    const state = client.randomState();
    const url = client.buildAuthorizationUrl(config, { redirect_uri: PORTAL, scope: 'openid manage.integrations', state, code_challenge: challenge, code_challenge_method: 'S256' });
    const login = await agent.request(url.href);
    const page = await agent.submit(login, { username: 'rex', password: 'rex-password' });
    expect(page.html).toContain('<code id="secret">');
    expect(page.html).toContain('Your administrator reset your two-step verification.');
    expect(page.html).not.toContain('/second-factor"');
    // Her old app's code does not enrol (it is not the new secret's).
    const oldCode = totpCode(old.secret, totpStep(Date.now()));
    const secret = secretOnPage(page);
    const refused = await agent.submit(page, { code: oldCode });
    expect(refused.status).toBe(401);
    const codesPage = await agent.submit(refused, { code: totpCode(secret, totpStep(Date.now())) });
    expect(recoveryCodesOnPage(codesPage)).toHaveLength(10);
    let back = await agent.submit(codesPage, {});
    if (back.html.includes('value="allow"')) back = await agent.submit(back, { decision: 'allow' });
    const tokens = await client.authorizationCodeGrant(config, new URL(back.location!), { pkceCodeVerifier: verifier, expectedState: state });
    expect(tokens.claims()).toMatchObject({ amr: ['pwd', 'otp', 'mfa'] });

    // New app, new codes, nothing of before; the request cleared.
    const after = await server.auth.factors.list(owner);
    expect(after.map((factor) => factor.type).sort()).toEqual(['recovery_codes', 'totp']);
    for (const factor of before) expect(after.map((entry) => entry.id)).not.toContain(factor.id);
    expect((await factors.summary(owner)).resetRequested).toBe(false);
    expect(await factors.useRecoveryCode(owner, oldCodes[0])).toMatchObject({ accepted: false });
    const reset = (await server.auth.audit.list({ tenant: 'acme', type: 'factor.reset' })).events;
    expect(reset.map((event) => [event.actor, event.details])).toEqual([
      [{ type: 'user', id: 'rex' }, { removed: ['authenticator_app', 'recovery_codes'] }],
      [{ type: 'user', id: 'the-admin' }, { requested: true }],
    ]);

    // Her next sign-in: the second factor, not the enrolment again.
    const next = new UserAgent(server.baseUrl);
    const again = await next.request(client.buildAuthorizationUrl(config, { redirect_uri: PORTAL, scope: 'openid', state: 's', code_challenge: challenge, code_challenge_method: 'S256' }).href);
    expect((await next.submit(again, { username: 'rex', password: 'rex-password' })).html).toContain('/second-factor"');
  });
});
