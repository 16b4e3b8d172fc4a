/**
 * Adversarial use of refresh tokens: reuse of rotated tokens (ends the whole grant), another
 * client, wider and narrower scopes, parallel use, expiry with a moved clock, public apps, and
 * malformed refresh requests. A refused request leaves the token usable unless the rule says the
 * grant ends (reuse, a lost race), and then every token of the grant is gone.
 */
import { createLocalJWKSet, jwtVerify, type JSONWebKeySet } from 'jose';
import { alice, testAccounts } from '../support/accounts.js';
import { basic, postToken, type RunningServer, startServer, type TokenCall } from '../support/server.js';
import { signInForCode } from '../support/sign-in.js';
import { STORE_KINDS, useStore } from '../support/stores.js';
import {
  type ConfidentialApp,
  exchangeCode,
  expectOAuthError,
  expectTokens,
  grantExists,
  grantOfCode,
  type PublicApp,
  refresh,
  registerApps,
  storedRefreshToken,
  WEB,
  withClockMoved,
} from './helpers.js';

/** Refresh tokens live 3600 s, rolling (docs/decisions.md, "Refresh tokens"). */
const REFRESH_TTL_MS = 3_600_000;

describe.each(STORE_KINDS)('adversarial refresh tokens (%s store)', (kind) => {
  const store = useStore(kind);
  let server: RunningServer;
  let spa: PublicApp;
  let web: ConfidentialApp;
  let other: ConfidentialApp;
  let jwks: JSONWebKeySet;

  beforeAll(async () => {
    server = await startServer({ store: store.option(), accounts: testAccounts([alice]) });
    ({ spa, web, other } = await registerApps(server));
    jwks = (await (await fetch(`${server.oauthUrl}/jwks`)).json()) as JSONWebKeySet;
  });
  afterAll(async () => {
    await server.stop();
  });

  /** Signs in, exchanges the code; answers the tokens and the grant. */
  async function tokensFor(app: ConfidentialApp = web, scope = 'openid scim.read'): Promise<{ tokens: TokenCall; refreshToken: string; grantId: string }> {
    const { code, verifier } = await signInForCode(server, app, alice, scope);
    const grantId = await grantOfCode(server, code);
    const tokens = await exchangeCode(server, app, code, verifier);
    expectTokens(tokens);
    return { tokens, refreshToken: tokens.body.refresh_token as string, grantId };
  }

  async function scopeClaim(response: TokenCall): Promise<unknown> {
    const { payload } = await jwtVerify(response.body.access_token as string, createLocalJWKSet(jwks), { typ: 'at+jwt' });
    return payload.scope;
  }

  describe('reuse of a rotated refresh token', () => {
    it('ends the whole family: the reused one, its successors and the newest are refused, the grant is gone, the consent stays', async () => {
      const { refreshToken: rt1, grantId } = await tokensFor();
      const second = await refresh(server, web, rt1);
      expectTokens(second);
      const rt2 = second.body.refresh_token as string;
      const third = await refresh(server, web, rt2);
      expectTokens(third);
      const rt3 = third.body.refresh_token as string;
      expect(new Set([rt1, rt2, rt3]).size).toBe(3);

      expectOAuthError(server, await refresh(server, web, rt1), 400, 'invalid_grant');
      expectOAuthError(server, await refresh(server, web, rt3), 400, 'invalid_grant');
      expectOAuthError(server, await refresh(server, web, rt2), 400, 'invalid_grant');
      // Refused because their grant is gone; the entries themselves expire on their own.
      expect(await grantExists(server, grantId)).toBe(false);
      const consents = await server.auth.consents.list({ tenant: alice.tenant, sub: alice.sub });
      expect(consents.map((consent) => consent.clientId)).toContain(web.clientId);
      // The user signs in again and gets a working family of her own.
      const fresh = await tokensFor();
      expect(fresh.grantId).not.toBe(grantId);
      expectTokens(await refresh(server, web, fresh.refreshToken));
    });

    it('a spent token presented by another client is refused without ending the real family', async () => {
      const { refreshToken: rt1 } = await tokensFor();
      const second = await refresh(server, web, rt1);
      expectTokens(second);
      expectOAuthError(server, await refresh(server, other, rt1), 400, 'invalid_grant');
      expectTokens(await refresh(server, web, second.body.refresh_token as string));
    });
  });

  describe('another client', () => {
    it("another confidential app with its own real secret → 400 invalid_grant; the token is not consumed", async () => {
      const { refreshToken } = await tokensFor();
      expectOAuthError(server, await refresh(server, other, refreshToken), 400, 'invalid_grant');
      expect((await storedRefreshToken(server, refreshToken))?.consumed).toBeFalsy();
      expectTokens(await refresh(server, web, refreshToken));
    });

    it('the right client ID with the other app\'s secret → 401 invalid_client; the token still works', async () => {
      const { refreshToken } = await tokensFor();
      expectOAuthError(server, await refresh(server, { ...web, secret: other.secret }, refreshToken), 401, 'invalid_client');
      expectTokens(await refresh(server, web, refreshToken));
    });

    it('a rotated app secret: the old one is refused, the new one refreshes the same token', async () => {
      const app = await server.auth.appRegistrations.create({ name: 'Rotating', redirectUris: [web.redirectUri], clientType: 'confidential' });
      const rotating = { clientId: app.clientId, redirectUri: web.redirectUri, secret: app.clientSecret! };
      const { refreshToken } = await tokensFor(rotating);
      const { clientSecret } = await server.auth.appRegistrations.rotateSecret(app.clientId);
      expectOAuthError(server, await refresh(server, rotating, refreshToken), 401, 'invalid_client');
      expectTokens(await refresh(server, { ...rotating, secret: clientSecret }, refreshToken));
    });
  });

  describe('scope', () => {
    it.each([
      ['a scope held by the user but not granted', 'scim.read user.read'],
      ['only a scope not granted', 'user.read'],
      ['a scope the catalog does not have', 'scim.read payroll.read'],
      ['an OIDC scope not granted', 'openid email'],
      ['a granted scope in another case', 'SCIM.READ'],
    ])('%s → 400 invalid_scope; the token still works with its own scope', async (_name, scope) => {
      const { refreshToken } = await tokensFor(web, 'openid scim.read');
      expectOAuthError(server, await refresh(server, web, refreshToken, { scope }), 400, 'invalid_scope');
      const next = await refresh(server, web, refreshToken);
      expectTokens(next);
      expect(next.body.scope).toBe('openid scim.read');
    });

    it('a narrower scope is granted for that access token only; the next refresh has the whole scope again (RFC 6749 §6)', async () => {
      const { refreshToken, tokens } = await tokensFor(web, 'openid scim.read user.read');
      expect(new Set(String(tokens.body.scope).split(' '))).toEqual(new Set(['openid', 'scim.read', 'user.read']));
      const narrow = await refresh(server, web, refreshToken, { scope: 'scim.read' });
      expectTokens(narrow);
      expect(narrow.body.scope).toBe('scim.read');
      expect(await scopeClaim(narrow)).toBe('scim.read');
      const full = await refresh(server, web, narrow.body.refresh_token as string);
      expectTokens(full);
      expect(new Set(String(full.body.scope).split(' '))).toEqual(new Set(['openid', 'scim.read', 'user.read']));
    });
  });

  describe('interop: a refresh that repeats the original scope (as Authlib sends it)', () => {
    it('offline_access in the refresh\'s scope, asked for at sign-in or not: what a refresh token already is, so ignored', async () => {
      const { refreshToken } = await tokensFor(web, 'openid offline_access scim.read');
      // Authlib's OAuth2Session.refresh_token() sends the scope of the original request again.
      const refreshed = await refresh(server, web, refreshToken, { scope: 'openid offline_access scim.read' });
      expectTokens(refreshed);
      expect(new Set(String(refreshed.body.scope).split(' '))).toEqual(new Set(['openid', 'scim.read']));
      expectTokens(await refresh(server, web, refreshed.body.refresh_token as string, { scope: 'offline_access scim.read' }));
      const { refreshToken: without } = await tokensFor(web, 'openid scim.read');
      const only = await refresh(server, web, without, { scope: 'offline_access' });
      expectTokens(only);
      expect(only.body.scope).toBe('openid scim.read');
    });

    it('a scope beyond the grant is still invalid_scope, offline_access or not', async () => {
      const { refreshToken } = await tokensFor(web, 'openid offline_access scim.read');
      expectOAuthError(server, await refresh(server, web, refreshToken, { scope: 'openid offline_access scim.write' }), 400, 'invalid_scope');
    });
  });

  describe('parallel use of one refresh token', () => {
    it('6 at once: never two chains; every answer with tokens has the same successor, and a refusal ended the grant', async () => {
      const { refreshToken, grantId } = await tokensFor();
      const results = await Promise.all(Array.from({ length: 6 }, () => refresh(server, web, refreshToken)));
      const served = results.filter((result) => result.status === 200);
      for (const result of served) expectTokens(result);
      const refused = results.filter((result) => result.status !== 200);
      for (const result of refused) expectOAuthError(server, result, 400, 'invalid_grant');
      const successors = new Set(served.map((result) => result.body.refresh_token));
      expect(successors.size).toBeLessThanOrEqual(1);
      const [successor] = [...successors] as string[];
      expect(successor).not.toBe(refreshToken);
      // Served once plus one retry at most, unless the others raced ahead of the successor's save.
      if (refused.length > 0) {
        expect(await grantExists(server, grantId)).toBe(false);
        if (successor) expectOAuthError(server, await refresh(server, web, successor), 400, 'invalid_grant');
        return;
      }
      const next = await refresh(server, web, successor!);
      expectTokens(next);
      expect(await grantExists(server, grantId)).toBe(true);
      expectOAuthError(server, await refresh(server, web, refreshToken), 400, 'invalid_grant');
      expect(await grantExists(server, grantId)).toBe(false);
    });
  });

  describe('grants in use do not expire (grantIdleSeconds)', () => {
    it('a refresh gives the grant a whole idle lifetime again', async () => {
      const idle = await startServer({ store: store.option(), accounts: testAccounts([alice]), grantIdleSeconds: 3600 });
      try {
        const app = await idle.auth.appRegistrations.create({ name: 'Idle', redirectUris: [WEB], clientType: 'confidential' });
        const confidential = { clientId: app.clientId, redirectUri: WEB, secret: app.clientSecret! };
        const { code, verifier } = await signInForCode(idle, confidential, alice);
        const tokens = await exchangeCode(idle, confidential, code, verifier);
        expectTokens(tokens);
        // 50 minutes later a refresh; 70 minutes after sign-in the grant's first hour is over, but
        // the refresh gave it another.
        const second = await withClockMoved(50 * 60_000, () => refresh(idle, confidential, tokens.body.refresh_token as string));
        expectTokens(second);
        expectTokens(await withClockMoved(70 * 60_000, () => refresh(idle, confidential, second.body.refresh_token as string)));
      } finally {
        await idle.stop();
      }
    });
  });

  describe('retries: a rotated refresh token presented again (refreshTokenReuseWindowSeconds, 5 s)', () => {
    it('within the window, its successor unused: the same successor and a new access token; the chain goes on', async () => {
      const { refreshToken: rt1, grantId } = await tokensFor();
      const first = await refresh(server, web, rt1);
      expectTokens(first);
      // The client lost that answer and asks again.
      const again = await refresh(server, web, rt1);
      expectTokens(again);
      expect(again.body.refresh_token).toBe(first.body.refresh_token);
      expect(again.body.access_token).not.toBe(first.body.access_token);
      expectTokens(await refresh(server, web, again.body.refresh_token as string));
      expect(await grantExists(server, grantId)).toBe(true);
    });

    it('a second retry within the window: a reuse, the grant ends (a thief after the client\'s retry gets nothing)', async () => {
      const { refreshToken: rt1, grantId } = await tokensFor();
      const first = await refresh(server, web, rt1);
      expectTokens(first);
      expectTokens(await refresh(server, web, rt1));
      for (let attempt = 0; attempt < 3; attempt += 1) expectOAuthError(server, await refresh(server, web, rt1), 400, 'invalid_grant');
      expect(await grantExists(server, grantId)).toBe(false);
      expectOAuthError(server, await refresh(server, web, first.body.refresh_token as string), 400, 'invalid_grant');
    });

    it('each token has its own retry: a retry of the first rotation leaves the second its own', async () => {
      const { refreshToken: rt1, grantId } = await tokensFor();
      const first = await refresh(server, web, rt1);
      expectTokens(await refresh(server, web, rt1));
      const rt2 = first.body.refresh_token as string;
      const second = await refresh(server, web, rt2);
      expectTokens(second);
      const retried = await refresh(server, web, rt2);
      expectTokens(retried);
      expect(retried.body.refresh_token).toBe(second.body.refresh_token);
      expect(await grantExists(server, grantId)).toBe(true);
    });

    it('once its successor was used: a reuse, the grant ends', async () => {
      const { refreshToken: rt1, grantId } = await tokensFor();
      const first = await refresh(server, web, rt1);
      expectTokens(await refresh(server, web, first.body.refresh_token as string));
      expectOAuthError(server, await refresh(server, web, rt1), 400, 'invalid_grant');
      expect(await grantExists(server, grantId)).toBe(false);
    });

    it('after the window, its successor unused: a reuse, the grant ends', async () => {
      const { refreshToken: rt1, grantId } = await tokensFor();
      const first = await refresh(server, web, rt1);
      expectTokens(first);
      await withClockMoved(6_000, async () => {
        expectOAuthError(server, await refresh(server, web, rt1), 400, 'invalid_grant');
      });
      expect(await grantExists(server, grantId)).toBe(false);
      expectOAuthError(server, await refresh(server, web, first.body.refresh_token as string), 400, 'invalid_grant');
    });
  });

  describe('expiry (the clock moved forward, 60 minutes, rolling)', () => {
    it('a token used just before it expires gives a successor good for another hour', async () => {
      const { refreshToken } = await tokensFor();
      const second = await withClockMoved(REFRESH_TTL_MS - 60_000, () => refresh(server, web, refreshToken));
      expectTokens(second);
      const third = await withClockMoved(2 * REFRESH_TTL_MS - 120_000, () => refresh(server, web, second.body.refresh_token as string));
      expectTokens(third);
    });

    it('an expired token → 400 invalid_grant, and the grant is not ended (expiry is no reuse)', async () => {
      const { refreshToken, grantId } = await tokensFor();
      await withClockMoved(REFRESH_TTL_MS + 1_000, async () => {
        expectOAuthError(server, await refresh(server, web, refreshToken), 400, 'invalid_grant');
      });
      expect(await grantExists(server, grantId)).toBe(true);
    });
  });

  describe('malformed refresh requests leave the token usable', () => {
    it.each([
      ['a redirect_uri (parameter of another grant)', { redirect_uri: 'https://portal.example.com/cb' }, 'invalid_request'],
      ['a code (parameter of another grant)', { code: 'x' }, 'invalid_request'],
      ['a code_verifier (parameter of another grant)', { code_verifier: 'a'.repeat(43) }, 'invalid_request'],
    ])('%s → 400 %s', async (_name, extra, error) => {
      const { refreshToken } = await tokensFor();
      expectOAuthError(server, await refresh(server, web, refreshToken, extra), 400, error);
      expectTokens(await refresh(server, web, refreshToken));
    });

    // Was a bug (fixed in src/engine/single-use.ts): the engine checks `resource` only after
    // rotating the refresh token, so this request spent it and the app's retry ended the family.
    it.each([
      ['another resource', () => 'https://evil.example/api'],
      ['the audience with a trailing slash', () => `${server.auth.audience}/`],
    ])('a resource indicator naming %s → 400 invalid_target; the token is not spent, the grant lives', async (_name, resource) => {
      const { refreshToken, grantId } = await tokensFor();
      expectOAuthError(server, await refresh(server, web, refreshToken, { resource: resource() }), 400, 'invalid_target');
      expect((await storedRefreshToken(server, refreshToken))?.consumed).toBeFalsy();
      expectTokens(await refresh(server, web, refreshToken));
      expect(await grantExists(server, grantId)).toBe(true);
    });

    it('control: the audience as the resource indicator is accepted', async () => {
      const { refreshToken } = await tokensFor();
      expectTokens(await refresh(server, web, refreshToken, { resource: server.auth.audience }));
    });

    it('the refresh_token parameter twice → 400 invalid_request', async () => {
      const { refreshToken } = await tokensFor();
      const body = `grant_type=refresh_token&refresh_token=${refreshToken}&refresh_token=${refreshToken}`;
      expectOAuthError(server, await postToken(server.oauthUrl, body, { authorization: basic(web.clientId, web.secret) }), 400, 'invalid_request');
      expectTokens(await refresh(server, web, refreshToken));
    });

    it('no refresh_token → 400 invalid_request', async () => {
      expectOAuthError(server, await postToken(server.oauthUrl, { grant_type: 'refresh_token' }, { authorization: basic(web.clientId, web.secret) }), 400, 'invalid_request');
    });

    it.each([
      ['the last character changed', (t: string) => t.slice(0, -1) + (t.endsWith('A') ? 'B' : 'A')],
      ['truncated', (t: string) => t.slice(0, -1)],
      ['in upper case', (t: string) => t.toUpperCase()],
      ['with a NUL appended', (t: string) => `${t}\u0000`],
    ])('a token %s → 400 invalid_grant; the real one still works', async (_name, tamper) => {
      const { refreshToken } = await tokensFor();
      expectOAuthError(server, await refresh(server, web, tamper(refreshToken)), 400, 'invalid_grant');
      expectTokens(await refresh(server, web, refreshToken));
    });

    it('an access token or an ID token as the refresh token → 400 invalid_grant', async () => {
      const { tokens, refreshToken } = await tokensFor();
      for (const field of ['access_token', 'id_token']) {
        expectOAuthError(server, await refresh(server, web, tokens.body[field] as string), 400, 'invalid_grant');
      }
      expectTokens(await refresh(server, web, refreshToken));
    });
  });

  describe('public apps', () => {
    it('get no refresh token, even asking for offline_access', async () => {
      const { code, verifier } = await signInForCode(server, spa, alice, 'openid offline_access scim.read');
      const tokens = await exchangeCode(server, spa, code, verifier);
      expectTokens(tokens);
      expect(tokens.body).not.toHaveProperty('refresh_token');
    });

    it("cannot use a confidential app's refresh token by naming themselves (client_id only) → 401 invalid_client; the token still works", async () => {
      const { refreshToken } = await tokensFor();
      const response = await postToken(server.oauthUrl, { grant_type: 'refresh_token', client_id: spa.clientId, refresh_token: refreshToken });
      expectOAuthError(server, response, 401, 'invalid_client');
      expectTokens(await refresh(server, web, refreshToken));
    });

    it('an app turned public loses its refresh tokens: no secret works any more', async () => {
      const app = await server.auth.appRegistrations.create({ name: 'Turning', redirectUris: [web.redirectUri], clientType: 'confidential' });
      const turning = { clientId: app.clientId, redirectUri: web.redirectUri, secret: app.clientSecret! };
      const { refreshToken } = await tokensFor(turning);
      await server.auth.appRegistrations.update(app.clientId, { clientType: 'public' });
      expectOAuthError(server, await refresh(server, turning, refreshToken), 401, 'invalid_client');
      const asPublic = await postToken(server.oauthUrl, { grant_type: 'refresh_token', client_id: app.clientId, refresh_token: refreshToken });
      expectOAuthError(server, asPublic, 401, 'invalid_client');
    });
  });
});
