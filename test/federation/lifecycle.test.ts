import { afterAll, beforeAll, describe, expect, it } from '@jest/globals';
import * as client from 'openid-client';
import { authorize, APP_REDIRECT, federate, startFederationRig, tokensOf, UPSTREAM_CLIENT, type FederationRig, type Started } from '../support/federation.js';
import { signInForCode } from '../support/sign-in.js';
import { isEnrolmentPage, isSecondFactorPage, passSecondFactor } from '../support/second-factor.js';
import { STORE_KINDS, useStore, type StoreHandle } from '../support/stores.js';
import { pkcePair, UserAgent, type Step } from '../support/user-agent.js';

/*
 * Enterprise sign-in end to end, across the parts (the sign-in through a connection, the
 * provider's sign-out after ours, "the user left", SSO required, private_key_jwt at the provider,
 * the provider's acr as multi-factor), over HTTP against a real node-oidc-provider upstream with
 * openid-client as the app, on both stores. Every session here is made by a federated sign-in
 * (never remembered by hand); the browser keeps its cookies at the provider too, so the provider's
 * own session is seen to begin and end.
 */

const SIGNED_OUT = 'https://app.example.com/signed-out';
const acmeUser = (name: string, permissions: string[] = []) => ({
  sub: `${name}@acme.example`, password: `${name}-password-1`, tenant: 'acme', claims: { email: `${name}@acme.example` }, permissions,
});
const upstreamUser = (name: string) => ({ sub: `up-${name}`, email: `${name}@acme.example`, email_verified: true });

/** A browser: its cookies at our server and, apart, at the provider. */
interface Browser {
  ours: UserAgent;
  atProvider: UserAgent;
}
const browserOf = (rig: FederationRig): Browser => ({ ours: new UserAgent(rig.server.baseUrl), atProvider: new UserAgent(rig.upstream.issuer) });

/** The app's authorization request in `browser` (our UserAgent), as openid-client builds it. */
async function authorizeIn(rig: FederationRig, agent: UserAgent, extra: Record<string, string> = {}): Promise<Started> {
  const { verifier, challenge } = pkcePair();
  const state = client.randomState();
  const url = client.buildAuthorizationUrl(rig.app.config, {
    redirect_uri: APP_REDIRECT, scope: 'openid', state, code_challenge: challenge, code_challenge_method: 'S256', ...extra,
  });
  return { step: await agent.request(url.href), verifier, state, agent };
}

/**
 * At the provider (our 303 to it): its sign-in form as `username` when it asks (no session of hers
 * there), else straight back; then its answer at our callback: what our server answers.
 * `asked`: whether the provider showed its sign-in form.
 */
async function throughProvider(browser: Browser, toProvider: Step, username: string): Promise<{ back: Step; asked: boolean }> {
  expect(toProvider.location).toBeDefined();
  let step = await browser.atProvider.request(toProvider.location!);
  const asked = step.location === undefined;
  if (asked) {
    expect(step.html).toContain('name="username"');
    step = await browser.atProvider.submit(step, { username });
  }
  expect(step.location).toBeDefined();
  return { back: await browser.ours.request(step.location!), asked };
}

/** A federated sign-in by the connection's button in `browser`; the app's tokens. */
async function federatedSignIn(rig: FederationRig, browser: Browser, username: string, extra: Record<string, string> = {}) {
  const started = await authorizeIn(rig, browser.ours, extra);
  const toProvider = await federate(browser.ours, started.step, { connection: rig.connection.id });
  const { back, asked } = await throughProvider(browser, toProvider, username);
  return { tokens: await tokensOf(rig, started, back), asked };
}

/** The app's request without any page (`prompt=none`) in her browser: where it went back to the app. */
async function silently(rig: FederationRig, agent: UserAgent): Promise<URL> {
  const started = await authorizeIn(rig, agent, { prompt: 'none' });
  expect(started.step.location).toBeDefined();
  return new URL(started.step.location!);
}

