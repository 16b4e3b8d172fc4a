import { afterAll, beforeAll, describe, expect, it } from '@jest/globals';
import type { JWTPayload } from 'jose';
import { APP_REDIRECT, authorize, federate, startFederationRig, throughUpstream, tokensOf, type FederationRig } from '../support/federation.js';
import { passUpstreamSignIn } from '../support/upstream-provider.js';
import { UserAgent, type Step } from '../support/user-agent.js';
import { useStore } from '../support/stores.js';

/*
 * Every way a sign-in through a provider fails (src/endpoints/sign-in/federation-steps.ts): a page
 * in the user's language saying what happened, with the way back to the pending sign-in, an audit
 * event `sign_in.federation_failed` with the reason, the metric, a log line with no code or token;
 * never a 500, nothing finished. Over HTTP against a real node-oidc-provider.
 */

const ACCOUNTS = [
  { sub: 'ada@acme.example', password: 'ada-password-1', tenant: 'acme', claims: { email: 'ada@acme.example' } },
  { sub: 'gil@globex.example', password: 'gil-password-1', tenant: 'globex', claims: { email: 'gil@globex.example' } },
];
const USERS = [
  { sub: 'up-ada', email: 'ada@acme.example', email_verified: true },
  { sub: 'up-stranger', email: 'someone@elsewhere.example', email_verified: true },
  { sub: 'up-nobody', email: 'nobody@acme.example', email_verified: true },
  { sub: 'up-unverified', email: 'ada@acme.example', email_verified: false },
  { sub: 'up-noemail' },
];

let rig: FederationRig;

beforeAll(async () => {
  rig = await startFederationRig({ accounts: ACCOUNTS, users: USERS, server: { observability: { health: false, metrics: true }, federation: { timeoutMs: 800, metadataCacheSeconds: 3600 } } });
});
afterAll(async () => rig.stop());

/** The events `sign_in.federation_failed` of a tenant with this reason, waited for (written after the answer). */
async function failures(tenant: string, reason: string) {
  const until = Date.now() + 3000;
  for (;;) {
    const { events } = await rig.server.auth.audit.list({ tenant, type: 'sign_in.federation_failed' });
    const found = events.filter((event) => event.details?.reason === reason);
    if (found.length > 0 || Date.now() > until) return found;
    await new Promise((resolve) => setTimeout(resolve, 25));
  }
}

async function outcomes(): Promise<Record<string, number>> {
  const metric = await rig.server.auth.metrics!.getSingleMetric('talent_auth_federated_sign_ins_total')!.get();
  return Object.fromEntries(metric.values.map((value) => [String(value.labels.outcome), value.value]));
}

/** A failure page: its status, the message, the link back to the pending sign-in. */
function expectFailurePage(step: Step, status: number, message: string, backToSignIn = true) {
  expect(step.status).toBe(status);
  expect(step.location).toBeUndefined();
  expect(step.html).toContain('Sign-in through your organisation failed');
  expect(step.html).toContain(message);
  if (backToSignIn) expect(step.html).toMatch(/<a href="\/oauth2\/interaction\/[A-Za-z0-9_-]+">Back to the sign-in<\/a>/);
  else expect(step.html).not.toContain('Back to the sign-in');
}

/** To the provider and through its sign-in: our callback URL, not yet requested. */
async function toCallback(username: string, email = 'ada@acme.example') {
  const started = await authorize(rig);
  const toProvider = await federate(started.agent, started.step, { email });
  const { callbackUrl } = await passUpstreamSignIn(toProvider.location!, username);
  return { started, toProvider, callbackUrl };
}

