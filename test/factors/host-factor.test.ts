import * as client from 'openid-client';
import { createAuthServer, ACR_MFA, ACR_PASSWORD, type HostSecondFactor } from '../../src/index.js';
import { totpCode, totpStep } from '../../src/factors/totp.js';
import { AuditTrail, DEFAULT_AUDIT_SETTINGS, type AuditEvent } from '../../src/audit/trail.js';
import { Factors } from '../../src/factors/index.js';
import { useAdapterStore } from '../support/adapter-stores.js';
import { capturingLogger } from '../support/fixtures.js';
import { testAccounts } from '../support/accounts.js';
import { demoApis } from '../support/fixtures.js';
import { startServer, type RunningServer } from '../support/server.js';
import { STORE_KINDS, useStore } from '../support/stores.js';
import { pkcePair, UserAgent, type Step } from '../support/user-agent.js';

const WEB = 'https://app.example.com/cb';
const TENANT = 'acme';
const FACTOR_KEY = 'factor-key-of-the-server-0123456789abcdef';
/** hana, kai: a factor of the host's; otto: the host's and an app of ours; paul: none; quinn: the host answers "yes", not true. */
const USERS = ['hana', 'kai', 'otto', 'paul', 'quinn'].map((sub) => ({ sub, password: `${sub}-pw`, tenant: TENANT, scopes: ['scim.read'] }));
/** The host's codes (8 digits: the host's own format), each accepted once as a host would. */
const HOST_CODES: Record<string, string> = { hana: '24681012', kai: '135791', otto: '97531864' };

/**
 * The host's own second factors (`accounts.secondFactor`): a user who holds one of the host's and
 * none of ours gives its code on our second-factor page after the password; the host's answer
 * decides, and counts as `otp` in the ID token. Through the real pages over HTTP and openid-client,
 * on both stores.
 */
