/**
 * Adversarial use of authorization codes: replay, another client, another redirect URI, expiry
 * (with a moved clock), tampered values, type confusion, and parallel redemption in one process and
 * across two processes sharing one Redis. A refused attempt leaves the code redeemable unless the
 * rule says it ends the grant (a replay), and then everything of that grant is gone.
 */
import { spawn, type ChildProcess } from 'node:child_process';
import { createServer } from 'node:http';
import type { AddressInfo } from 'node:net';
import { existsSync } from 'node:fs';
import { join } from 'node:path';
import { alice, testAccounts } from '../support/accounts.js';
import { testJwks } from '../support/keys.js';
import { startRedis, type RedisServer } from '../support/redis.js';
import { basic, postToken, type RunningServer, startServer, type TokenCall } from '../support/server.js';
import { signInForCode } from '../support/sign-in.js';
import { STORE_KINDS, useStore } from '../support/stores.js';
import { UserAgent } from '../support/user-agent.js';
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
  SPA,
  storedCode,
  storedRefreshToken,
  WEB,
  withClockMoved,
} from './helpers.js';

/** Authorization codes live 300 s (docs/decisions.md; engine/configuration.ts). */
const CODE_TTL_MS = 300_000;


function statusLines(results: TokenCall[]): string[] {
  return results.map((result) => `${result.status} ${String(result.body.error ?? '')}`.trim()).sort();
}