describe('the ID token fails a check', () => {
  it.each<[string, (claims: JWTPayload) => JWTPayload, boolean]>([
    ['a wrong issuer', (claims) => ({ ...claims, iss: 'https://idp.evil.example' }), false],
    ['a bad signature (a key the provider never published)', (claims) => claims, true],
    ['a nonce that is not this sign-in\'s', (claims) => ({ ...claims, nonce: 'another-nonce' }), false],
    ['an expired ID token', (claims) => ({ ...claims, iat: Math.floor(Date.now() / 1000) - 7200, exp: Math.floor(Date.now() / 1000) - 3600 }), false],
    ['another audience', (claims) => ({ ...claims, aud: 'someone-else' }), false],
  ])('%s: the page says the answer could not be verified (502), the sign-in stays pending', async (_name, fn, foreignKey) => {
    const { started, callbackUrl } = await toCallback('up-ada');
    rig.upstream.tamper(fn, { foreignKey });
    let page: Step;
    try {
      page = await started.agent.request(callbackUrl);
    } finally {
      rig.upstream.tamper(undefined);
    }
    expectFailurePage(page, 502, 'could not be verified');
    // The way back: the pending sign-in's login page, where the password still works.
    const back = await started.agent.request(/<a href="([^"]+)">Back/.exec(page.html)![1]!);
    expect(back.status).toBe(200);
    expect(back.html).toContain('name="password"');
    const tokens = await tokensOf(rig, started, await started.agent.submit(back, { username: 'ada@acme.example', password: 'ada-password-1' }));
    expect(tokens.claims()!.amr).toEqual(['pwd']);
    const [event] = await failures('acme', 'invalid_response');
    expect(event).toMatchObject({ actor: { type: 'anonymous' }, target: { type: 'connection', id: rig.connection.id }, details: { reason: 'invalid_response', connection: rig.connection.id } });
  });
});

describe('the callback is not this sign-in\'s', () => {
  it('a state changed on the way: 400, "another browser or tab", nothing exchanged', async () => {
    const { started, callbackUrl } = await toCallback('up-ada');
    const url = new URL(callbackUrl);
    const [uid] = url.searchParams.get('state')!.split('.');
    url.searchParams.set('state', `${uid}.${'A'.repeat(32)}`);
    const before = rig.upstream.tokenRequests.length;
    expectFailurePage(await started.agent.request(url.href), 400, 'another browser or tab');
    expect(rig.upstream.tokenRequests.length).toBe(before);
    expect(await failures('acme', 'state_mismatch')).toHaveLength(1);
    // Nothing was spent: the right answer still signs her in.
    expect((await tokensOf(rig, started, await started.agent.request(callbackUrl))).claims()!.sub).toBe('ada@acme.example');
  });

  it('no state of ours at all: 400, no way back (no sign-in known)', async () => {
    const agent = new UserAgent(rig.server.baseUrl);
    expectFailurePage(await agent.request(`${rig.server.oauthUrl}/federation/callback/${rig.connection.id}?code=x&state=garbage`), 400, 'another browser or tab', false);
    expectFailurePage(await agent.request(`${rig.server.oauthUrl}/federation/callback/${rig.connection.id}`), 400, 'another browser or tab', false);
  });

  it('a sign-in that is over (no such pending sign-in): 400 "took too long", no way back', async () => {
    const agent = new UserAgent(rig.server.baseUrl);
    const page = await agent.request(`${rig.server.oauthUrl}/federation/callback/${rig.connection.id}?code=x&state=${'u'.repeat(43)}.${'r'.repeat(32)}`);
    expectFailurePage(page, 400, 'took too long', false);
  });

  it('after a failure, the way back shows the page even when the app sent login_hint (no loop to the provider)', async () => {
    const started = await authorize(rig, { login_hint: 'ada@acme.example' });
    expect(new URL(started.step.location!).origin).toBe(rig.upstream.issuer);
    const { callbackUrl } = await passUpstreamSignIn(started.step.location!, 'up-stranger');
    const failed = await started.agent.request(callbackUrl);
    expect(failed.status).toBe(403);
    const back = await started.agent.request(/<a href="([^"]+)">Back/.exec(failed.html)![1]!);
    expect(back.status).toBe(200);
    expect(back.location).toBeUndefined();
    expect(back.html).toContain('name="password"');
  });

  it("an answer at another connection's callback (a provider mix-up): 400, nothing sent to any token endpoint, the right callback still works", async () => {
    const { started, callbackUrl } = await toCallback('up-ada');
    const url = new URL(callbackUrl);
    // Each connection has its own redirect URI, ending with its id.
    expect(url.pathname).toBe(`/oauth2/federation/callback/${rig.connection.id}`);
    const other = await rig.server.auth.connections.create({ tenant: 'acme', name: 'Other IdP', issuer: 'https://idp.other.example', clientId: 'other', clientSecret: 'other-secret', domains: [] });
    const before = rig.upstream.tokenRequests.length;
    const elsewhere = new URL(url.href);
    elsewhere.pathname = `/oauth2/federation/callback/${other.id}`;
    expectFailurePage(await started.agent.request(elsewhere.href), 400, 'another browser or tab');
    expect(rig.upstream.tokenRequests.length).toBe(before);
    expect((await failures('acme', 'state_mismatch')).at(0)?.details).toMatchObject({ reason: 'state_mismatch' });
    expect((await tokensOf(rig, started, await started.agent.request(callbackUrl))).claims()!.sub).toBe('ada@acme.example');
    await rig.server.auth.connections.delete(other.id);
  });

  it('another browser (no binding cookie): 400, and the browser that started it still signs in', async () => {
    const { started, callbackUrl } = await toCallback('up-ada');
    const stranger = new UserAgent(rig.server.baseUrl);
    expectFailurePage(await stranger.request(callbackUrl), 400, 'another browser or tab');
    expect(await failures('acme', 'binding_mismatch')).toHaveLength(1);
    expect((await tokensOf(rig, started, await started.agent.request(callbackUrl))).claims()!.sub).toBe('ada@acme.example');
  });

  it('the binding cookie is httpOnly, SameSite=Lax, scoped to the callback', async () => {
    const { started } = await toCallback('up-ada');
    const header = started.agent.setCookieHeaders.find((value) => value.startsWith('talent_auth_federation='));
    expect(header).toMatch(/path=\/oauth2\/federation\/callback/i);
    expect(header).toMatch(/httponly/i);
    expect(header).toMatch(/samesite=lax/i);
  });

  it('the provider\'s own error (access_denied): 400, "cancelled", audited with the error code', async () => {
    const started = await authorize(rig);
    const toProvider = await federate(started.agent, started.step, { email: 'ada@acme.example' });
    const state = new URL(toProvider.location!).searchParams.get('state')!;
    const page = await started.agent.request(`${rig.server.oauthUrl}/federation/callback/${rig.connection.id}?${new URLSearchParams({ error: 'access_denied', state, iss: rig.upstream.issuer })}`);
    expectFailurePage(page, 400, 'cancelled');
    const [event] = await failures('acme', 'provider_error');
    expect(event!.details).toMatchObject({ reason: 'provider_error', error: 'access_denied' });
  });
});

