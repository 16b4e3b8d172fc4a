import { randomUUID } from 'node:crypto';
import { calculateJwkThumbprint, decodeJwt, exportJWK, generateKeyPair, SignJWT, type CryptoKey } from 'jose';
import * as oauth from 'oauth4webapi';
import { JWT_BEARER_ASSERTION } from '../../policies/client-authentication.js';
import type { ClientJwk } from '../../policies/client-keys.js';
import type { TenantPolicy } from '../../src/index.js';
import { alice, testAccounts } from '../support/accounts.js';
import { basic, postToken, startServer, type RunningServer } from '../support/server.js';
import { signInForCode } from '../support/sign-in.js';
import { STORE_KINDS, useStore } from '../support/stores.js';
import { pkcePair, UserAgent, type Step } from '../support/user-agent.js';

const WEB = 'https://payroll.example.com/cb';
const insecure = { [oauth.allowInsecureRequests]: true } as const;
const resources = { scim: { scopes: ['scim.read'] } };

/** The lifetime the engine gave a code it stored (its own model: both stores). */
async function codeLifetime(server: RunningServer, code: string): Promise<number> {
  const model = (server.auth.provider as unknown as Record<string, { find(value: string, options: { ignoreExpiration: boolean }): Promise<{ exp: number; iat: number } | undefined> }>).AuthorizationCode!;
  const stored = await model.find(code, { ignoreExpiration: true });
  return stored!.exp - stored!.iat;
}

/**
 * THE HIGH-SECURITY PROFILE END TO END (policies/high-security.ts, docs/high-security.md), on both
 * stores: an app under it goes through PAR, private_key_jwt, DPoP and PKCE with oauth4webapi,
 * through our sign-in and consent pages, and gets the issuer in its authorization response, a code
 * that lives 60 s and tokens bound to its DPoP key; what the profile refuses is refused (a plain
 * authorization request, Basic, a Bearer token request, an assertion for the token endpoint URL);
 * a tenant whose host selects the profile has its clients that do not conform refused at run time.
 */