describe.each(STORE_KINDS)('adversarial authorization codes (%s store)', (kind) => {
  const store = useStore(kind);
  let server: RunningServer;
  let spa: PublicApp;
  let spa2: PublicApp;
  let web: ConfidentialApp;
  let other: ConfidentialApp;

  beforeAll(async () => {
    server = await startServer({ store: store.option(), accounts: testAccounts([alice]) });
    ({ spa, web, other } = await registerApps(server));
    spa2 = { clientId: (await server.auth.appRegistrations.create({ name: 'SPA 2', redirectUris: [SPA], clientType: 'public' })).clientId, redirectUri: SPA };
  });
  afterAll(async () => {
    await server.stop();
  });

  describe('replay', () => {
    it('confidential app: invalid_grant; the refresh tokens of that exchange stop working, the user\'s other sign-ins do not', async () => {
      // The same user signed in to the app on another device first: the same grant (her consent).
      const other = await signInForCode(server, web, alice, 'openid scim.read', new UserAgent(server.baseUrl));
      const otherTokens = await exchangeCode(server, web, other.code, other.verifier);
      expectTokens(otherTokens);
      const { code, verifier } = await signInForCode(server, web, alice);
      const grantId = await grantOfCode(server, code);
      expect(await grantOfCode(server, other.code)).toBe(grantId);
      const first = await exchangeCode(server, web, code, verifier);
      expectTokens(first);
      const rotated = await refresh(server, web, first.body.refresh_token as string);
      expectTokens(rotated);

      expectOAuthError(server, await exchangeCode(server, web, code, verifier), 400, 'invalid_grant');

      // RFC 6749 §4.1.2: what the code issued is revoked, the whole chain of its refresh tokens.
      expectOAuthError(server, await refresh(server, web, rotated.body.refresh_token as string), 400, 'invalid_grant');
      expect(await storedRefreshToken(server, first.body.refresh_token as string)).toBeUndefined();
      expect(await storedRefreshToken(server, rotated.body.refresh_token as string)).toBeUndefined();
      // Its access tokens too (the code's and the refresh's), at userinfo and everywhere we check.
      const userinfo = async (token: string) => (await fetch(`${server.oauthUrl}/userinfo`, { headers: { authorization: `Bearer ${token}` } })).status;
      expect(await userinfo(first.body.access_token as string)).toBe(401);
      expect(await userinfo(rotated.body.access_token as string)).toBe(401);
      // The grant, the consent and the other device's tokens live on.
      expect(await userinfo(otherTokens.body.access_token as string)).toBe(200);
      expect(await grantExists(server, grantId)).toBe(true);
      expectTokens(await refresh(server, web, otherTokens.body.refresh_token as string));
      const consents = await server.auth.consents.list({ tenant: alice.tenant, sub: alice.sub });
      expect(consents.map((consent) => consent.clientId)).toContain(web.clientId);
    });

    it('public app: invalid_grant, and the grant lives on', async () => {
      const { code, verifier } = await signInForCode(server, spa, alice);
      const grantId = await grantOfCode(server, code);
      expectTokens(await exchangeCode(server, spa, code, verifier));
      expectOAuthError(server, await exchangeCode(server, spa, code, verifier), 400, 'invalid_grant');
      expect(await grantExists(server, grantId)).toBe(true);
    });

    it("a host that serves the engine's own callback (auth.provider, without our token endpoint in front): a public app's code is still used once", async () => {
      const { code, verifier } = await signInForCode(server, spa, alice);
      const engineOnly = createServer(server.auth.provider.callback());
      await new Promise<void>((resolve) => engineOnly.listen(0, '127.0.0.1', resolve));
      try {
        const url = `http://127.0.0.1:${(engineOnly.address() as AddressInfo).port}`;
        const body = { grant_type: 'authorization_code', code, code_verifier: verifier, redirect_uri: spa.redirectUri, client_id: spa.clientId };
        expect((await postToken(url, body)).status).toBe(200);
        const again = await postToken(url, body);
        expect({ status: again.status, error: again.body.error }).toEqual({ status: 400, error: 'invalid_grant' });
      } finally {
        await new Promise((resolve) => engineOnly.close(resolve));
      }
    });

    it('every further replay is invalid_grant too', async () => {
      const { code, verifier } = await signInForCode(server, web, alice);
      expectTokens(await exchangeCode(server, web, code, verifier));
      for (let attempt = 0; attempt < 3; attempt += 1) {
        expectOAuthError(server, await exchangeCode(server, web, code, verifier), 400, 'invalid_grant');
      }
    });

    it('a replay without the verifier is refused and does not end the grant (only the holder of the verifier can)', async () => {
      const { code, verifier } = await signInForCode(server, web, alice);
      const first = await exchangeCode(server, web, code, verifier);
      expectTokens(first);
      expectOAuthError(server, await exchangeCode(server, web, code, 'A'.repeat(43)), 400, 'invalid_grant');
      expectTokens(await refresh(server, web, first.body.refresh_token as string));
    });

    it("a replay by another client is refused and does not end the real app's grant", async () => {
      const { code, verifier } = await signInForCode(server, web, alice);
      const first = await exchangeCode(server, web, code, verifier);
      expectTokens(first);
      expectOAuthError(server, await exchangeCode(server, other, code, verifier, { redirect_uri: WEB }), 400, 'invalid_grant');
      expectTokens(await refresh(server, web, first.body.refresh_token as string));
    });
  });

  describe('a code of another app', () => {
    it('confidential A redeemed by confidential B (same redirect URI registered on both): invalid_grant; A still redeems it', async () => {
      const { code, verifier } = await signInForCode(server, web, alice);
      expectOAuthError(server, await exchangeCode(server, other, code, verifier, { redirect_uri: WEB }), 400, 'invalid_grant');
      expect((await storedCode(server, code))?.consumed).toBeUndefined();
      expectTokens(await exchangeCode(server, web, code, verifier));
    });

    it('public A redeemed by public B (same redirect URI): invalid_grant; A still redeems it', async () => {
      const { code, verifier } = await signInForCode(server, spa, alice);
      expectOAuthError(server, await exchangeCode(server, spa2, code, verifier), 400, 'invalid_grant');
      expectTokens(await exchangeCode(server, spa, code, verifier));
    });

    it("public A's code redeemed by confidential B with B's real secret: invalid_grant; A still redeems it", async () => {
      const { code, verifier } = await signInForCode(server, spa, alice);
      const response = await postToken(
        server.oauthUrl,
        { grant_type: 'authorization_code', code, redirect_uri: SPA, code_verifier: verifier },
        { authorization: basic(web.clientId, web.secret) },
      );
      expectOAuthError(server, response, 400, 'invalid_grant');
      expectTokens(await exchangeCode(server, spa, code, verifier));
    });

    it("confidential A's code redeemed by public B naming itself: invalid_grant; A still redeems it", async () => {
      const { code, verifier } = await signInForCode(server, web, alice);
      const response = await postToken(server.oauthUrl, { grant_type: 'authorization_code', client_id: spa.clientId, code, redirect_uri: WEB, code_verifier: verifier });
      expectOAuthError(server, response, 400, 'invalid_grant');
      expectTokens(await exchangeCode(server, web, code, verifier));
    });
  });

  describe('redirect_uri at the token endpoint', () => {
    it.each([
      ['another URI registered for the same app', `${WEB}2`],
      ['a trailing slash', `${WEB}/`],
      ['an upper-case host', WEB.replace('portal.example.com', 'PORTAL.example.com')],
      ['an added query', `${WEB}?x=1`],
      ['an added fragment', `${WEB}#x`],
      ['the explicit default port', WEB.replace('.com/', '.com:443/')],
      ['a percent-encoded path', WEB.replace('/cb', '/%63b')],
      ['http instead of https', WEB.replace('https:', 'http:')],
      ["another app's URI", 'https://other.example.com/cb'],
    ])('%s → 400 invalid_grant; the code still works with the authorize one', async (_name, uri) => {
      const { code, verifier } = await signInForCode(server, web, alice);
      expectOAuthError(server, await exchangeCode(server, web, code, verifier, { redirect_uri: uri }), 400, 'invalid_grant');
      expectTokens(await exchangeCode(server, web, code, verifier));
    });

    it.each([
      ['missing', undefined],
      ['empty (counts as omitted)', ''],
    ])('%s → 400 invalid_request; the code still works', async (_name, uri) => {
      const { code, verifier } = await signInForCode(server, web, alice);
      const body: Record<string, string> = { grant_type: 'authorization_code', code, code_verifier: verifier };
      if (uri !== undefined) body.redirect_uri = uri;
      expectOAuthError(server, await postToken(server.oauthUrl, body, { authorization: basic(web.clientId, web.secret) }), 400, 'invalid_request');
      expectTokens(await exchangeCode(server, web, code, verifier));
    });
  });

  describe('expiry (the clock moved forward, code lifetime 300 s)', () => {
    it('a code is still good just before it expires', async () => {
      const { code, verifier } = await signInForCode(server, web, alice);
      const response = await withClockMoved(CODE_TTL_MS - 5_000, () => exchangeCode(server, web, code, verifier));
      expectTokens(response);
    });

    it('an expired code → 400 invalid_grant, and nothing is issued', async () => {
      const { code, verifier } = await signInForCode(server, web, alice);
      const grantId = await grantOfCode(server, code);
      await withClockMoved(CODE_TTL_MS + 1_000, async () => {
        expectOAuthError(server, await exchangeCode(server, web, code, verifier), 400, 'invalid_grant');
        expectOAuthError(server, await exchangeCode(server, web, code, verifier), 400, 'invalid_grant');
      });
      // An expired code is no replay: the grant (the user's consent) is untouched.
      expect(await grantExists(server, grantId)).toBe(true);
    });

    it('a public app: the same', async () => {
      const { code, verifier } = await signInForCode(server, spa, alice);
      await withClockMoved(CODE_TTL_MS + 60_000, async () => {
        expectOAuthError(server, await exchangeCode(server, spa, code, verifier), 400, 'invalid_grant');
      });
    });
  });

  describe('tampered and confused values', () => {
    const tamper: Array<[string, (code: string) => string]> = [
      ['with its last character changed', (code) => code.slice(0, -1) + (code.endsWith('A') ? 'B' : 'A')],
      ['truncated', (code) => code.slice(0, -1)],
      ['extended', (code) => `${code}A`],
      ['doubled', (code) => code + code],
      ['in upper case', (code) => code.toUpperCase()],
      ['with a store key prefix', (code) => `AuthorizationCode:${code}`],
      ['behind a path traversal', (code) => `../${code}`],
    ];

    it.each(tamper)('a code %s → 400 invalid_grant; the real one still works', async (_name, change) => {
      const { code, verifier } = await signInForCode(server, web, alice);
      expectOAuthError(server, await exchangeCode(server, web, change(code), verifier), 400, 'invalid_grant');
      expectTokens(await exchangeCode(server, web, code, verifier));
    });

    it('a refresh token, an access token or an ID token presented as a code → 400 invalid_grant', async () => {
      const { code, verifier } = await signInForCode(server, web, alice);
      const tokens = await exchangeCode(server, web, code, verifier);
      expectTokens(tokens);
      const pending = await signInForCode(server, web, alice);
      for (const field of ['refresh_token', 'access_token', 'id_token']) {
        expectOAuthError(server, await exchangeCode(server, web, tokens.body[field] as string, pending.verifier), 400, 'invalid_grant');
      }
      // Neither the refresh token nor the pending code was touched.
      expectTokens(await refresh(server, web, tokens.body.refresh_token as string));
      expectTokens(await exchangeCode(server, web, pending.code, pending.verifier));
    });

    // Was a bug (fixed in src/engine/single-use.ts): the engine checks `resource` only after
    // consuming the code, so this request burnt it and the app's retry ended the user's grant.
    it.each([
      ['another resource', () => 'https://evil.example/api'],
      ['the audience with a trailing slash', () => `${server.auth.audience}/`],
      ['a relative reference', () => 'api'],
    ])('a resource indicator naming %s → 400 invalid_target; the code is not consumed, the grant lives', async (_name, resource) => {
      const { code, verifier } = await signInForCode(server, web, alice);
      const grantId = await grantOfCode(server, code);
      expectOAuthError(server, await exchangeCode(server, web, code, verifier, { resource: resource() }), 400, 'invalid_target');
      expect((await storedCode(server, code))?.consumed).toBeFalsy();
      expectTokens(await exchangeCode(server, web, code, verifier));
      expect(await grantExists(server, grantId)).toBe(true);
    });

    it('control: the audience as the resource indicator is accepted', async () => {
      const { code, verifier } = await signInForCode(server, web, alice);
      expectTokens(await exchangeCode(server, web, code, verifier, { resource: server.auth.audience }));
    });

    it('a code presented as a refresh token → 400 invalid_grant; the code still works', async () => {
      const { code, verifier } = await signInForCode(server, web, alice);
      expectOAuthError(server, await refresh(server, web, code), 400, 'invalid_grant');
      expectTokens(await exchangeCode(server, web, code, verifier));
    });

    it("two codes with each other's verifiers → invalid_grant both; each still works with its own", async () => {
      const a = await signInForCode(server, web, alice);
      const b = await signInForCode(server, web, alice);
      expectOAuthError(server, await exchangeCode(server, web, a.code, b.verifier), 400, 'invalid_grant');
      expectOAuthError(server, await exchangeCode(server, web, b.code, a.verifier), 400, 'invalid_grant');
      expectTokens(await exchangeCode(server, web, a.code, a.verifier));
      expectTokens(await exchangeCode(server, web, b.code, b.verifier));
    });

    it('a code whose consent was revoked before it was used → 400 invalid_grant', async () => {
      const { code, verifier } = await signInForCode(server, web, alice);
      expect(await server.auth.consents.revoke({ tenant: alice.tenant, sub: alice.sub, clientId: web.clientId })).toBe(true);
      expectOAuthError(server, await exchangeCode(server, web, code, verifier), 400, 'invalid_grant');
    });
  });

  describe('parallel redemption in one process', () => {
    it('one code sent 6 times at once: exactly one 200, five invalid_grant, and what the 200 issued ends; the grant lives', async () => {
      const { code, verifier } = await signInForCode(server, web, alice);
      const grantId = await grantOfCode(server, code);
      const results = await Promise.all(Array.from({ length: 6 }, () => exchangeCode(server, web, code, verifier)));
      expect(statusLines(results)).toEqual(['200', ...Array(5).fill('400 invalid_grant')]);
      for (const loser of results.filter((result) => result.status !== 200)) expectOAuthError(server, loser, 400, 'invalid_grant');
      const winner = results.find((result) => result.status === 200)!;
      expectOAuthError(server, await refresh(server, web, winner.body.refresh_token as string), 400, 'invalid_grant');
      expect(await grantExists(server, grantId)).toBe(true);
    });

    it('a public app (no refresh token): exactly one 200, five invalid_grant without tokens, and the 200\'s access token ends', async () => {
      const { code, verifier } = await signInForCode(server, spa, alice);
      const grantId = await grantOfCode(server, code);
      const results = await Promise.all(Array.from({ length: 6 }, () => exchangeCode(server, spa, code, verifier)));
      expect(statusLines(results)).toEqual(['200', ...Array(5).fill('400 invalid_grant')]);
      for (const loser of results.filter((result) => result.status !== 200)) expectOAuthError(server, loser, 400, 'invalid_grant');
      const winner = results.find((result) => result.status === 200)!;
      expect(winner.body.refresh_token).toBeUndefined();
      const userinfo = await fetch(`${server.oauthUrl}/userinfo`, { headers: { authorization: `Bearer ${winner.body.access_token as string}` } });
      expect(userinfo.status).toBe(401);
      expect(await grantExists(server, grantId)).toBe(true);
    });
  });
});

