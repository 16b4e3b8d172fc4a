import { SignJWT, importJWK, type JWK } from 'jose';
import { testAccounts } from '../../support/accounts.js';
import { testJwks } from '../../support/keys.js';
import { basic, postToken, startServer, type RunningServer } from '../../support/server.js';
import { signInForCode } from '../../support/sign-in.js';
import { STORE_KINDS, useStore } from '../../support/stores.js';
import { UserAgent } from '../../support/user-agent.js';

const A = 'https://a.example/cb';
const B = 'https://b.example/cb';
const C = 'https://third-party.example/cb';

describe.each(STORE_KINDS)('consent API (%s store)', (kind) => {
  const store = useStore(kind);
  let server: RunningServer;
  let keys: Awaited<ReturnType<typeof testJwks>>;
  let appA: { clientId: string; redirectUri: string; secret: string };
  let appB: { clientId: string; redirectUri: string; secret: string };
  let appC: { clientId: string; redirectUri: string; secret: string };
  // Mutable: a test moves a user to another tenant.
  const carol = { sub: 'carol', password: 'carol-pw', tenant: 'acme', claims: { name: 'Carol' } };
  const dave = { sub: 'dave', password: 'dave-pw', tenant: 'acme' };
  const erin = { sub: 'erin', password: 'erin-pw', tenant: 'globex' };

  beforeAll(async () => {
    keys = await testJwks();
    server = await startServer({ store: store.option(), keys, accounts: testAccounts([carol, dave, erin]), pathPrefix: '/auth2' });
    const a = await server.auth.appRegistrations.create({ name: 'App A', redirectUris: [A], clientType: 'confidential', firstParty: true });
    const b = await server.auth.appRegistrations.create({ name: 'App B', redirectUris: [B], clientType: 'confidential', firstParty: true });
    const c = await server.auth.appRegistrations.create({ name: 'Third party', redirectUris: [C], clientType: 'confidential' });
    appC = { clientId: c.clientId, redirectUri: C, secret: c.clientSecret! };
    appA = { clientId: a.clientId, redirectUri: A, secret: a.clientSecret! };
    appB = { clientId: b.clientId, redirectUri: B, secret: b.clientSecret! };
  });
  afterAll(async () => {
    await server.stop();
  });

  const consentsUrl = () => `${server.baseUrl}/auth2/api/oauth2/consents`;
  async function tokensFor(app: typeof appA, user: { sub: string; password: string }, scope = 'openid scim.read', agent?: UserAgent) {
    const { code, verifier } = await signInForCode(server, app, user, scope, agent);
    const response = await postToken(server.oauthUrl, { grant_type: 'authorization_code', code, redirect_uri: app.redirectUri, code_verifier: verifier }, { authorization: basic(app.clientId, app.secret) });
    expect(response.status).toBe(200);
    return { access: response.body.access_token as string, refresh: response.body.refresh_token as string };
  }
  const list = (token?: string) => fetch(consentsUrl(), { headers: token ? { authorization: `Bearer ${token}` } : {} });
  const revoke = (clientId: string, token: string) =>
    fetch(`${consentsUrl()}/${clientId}`, { method: 'DELETE', headers: { authorization: `Bearer ${token}` } });

  it('lists the caller\'s consents in her tenant, one per app, with the scopes in words', async () => {
    const agent = new UserAgent(server.baseUrl);
    await tokensFor(appA, carol, 'openid scim.read', agent);
    const { access } = await tokensFor(appB, carol, 'openid user.read', agent);
    await tokensFor(appA, dave);
    await tokensFor(appA, erin);
    const response = await list(access);
    expect(response.status).toBe(200);
    expect(response.headers.get('cache-control')).toBe('no-store');
    const { consents } = (await response.json()) as { consents: Array<Record<string, unknown>> };
    expect(consents.map((consent) => consent.client_id).sort()).toEqual([appA.clientId, appB.clientId].sort());
    const a = consents.find((consent) => consent.client_id === appA.clientId)!;
    expect(a).toMatchObject({
      app_name: 'App A',
      scopes: [
        { scope: 'openid', description: 'Know who you are (your user ID)' },
        { scope: 'scim.read', description: 'Read users and groups', api: 'User provisioning' },
      ],
    });
    expect(Date.parse(a.created_at as string)).not.toBeNaN();
    expect(Date.parse(a.updated_at as string)).not.toBeNaN();
    expect(await server.auth.consents.list({ tenant: 'acme', sub: 'carol' })).toHaveLength(2);
  });

  it('re-authorizing updates the one consent instead of piling up', async () => {
    const agent = new UserAgent(server.baseUrl);
    await tokensFor(appA, dave, 'openid scim.read', agent);
    const before = (await server.auth.consents.list({ tenant: 'acme', sub: 'dave' }))[0]!;
    const { access } = await tokensFor(appA, dave, 'openid scim.read user.read', new UserAgent(server.baseUrl));
    const after = (await (await list(access)).json()) as { consents: Array<{ scopes: Array<{ scope: string }>; created_at: string; updated_at: string }> };
    expect(after.consents).toHaveLength(1);
    expect(after.consents[0]!.scopes.map((s) => s.scope)).toEqual(['openid', 'scim.read', 'user.read']);
    expect(after.consents[0]!.created_at).toBe(before.createdAt);
    expect(after.consents[0]!.updated_at > before.updatedAt).toBe(true);
  });

  const authorizeQuery = (app: typeof appA, scope = 'openid scim.read') => new URLSearchParams({
    response_type: 'code', client_id: app.clientId, redirect_uri: app.redirectUri, scope, state: 's',
    code_challenge: 'E9Melhoa2OwvFrEMTJguCHaoeK1t8URWbuGJSstw-cM', code_challenge_method: 'S256',
  });

  async function signInWithoutConsent(app: typeof appA, user: { sub: string; password: string }) {
    const agent = new UserAgent(server.baseUrl);
    const login = await agent.request(`${server.oauthUrl}/authorize?${authorizeQuery(app)}`);
    return agent.submit(login, { username: user.sub, password: user.password });
  }

  it('remembers consent across browsers: a new session signs in without the consent page', async () => {
    await tokensFor(appB, erin);
    const step = await signInWithoutConsent(appB, erin);
    expect(step.html).not.toContain('value="allow"');
    expect(step.location).toContain('code=');
  });

  it('keeps the user\'s decision when a replayed code ended the grant', async () => {
    const { code, verifier } = await signInForCode(server, appA, erin, 'openid scim.read');
    const body = { grant_type: 'authorization_code', code, redirect_uri: A, code_verifier: verifier };
    const auth = { authorization: basic(appA.clientId, appA.secret) };
    const first = await postToken(server.oauthUrl, body, auth);
    expect((await postToken(server.oauthUrl, body, auth)).body.error).toBe('invalid_grant');
    expect((await postToken(server.oauthUrl, { grant_type: 'refresh_token', refresh_token: first.body.refresh_token as string }, auth)).body.error).toBe('invalid_grant');
    const step = await signInWithoutConsent(appA, erin);
    expect(step.location).toContain('code=');
    expect(await server.auth.consents.list({ tenant: 'globex', sub: 'erin' })).toHaveLength(2);
  });

  it('revoking ends refresh tokens and unused codes at once, and the next sign-in asks again', async () => {
    const agent = new UserAgent(server.baseUrl);
    const { access, refresh } = await tokensFor(appB, dave, 'openid scim.read', agent);
    const unused = await signInForCode(server, appB, dave, 'openid scim.read', agent);
    const response = await revoke(appB.clientId, access);
    expect(response.status).toBe(204);
    const auth = { authorization: basic(appB.clientId, appB.secret) };
    expect((await postToken(server.oauthUrl, { grant_type: 'refresh_token', refresh_token: refresh }, auth)).body.error).toBe('invalid_grant');
    const code = await postToken(server.oauthUrl, { grant_type: 'authorization_code', code: unused.code, redirect_uri: B, code_verifier: unused.verifier }, auth);
    expect(code.body.error).toBe('invalid_grant');
    const again = await agent.request(`${server.oauthUrl}/authorize?${authorizeQuery(appB)}`);
    expect(again.html).toContain('value="allow"');
    // Its access token ended with the grant: our own APIs accept live tokens only.
    expect((await revoke(appB.clientId, access)).status).toBe(401);
    expect((await list(access)).status).toBe(401);
    const other = (await tokensFor(appA, dave)).access;
    expect((await revoke(appB.clientId, other)).status).toBe(404);
    expect((await revoke('%', other)).status).toBe(404);
    expect(((await (await revoke('no-such-app', other)).json()) as { error: string }).error).toBe('not_found');
  });

  it('a third-party app sees and revokes only its own consent', async () => {
    const first = await tokensFor(appA, erin);
    const third = await tokensFor(appC, erin, 'openid');
    const listed = (await (await list(third.access)).json()) as { consents: Array<{ client_id: string }> };
    expect(listed.consents.map((consent) => consent.client_id)).toEqual([appC.clientId]);
    const denied = await revoke(appA.clientId, third.access);
    expect(denied.status).toBe(403);
    expect(denied.headers.get('www-authenticate')).toContain('insufficient_scope');
    expect(denied.headers.get('www-authenticate')).toContain("error_description=\"only the platform's own apps may revoke another app's consent\"");
    const auth = { authorization: basic(appA.clientId, appA.secret) };
    expect((await postToken(server.oauthUrl, { grant_type: 'refresh_token', refresh_token: first.refresh }, auth)).status).toBe(200);
    expect((await revoke(appC.clientId, third.access)).status).toBe(204);
  });

  it('one user cannot see or revoke another user\'s consents', async () => {
    const carolTokens = await tokensFor(appA, carol);
    const daveTokens = await tokensFor(appA, dave);
    const listed = (await (await list(daveTokens.access)).json()) as { consents: unknown[] };
    expect(JSON.stringify(listed)).not.toContain('carol');
    expect((await revoke(appA.clientId, daveTokens.access)).status).toBe(204);
    const auth = { authorization: basic(appA.clientId, appA.secret) };
    expect((await postToken(server.oauthUrl, { grant_type: 'refresh_token', refresh_token: carolTokens.refresh }, auth)).status).toBe(200);
  });

  it('a token of the user\'s former tenant is refused; her consents in each tenant stay apart', async () => {
    const mover = { sub: 'carol', password: 'carol-pw' };
    const acme = await tokensFor(appA, mover);
    carol.tenant = 'globex';
    try {
      expect((await list(acme.access)).status).toBe(403);
      expect((await revoke(appA.clientId, acme.access)).status).toBe(403);
      const globex = await tokensFor(appA, mover, 'openid scim.read', new UserAgent(server.baseUrl));
      const listed = (await (await list(globex.access)).json()) as { consents: Array<{ client_id: string }> };
      expect(listed.consents.map((consent) => consent.client_id)).toEqual([appA.clientId]);
      expect((await revoke(appB.clientId, globex.access)).status).toBe(404);
      expect(await server.auth.consents.list({ tenant: 'acme', sub: 'carol' })).toHaveLength(2);
      expect(await server.auth.consents.revoke({ tenant: 'globex', sub: 'carol', clientId: appB.clientId })).toBe(false);
    } finally {
      carol.tenant = 'acme';
    }
  });

  describe('refuses what is not a valid named-user token', () => {
    async function expectRefused(response: Response, status: number, error?: string) {
      expect(response.status).toBe(status);
      const challenge = response.headers.get('www-authenticate') ?? '';
      expect(challenge).toMatch(/^Bearer realm="/);
      if (error) expect(challenge).toContain(`error="${error}"`);
      else expect(challenge).not.toContain('error=');
    }

    it('no token (401, challenge without error), garbage (401 invalid_token)', async () => {
      await expectRefused(await list(), 401);
      await expectRefused(await list('not.a.jwt'), 401, 'invalid_token');
    });

    it('a machine token (403)', async () => {
      const { clientId, clientSecret } = await server.auth.clientConfigurations.create({
        tenant: 'acme', name: 'M2M', category: 'c', resources: { scim: { scopes: ['scim.read'] } },
      });
      const machine = await postToken(server.oauthUrl, 'grant_type=client_credentials', { authorization: basic(clientId, clientSecret) });
      await expectRefused(await list(machine.body.access_token as string), 403, 'insufficient_scope');
    });

    it('an expired token and one signed by a foreign key (401 invalid_token)', async () => {
      const sign = async (jwk: JWK, exp: number) =>
        new SignJWT({ client_id: appA.clientId, tenant: 'acme', scope: 'openid' })
          .setProtectedHeader({ alg: 'ES256', typ: 'at+jwt', kid: jwk.kid! })
          .setSubject('carol').setIssuer(server.auth.issuer).setAudience(`${server.baseUrl}/api`)
          .setIssuedAt(exp - 300).setExpirationTime(exp).setJti('x')
          .sign(await importJWK(jwk, 'ES256'));
      const now = Math.floor(Date.now() / 1000);
      const ours = keys.jwks.keys.find((key) => key.kty === 'EC')!;
      expect((await list((await tokensFor(appA, carol)).access)).status).toBe(200);
      // Signed with our key but of no grant (not one we issued): not live.
      await expectRefused(await list(await sign(ours, now + 300)), 401, 'invalid_token');
      await expectRefused(await list(await sign(ours, now - 60)), 401, 'invalid_token');
      const foreign = (await testJwks(['ES256'])).jwks.keys[0]!;
      await expectRefused(await list(await sign({ ...foreign, kid: ours.kid }, now + 300)), 401, 'invalid_token');
    });
  });
});
