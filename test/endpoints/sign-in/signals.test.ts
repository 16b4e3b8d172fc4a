import { decodeJwt } from 'jose';
import * as client from 'openid-client';
import { ACR_MFA, ACR_PASSWORD, createTokenVerifier } from '../../../src/index.js';
import { alice, testAccounts } from '../../support/accounts.js';
import { startServer, type RunningServer } from '../../support/server.js';
import { STORE_KINDS, useStore } from '../../support/stores.js';
import { pkcePair, UserAgent, type Step } from '../../support/user-agent.js';

const WEB = 'https://app.example.com/cb';

/** The engine's answer at the redirect URI, or the login page when it asked for the password. */
interface Started {
  step: Step;
  verifier: string;
  state: string;
}

/**
 * The standard signals of a sign-in (policies/authentication-context.ts): `amr`, `acr` and
 * `auth_time` in ID and access tokens, `acr_values` and `max_age` honoured, through openid-client
 * and the real sign-in pages, on both stores.
 */
describe.each(STORE_KINDS)('sign-in signals (%s store)', (kind) => {
  const store = useStore(kind);
  let server: RunningServer;
  let config: client.Configuration;

  beforeAll(async () => {
    server = await startServer({ accounts: testAccounts([alice]), store: store.option() });
    const app = await server.auth.appRegistrations.create({ name: 'Signals app', redirectUris: [WEB], clientType: 'confidential' });
    config = await client.discovery(new URL(server.oauthUrl), app.clientId, undefined, client.ClientSecretBasic(app.clientSecret!), {
      execute: [client.allowInsecureRequests],
    });
  });
  afterAll(() => server.stop());

  /** An authorization request built by openid-client, as far as the login page or the redirect back. */
  async function start(agent: UserAgent, extra: Record<string, string> = {}): Promise<Started> {
    const { verifier, challenge } = pkcePair();
    const state = client.randomState();
    const url = client.buildAuthorizationUrl(config, {
      redirect_uri: WEB, scope: 'openid scim.read', state, code_challenge: challenge, code_challenge_method: 'S256', ...extra,
    });
    let step = await agent.request(url.href);
    if (step.html.includes('value="allow"')) step = await agent.submit(step, { decision: 'allow' });
    return { step, verifier, state };
  }

  /** The password on the login page, then the consent if asked. */
  async function password(agent: UserAgent, step: Step): Promise<Step> {
    expect(step.html).toContain('name="password"');
    let next = await agent.submit(step, { username: alice.sub, password: alice.password });
    if (next.html.includes('value="allow"')) next = await agent.submit(next, { decision: 'allow' });
    return next;
  }

  async function tokensOf({ step, verifier, state }: Started) {
    expect(step.location).toBeDefined();
    return client.authorizationCodeGrant(config, new URL(step.location!), { pkceCodeVerifier: verifier, expectedState: state });
  }

  /** A browser signed in with the password, and the tokens of that first sign-in. */
  async function signedIn() {
    const agent = new UserAgent(server.baseUrl);
    const before = Math.floor(Date.now() / 1000);
    const first = await start(agent);
    const back = await password(agent, first.step);
    const tokens = await tokensOf({ ...first, step: back });
    return { agent, tokens, before, after: Math.ceil(Date.now() / 1000) };
  }

  it('discovery lists the two sign-in classes and the claims that say how a user signed in', () => {
    const metadata = config.serverMetadata();
    expect(metadata.acr_values_supported).toEqual([ACR_PASSWORD, ACR_MFA]);
    expect(metadata.claims_supported).toEqual(expect.arrayContaining(['acr', 'amr', 'auth_time']));
  });

  it('a password sign-in: amr ["pwd"], the pwd class and auth_time in the ID token and the access token, kept through a refresh', async () => {
    const { tokens, before, after } = await signedIn();
    const id = tokens.claims()!;
    expect(id.amr).toEqual(['pwd']);
    expect(id.acr).toBe(ACR_PASSWORD);
    expect(typeof id.auth_time).toBe('number');
    expect(id.auth_time).toBeGreaterThanOrEqual(before);
    expect(id.auth_time).toBeLessThanOrEqual(after);

    // The access token as the resource-server kit reads it (signature, issuer, audience checked).
    const verifier = createTokenVerifier({ issuer: server.oauthUrl, audience: server.auth.audience, jwks: new URL(`${server.oauthUrl}/jwks`) });
    const auth = await verifier.verify(tokens.access_token);
    expect(auth.isNamedUser).toBe(true);
    expect(auth.amr).toEqual(['pwd']);
    expect(auth.acr).toBe(ACR_PASSWORD);
    expect(auth.authTime).toBe(id.auth_time);
    expect(decodeJwt(tokens.access_token)).toMatchObject({ amr: ['pwd'], acr: ACR_PASSWORD, auth_time: id.auth_time });

    // A refresh is no new sign-in: the same signals, the same auth_time.
    const refreshed = await client.refreshTokenGrant(config, tokens.refresh_token!);
    expect(decodeJwt(refreshed.access_token)).toMatchObject({ amr: ['pwd'], acr: ACR_PASSWORD, auth_time: id.auth_time });
    expect(decodeJwt(refreshed.id_token!)).toMatchObject({ amr: ['pwd'], acr: ACR_PASSWORD, auth_time: id.auth_time });
  });

  it('acr_values asking for the mfa class over a password session: the password again, then unmet_authentication_requirements, no code', async () => {
    const { agent } = await signedIn();
    const asked = await start(agent, { acr_values: ACR_MFA });
    // Not answered with the password session: the login page again.
    expect(asked.step.location).toBeUndefined();
    const back = await password(agent, asked.step);
    const location = new URL(back.location!);
    expect(location.origin + location.pathname).toBe(WEB);
    expect(location.searchParams.get('code')).toBeNull();
    const error = await tokensOf({ ...asked, step: back }).catch((caught: unknown) => caught);
    expect(error).toBeInstanceOf(client.AuthorizationResponseError);
    expect(error).toMatchObject({ error: 'unmet_authentication_requirements' });
  });

  it('acr_values asking for the mfa class with prompt=none over a password session: login_required', async () => {
    const { agent } = await signedIn();
    const asked = await start(agent, { acr_values: ACR_MFA, prompt: 'none' });
    const error = await tokensOf(asked).catch((caught: unknown) => caught);
    expect(error).toMatchObject({ error: 'login_required' });
  });

  it.each([
    ['the pwd class', ACR_PASSWORD],
    ['either class (the lowest named is the least accepted)', `${ACR_MFA} ${ACR_PASSWORD}`],
    ['only classes we do not know (voluntary: ignored)', 'urn:example:acr:gold phr'],
  ])('acr_values naming %s: the password session answers, without a sign-in', async (_name, acrValues) => {
    const { agent } = await signedIn();
    const asked = await start(agent, { acr_values: acrValues });
    const tokens = await tokensOf(asked);
    expect(tokens.claims()).toMatchObject({ amr: ['pwd'], acr: ACR_PASSWORD });
  });

  it('max_age=0 asks for the password again; the new ID token carries the new auth_time', async () => {
    const { agent, tokens: first } = await signedIn();
    await new Promise((resolve) => setTimeout(resolve, 1100));
    const asked = await start(agent, { max_age: '0' });
    expect(asked.step.location).toBeUndefined();
    const back = await password(agent, asked.step);
    const tokens = await tokensOf({ ...asked, step: back });
    expect(tokens.claims()!.auth_time).toBeGreaterThan(first.claims()!.auth_time!);
    expect(decodeJwt(tokens.access_token).auth_time).toBe(tokens.claims()!.auth_time);
  });

  it('max_age longer than the session has lasted: no new sign-in, the same auth_time', async () => {
    const { agent, tokens: first } = await signedIn();
    const asked = await start(agent, { max_age: '3600' });
    const tokens = await tokensOf(asked);
    expect(tokens.claims()!.auth_time).toBe(first.claims()!.auth_time);
  });
});