describe('the identity is not one of ours', () => {
  it('an email at a domain the connection does not own: 403', async () => {
    const { started, callbackUrl } = await toCallback('up-stranger');
    expectFailurePage(await started.agent.request(callbackUrl), 403, 'not one this sign-in accepts');
    expect(await failures('acme', 'domain_not_owned')).toHaveLength(1);
  });

  it('no email at all: 403', async () => {
    const { started, callbackUrl } = await toCallback('up-noemail');
    expectFailurePage(await started.agent.request(callbackUrl), 403, 'not one this sign-in accepts');
  });

  it('no account for it: 403 "no account"; an address the provider says is unverified finds nobody', async () => {
    const nobody = await toCallback('up-nobody');
    expectFailurePage(await nobody.started.agent.request(nobody.callbackUrl), 403, 'There is no account here');
    const unverified = await toCallback('up-unverified');
    expectFailurePage(await unverified.started.agent.request(unverified.callbackUrl), 403, 'There is no account here');
    expect(await failures('acme', 'no_account')).toHaveLength(1);
  });
});

describe('a connection of another tenant', () => {
  let globexApp: string;
  let globexConnection: string;

  beforeAll(async () => {
    const other = await rig.server.auth.connections.create({
      tenant: 'globex', name: 'Globex Login', issuer: rig.upstream.issuer, clientId: 'talent-auth-at-acme', clientSecret: 'upstream-client-secret-0123456789', domains: ['globex.example'],
    });
    globexConnection = other.id;
    globexApp = (await rig.server.auth.appRegistrations.create({ name: 'Globex app', tenant: 'globex', redirectUris: [APP_REDIRECT], clientType: 'confidential' })).clientId;
  });

  it('its button posted at acme\'s app: refused (403 page, audited), nothing sent to a provider', async () => {
    const started = await authorize(rig);
    expect(started.step.html).not.toContain('Globex Login');
    const page = await federate(started.agent, started.step, { connection: globexConnection });
    expectFailurePage(page, 403, 'cannot be used for this application');
    const [event] = await failures('globex', 'wrong_tenant');
    expect(event).toMatchObject({ target: { type: 'connection', id: globexConnection } });
  });

  it('its domain typed at acme\'s app: the login page again, the address as username, use the password (which tenant owns it is not said)', async () => {
    const started = await authorize(rig);
    const page = await federate(started.agent, started.step, { email: 'gil@globex.example' });
    expect(page.status).toBe(200);
    expect(page.location).toBeUndefined();
    expect(page.html).toContain('There is no organisation sign-in for this address');
    expect(page.html).toContain('value="gil@globex.example"');
    expect(page.html).not.toContain('Globex');
    expect(page.html).not.toContain('globex.example"'.replace('"', '</'));
  });

  it('an identity of acme\'s provider never signs in to a globex account, at globex\'s own app either', async () => {
    // acme's connection vouches for an address at globex's domain: not one it owns.
    expect(globexApp).toBeDefined();
    const started = await authorize(rig);
    const toProvider = await federate(started.agent, started.step, { connection: rig.connection.id });
    rig.upstream.tamper((claims) => ({ ...claims, email: 'gil@globex.example' }));
    let page: Step;
    try {
      page = await throughUpstream(started.agent, toProvider, 'up-ada');
    } finally {
      rig.upstream.tamper(undefined);
    }
    expectFailurePage(page, 403, 'not one this sign-in accepts');
  });
});

