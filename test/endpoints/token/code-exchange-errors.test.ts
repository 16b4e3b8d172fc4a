import { alice, testAccounts } from '../../support/accounts.js';
import { startRedis, type RedisServer } from '../../support/redis.js';
import { basic, postToken, startServer, type RunningServer } from '../../support/server.js';
import { signInForCode } from '../../support/sign-in.js';
import { STORE_KINDS, useStore } from '../../support/stores.js';
import { testJwks } from '../../support/keys.js';

const SPA = 'http://localhost:5173/cb';
const WEB = 'https://portal.example.com/cb';

describe.each(STORE_KINDS)('POST /oauth2/token, authorization_code and refresh_token errors (%s store)', (kind) => {
  const store = useStore(kind);
  let server: RunningServer;
  let spa: { clientId: string; redirectUri: string };
  let web: { clientId: string; redirectUri: string; secret: string };
  let other: { clientId: string; redirectUri: string; secret: string };

  beforeAll(async () => {
    server = await startServer({ store: store.option(), accounts: testAccounts([alice]) });
    spa = { clientId: (await server.auth.appRegistrations.create({ name: 'SPA', redirectUris: [SPA], clientType: 'public' })).clientId, redirectUri: SPA };
    const w = await server.auth.appRegistrations.create({ name: 'Portal', redirectUris: [WEB], clientType: 'confidential' });
    web = { clientId: w.clientId, redirectUri: WEB, secret: w.clientSecret! };
    const o = await server.auth.appRegistrations.create({ name: 'Other', redirectUris: [WEB], clientType: 'confidential' });
    other = { clientId: o.clientId, redirectUri: WEB, secret: o.clientSecret! };
  });
  afterAll(async () => {
    await server.stop();
  });

  const exchangePublic = (code: string, verifier: string, extra: Record<string, string> = {}) =>
    postToken(server.oauthUrl, { grant_type: 'authorization_code', client_id: spa.clientId, code, redirect_uri: SPA, code_verifier: verifier, ...extra });
  const exchangeWeb = (code: string, verifier: string, extra: Record<string, string> = {}, secret = web.secret) =>
    postToken(server.oauthUrl, { grant_type: 'authorization_code', code, redirect_uri: WEB, code_verifier: verifier, ...extra }, { authorization: basic(web.clientId, secret) });

  it('a replayed code: invalid_grant, and what the first exchange issued is revoked', async () => {
    const { code, verifier } = await signInForCode(server, web, alice);
    const first = await exchangeWeb(code, verifier);
    expect(first.status).toBe(200);
    const replay = await exchangeWeb(code, verifier);
    expect(replay.status).toBe(400);
    expect(replay.body.error).toBe('invalid_grant');
    const refresh = await postToken(server.oauthUrl, { grant_type: 'refresh_token', refresh_token: first.body.refresh_token as string }, { authorization: basic(web.clientId, web.secret) });
    expect(refresh.body.error).toBe('invalid_grant');
  });

  it('a redirect_uri that differs from the authorize one: invalid_grant', async () => {
    const { code, verifier } = await signInForCode(server, spa, alice);
    const response = await exchangePublic(code, verifier, { redirect_uri: `${SPA}/` });
    expect(response.body.error).toBe('invalid_grant');
  });

  it('a PKCE mismatch: invalid_grant, and the code is still good with the right verifier', async () => {
    const { code, verifier } = await signInForCode(server, spa, alice);
    const wrong = await exchangePublic(code, 'A'.repeat(43));
    expect(wrong.status).toBe(400);
    expect(wrong.body.error).toBe('invalid_grant');
    expect((await exchangePublic(code, verifier)).status).toBe(200);
  });

  it.each([
    ['42 characters', 'a'.repeat(42)],
    ['129 characters', 'a'.repeat(129)],
    ['an illegal character', `${'a'.repeat(42)}+`],
  ])('a code_verifier of %s: invalid_request', async (_name, verifier) => {
    const { code } = await signInForCode(server, spa, alice);
    const response = await exchangePublic(code, verifier);
    expect(response.body.error).toBe('invalid_request');
  });

  it('a public app without code_verifier: invalid_request', async () => {
    const { code } = await signInForCode(server, spa, alice);
    const response = await postToken(server.oauthUrl, { grant_type: 'authorization_code', client_id: spa.clientId, code, redirect_uri: SPA });
    expect(response.body.error).toBe('invalid_request');
  });

  it('a secret with a public app: invalid_client', async () => {
    const { code, verifier } = await signInForCode(server, spa, alice);
    const response = await postToken(
      server.oauthUrl,
      { grant_type: 'authorization_code', code, redirect_uri: SPA, code_verifier: verifier },
      { authorization: basic(spa.clientId, 'any-secret') },
    );
    expect(response.status).toBe(401);
    expect(response.body.error).toBe('invalid_client');
  });

  it('a wrong secret, or a confidential app without Basic: invalid_client', async () => {
    const { code, verifier } = await signInForCode(server, web, alice);
    expect((await exchangeWeb(code, verifier, {}, 'wrong')).body.error).toBe('invalid_client');
    const bodyOnly = await postToken(server.oauthUrl, { grant_type: 'authorization_code', client_id: web.clientId, code, redirect_uri: WEB, code_verifier: verifier });
    expect(bodyOnly.status).toBe(401);
    expect(bodyOnly.body.error).toBe('invalid_client');
    expect((await exchangeWeb(code, verifier)).status).toBe(200);
  });

  it('a code of another app: invalid_grant', async () => {
    const { code, verifier } = await signInForCode(server, web, alice);
    const response = await postToken(server.oauthUrl, { grant_type: 'authorization_code', code, redirect_uri: WEB, code_verifier: verifier }, { authorization: basic(other.clientId, other.secret) });
    expect(response.body.error).toBe('invalid_grant');
  });

  it('a wrong parameter set: invalid_request', async () => {
    const { code, verifier } = await signInForCode(server, web, alice);
    expect((await exchangeWeb(code, verifier, { refresh_token: 'x' })).body.error).toBe('invalid_request');
    const noRedirect = await postToken(server.oauthUrl, { grant_type: 'authorization_code', code, code_verifier: verifier }, { authorization: basic(web.clientId, web.secret) });
    expect(noRedirect.body.error).toBe('invalid_request');
    const noCode = await postToken(server.oauthUrl, { grant_type: 'authorization_code', redirect_uri: WEB }, { authorization: basic(web.clientId, web.secret) });
    expect(noCode.body.error).toBe('invalid_request');
    expect((await exchangeWeb(code, verifier)).status).toBe(200);
  });

  it('an unknown code: invalid_grant', async () => {
    expect((await exchangeWeb('no-such-code', 'a'.repeat(43))).body.error).toBe('invalid_grant');
  });

  it('public apps get no refresh token and cannot use the refresh grant', async () => {
    const { code, verifier } = await signInForCode(server, spa, alice, 'openid offline_access scim.read');
    const tokens = await exchangePublic(code, verifier);
    expect(tokens.status).toBe(200);
    expect(tokens.body).not.toHaveProperty('refresh_token');
    const refresh = await postToken(server.oauthUrl, { grant_type: 'refresh_token', client_id: spa.clientId, refresh_token: 'anything' });
    expect(refresh.status).toBe(401);
    expect(refresh.body.error).toBe('invalid_client');
  });

  it('refresh: cross-client and unknown tokens are invalid_grant; a wider scope is invalid_scope', async () => {
    const { code, verifier } = await signInForCode(server, web, alice, 'openid scim.read');
    const { body } = await exchangeWeb(code, verifier);
    const rt = body.refresh_token as string;
    const crossClient = await postToken(server.oauthUrl, { grant_type: 'refresh_token', refresh_token: rt }, { authorization: basic(other.clientId, other.secret) });
    expect(crossClient.body.error).toBe('invalid_grant');
    const wider = await postToken(server.oauthUrl, { grant_type: 'refresh_token', refresh_token: rt, scope: 'scim.read user.read' }, { authorization: basic(web.clientId, web.secret) });
    expect(wider.body.error).toBe('invalid_scope');
    const ok = await postToken(server.oauthUrl, { grant_type: 'refresh_token', refresh_token: rt }, { authorization: basic(web.clientId, web.secret) });
    expect(ok.status).toBe(200);
    expect(ok.body.scope).toBe('openid scim.read');
  });

  if (kind === 'redis') {
    it('stores the code for 300 s and the refresh token for 3600 s', async () => {
      const redis = store.redis!.client();
      const before = new Set(await redis.keys('*AuthorizationCode*'));
      const { code, verifier } = await signInForCode(server, web, alice);
      const codeKey = (await redis.keys('*AuthorizationCode*')).find((key) => !before.has(key))!;
      expect(await redis.ttl(codeKey)).toBeGreaterThan(290);
      expect(await redis.ttl(codeKey)).toBeLessThanOrEqual(300);
      const beforeRt = new Set(await redis.keys('*RefreshToken*'));
      await exchangeWeb(code, verifier);
      const rtKey = (await redis.keys('*RefreshToken*')).find((key) => !beforeRt.has(key))!;
      expect(await redis.ttl(rtKey)).toBeGreaterThan(3590);
      expect(await redis.ttl(rtKey)).toBeLessThanOrEqual(3600);
    });
  }
});

