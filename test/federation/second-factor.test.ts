import { afterAll, beforeAll, describe, expect, it } from '@jest/globals';
import { decodeJwt } from 'jose';
import { ACR_MFA, ACR_PASSWORD } from '../../src/index.js';
import { authorize, federate, startFederationRig, throughUpstream, tokensOf, type FederationRig } from '../support/federation.js';
import { holdApp, isEnrolmentPage, isSecondFactorPage, passSecondFactor } from '../support/second-factor.js';

/*
 * A sign-in through a provider and the tenant's second-factor rule (policies/upstream-sign-in.ts):
 * a strong upstream sign-in (its amr has mfa, or its acr is one the connection calls multi-factor)
 * meets the rule; a weak one goes on to our second factor, or to enrolment where the rule requires
 * one; either way amr says fed.
 */

const TENANT = 'acme';
const user = (sub: string, permissions: string[] = []) => ({ sub: `${sub}@acme.example`, password: `${sub}-password-1`, tenant: TENANT, claims: { email: `${sub}@acme.example` }, permissions });
const ACCOUNTS = [user('weak'), user('holder'), user('strong'), user('acr'), user('plain', []), user('silent')];
const upstreamUser = (sub: string) => ({ sub: `up-${sub}`, email: `${sub}@acme.example`, email_verified: true });

let rig: FederationRig;

beforeAll(async () => {
  rig = await startFederationRig({
    accounts: ACCOUNTS,
    users: ['weak', 'holder', 'strong', 'acr', 'plain', 'silent'].map(upstreamUser),
    strength: { 'up-silent': {}, 'up-strong': { amr: ['pwd', 'hwk', 'mfa'], acr: 'urn:upstream:mfa' }, 'up-acr': { amr: ['pwd'], acr: 'urn:upstream:strong' } },
    connection: { mfaAcrValues: ['urn:upstream:strong'] },
    server: { tenantPolicy: (tenant: string) => (tenant === TENANT ? { secondFactor: 'required' as const } : undefined) },
  });
});
afterAll(async () => rig.stop());

async function throughProvider(username: string) {
  const started = await authorize(rig);
  const toProvider = await federate(started.agent, started.step, { connection: rig.connection.id });
  return { started, back: await throughUpstream(started.agent, toProvider, username) };
}

describe('a sign-in through a provider and the second-factor rule (required)', () => {
  it('strong upstream (amr mfa): signed in at once, no enrolment; amr [fed, pwd, hwk, mfa], the mfa class', async () => {
    const { started, back } = await throughProvider('up-strong');
    expect(isEnrolmentPage(back)).toBe(false);
    expect(isSecondFactorPage(back)).toBe(false);
    const claims = (await tokensOf(rig, started, back)).claims()!;
    expect(claims.amr).toEqual(['fed', 'pwd', 'hwk', 'mfa']);
    expect(claims.acr).toBe(ACR_MFA);
  });

  it('strong by its acr (one the connection lists in mfaAcrValues): mfa', async () => {
    const { started, back } = await throughProvider('up-acr');
    const claims = (await tokensOf(rig, started, back)).claims()!;
    expect(claims.amr).toEqual(['fed', 'pwd', 'mfa']);
    expect(claims.acr).toBe(ACR_MFA);
  });

  it('weak upstream, no factor of ours: enrolment first (the rule requires one), then amr [fed, pwd, otp, mfa]', async () => {
    const { started, back } = await throughProvider('up-weak');
    expect(back.status).toBe(200);
    expect(isEnrolmentPage(back)).toBe(true);
    const after = await passSecondFactor(started.agent, back, rig.server.baseUrl, 'weak@acme.example');
    const tokens = await tokensOf(rig, started, after);
    expect(tokens.claims()!.amr).toEqual(['fed', 'pwd', 'otp', 'mfa']);
    expect(decodeJwt(tokens.access_token)).toMatchObject({ sub: 'weak@acme.example', tenant: TENANT });
  });

  it('weak upstream, she holds an authenticator app: our second-factor page, then mfa', async () => {
    const { secret } = await rig.server.auth.factors.enrollTotp({ tenant: TENANT, sub: 'holder@acme.example' });
    holdApp(rig.server.baseUrl, 'holder@acme.example', secret);
    const { started, back } = await throughProvider('up-holder');
    expect(isSecondFactorPage(back)).toBe(true);
    const after = await passSecondFactor(started.agent, back, rig.server.baseUrl, 'holder@acme.example');
    const claims = (await tokensOf(rig, started, after)).claims()!;
    expect(claims.amr).toEqual(['fed', 'pwd', 'otp', 'mfa']);
    expect(claims.acr).toBe(ACR_MFA);
  });

  it('a provider that names no method (no amr): its sign-in is still the first factor, ours after it makes mfa', async () => {
    const { secret } = await rig.server.auth.factors.enrollTotp({ tenant: TENANT, sub: 'silent@acme.example' });
    holdApp(rig.server.baseUrl, 'silent@acme.example', secret);
    const { started, back } = await throughProvider('up-silent');
    expect(isSecondFactorPage(back)).toBe(true);
    const after = await passSecondFactor(started.agent, back, rig.server.baseUrl, 'silent@acme.example');
    const claims = (await tokensOf(rig, started, after)).claims()!;
    expect(claims.amr).toEqual(['fed', 'otp', 'mfa']);
    expect(claims.acr).toBe(ACR_MFA);
  });
});

describe('where the rule does not require one', () => {
  let optional: FederationRig;
  beforeAll(async () => {
    optional = await startFederationRig({ accounts: ACCOUNTS, users: [upstreamUser('plain')], server: { tenantPolicy: () => ({ secondFactor: 'optional' as const }) } });
  });
  afterAll(async () => optional.stop());

  it('weak upstream without a factor of ours: signed in, amr [fed, pwd], the password class', async () => {
    const started = await authorize(optional);
    const back = await throughUpstream(started.agent, await federate(started.agent, started.step, { email: 'plain@acme.example' }), 'up-plain');
    const claims = (await tokensOf(optional, started, back)).claims()!;
    expect(claims.amr).toEqual(['fed', 'pwd']);
    expect(claims.acr).toBe(ACR_PASSWORD);
  });
});