describe('the provider cannot be reached', () => {
  it('down (port closed): 502 "could not be reached", at the start, nothing sent on', async () => {
    const platform = await startFederationRig({ accounts: ACCOUNTS, users: USERS, appTenant: null, tenant: 'downco', domains: ['down.example'] });
    try {
      await platform.upstream.close();
      const started = await authorize(platform);
      const failed = await federate(started.agent, started.step, { email: 'x@down.example' });
      expectFailurePage(failed, 502, 'could not be reached');
      // The way back works: the pending sign-in is as it was.
      const back = await started.agent.request(/<a href="([^"]+)">Back/.exec(failed.html)![1]!);
      expect(back.html).toContain('name="password"');
    } finally {
      await platform.server.stop();
    }
  });

  it('slow (longer than federation.timeoutMs at the token endpoint): 504 "did not answer in time", within the timeout', async () => {
    const { started, callbackUrl } = await toCallback('up-ada');
    rig.upstream.delayMs = 3000;
    const began = Date.now();
    let page: Step;
    try {
      page = await started.agent.request(callbackUrl);
    } finally {
      rig.upstream.delayMs = 0;
    }
    expect(Date.now() - began).toBeLessThan(2500);
    expectFailurePage(page, 504, 'did not answer in time');
    expect(await failures('acme', 'timeout')).toHaveLength(1);
  });
});

describe('too late (Redis store: the pending sign-in\'s clock turned back)', () => {
  const store = useStore('redis');
  let late: FederationRig;
  beforeAll(async () => {
    late = await startFederationRig({ accounts: ACCOUNTS, users: USERS, server: { store: store.option() } });
  });
  afterAll(async () => late.stop());

  it('an answer more than 15 minutes after the request: 400 "took too long", the way back, nothing exchanged', async () => {
    const started = await authorize(late);
    const toProvider = await federate(started.agent, started.step, { email: 'ada@acme.example' });
    const { callbackUrl } = await passUpstreamSignIn(toProvider.location!, 'up-ada');
    const uid = new URL(callbackUrl).searchParams.get('state')!.split('.')[0]!;
    const redis = store.redis!.client();
    const [key] = (await redis.keys('*')).filter((name) => name.includes(`Interaction:{${uid}}`));
    const payload = JSON.parse((await redis.hget(key!, 'p'))!) as { lastSubmission: { talentAuthFederation: { at: number } } };
    payload.lastSubmission.talentAuthFederation.at -= 15 * 60 + 1;
    await redis.hset(key!, 'p', JSON.stringify(payload));
    const before = late.upstream.tokenRequests.length;
    expectFailurePage(await started.agent.request(callbackUrl), 400, 'took too long');
    expect(late.upstream.tokenRequests.length).toBe(before);
  });
});

describe('what failures leave behind', () => {
  it('counted by outcome in federated_sign_ins_total; logged without any code or token', async () => {
    const counts = await outcomes();
    for (const outcome of ['invalid_response', 'state_mismatch', 'binding_mismatch', 'provider_error', 'domain_not_owned', 'no_account', 'wrong_tenant', 'timeout']) {
      expect(counts[outcome]).toBeGreaterThanOrEqual(1);
    }
    const lines = rig.server.logLines.filter((line) => line.includes('federated sign-in failed'));
    expect(lines.length).toBeGreaterThan(5);
    for (const line of rig.server.logLines) {
      expect(line).not.toMatch(/eyJ[A-Za-z0-9_-]{10,}/);
      expect(line).not.toContain('upstream-client-secret');
      expect(line).not.toMatch(/code=/);
    }
  });
});