describe.each(STORE_KINDS)('the high-security profile end to end (%s store)', (kind) => {
  const store = useStore(kind);
  let server: RunningServer;
  let clientKey: CryptoKey;
  let clientJwk: ClientJwk;
  let app: string;
  let machine: string;
  const hostPolicies = new Map<string, TenantPolicy>();

  beforeAll(async () => {
    server = await startServer({ store: store.option(), accounts: testAccounts([alice]), tenantPolicy: (tenant) => hostPolicies.get(tenant) });
    const pair = await generateKeyPair('ES256', { extractable: true });
    clientKey = pair.privateKey;
    clientJwk = { ...(await exportJWK(pair.publicKey)), kid: 'k1', alg: 'ES256' } as ClientJwk;
    app = (await server.auth.appRegistrations.create({
      name: 'Payroll', redirectUris: [WEB], clientType: 'confidential', profile: 'high-security',
      tokenEndpointAuthMethod: 'private_key_jwt', jwks: { keys: [clientJwk] }, dpop: 'required', requirePushedAuthorizationRequests: true,
    })).clientId;
    machine = (await server.auth.clientConfigurations.create({
      tenant: 'acme', name: 'Payroll sync', category: 'payroll', resources, profile: 'high-security',
      tokenEndpointAuthMethod: 'private_key_jwt', jwks: { keys: [clientJwk] }, dpop: 'required',
    })).clientId;
  });
  afterAll(() => server.stop());

  async function discovered(): Promise<oauth.AuthorizationServer> {
    const issuer = new URL(server.oauthUrl);
    return oauth.processDiscoveryResponse(issuer, await oauth.discoveryRequest(issuer, insecure));
  }

  /** The browser at /authorize with the request by reference, through sign-in and consent. */
  async function signIn(clientId: string, requestUri: string): Promise<Step> {
    const agent = new UserAgent(server.baseUrl);
    let step = await agent.request(`${server.oauthUrl}/authorize?${new URLSearchParams({ client_id: clientId, request_uri: requestUri })}`);
    if (step.html.includes('name="password"')) step = await agent.submit(step, { username: alice.sub, password: alice.password });
    if (step.html.includes('value="allow"')) step = await agent.submit(step, { decision: 'allow' });
    return step;
  }

  /** A client assertion as a library makes one, with `aud` to change. */
  async function assertion(clientId: string, aud: string | string[]): Promise<string> {
    const now = Math.floor(Date.now() / 1000);
    return new SignJWT({}).setProtectedHeader({ alg: 'ES256', kid: 'k1' }).setIssuer(clientId).setSubject(clientId)
      .setAudience(aud).setIssuedAt(now).setExpirationTime(now + 60).setJti(randomUUID()).sign(clientKey);
  }

  it('oauth4webapi: PAR + private_key_jwt + DPoP + PKCE through sign-in and consent; iss in the response, a 60 s code, DPoP-bound tokens, a refresh with the same key', async () => {
    const as = await discovered();
    expect(as.authorization_response_iss_parameter_supported).toBe(true);
    const client: oauth.Client = { client_id: app };
    const auth = oauth.PrivateKeyJwt({ key: clientKey, kid: 'k1' });
    const dpopKeys = await oauth.generateKeyPair('ES256');
    const DPoP = oauth.DPoP(client, dpopKeys);
    const verifier = oauth.generateRandomCodeVerifier();
    const pushed = await oauth.processPushedAuthorizationResponse(as, client, await oauth.pushedAuthorizationRequest(as, client, auth, {
      response_type: 'code', redirect_uri: WEB, scope: 'openid scim.read', state: 'st-hs',
      code_challenge: await oauth.calculatePKCECodeChallenge(verifier), code_challenge_method: 'S256',
    }, { ...insecure, DPoP }));
    const back = await signIn(app, pushed.request_uri);
    const callback = new URL(back.location!);
    // RFC 9207: the authorization response names the issuer; the library checks it.
    expect(callback.searchParams.get('iss')).toBe(server.auth.issuer);
    const params = oauth.validateAuthResponse(as, client, callback, 'st-hs');
    expect(await codeLifetime(server, params.get('code')!)).toBe(60);

    const tokens = await oauth.processAuthorizationCodeResponse(as, client,
      await oauth.authorizationCodeGrantRequest(as, client, auth, params, WEB, verifier, { ...insecure, DPoP }));
    const jkt = await calculateJwkThumbprint(await exportJWK(dpopKeys.publicKey));
    expect(tokens.token_type).toBe('dpop');
    expect(decodeJwt(tokens.access_token)).toMatchObject({ cnf: { jkt }, client_id: app });
    expect(tokens.refresh_token).toBeTruthy();

    const refreshed = await oauth.processRefreshTokenResponse(as, client,
      await oauth.refreshTokenGrantRequest(as, client, auth, tokens.refresh_token!, { ...insecure, DPoP }));
    expect(refreshed.token_type).toBe('dpop');
    expect(decodeJwt(refreshed.access_token)).toMatchObject({ cnf: { jkt } });
  });

  it('a code pushed with a DPoP proof is bound to that key: its exchange with another key is refused', async () => {
    const as = await discovered();
    const client: oauth.Client = { client_id: app };
    const auth = oauth.PrivateKeyJwt({ key: clientKey, kid: 'k1' });
    const DPoP = oauth.DPoP(client, await oauth.generateKeyPair('ES256'));
    const verifier = oauth.generateRandomCodeVerifier();
    const pushed = await oauth.processPushedAuthorizationResponse(as, client, await oauth.pushedAuthorizationRequest(as, client, auth, {
      response_type: 'code', redirect_uri: WEB, scope: 'openid', state: 'st-jkt',
      code_challenge: await oauth.calculatePKCECodeChallenge(verifier), code_challenge_method: 'S256',
    }, { ...insecure, DPoP }));
    const params = oauth.validateAuthResponse(as, client, new URL((await signIn(app, pushed.request_uri)).location!), 'st-jkt');
    const other = oauth.DPoP(client, await oauth.generateKeyPair('ES256'));
    const response = await oauth.authorizationCodeGrantRequest(as, client, auth, params, WEB, verifier, { ...insecure, DPoP: other });
    expect(response.status).toBe(400);
    expect(((await response.json()) as { error: string }).error).toBe('invalid_grant');
  });

  it("a standard app's code lives 5 minutes (the 60 s are the profile's)", async () => {
    const standard = await server.auth.appRegistrations.create({ name: 'Standard', redirectUris: [WEB], clientType: 'confidential' });
    const { code } = await signInForCode(server, { clientId: standard.clientId, redirectUri: WEB }, alice);
    expect(await codeLifetime(server, code)).toBe(300);
  });

  it('a plain authorization request of the app is refused: PAR is required', async () => {
    const { challenge } = pkcePair();
    const step = await new UserAgent(server.baseUrl).request(`${server.oauthUrl}/authorize?${new URLSearchParams({
      response_type: 'code', client_id: app, redirect_uri: WEB, scope: 'openid', state: 's', code_challenge: challenge, code_challenge_method: 'S256',
    })}`);
    const back = new URL(step.location!);
    expect(back.origin + back.pathname).toBe(WEB);
    expect(back.searchParams.get('error')).toBe('invalid_request');
    expect(back.searchParams.get('code')).toBeNull();
  });

  it('a push without client authentication (client_id alone) is refused', async () => {
    const { challenge } = pkcePair();
    const push = await fetch(`${server.oauthUrl}/par`, {
      method: 'POST', headers: { 'content-type': 'application/x-www-form-urlencoded' },
      body: new URLSearchParams({ response_type: 'code', client_id: app, redirect_uri: WEB, scope: 'openid', state: 's', code_challenge: challenge, code_challenge_method: 'S256' }).toString(),
    });
    expect(push.status).toBe(401);
    expect(await push.json()).toMatchObject({ error: 'invalid_client' });
  });

  it('Basic is refused: the client has no secret, and a made-up one does not authenticate it', async () => {
    const answer = await postToken(server.oauthUrl, { grant_type: 'client_credentials' }, { authorization: basic(machine, 'a'.repeat(43)) });
    expect(answer.status).toBe(401);
    expect(answer.body.error).toBe('invalid_client');
  });

  it('a Bearer token request (no DPoP proof) is refused; with a proof the token is bound', async () => {
    const as = await discovered();
    const client: oauth.Client = { client_id: machine };
    const auth = oauth.PrivateKeyJwt({ key: clientKey, kid: 'k1' });
    const bearer = await postToken(server.oauthUrl, { grant_type: 'client_credentials', client_assertion_type: JWT_BEARER_ASSERTION, client_assertion: await assertion(machine, server.auth.issuer) });
    expect(bearer.status).toBe(400);
    // The engine keeps an invalid_grant's reason to itself (as for any client with dpop: 'required').
    expect(bearer.body.error).toBe('invalid_grant');
    const DPoP = oauth.DPoP(client, await oauth.generateKeyPair('ES256'));
    const tokens = await oauth.processClientCredentialsResponse(as, client,
      await oauth.clientCredentialsGrantRequest(as, client, auth, new URLSearchParams({ scope: 'scim.read' }), { ...insecure, DPoP }));
    expect(tokens.token_type).toBe('dpop');
  });

  it("an assertion whose audience is the token endpoint URL, or an array, is refused under the profile (the issuer alone is taken)", async () => {
    const dpop = async () => {
      const { privateKey, publicKey } = await generateKeyPair('ES256');
      return new SignJWT({ htm: 'POST', htu: `${server.oauthUrl}/token`, jti: randomUUID() })
        .setProtectedHeader({ alg: 'ES256', typ: 'dpop+jwt', jwk: await exportJWK(publicKey) }).setIssuedAt().sign(privateKey);
    };
    for (const aud of [`${server.oauthUrl}/token`, [server.auth.issuer]]) {
      const answer = await postToken(server.oauthUrl, { grant_type: 'client_credentials', client_assertion_type: JWT_BEARER_ASSERTION, client_assertion: await assertion(machine, aud) }, { dpop: await dpop() });
      expect(answer.status).toBe(401);
      expect(answer.body).toMatchObject({ error: 'invalid_client' });
    }
    const ok = await postToken(server.oauthUrl, { grant_type: 'client_credentials', client_assertion_type: JWT_BEARER_ASSERTION, client_assertion: await assertion(machine, server.auth.issuer) }, { dpop: await dpop() });
    expect(ok.status).toBe(200);
  });

  it('at introspection and revocation too, the assertion names the issuer alone under the profile', async () => {
    for (const endpoint of ['introspect', 'revoke']) {
      const call = async (aud: string | string[]) => {
        const response = await fetch(`${server.oauthUrl}/${endpoint}`, {
          method: 'POST',
          headers: { 'content-type': 'application/x-www-form-urlencoded' },
          body: new URLSearchParams({ token: 'not-a-token-of-ours', client_assertion_type: JWT_BEARER_ASSERTION, client_assertion: await assertion(machine, aud) }),
        });
        return { status: response.status, body: await response.text() };
      };
      for (const aud of [`${server.oauthUrl}/${endpoint}`, `${server.oauthUrl}/token`, [server.auth.issuer]]) {
        const refused = await call(aud);
        expect(refused.status).toBe(401);
        expect(JSON.parse(refused.body)).toMatchObject({ error: 'invalid_client' });
      }
      expect((await call(server.auth.issuer)).status).toBe(200);
    }
  });

  it("a standard private_key_jwt client's assertion may still name the token endpoint URL", async () => {
    const standard = await server.auth.clientConfigurations.create({
      tenant: 'acme', name: 'Standard sync', category: 'payroll', resources, tokenEndpointAuthMethod: 'private_key_jwt', jwks: { keys: [clientJwk] },
    });
    const answer = await postToken(server.oauthUrl, { grant_type: 'client_credentials', client_assertion_type: JWT_BEARER_ASSERTION, client_assertion: await assertion(standard.clientId, `${server.oauthUrl}/token`) });
    expect(answer.status).toBe(200);
    expect(answer.body.token_type).toBe('Bearer');
  });

  it("the host selects the profile for a tenant: its clients that do not conform are refused at run time, new ones at creation", async () => {
    const basicClient = await server.auth.clientConfigurations.create({ tenant: 'globex', name: 'Old sync', category: 'hr', resources });
    // private_key_jwt, but DPoP optional and PAR not required: not used before the switch (not in any cache).
    const keyClient = await server.auth.clientConfigurations.create({ tenant: 'globex', name: 'Key sync', category: 'hr', resources, tokenEndpointAuthMethod: 'private_key_jwt', jwks: { keys: [clientJwk] } });
    const keyApp = await server.auth.appRegistrations.create({ name: 'Key app', redirectUris: [WEB], clientType: 'confidential', tenant: 'globex', tokenEndpointAuthMethod: 'private_key_jwt', jwks: { keys: [clientJwk] } });
    const publicApp = await server.auth.appRegistrations.create({ name: 'Old SPA', redirectUris: ['https://spa.globex.example/cb'], clientType: 'public', tenant: 'globex' });
    // Before: Basic and Bearer work.
    expect((await postToken(server.oauthUrl, 'grant_type=client_credentials', { authorization: basic(basicClient.clientId, basicClient.clientSecret) })).status).toBe(200);

    hostPolicies.set('globex', { profile: 'high-security' });
    try {
      // The host's policy is a function nobody can watch: an instance's client cache may hold the
      // client's metadata for up to 10 s (src/engine/client-cache.ts) before the profile applies.
      await new Promise((resolve) => setTimeout(resolve, 10_500));
      const refused = await postToken(server.oauthUrl, 'grant_type=client_credentials', {
        authorization: basic(basicClient.clientId, basicClient.clientSecret),
        dpop: await new SignJWT({ htm: 'POST', htu: `${server.oauthUrl}/token`, jti: randomUUID() })
          .setProtectedHeader({ alg: 'ES256', typ: 'dpop+jwt', jwk: clientJwk }).setIssuedAt().sign(clientKey),
      });
      expect(refused.status).toBe(400);
      expect(refused.body).toEqual({ error: 'unauthorized_client', error_description: 'the high-security profile requires private_key_jwt; this client authenticates with client_secret_basic' });
      // Without a proof: refused alike (the profile is checked before the proof is looked for).
      expect((await postToken(server.oauthUrl, 'grant_type=client_credentials', { authorization: basic(basicClient.clientId, basicClient.clientSecret) })).body.error).toBe('unauthorized_client');
      // Introspection and revocation refuse it too: a leaked secret no longer reads the tenant's tokens.
      for (const endpoint of ['introspect', 'revoke']) {
        const answer = await fetch(`${server.oauthUrl}/${endpoint}`, {
          method: 'POST',
          headers: { authorization: basic(basicClient.clientId, basicClient.clientSecret), 'content-type': 'application/x-www-form-urlencoded' },
          body: new URLSearchParams({ token: 'not-a-token-of-ours' }).toString(),
        });
        expect(answer.status).toBe(400);
        expect(await answer.json()).toMatchObject({ error: 'unauthorized_client' });
      }
      const publicRevoke = await fetch(`${server.oauthUrl}/revoke`, {
        method: 'POST', headers: { 'content-type': 'application/x-www-form-urlencoded' },
        body: new URLSearchParams({ token: 'not-a-token-of-ours', client_id: publicApp.clientId }).toString(),
      });
      expect(publicRevoke.status).toBe(400);
      expect(await publicRevoke.json()).toMatchObject({ error: 'unauthorized_client' });

      const { challenge } = pkcePair();
      const push = await fetch(`${server.oauthUrl}/par`, {
        method: 'POST', headers: { 'content-type': 'application/x-www-form-urlencoded' },
        body: new URLSearchParams({ response_type: 'code', client_id: publicApp.clientId, redirect_uri: 'https://spa.globex.example/cb', scope: 'openid', state: 's', code_challenge: challenge, code_challenge_method: 'S256' }).toString(),
      });
      expect(push.status).toBe(400);
      expect(await push.json()).toMatchObject({ error: 'unauthorized_client', error_description: expect.stringContaining('requires private_key_jwt') });

      // DPoP is demanded of a private_key_jwt client whose record says optional; PAR of an app whose record does not ask for it.
      const withAssertion = async (dpop?: string) => postToken(server.oauthUrl, {
        grant_type: 'client_credentials', client_assertion_type: JWT_BEARER_ASSERTION, client_assertion: await assertion(keyClient.clientId, server.auth.issuer),
      }, dpop ? { dpop } : {});
      expect((await withAssertion()).body.error).toBe('invalid_grant');
      const proof = await new SignJWT({ htm: 'POST', htu: `${server.oauthUrl}/token`, jti: randomUUID() })
        .setProtectedHeader({ alg: 'ES256', typ: 'dpop+jwt', jwk: clientJwk }).setIssuedAt().sign(clientKey);
      expect((await withAssertion(proof)).body.token_type).toBe('DPoP');
      const { challenge: appChallenge } = pkcePair();
      const plain = await new UserAgent(server.baseUrl).request(`${server.oauthUrl}/authorize?${new URLSearchParams({
        response_type: 'code', client_id: keyApp.clientId, redirect_uri: WEB, scope: 'openid', state: 's', code_challenge: appChallenge, code_challenge_method: 'S256',
      })}`);
      expect(new URL(plain.location!).searchParams.get('error')).toBe('invalid_request');

      await expect(server.auth.clientConfigurations.create({ tenant: 'globex', name: 'New sync', category: 'hr', resources }))
        .rejects.toMatchObject({ field: 'tokenEndpointAuthMethod', description: expect.stringContaining("the client's tenant selected it") });
      await expect(server.auth.clientConfigurations.update(basicClient.clientId, { name: 'Renamed' }))
        .rejects.toMatchObject({ field: 'tokenEndpointAuthMethod' });
      const conforming = await server.auth.clientConfigurations.create({
        tenant: 'globex', name: 'New sync', category: 'hr', resources, tokenEndpointAuthMethod: 'private_key_jwt', jwks: { keys: [clientJwk] }, dpop: 'required',
      });
      // Its own profile stays standard: the tenant's is what puts it under the profile.
      expect(conforming.profile).toBe('standard');
    } finally {
      hostPolicies.delete('globex');
    }
  }, 40_000);
});
