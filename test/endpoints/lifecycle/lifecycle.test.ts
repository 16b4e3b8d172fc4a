import * as oauth from 'oauth4webapi';
import * as client from 'openid-client';
import { decodeJwt } from 'jose';
import { alice, bob, testAccounts } from '../../support/accounts.js';
import { testJwks } from '../../support/keys.js';
import { basic, postToken, startServer, type RunningServer } from '../../support/server.js';
import { signInForCode } from '../../support/sign-in.js';
import { STORE_KINDS, useStore } from '../../support/stores.js';
import { type UserAgent } from '../../support/user-agent.js';

const WEB = 'https://app.example.com/cb';
const SIGNED_OUT = 'https://app.example.com/signed-out';
const form = (fields: Record<string, string>) => new URLSearchParams(fields).toString();

/**
 * The session and token lifecycle: userinfo, introspection, revocation, and grants that end with
 * their app, on both stores, with the client libraries apps use (openid-client, oauth4webapi).
 */
describe.each(STORE_KINDS)('token lifecycle (%s store)', (kind) => {
  const store = useStore(kind);
  let server: RunningServer;
  let app: { clientId: string; clientSecret: string };
  let spa: { clientId: string };
  let machine: { clientId: string; clientSecret: string };
  let otherTenant: { clientId: string; clientSecret: string };

  beforeAll(async () => {
    server = await startServer({ store: store.option(), accounts: testAccounts([alice, bob]), keys: await testJwks(['ES256', 'RS256']) });
    const created = await server.auth.appRegistrations.create({ name: 'Web', redirectUris: [WEB], postLogoutRedirectUris: [SIGNED_OUT], clientType: 'confidential' });
    app = { clientId: created.clientId, clientSecret: created.clientSecret! };
    spa = await server.auth.appRegistrations.create({ name: 'SPA', redirectUris: [WEB], clientType: 'public' });
    machine = await server.auth.clientConfigurations.create({ tenant: 'acme', name: 'Sync', category: 'hr', resources: { scim: { scopes: ['scim.read'] } } });
    otherTenant = await server.auth.clientConfigurations.create({ tenant: 'globex', name: 'Other', category: 'hr', resources: { scim: { scopes: ['scim.read'] } } });
  });
  afterAll(() => server.stop());

  async function namedUserTokens(scope = 'openid profile email scim.read', target = app as { clientId: string; clientSecret?: string }) {
    const { code, verifier, agent } = await signInForCode(server, { clientId: target.clientId, redirectUri: WEB }, alice, scope);
    const exchange = { grant_type: 'authorization_code', code, redirect_uri: WEB, code_verifier: verifier };
    const tokens = target.clientSecret
      ? await postToken(server.oauthUrl, exchange, { authorization: basic(target.clientId, target.clientSecret) })
      : await postToken(server.oauthUrl, { ...exchange, client_id: target.clientId });
    expect(tokens.status).toBe(200);
    return { ...tokens.body as { access_token: string; refresh_token?: string; id_token: string }, agent };
  }

  async function machineToken(caller = machine): Promise<string> {
    const answer = await postToken(server.oauthUrl, 'grant_type=client_credentials', { authorization: basic(caller.clientId, caller.clientSecret) });
    return answer.body.access_token as string;
  }

  const introspect = async (token: string, caller: { clientId: string; clientSecret: string } = machine) => {
    const response = await fetch(`${server.oauthUrl}/introspect`, {
      method: 'POST',
      headers: { authorization: basic(caller.clientId, caller.clientSecret), 'content-type': 'application/x-www-form-urlencoded' },
      body: form({ token }),
    });
    return { status: response.status, headers: response.headers, body: (await response.json()) as Record<string, unknown> };
  };

  const revoke = (token: string, auth: { authorization?: string; client_id?: string }) =>
    fetch(`${server.oauthUrl}/revoke`, {
      method: 'POST',
      headers: { ...(auth.authorization ? { authorization: auth.authorization } : {}), 'content-type': 'application/x-www-form-urlencoded' },
      body: form({ token, ...(auth.client_id ? { client_id: auth.client_id } : {}) }),
    });

  const userinfo = (token: string, init: RequestInit = {}) =>
    fetch(`${server.oauthUrl}/userinfo`, { ...init, headers: { authorization: `Bearer ${token}`, ...(init.headers as Record<string, string> | undefined) } });

  describe('discovery', () => {
    it('lists the userinfo, introspection, revocation and end-session endpoints, in both forms', async () => {
      for (const url of [`${server.oauthUrl}/.well-known/openid-configuration`, `${server.baseUrl}/.well-known/oauth-authorization-server/oauth2`]) {
        const metadata = (await (await fetch(url)).json()) as Record<string, unknown>;
        expect(metadata).toMatchObject({
          userinfo_endpoint: `${server.oauthUrl}/userinfo`,
          introspection_endpoint: `${server.oauthUrl}/introspect`,
          introspection_endpoint_auth_methods_supported: ['client_secret_basic', 'private_key_jwt'],
          revocation_endpoint: `${server.oauthUrl}/revoke`,
          revocation_endpoint_auth_methods_supported: ['client_secret_basic', 'private_key_jwt', 'none'],
          end_session_endpoint: `${server.oauthUrl}/session/end`,
          backchannel_logout_supported: true,
        });
      }
    });
  });

  describe('userinfo', () => {
    it("answers openid-client's fetchUserInfo with the consented claims; sub is the ID token's", async () => {
      const { access_token, id_token } = await namedUserTokens();
      const config = await client.discovery(new URL(server.oauthUrl), app.clientId, undefined, client.ClientSecretBasic(app.clientSecret), {
        execute: [client.allowInsecureRequests],
      });
      const claims = await client.fetchUserInfo(config, access_token, decodeJwt(id_token).sub!);
      expect(claims).toEqual({ sub: 'alice', name: 'Alice Example', email: 'alice@acme.example' });
    });

    it('answers only the claims of the consented scopes (openid alone: sub)', async () => {
      const { access_token } = await namedUserTokens('openid scim.read');
      const response = await userinfo(access_token);
      expect(response.status).toBe(200);
      expect(await response.json()).toEqual({ sub: 'alice' });
    });

    it('answers POST with the header alike, and refuses the token in the body or the query', async () => {
      const { access_token } = await namedUserTokens();
      const post = await userinfo(access_token, { method: 'POST' });
      expect(post.status).toBe(200);
      expect(post.headers.get('cache-control')).toBe('no-store');
      const inBody = await fetch(`${server.oauthUrl}/userinfo`, {
        method: 'POST', headers: { 'content-type': 'application/x-www-form-urlencoded' }, body: form({ access_token }),
      });
      expect(inBody.status).toBe(400);
      expect(inBody.headers.get('www-authenticate')).toMatch(/^Bearer realm=.*error="invalid_request"/);
      const inQuery = await fetch(`${server.oauthUrl}/userinfo?access_token=${access_token}`);
      expect(inQuery.status).toBe(400);
    });

    it.each([
      ['no token', undefined, 401, /^Bearer realm="[^"]+"$/],
      ['a malformed header', 'Basic abc', 400, /error="invalid_request"/],
      ['a made-up token', 'Bearer abc.def.ghi', 401, /error="invalid_token"/],
    ])('%s (%p) → %i with an RFC 6750 challenge', async (_name, header, status, challenge) => {
      const response = await fetch(`${server.oauthUrl}/userinfo`, { headers: header ? { authorization: header } : {} });
      expect(response.status).toBe(status);
      expect(response.headers.get('www-authenticate')).toMatch(challenge);
    });

    it('refuses a machine token (403 insufficient_scope) and an ID token (401)', async () => {
      const machineAnswer = await userinfo(await machineToken());
      expect(machineAnswer.status).toBe(403);
      expect(machineAnswer.headers.get('www-authenticate')).toMatch(/error="insufficient_scope"/);
      const { id_token } = await namedUserTokens();
      expect((await userinfo(id_token)).status).toBe(401);
    });

    it('refuses a token whose user did not allow openid', async () => {
      const { access_token } = await namedUserTokens('scim.read');
      const response = await userinfo(access_token);
      expect(response.status).toBe(403);
      expect(response.headers.get('www-authenticate')).toMatch(/scope="openid"/);
    });

    it('refuses the token once its consent is revoked (401 invalid_token)', async () => {
      const { access_token } = await namedUserTokens();
      expect((await userinfo(access_token)).status).toBe(200);
      expect(await server.auth.consents.revoke({ tenant: 'acme', sub: 'alice', clientId: app.clientId })).toBe(true);
      const after = await userinfo(access_token);
      expect(after.status).toBe(401);
      expect(after.headers.get('www-authenticate')).toMatch(/error="invalid_token"/);
    });
  });

  describe('introspection', () => {
    it('active with the claims for a live machine token of the caller\'s tenant (openid-client)', async () => {
      const token = await machineToken();
      const config = await client.discovery(new URL(server.oauthUrl), machine.clientId, undefined, client.ClientSecretBasic(machine.clientSecret), {
        execute: [client.allowInsecureRequests],
      });
      const answer = await client.tokenIntrospection(config, token);
      expect(answer).toMatchObject({
        active: true, sub: machine.clientId, client_id: machine.clientId, scope: 'scim.read', tenant: 'acme', token_type: 'Bearer', iss: server.auth.issuer,
      });
      expect(typeof answer.exp).toBe('number');
      expect(typeof answer.iat).toBe('number');
    });

    it('active for a named-user token, inactive once the grant ends; oauth4webapi reads both', async () => {
      const { access_token, refresh_token } = await namedUserTokens();
      const issuer = new URL(server.oauthUrl);
      const as = await oauth.processDiscoveryResponse(issuer, await oauth.discoveryRequest(issuer, { [oauth.allowInsecureRequests]: true }));
      const ask = async () => oauth.processIntrospectionResponse(as, { client_id: app.clientId }, await oauth.introspectionRequest(
        as, { client_id: app.clientId }, oauth.ClientSecretBasic(app.clientSecret), access_token, { [oauth.allowInsecureRequests]: true },
      ));
      expect(await ask()).toMatchObject({ active: true, sub: 'alice', client_id: app.clientId, tenant: 'acme', scope: 'openid profile email scim.read' });
      expect((await revoke(refresh_token!, { authorization: basic(app.clientId, app.clientSecret) })).status).toBe(200);
      expect(await ask()).toEqual({ active: false });
    });

    it.each([
      ['an unknown string', async () => 'abc'],
      ['an expired-looking JWT of nobody', async () => 'eyJhbGciOiJub25lIn0.eyJzdWIiOiJ4In0.'],
      ['a machine token of another tenant', async (self: { other: () => Promise<string> }) => self.other()],
    ])('inactive, and nothing more, for %s', async (_name, tokenOf) => {
      const token = await tokenOf({ other: () => machineToken(otherTenant) });
      const answer = await introspect(token);
      expect(answer).toMatchObject({ status: 200, body: { active: false } });
      expect(Object.keys(answer.body)).toEqual(['active']);
      expect(answer.headers.get('cache-control')).toBe('no-store');
    });

    it('an operator\'s app sees other clients\' tokens only when first-party or marked a resource server; a tenant\'s only its tenant\'s', async () => {
      const token = await machineToken();
      const named = (await namedUserTokens()).access_token;
      const appOf = async (input: { firstParty?: boolean; resourceServer?: boolean; tenant?: string }) => {
        const created = await server.auth.appRegistrations.create({ name: 'Introspector', redirectUris: [WEB], clientType: 'confidential', ...input });
        return { clientId: created.clientId, clientSecret: created.clientSecret! };
      };
      const thirdParty = await appOf({});
      expect((await introspect(token, thirdParty)).body).toEqual({ active: false });
      expect((await introspect(named, thirdParty)).body).toEqual({ active: false });
      // The token's own app still learns about its token.
      expect((await introspect(named, app)).body.active).toBe(true);
      for (const allowed of [await appOf({ firstParty: true }), await appOf({ resourceServer: true })]) {
        expect((await introspect(token, allowed)).body).toMatchObject({ active: true, tenant: 'acme' });
        expect((await introspect(await machineToken(otherTenant), allowed)).body).toMatchObject({ active: true, tenant: 'globex' });
      }
      // Marked later by the operator: it sees them from then on; unmarked, no more.
      await server.auth.appRegistrations.update(thirdParty.clientId, { resourceServer: true });
      expect((await introspect(token, thirdParty)).body.active).toBe(true);
      await server.auth.appRegistrations.update(thirdParty.clientId, { resourceServer: false });
      expect((await introspect(token, thirdParty)).body).toEqual({ active: false });
      const globexApp = await appOf({ tenant: 'globex', resourceServer: true });
      expect((await introspect(token, globexApp)).body).toEqual({ active: false });
      expect((await introspect(await machineToken(otherTenant), globexApp)).body.active).toBe(true);
    });

    it.each([
      ['no credentials', {}, 401],
      ['a wrong secret', { authorization: basic('00000000-0000-4000-8000-000000000000', 'x') }, 401],
      ['a public app by its client_id', { body: { client_id: 'SPA' } }, 401],
    ])('refuses a caller with %s (%p → %i invalid_client)', async (_name, { authorization, body }: { authorization?: string; body?: Record<string, string> }, status) => {
      const response = await fetch(`${server.oauthUrl}/introspect`, {
        method: 'POST',
        headers: { ...(authorization ? { authorization } : {}), 'content-type': 'application/x-www-form-urlencoded' },
        body: form({ token: 'x', ...(body?.client_id ? { client_id: spa.clientId } : {}) }),
      });
      expect(response.status).toBe(status);
      expect(await response.json()).toMatchObject({ error: 'invalid_client' });
    });

    it('is inactive for a deleted client configuration\'s token', async () => {
      const doomed = await server.auth.clientConfigurations.create({ tenant: 'acme', name: 'Doomed', category: 'hr', resources: { scim: { scopes: ['scim.read'] } } });
      const token = await machineToken(doomed);
      expect((await introspect(token)).body.active).toBe(true);
      await server.auth.clientConfigurations.delete(doomed.clientId);
      expect((await introspect(token)).body).toEqual({ active: false });
    });
  });

  describe('revocation', () => {
    it('a refresh token ends its grant: the refresh token, the access token, a second refresh (openid-client)', async () => {
      const { access_token, refresh_token } = await namedUserTokens();
      const config = await client.discovery(new URL(server.oauthUrl), app.clientId, undefined, client.ClientSecretBasic(app.clientSecret), {
        execute: [client.allowInsecureRequests],
      });
      await client.tokenRevocation(config, refresh_token!);
      expect((await introspect(access_token)).body).toEqual({ active: false });
      const refresh = await postToken(server.oauthUrl, { grant_type: 'refresh_token', refresh_token: refresh_token! }, { authorization: basic(app.clientId, app.clientSecret) });
      expect(refresh.status).toBe(400);
      expect(refresh.body.error).toBe('invalid_grant');
    });

    it('an access token is no longer live; the refresh token still works', async () => {
      const { access_token, refresh_token } = await namedUserTokens();
      expect((await revoke(access_token, { authorization: basic(app.clientId, app.clientSecret) })).status).toBe(200);
      expect((await introspect(access_token)).body).toEqual({ active: false });
      expect((await userinfo(access_token)).status).toBe(401);
      const refresh = await postToken(server.oauthUrl, { grant_type: 'refresh_token', refresh_token: refresh_token! }, { authorization: basic(app.clientId, app.clientSecret) });
      expect(refresh.status).toBe(200);
    });

    it('a machine client revokes its own token', async () => {
      const token = await machineToken();
      expect((await revoke(token, { authorization: basic(machine.clientId, machine.clientSecret) })).status).toBe(200);
      expect((await introspect(token)).body).toEqual({ active: false });
    });

    it('a public app revokes with its client_id alone', async () => {
      const { access_token } = await namedUserTokens('openid scim.read', spa);
      expect((await revoke(access_token, { client_id: spa.clientId })).status).toBe(200);
      expect((await introspect(access_token)).body).toEqual({ active: false });
    });

    it("answers 200 and does nothing for another client's, an unknown or a malformed token", async () => {
      const { access_token } = await namedUserTokens();
      expect((await revoke(access_token, { authorization: basic(machine.clientId, machine.clientSecret) })).status).toBe(200);
      expect((await introspect(access_token)).body.active).toBe(true);
      expect((await revoke('unknown', { authorization: basic(machine.clientId, machine.clientSecret) })).status).toBe(200);
      expect((await revoke('a.b.c', { authorization: basic(machine.clientId, machine.clientSecret) })).status).toBe(200);
    });

    it.each([
      ['no credentials and no client_id', {}, 401, 'invalid_client'],
      ['a wrong secret', { authorization: basic('00000000-0000-4000-8000-000000000000', 'x') }, 401, 'invalid_client'],
      ['Basic for a public app', { authorization: 'spa' }, 401, 'invalid_client'],
      ['a confidential app without Basic', { client_id: 'app' }, 401, 'invalid_client'],
    ])('refuses %s (%p → %i %s)', async (_name, auth: { authorization?: string; client_id?: string }, status, error) => {
      const resolved = {
        ...(auth.authorization === 'spa' ? { authorization: basic(spa.clientId, 'x'.repeat(43)) } : auth.authorization ? { authorization: auth.authorization } : {}),
        ...(auth.client_id ? { client_id: app.clientId } : {}),
      };
      const response = await revoke('x', resolved);
      expect(response.status).toBe(status);
      expect(await response.json()).toMatchObject({ error });
    });

    it('refuses a request without a token (400 invalid_request)', async () => {
      const response = await fetch(`${server.oauthUrl}/revoke`, {
        method: 'POST', headers: { authorization: basic(machine.clientId, machine.clientSecret), 'content-type': 'application/x-www-form-urlencoded' }, body: '',
      });
      expect(response.status).toBe(400);
      expect(await response.json()).toMatchObject({ error: 'invalid_request' });
    });
  });

  describe('grants that end with their app', () => {
    it('deleting an app ends its grants and consents at once', async () => {
      const doomed = await server.auth.appRegistrations.create({ name: 'Doomed', redirectUris: [WEB], clientType: 'confidential' });
      const { access_token } = await namedUserTokens('openid scim.read', { clientId: doomed.clientId, clientSecret: doomed.clientSecret! });
      expect((await server.auth.consents.list({ tenant: 'acme', sub: 'alice' })).map((consent) => consent.clientId)).toContain(doomed.clientId);
      await server.auth.appRegistrations.delete(doomed.clientId);
      expect((await introspect(access_token)).body).toEqual({ active: false });
      expect((await server.auth.consents.list({ tenant: 'acme', sub: 'alice' })).map((consent) => consent.clientId)).not.toContain(doomed.clientId);
    });

    it('a confidential → public → confidential round trip does not bring old refresh tokens back', async () => {
      const roundTrip = await server.auth.appRegistrations.create({ name: 'Round trip', redirectUris: [WEB], clientType: 'confidential' });
      const { refresh_token } = await namedUserTokens('openid scim.read', { clientId: roundTrip.clientId, clientSecret: roundTrip.clientSecret! });
      await server.auth.appRegistrations.update(roundTrip.clientId, { clientType: 'public' });
      const again = await server.auth.appRegistrations.update(roundTrip.clientId, { clientType: 'confidential' });
      const refresh = await postToken(server.oauthUrl, { grant_type: 'refresh_token', refresh_token: refresh_token! }, { authorization: basic(roundTrip.clientId, again.clientSecret!) });
      expect(refresh.status).toBe(400);
      expect(refresh.body.error).toBe('invalid_grant');
      expect((await server.auth.consents.list({ tenant: 'acme', sub: 'alice' })).map((consent) => consent.clientId)).not.toContain(roundTrip.clientId);
    });

    it('a secret rotation does not sign users out', async () => {
      const rotating = await server.auth.appRegistrations.create({ name: 'Rotating', redirectUris: [WEB], clientType: 'confidential' });
      const { access_token, refresh_token } = await namedUserTokens('openid scim.read', { clientId: rotating.clientId, clientSecret: rotating.clientSecret! });
      const { clientSecret } = await server.auth.appRegistrations.rotateSecret(rotating.clientId);
      expect((await introspect(access_token)).body.active).toBe(true);
      const refresh = await postToken(server.oauthUrl, { grant_type: 'refresh_token', refresh_token: refresh_token! }, { authorization: basic(rotating.clientId, clientSecret) });
      expect(refresh.status).toBe(200);
    });
  });

  describe('sign-out (RP-Initiated Logout)', () => {
    async function signOut(agent: UserAgent, params: Record<string, string>) {
      const page = await agent.request(`${server.oauthUrl}/session/end?${new URLSearchParams(params)}`);
      return page;
    }

    it('confirms, ends the session, goes back to the registered URI with state; the next sign-in asks for the password', async () => {
      const { id_token, agent } = await namedUserTokens();
      const page = await signOut(agent, { id_token_hint: id_token, post_logout_redirect_uri: SIGNED_OUT, state: 'bye' });
      expect(page.status).toBe(200);
      expect(page.html).toContain('Sign out');
      expect(page.html).not.toContain('<script');
      const done = await agent.submit(page, {});
      expect(done.location).toBe(`${SIGNED_OUT}?state=bye`);
      const query = new URLSearchParams({ response_type: 'code', client_id: app.clientId, redirect_uri: WEB, scope: 'openid', state: 's', code_challenge: 'E9Melhoa2OwvFrEMTJguCHaoeK1t8URWbuGJSstw-cM', code_challenge_method: 'S256' });
      const next = await agent.request(`${server.oauthUrl}/authorize?${query}`);
      expect(next.html).toContain('name="password"');
    });

    it('an unregistered post_logout_redirect_uri never receives the browser', async () => {
      const { id_token, agent } = await namedUserTokens();
      const page = await signOut(agent, { id_token_hint: id_token, post_logout_redirect_uri: 'https://evil.example/' });
      expect(page.status).toBe(400);
      expect(page.location).toBeUndefined();
      expect(page.html).not.toContain('evil.example');
    });
  });
});