describe.each(STORE_KINDS)("the host's own second factors (%s store)", (kind) => {
  const store = useStore(kind);
  let server: RunningServer;
  let config: client.Configuration;
  const asked: Array<{ fn: 'has' | 'check'; tenant: string; sub: string; code?: string }> = [];
  const used = new Set<string>();
  let ottoSecret: string;

  const host: HostSecondFactor = {
    async has({ tenant, sub }) {
      asked.push({ fn: 'has', tenant, sub });
      if (sub === 'quinn') return 'yes' as unknown as boolean;
      return tenant === TENANT && sub in HOST_CODES;
    },
    async check({ tenant, sub, code }) {
      asked.push({ fn: 'check', tenant, sub, code });
      if (tenant !== TENANT || HOST_CODES[sub] !== code || used.has(`${sub}:${code}`)) return false;
      used.add(`${sub}:${code}`);
      return true;
    },
  };

  beforeAll(async () => {
    server = await startServer({ store: store.option(), accounts: { ...testAccounts(USERS), secondFactor: host }, factorKeys: [FACTOR_KEY] });
    const app = await server.auth.appRegistrations.create({ name: 'Host factor app', tenant: TENANT, redirectUris: [WEB], clientType: 'confidential' });
    config = await client.discovery(new URL(server.oauthUrl), app.clientId, undefined, client.ClientSecretBasic(app.clientSecret!), {
      execute: [client.allowInsecureRequests],
    });
    ottoSecret = (await server.auth.factors.enrollTotp({ tenant: TENANT, sub: 'otto' })).secret;
  });
  afterAll(() => server.stop());
  beforeEach(() => {
    asked.length = 0;
  });

  interface Started { step: Step; verifier: string; state: string; agent: UserAgent }

  /** The authorization request, then the password of `sub`. */
  async function afterPassword(sub: string): Promise<Started> {
    const agent = new UserAgent(server.baseUrl);
    const { verifier, challenge } = pkcePair();
    const state = client.randomState();
    const url = client.buildAuthorizationUrl(config, { redirect_uri: WEB, scope: 'openid scim.read', state, code_challenge: challenge, code_challenge_method: 'S256' });
    const login = await agent.request(url.href);
    expect(login.html).toContain('name="password"');
    return { step: await agent.submit(login, { username: sub, password: `${sub}-pw` }), verifier, state, agent };
  }

  const isSecondFactorPage = (step: Step) => step.html.includes('/second-factor"') && !step.html.includes('name="password"');

  /** A code typed on the second-factor page (its app-code form: the CSRF token, the method, the code). */
  function submitCode(agent: UserAgent, step: Step, code: string): Promise<Step> {
    const action = /<form method="post" action="([^"]+\/second-factor)"/.exec(step.html)?.[1];
    const csrf = /name="csrf" value="([^"]+)"/.exec(step.html)?.[1];
    if (!action || !csrf) throw new Error(`not the second-factor page:\n${step.html}`);
    return agent.request(action, { method: 'POST', body: new URLSearchParams({ csrf, method: 'otp', code }).toString() });
  }

  /** Allows the consent if asked, and exchanges the code: the ID token's claims. */
  async function claimsAfter({ agent, verifier, state }: Started, step: Step) {
    const back = step.html.includes('value="allow"') ? await agent.submit(step, { decision: 'allow' }) : step;
    expect(back.location).toBeDefined();
    return (await client.authorizationCodeGrant(config, new URL(back.location!), { pkceCodeVerifier: verifier, expectedState: state })).claims();
  }

  async function refusals(sub: string) {
    const read = async () => (await server.auth.audit.list({ tenant: TENANT, type: 'sign_in.second_factor_failed' })).events.filter((event) => event.actor.id === sub);
    const until = Date.now() + 3000;
    while ((await read()).length === 0 && Date.now() < until) await new Promise((resolve) => setTimeout(resolve, 25));
    return read();
  }

  it("a user with the host's factor gives its code after the password: a wrong one refused (401, audited as factor host), the right one signs in with otp", async () => {
    const started = await afterPassword('hana');
    expect(started.step.status).toBe(200);
    expect(isSecondFactorPage(started.step)).toBe(true);
    expect(asked).toContainEqual({ fn: 'has', tenant: TENANT, sub: 'hana' });

    const wrong = await submitCode(started.agent, started.step, '11111111');
    expect(wrong.status).toBe(401);
    expect(isSecondFactorPage(wrong)).toBe(true);
    expect(asked).toContainEqual({ fn: 'check', tenant: TENANT, sub: 'hana', code: '11111111' });
    const [refused] = await refusals('hana');
    expect(refused).toMatchObject({ target: { type: 'user', id: 'hana' }, details: { factor: 'host', reason: 'wrong' } });

    const right = await submitCode(started.agent, wrong, ` ${HOST_CODES.hana} `);
    const claims = await claimsAfter(started, right);
    expect(claims).toMatchObject({ sub: 'hana', amr: ['pwd', 'otp', 'mfa'], acr: ACR_MFA });
    // The host saw the code as typed, without the spaces around it; nothing we wrote holds it.
    expect(asked).toContainEqual({ fn: 'check', tenant: TENANT, sub: 'hana', code: HOST_CODES.hana });
    const written = JSON.stringify([(await server.auth.audit.list({ tenant: TENANT })).events, server.logLines]);
    expect(written).not.toContain(HOST_CODES.hana);
    expect(written).not.toContain('11111111');
  });

  it('a code the host refuses (used before) is refused; a code not of digits never reaches the host', async () => {
    const started = await afterPassword('kai');
    expect(isSecondFactorPage(started.step)).toBe(true);
    used.add(`kai:${HOST_CODES.kai}`);
    const replayed = await submitCode(started.agent, started.step, HOST_CODES.kai!);
    expect(replayed.status).toBe(401);
    asked.length = 0;
    expect((await submitCode(started.agent, replayed, 'abcdefgh')).status).toBe(400);
    expect(asked.filter((call) => call.fn === 'check')).toEqual([]);
  });

  it('a user for whom the host answers anything but true holds none: the password alone signs in', async () => {
    for (const sub of ['paul', 'quinn']) {
      const started = await afterPassword(sub);
      expect(isSecondFactorPage(started.step)).toBe(false);
      expect(await claimsAfter(started, started.step)).toMatchObject({ sub, amr: ['pwd'], acr: ACR_PASSWORD });
      expect(asked).toContainEqual({ fn: 'has', tenant: TENANT, sub });
    }
  });

  it('a user with an app of ours gives its code: the host is not asked to check, and its code does not pass', async () => {
    const started = await afterPassword('otto');
    expect(isSecondFactorPage(started.step)).toBe(true);
    const hostCode = await submitCode(started.agent, started.step, HOST_CODES.otto!);
    expect(hostCode.status).toBe(400);
    const ours = await submitCode(started.agent, hostCode, totpCode(ottoSecret, totpStep(Date.now())));
    expect(await claimsAfter(started, ours)).toMatchObject({ sub: 'otto', amr: ['pwd', 'otp', 'mfa'] });
    expect(asked.filter((call) => call.fn === 'check')).toEqual([]);
  });

  it("the host's factor is the host's: not listed, not reset by ours", async () => {
    expect(await server.auth.factors.list({ tenant: TENANT, sub: 'hana' })).toEqual([]);
    expect(await server.auth.factors.reset({ tenant: TENANT, sub: 'hana' })).toBe(false);
  });
});