/** Posts a password to the interaction's login step, as a script would (the page's CSRF value). */
function postPassword(agent: UserAgent, page: Step, username: string, password: string): Promise<Step> {
  const csrf = /name="csrf" value="([^"]+)"/.exec(page.html)![1]!;
  return agent.request(`${page.url.replace(/\/login$/, '')}/login`, { method: 'POST', body: new URLSearchParams({ csrf, username, password }).toString() });
}

describe.each(STORE_KINDS)('enterprise sign-in end to end (%s store)', (kind) => {
  const store: StoreHandle = useStore(kind);

  describe("our sign-out, then the provider's (signOutUpstream)", () => {
    let rig: FederationRig;
    beforeAll(async () => {
      rig = await startFederationRig({
        accounts: [acmeUser('ada')], users: [upstreamUser('ada')], connection: { signOutUpstream: true }, server: { store: store.option() },
      });
      // An app with a registered post-logout URI.
      const app = await rig.server.auth.appRegistrations.create({
        name: 'Signing out', tenant: 'acme', redirectUris: [APP_REDIRECT], postLogoutRedirectUris: [SIGNED_OUT], clientType: 'confidential',
      });
      rig.app = {
        clientId: app.clientId,
        config: await client.discovery(new URL(rig.server.oauthUrl), app.clientId, undefined, client.ClientSecretBasic(app.clientSecret!), { execute: [client.allowInsecureRequests] }),
      };
    });
    afterAll(async () => rig.stop());

    /** Our sign-out (RP-initiated, confirmed) with the app's post-logout URI and state: where the browser goes. */
    async function signOut(browser: Browser, idToken: string): Promise<string> {
      const page = await browser.ours.request(`${rig.server.oauthUrl}/session/end?${new URLSearchParams({ id_token_hint: idToken, post_logout_redirect_uri: SIGNED_OUT, state: 'app-state' })}`);
      const xsrf = /name="xsrf" value="([^"]+)"/.exec(page.html)![1]!;
      const done = await browser.ours.request(`${rig.server.oauthUrl}/session/end/confirm`, { method: 'POST', body: new URLSearchParams({ xsrf, logout: 'yes' }).toString() });
      expect(done.location).toBeDefined();
      return done.location!;
    }

    it("ends our session, then the provider's (its own ID token the hint), back through our signed-out URI to the app's, with its state", async () => {
      const browser = browserOf(rig);
      const first = await federatedSignIn(rig, browser, 'up-ada');
      expect(first.asked).toBe(true);
      expect(first.tokens.claims()!.sub).toBe('ada@acme.example');
      // Her session at the provider lives: a sign-in through it in another tab (no session of ours) does not ask her there.
      expect((await federatedSignIn(rig, { ours: new UserAgent(rig.server.baseUrl), atProvider: browser.atProvider }, 'up-ada')).asked).toBe(false);
      // The provider's ID token of her last sign-in through it.
      const providerIdToken = rig.upstream.issued.at(-1)!.idToken!;

      const to = new URL(await signOut(browser, first.tokens.id_token!));
      expect(`${to.origin}${to.pathname}`).toBe(`${rig.upstream.issuer}/session/end`);
      expect(to.searchParams.get('id_token_hint')).toBe(providerIdToken);
      expect(to.searchParams.get('client_id')).toBe(UPSTREAM_CLIENT.id);
      expect(to.searchParams.get('post_logout_redirect_uri')).toBe(`${rig.server.oauthUrl}/federation/signed-out`);
      // Our session ended before the provider is asked anything.
      expect((await silently(rig, browser.ours)).searchParams.get('error')).toBe('login_required');

      // At the provider: it accepts the hint (its confirmation, then back to our post-logout URI with our state).
      const confirmation = await browser.atProvider.request(to.href);
      expect(confirmation.status).toBe(200);
      const action = /<form[^>]* action="([^"]+)"/.exec(confirmation.html)![1]!;
      const xsrf = /name="xsrf" value="([^"]+)"/.exec(confirmation.html)![1]!;
      const done = await browser.atProvider.request(new URL(action, to).href, { method: 'POST', body: new URLSearchParams({ xsrf, logout: 'yes' }).toString() });
      expect(done.location).toBeDefined();
      const back = new URL(done.location!);
      expect(`${back.origin}${back.pathname}`).toBe(`${rig.server.oauthUrl}/federation/signed-out`);
      expect(back.searchParams.get('state')).toBe(to.searchParams.get('state'));
      const onward = await browser.ours.request(back.href);
      expect(onward.location).toBe(`${SIGNED_OUT}?state=app-state`);

      // The provider's session ended: signing in again asks her there.
      expect((await federatedSignIn(rig, browser, 'up-ada')).asked).toBe(true);
    });

    it("her password session elsewhere signs out here only; her federated session's sign-out still reaches the provider", async () => {
      const federated = browserOf(rig);
      const ours = (await federatedSignIn(rig, federated, 'up-ada')).tokens.id_token!;
      // The same user with her password in another browser (SSO is optional here).
      const other = browserOf(rig);
      const { code, verifier } = await signInForCode(rig.server, { clientId: rig.app.clientId, redirectUri: APP_REDIRECT }, { sub: 'ada@acme.example', password: 'ada-password-1' }, 'openid', other.ours);
      const withPassword = await client.authorizationCodeGrant(rig.app.config, new URL(`${APP_REDIRECT}?${new URLSearchParams({ code, state: 's', iss: rig.app.config.serverMetadata().issuer })}`), { pkceCodeVerifier: verifier, expectedState: 's' });
      expect(withPassword.claims()!.amr).toEqual(['pwd']);
      // Her password session never went through the provider: no hop there with another browser's ID token.
      expect(await signOut(other, withPassword.id_token!)).toBe(`${SIGNED_OUT}?state=app-state`);
      // Her federated session's sign-out still goes to the provider.
      const to = new URL(await signOut(federated, ours));
      expect(`${to.origin}${to.pathname}`).toBe(`${rig.upstream.issuer}/session/end`);
      expect(to.searchParams.get('id_token_hint')).toBe(rig.upstream.issued.at(-1)!.idToken);
    });

    it('a connection changed to signOutUpstream false: our sign-out only, no hop to the provider', async () => {
      await rig.server.auth.connections.update(rig.connection.id, { signOutUpstream: false });
      try {
        const browser = browserOf(rig);
        const { tokens } = await federatedSignIn(rig, browser, 'up-ada');
        expect(await signOut(browser, tokens.id_token!)).toBe(`${SIGNED_OUT}?state=app-state`);
        expect((await silently(rig, browser.ours)).searchParams.get('error')).toBe('login_required');
        // Her session at the provider was left alone.
        expect((await federatedSignIn(rig, browser, 'up-ada')).asked).toBe(false);
      } finally {
        await rig.server.auth.connections.update(rig.connection.id, { signOutUpstream: true });
      }
    });
  });

  describe('the user left (auth.users.signOut) after a federated sign-in', () => {
    let rig: FederationRig;
    beforeAll(async () => {
      rig = await startFederationRig({ accounts: [acmeUser('ben'), acmeUser('cleo')], users: [upstreamUser('ben'), upstreamUser('cleo')], server: { store: store.option() } });
    });
    afterAll(async () => rig.stop());

    it('her refresh token stops, her session gives no code; another user keeps hers; she signs in through the provider again', async () => {
      const hers = browserOf(rig);
      const his = browserOf(rig);
      const { tokens } = await federatedSignIn(rig, hers, 'up-ben', { scope: 'openid scim.read' });
      const other = await federatedSignIn(rig, his, 'up-cleo', { scope: 'openid scim.read' });
      expect(tokens.refresh_token).toBeDefined();
      expect((await silently(rig, hers.ours)).searchParams.get('code')).toBeTruthy();

      await expect(rig.server.auth.users.signOut({ tenant: 'acme', sub: 'ben@acme.example' })).resolves.toEqual({ grantsEnded: 1 });
      await expect(client.refreshTokenGrant(rig.app.config, tokens.refresh_token!)).rejects.toMatchObject({ error: 'invalid_grant' });
      const silent = await silently(rig, hers.ours);
      expect(silent.searchParams.get('error')).toBe('login_required');
      expect(silent.searchParams.get('code')).toBeNull();
      // The other user is untouched.
      expect((await client.refreshTokenGrant(rig.app.config, other.tokens.refresh_token!)).access_token).toBeTruthy();
      expect((await silently(rig, his.ours)).searchParams.get('code')).toBeTruthy();

      // Signing in again (her session at the provider still lives there: not asked) gives her a code and tokens.
      const again = await federatedSignIn(rig, hers, 'up-ben', { scope: 'openid scim.read' });
      expect(again.tokens.claims()!.sub).toBe('ben@acme.example');
      expect(again.tokens.claims()!.amr).toEqual(['fed', 'pwd']);
      expect((await client.refreshTokenGrant(rig.app.config, again.tokens.refresh_token!)).access_token).toBeTruthy();
    });
  });

  describe("SSO required by the host's policy", () => {
    let rig: FederationRig;
    const dan = acmeUser('dan');
    beforeAll(async () => {
      rig = await startFederationRig({
        accounts: [dan], users: [upstreamUser('dan')],
        server: { store: store.option(), tenantPolicy: (tenant: string) => (tenant === 'acme' ? { sso: 'required' as const, secondFactor: 'optional' as const } : undefined) },
      });
    });
    afterAll(async () => rig.stop());

    it('her password is refused (right or wrong, 403, no code); through the provider she gets a code and tokens', async () => {
      const started = await authorize(rig);
      expect(started.step.html).not.toContain('name="password"');
      expect(started.step.html).toContain(`Continue with ${rig.connection.name}`);
      const refused = await postPassword(started.agent, started.step, dan.sub, dan.password);
      expect(refused.status).toBe(403);
      expect(refused.location).toBeUndefined();
      expect(refused.html).not.toContain('code=');

      const toProvider = await federate(started.agent, refused, { connection: rig.connection.id });
      const { back } = await throughProvider({ ours: started.agent, atProvider: new UserAgent(rig.upstream.issuer) }, toProvider, 'up-dan');
      const tokens = await tokensOf(rig, started, back);
      expect(tokens.claims()!.sub).toBe('dan@acme.example');
      expect(tokens.claims()!.amr).toEqual(['fed', 'pwd']);
      expect(tokens.access_token).toBeTruthy();
    });
  });

  describe('private_key_jwt at the provider (no client secret)', () => {
    let rig: FederationRig;
    let stranger: FederationRig;
    const connection = { clientSecret: undefined, tokenEndpointAuthMethod: 'private_key_jwt' };
    beforeAll(async () => {
      rig = await startFederationRig({
        accounts: [acmeUser('eve')], users: [upstreamUser('eve')], connection, server: { store: store.option() },
        // Our client at the provider authenticates with our signing key, published at our jwks_uri.
        upstreamClient: (server) => ({ client_secret: undefined, token_endpoint_auth_method: 'private_key_jwt', jwks_uri: `${server.oauthUrl}/jwks` }),
      });
      // A provider that knows other keys as ours: those of another server (its own, generated at its start).
      stranger = await startFederationRig({
        accounts: [acmeUser('eve')], users: [upstreamUser('eve')], connection, server: { store: store.option() },
        upstreamClient: () => ({ client_secret: undefined, token_endpoint_auth_method: 'private_key_jwt', jwks_uri: `${rig.server.oauthUrl}/jwks` }),
      });
    });
    afterAll(async () => {
      await rig.stop();
      await stranger.stop();
    });

    it('the provider checks our key from our jwks_uri: the sign-in works end to end', async () => {
      const registered = await rig.upstream.provider.Client.find(UPSTREAM_CLIENT.id);
      expect(registered?.tokenEndpointAuthMethod).toBe('private_key_jwt');
      expect((await rig.server.auth.connections.get(rig.connection.id))).toMatchObject({ tokenEndpointAuthMethod: 'private_key_jwt', hasClientSecret: false });
      const started = await authorize(rig);
      const toProvider = await federate(started.agent, started.step, { email: 'eve@acme.example' });
      const { back } = await throughProvider({ ours: started.agent, atProvider: new UserAgent(rig.upstream.issuer) }, toProvider, 'up-eve');
      expect((await tokensOf(rig, started, back)).claims()!.sub).toBe('eve@acme.example');
      expect(rig.upstream.tokenRequests.at(-1)).toEqual({ clientId: UPSTREAM_CLIENT.id, grantType: 'authorization_code' });
    });

    it('a provider that does not know our key refuses the exchange: a clear page (502), no code for the app', async () => {
      const started = await authorize(stranger);
      const toProvider = await federate(started.agent, started.step, { email: 'eve@acme.example' });
      const { back } = await throughProvider({ ours: started.agent, atProvider: new UserAgent(stranger.upstream.issuer) }, toProvider, 'up-eve');
      expect(back.status).toBe(502);
      expect(back.location).toBeUndefined();
      expect(back.html).toContain('Your organisation&#39;s sign-in service refused the sign-in. Try again, or ask your administrator.');
      // It was asked (the code exchange, our assertion) and gave no token.
      expect(stranger.upstream.tokenRequests).toEqual([{ clientId: UPSTREAM_CLIENT.id, grantType: 'authorization_code' }]);
      expect(stranger.upstream.issued.some((answer) => answer.idToken !== undefined || answer.accessToken !== undefined)).toBe(false);
      // Audited with its reason (error_response), the provider's error named.
      await new Promise((resolve) => setTimeout(resolve, 100));
      const { events } = await stranger.server.auth.audit.list({ tenant: 'acme' });
      expect(events.find((event) => event.type === 'sign_in.federation_failed')).toMatchObject({ details: { reason: 'error_response', error: 'invalid_client' } });
    });
  });

  describe("the provider's acr among the connection's mfaAcrValues", () => {
    let rig: FederationRig;
    let portal: FederationRig['app'];
    beforeAll(async () => {
      rig = await startFederationRig({
        accounts: [acmeUser('fay', ['integration_setup']), acmeUser('gil', ['integration_setup'])],
        users: [upstreamUser('fay'), upstreamUser('gil')],
        // Fay's sign-in there is strong by its acr only (no mfa in amr); Gil's is a password.
        strength: { 'up-fay': { amr: ['pwd'], acr: 'urn:upstream:strong' } },
        connection: { mfaAcrValues: ['urn:upstream:strong'] },
        server: { store: store.option() },
      });
      const app = await rig.server.auth.appRegistrations.create({ name: 'Portal', tenant: 'acme', redirectUris: [APP_REDIRECT], clientType: 'confidential', firstParty: true });
      portal = {
        clientId: app.clientId,
        config: await client.discovery(new URL(rig.server.oauthUrl), app.clientId, undefined, client.ClientSecretBasic(app.clientSecret!), { execute: [client.allowInsecureRequests] }),
      };
    });
    afterAll(async () => rig.stop());

    const signIn = async (username: string) => {
      const onPortal = { ...rig, app: portal };
      const started = await authorize(onPortal, { scope: 'openid manage.integrations' }, portal.config);
      const toProvider = await federate(started.agent, started.step, { connection: rig.connection.id });
      const { back } = await throughProvider({ ours: started.agent, atProvider: new UserAgent(rig.upstream.issuer) }, toProvider, username);
      return { onPortal, started, back };
    };

    it('a strong acr: manage.integrations without our second factor', async () => {
      const { onPortal, started, back } = await signIn('up-fay');
      expect(isEnrolmentPage(back)).toBe(false);
      expect(isSecondFactorPage(back)).toBe(false);
      const tokens = await tokensOf(onPortal, started, back);
      expect(tokens.scope?.split(' ')).toContain('manage.integrations');
      expect(tokens.claims()!.amr).toEqual(['fed', 'pwd', 'mfa']);
    });

    it('a weak one: our second factor first (enrolment), the right only after it', async () => {
      const { onPortal, started, back } = await signIn('up-gil');
      expect(isEnrolmentPage(back)).toBe(true);
      expect(back.location).toBeUndefined();
      const after = await passSecondFactor(started.agent, back, rig.server.baseUrl, 'gil@acme.example');
      const tokens = await tokensOf(onPortal, started, after);
      expect(tokens.scope?.split(' ')).toContain('manage.integrations');
      expect(tokens.claims()!.amr).toEqual(['fed', 'pwd', 'otp', 'mfa']);
    });
  });
});
