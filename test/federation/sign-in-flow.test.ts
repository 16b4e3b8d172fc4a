import { afterAll, beforeAll, describe, expect, it } from '@jest/globals';
import { decodeJwt } from 'jose';
import { ACR_MFA, ACR_PASSWORD } from '../../src/index.js';
import { authorize, federate, startFederationRig, throughUpstream, tokensOf, type FederationRig } from '../support/federation.js';
import { useStore, type StoreKind } from '../support/stores.js';

/*
 * A sign-in through a tenant's identity provider (src/endpoints/sign-in/federation-steps.ts), over
 * HTTP against a real node-oidc-provider upstream, with openid-client as the app: home-realm
 * discovery by email, the "Continue with" button, login_hint and domain_hint, the token's tenant
 * and account, amr/acr; on both stores.
 */

const ACCOUNTS = [
  { sub: 'ada@acme.example', password: 'ada-password-1', tenant: 'acme', claims: { name: 'Ada', email: 'ada@acme.example' } },
  { sub: 'max@acme.example', password: 'max-password-1', tenant: 'acme', claims: { name: 'Max', email: 'max@acme.example' } },
];
const USERS = [
  { sub: 'up-ada', email: 'ada@acme.example', email_verified: true, name: 'Ada Upstream' },
  { sub: 'up-max', email: 'max@acme.example', email_verified: true, name: 'Max Upstream' },
];

describe.each<StoreKind>(['memory', 'redis'])('a sign-in through a connection (%s store)', (kind) => {
  const store = useStore(kind);
  let rig: FederationRig;

  beforeAll(async () => {
    rig = await startFederationRig({ accounts: ACCOUNTS, users: USERS, strength: { 'up-max': { amr: ['pwd', 'otp', 'mfa'], acr: 'urn:upstream:mfa' } }, server: { store: store.option() } });
  });
  afterAll(async () => rig.stop());

  it('home-realm discovery by email: the provider signs her in, the app gets a code and tokens of her account, its tenant, amr [fed, pwd]', async () => {
    const started = await authorize(rig);
    expect(started.step.html).toContain('name="email"');
    expect(started.step.html).toContain('autocomplete="email"');
    expect(started.step.html).toContain('Work email');
    expect(started.step.html).toContain(`Continue with ${rig.connection.name}`);
    const toProvider = await federate(started.agent, started.step, { email: 'ada@acme.example' });
    expect(toProvider.status).toBe(303);
    const providerUrl = new URL(toProvider.location!);
    expect(providerUrl.origin).toBe(rig.upstream.issuer);
    expect(providerUrl.searchParams.get('login_hint')).toBe('ada@acme.example');
    expect(providerUrl.searchParams.get('code_challenge_method')).toBe('S256');
    const back = await throughUpstream(started.agent, toProvider, 'up-ada');
    const tokens = await tokensOf(rig, started, back);
    const claims = tokens.claims()!;
    expect(claims.sub).toBe('ada@acme.example');
    expect(claims.amr).toEqual(['fed', 'pwd']);
    expect(claims.acr).toBe(ACR_PASSWORD);
    expect(decodeJwt(tokens.access_token)).toMatchObject({ sub: 'ada@acme.example', tenant: 'acme' });
    // No known-device cookie: its username hint would come from the address the provider asserts.
    expect(started.agent.setCookieHeaders.some((header) => header.startsWith('talent_auth_device='))).toBe(false);
  });

  it('the "Continue with" button, a strong upstream sign-in: amr has mfa, the mfa class', async () => {
    const started = await authorize(rig);
    const toProvider = await federate(started.agent, started.step, { connection: rig.connection.id });
    expect(new URL(toProvider.location!).searchParams.get('login_hint')).toBeNull();
    const back = await throughUpstream(started.agent, toProvider, 'up-max');
    const claims = (await tokensOf(rig, started, back)).claims()!;
    expect(claims.sub).toBe('max@acme.example');
    expect(claims.amr).toEqual(['fed', 'pwd', 'otp', 'mfa']);
    expect(claims.acr).toBe(ACR_MFA);
  });

  it('login_hint at an owned domain, and domain_hint, skip the page: straight to the provider', async () => {
    const hinted = await authorize(rig, { login_hint: 'ada@acme.example' });
    expect(new URL(hinted.step.location!).origin).toBe(rig.upstream.issuer);
    expect(new URL(hinted.step.location!).searchParams.get('login_hint')).toBe('ada@acme.example');
    expect((await tokensOf(rig, hinted, await throughUpstream(hinted.agent, hinted.step, 'up-ada'))).claims()!.sub).toBe('ada@acme.example');
    const domain = await authorize(rig, { domain_hint: 'ACME.example' });
    expect(new URL(domain.step.location!).origin).toBe(rig.upstream.issuer);
    expect((await tokensOf(rig, domain, await throughUpstream(domain.agent, domain.step, 'up-ada'))).claims()!.sub).toBe('ada@acme.example');
    // A hint at a domain nobody owns: the page.
    const other = await authorize(rig, { login_hint: 'ada@elsewhere.example' });
    expect(other.step.status).toBe(200);
    expect(other.step.html).toContain('name="password"');
  });
});