describe('races between two server instances sharing Redis', () => {
  let redis: RedisServer;
  let a: RunningServer;
  let b: RunningServer;
  let web: { clientId: string; redirectUri: string; secret: string };

  beforeAll(async () => {
    redis = await startRedis();
    const keys = await testJwks();
    const shared = { store: { type: 'redis' as const, url: redis.url }, keys, cookieKeys: ['k'.repeat(32)], accounts: testAccounts([alice]) };
    a = await startServer(shared);
    // Instances behind one load balancer share the public base URL (issuer and audience).
    b = await startServer({ ...shared, baseUrl: a.baseUrl });
    const w = await a.auth.appRegistrations.create({ name: 'Portal', redirectUris: [WEB], clientType: 'confidential' });
    web = { clientId: w.clientId, redirectUri: WEB, secret: w.clientSecret! };
  });
  afterAll(async () => {
    await a.stop();
    await b.stop();
    await redis.stop();
  });

  it('one code redeemed in parallel on both: exactly one 200', async () => {
    const { code, verifier } = await signInForCode(a, web, alice);
    const body = { grant_type: 'authorization_code', code, redirect_uri: WEB, code_verifier: verifier };
    const auth = { authorization: basic(web.clientId, web.secret) };
    const results = await Promise.all([a, b, a, b].map((server) => postToken(server.oauthUrl, body, auth)));
    expect(results.filter((result) => result.status === 200)).toHaveLength(1);
    expect(results.filter((result) => result.body.error === 'invalid_grant')).toHaveLength(3);
  });

  it('one refresh token used in parallel on both: never two chains; past the one retry it is a reuse', async () => {
    const { code, verifier } = await signInForCode(a, web, alice);
    const auth = { authorization: basic(web.clientId, web.secret) };
    const tokens = await postToken(a.oauthUrl, { grant_type: 'authorization_code', code, redirect_uri: WEB, code_verifier: verifier }, auth);
    const body = { grant_type: 'refresh_token', refresh_token: tokens.body.refresh_token as string };
    const results = await Promise.all([a, b, a, b].map((server) => postToken(server.oauthUrl, body, auth)));
    const served = results.filter((result) => result.status === 200);
    expect(served.length).toBeGreaterThan(0);
    expect(new Set(served.map((result) => result.body.refresh_token)).size).toBe(1);
    const refused = results.filter((result) => result.status !== 200);
    for (const result of refused) expect(result.body.error).toBe('invalid_grant');
    const successor = served[0]!.body.refresh_token as string;
    const next = await postToken(b.oauthUrl, { grant_type: 'refresh_token', refresh_token: successor }, auth);
    // A refusal among them was a reuse: the grant, the successor with it, has ended.
    if (refused.length > 0) {
      expect(next.body.error).toBe('invalid_grant');
      return;
    }
    expect(next.status).toBe(200);
    expect((await postToken(a.oauthUrl, { grant_type: 'refresh_token', refresh_token: next.body.refresh_token as string }, auth)).status).toBe(200);
    const reused = await postToken(a.oauthUrl, body, auth);
    expect(reused.body.error).toBe('invalid_grant');
  });
});