describe('accounts.secondFactor is validated with the options', () => {
  const base = { baseUrl: 'https://auth.example.com', apis: demoApis, accounts: { ...testAccounts([]) } };

  it.each<[string, Record<string, unknown>, string]>([
    ['without check', { has: async () => true }, 'accounts.secondFactor.check: must be a function of the user and the code'],
    ['with has not a function', { has: true, check: async () => true }, 'accounts.secondFactor.has: must be a function of the user'],
    ['with an unknown member', { has: async () => true, check: async () => true, verify: async () => true }, 'accounts.secondFactor: Unrecognized key: "verify"'],
  ])('refuses a hook %s, naming the field', async (_name, secondFactor, message) => {
    await expect(createAuthServer({ ...base, accounts: { ...base.accounts, secondFactor } as never })).rejects.toThrow(message);
  });
});

describe("Factors with the host's check: one code field (checkCode)", () => {
  const memory = useAdapterStore('memory');
  const SELF = { actor: { type: 'user' as const, id: 'self' } };
  const hana = { tenant: TENANT, sub: 'hana' };
  const otto = { tenant: TENANT, sub: 'otto' };

  async function harness() {
    const store = await memory.create();
    const events: AuditEvent[] = [];
    const checked: string[] = [];
    const factors = new Factors(store.records, {
      keys: [FACTOR_KEY],
      issuerName: 'auth.example',
      host: {
        has: ({ sub }) => sub === 'hana' || sub === 'otto',
        check: ({ sub, code }) => {
          checked.push(`${sub}:${code}`);
          return code === HOST_CODES[sub];
        },
      },
    }, new AuditTrail(store, DEFAULT_AUDIT_SETTINGS, capturingLogger().logger, (event) => void events.push(event)));
    return { factors, events, checked };
  }

  it('summary says the host holds one (only for a true answer)', async () => {
    const { factors } = await harness();
    expect(await factors.summary(hana)).toMatchObject({ authenticatorApp: undefined, hostFactor: true });
    expect(await factors.summary({ tenant: TENANT, sub: 'paul' })).toMatchObject({ hostFactor: false });
  });

  it("checkCode: 6 to 8 digits go to the host when she has no app of ours; a recovery code of ours still works; the host's refusal is audited", async () => {
    const { factors, events, checked } = await harness();
    expect(await factors.checkCode(hana, '0000000')).toEqual({ accepted: false, reason: 'wrong', factor: 'host' });
    expect(await factors.checkCode(hana, HOST_CODES.hana)).toEqual({ accepted: true, factor: 'host' });
    expect(checked).toEqual(['hana:0000000', `hana:${HOST_CODES.hana}`]);
    const [code] = await factors.newRecoveryCodes(hana, SELF);
    expect(await factors.checkCode(hana, code)).toEqual({ accepted: true, factor: 'recovery_codes' });
    expect(checked).toHaveLength(2);
    await new Promise((resolve) => setTimeout(resolve, 50));
    expect(events.filter((event) => event.type === 'sign_in.second_factor_failed')).toEqual([
      expect.objectContaining({ tenant: TENANT, target: { type: 'user', id: 'hana' }, details: expect.objectContaining({ factor: 'host', reason: 'wrong' }) }),
    ]);
    expect(JSON.stringify(events)).not.toContain('0000000');
  });

  it("only the host's true accepts a code: any other answer is a wrong code", async () => {
    const store = await memory.create();
    for (const answer of [1, 'true', {}, [true]]) {
      const factors = new Factors(store.records, {
        keys: [FACTOR_KEY],
        issuerName: 'auth.example',
        host: { has: () => true, check: () => answer as unknown as boolean },
      }, new AuditTrail(store, DEFAULT_AUDIT_SETTINGS, capturingLogger().logger, undefined));
      expect(await factors.checkCode(hana, HOST_CODES.hana)).toEqual({ accepted: false, reason: 'wrong', factor: 'host' });
    }
  });

  it('with an app of ours, six digits are its code and the host is never asked', async () => {
    const { factors, checked } = await harness();
    const { secret } = await factors.enrollTotp(otto, 'otto', SELF);
    // Eight digits: not a code of ours (refused unread), and the host is not asked.
    expect(await factors.checkCode(otto, HOST_CODES.otto)).toEqual({ accepted: false, reason: 'malformed' });
    expect(await factors.checkCode(otto, totpCode(secret, totpStep(Date.now())))).toEqual({ accepted: true, factor: 'authenticator_app' });
    expect(checked).toEqual([]);
  });
});