describe('parallel redemption across two processes sharing one Redis', () => {
  const script = join(process.cwd(), 'test/support/second-instance.mjs');
  const KEY_PREFIX = 'race:';
  let redis: RedisServer;
  let server: RunningServer;
  let child: ChildProcess | undefined;
  let childOauthUrl: string;
  let web: ConfidentialApp;

  beforeAll(async () => {
    if (!existsSync(join(process.cwd(), 'dist/src/index.js'))) throw new Error('run `npm run build` first (the test command does)');
    redis = await startRedis();
    const keys = await testJwks();
    const cookieKeys = ['c'.repeat(32)];
    server = await startServer({ store: { type: 'redis', url: redis.url, keyPrefix: KEY_PREFIX }, keys, cookieKeys, accounts: testAccounts([alice]) });
    const started = spawn(process.execPath, [script], {
      env: {
        ...process.env,
        SECOND_INSTANCE_OPTIONS: JSON.stringify({
          baseUrl: server.baseUrl, redisUrl: redis.url, keyPrefix: KEY_PREFIX, jwks: keys.jwks, cookieKeys, accounts: [alice],
        }),
      },
      stdio: ['pipe', 'pipe', 'pipe'],
    });
    child = started;
    let output = '';
    started.stderr!.on('data', (chunk: Buffer) => (output += chunk.toString()));
    const port = await new Promise<number>((resolve, reject) => {
      let line = '';
      started.stdout!.on('data', (chunk: Buffer) => {
        line += chunk.toString();
        const match = /\{"port":(\d+)\}/.exec(line);
        if (match) resolve(Number(match[1]));
      });
      started.once('exit', (code) => reject(new Error(`second instance exited (${String(code)}):\n${output}`)));
      setTimeout(() => reject(new Error(`second instance did not start:\n${output}`)), 20_000).unref();
    });
    childOauthUrl = `http://127.0.0.1:${port}/oauth2`;
    const created = await server.auth.appRegistrations.create({ name: 'Portal', redirectUris: [WEB], clientType: 'confidential' });
    web = { clientId: created.clientId, redirectUri: WEB, secret: created.clientSecret! };
  });
  afterAll(async () => {
    if (child?.pid !== undefined && child.exitCode === null) {
      const exited = new Promise((resolve) => child!.once('exit', resolve));
      process.kill(child.pid, 'SIGTERM');
      await exited;
    }
    await server?.stop();
    await redis?.stop();
  });

  const exchangeAt = (oauthUrl: string, code: string, verifier: string) =>
    postToken(oauthUrl, { grant_type: 'authorization_code', code, redirect_uri: WEB, code_verifier: verifier }, { authorization: basic(web.clientId, web.secret) });

  it('the second process serves the same issuer, keys and clients', async () => {
    const { code, verifier } = await signInForCode(server, web, alice);
    const tokens = await exchangeAt(childOauthUrl, code, verifier);
    expectTokens(tokens);
    expectTokens(await refresh({ ...server, oauthUrl: childOauthUrl }, web, tokens.body.refresh_token as string));
  });

  it.each([1, 2, 3])('one code redeemed on both processes at once (round %i): exactly one 200, the rest invalid_grant, what it issued ended', async () => {
    const { code, verifier } = await signInForCode(server, web, alice);
    const grantId = await grantOfCode(server, code);
    const targets = [server.oauthUrl, childOauthUrl, server.oauthUrl, childOauthUrl, server.oauthUrl, childOauthUrl];
    const results = await Promise.all(targets.map((url) => exchangeAt(url, code, verifier)));
    expect(statusLines(results)).toEqual(['200', ...Array(5).fill('400 invalid_grant')]);
    for (const loser of results.filter((result) => result.status !== 200)) expectOAuthError(server, loser, 400, 'invalid_grant');
    const winner = results.find((result) => result.status === 200)!;
    expectOAuthError(server, await refresh(server, web, winner.body.refresh_token as string), 400, 'invalid_grant');
    expect(await grantExists(server, grantId)).toBe(true);
  });

  it('one refresh token used on both processes at once: never two chains; a refusal beyond the one retry ends the grant', async () => {
    const { code, verifier } = await signInForCode(server, web, alice);
    const grantId = await grantOfCode(server, code);
    const tokens = await exchangeAt(server.oauthUrl, code, verifier);
    expectTokens(tokens);
    const refreshToken = tokens.body.refresh_token as string;
    const second = { ...server, oauthUrl: childOauthUrl };
    const results = await Promise.all([server, second, server, second, server, second].map((target) => refresh(target, web, refreshToken)));
    const served = results.filter((result) => result.status === 200);
    const refused = results.filter((result) => result.status !== 200);
    for (const loser of refused) expectOAuthError(server, loser, 400, 'invalid_grant');
    const successors = new Set(served.map((result) => result.body.refresh_token as string));
    expect(successors.size).toBeLessThanOrEqual(1);
    const [successor] = [...successors];
    if (refused.length > 0) {
      // Past the one retry a rotated token has: a reuse, wherever it was presented.
      expect(await grantExists(server, grantId)).toBe(false);
      return;
    }
    const next = await refresh(second, web, successor!);
    expectTokens(next);
    expectTokens(await refresh(server, web, next.body.refresh_token as string));
    expectOAuthError(server, await refresh(second, web, refreshToken), 400, 'invalid_grant');
    expect(await grantExists(server, grantId)).toBe(false);
  });
});
