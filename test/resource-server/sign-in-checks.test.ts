import { createServer, type IncomingMessage, type ServerResponse } from 'node:http';
import type { AddressInfo } from 'node:net';
import Koa from 'koa';
import express from 'express';
import { calculateJwkThumbprint, exportJWK, generateKeyPair, SignJWT, type JWK } from 'jose';
import {
  ACR_MFA,
  ACR_PASSWORD,
  authenticate,
  checkRecentSignIn,
  checkSecondFactor,
  createTokenVerifier,
  expressAuthenticate,
  expressRequireRecentSignIn,
  expressRequireSecondFactor,
  requireRecentSignIn,
  requireSecondFactor,
  type TokenVerifier,
} from '../../src/index.js';
import { alice, testAccounts } from '../support/accounts.js';
import { basic, postToken, startServer } from '../support/server.js';
import { signInForCode } from '../support/sign-in.js';

const ISSUER = 'https://auth.example.test/oauth2';
const AUDIENCE = 'https://auth.example.test/api';
const REALM = AUDIENCE;
const MFA_CHALLENGE = `Bearer realm="${REALM}", error="insufficient_user_authentication", error_description="this route needs a sign-in with a second factor", acr_values="${ACR_MFA}"`;
const recentChallenge = (seconds: number) =>
  `Bearer realm="${REALM}", error="insufficient_user_authentication", error_description="this route needs a sign-in within the last ${seconds} s", max_age="${seconds}"`;

type PrivateKey = Awaited<ReturnType<typeof generateKeyPair>>['privateKey'];

/**
 * The resource-server kit's checks on how a user signed in: "requires a second factor" (`amr` holds
 * mfa, or the mfa class) and "authenticated within N minutes" (`auth_time`), answered with RFC
 * 9470's 401 insufficient_user_authentication (403 insufficient_scope for a machine token).
 */
describe('resource-server kit: second factor and recent sign-in', () => {
  let key: { privateKey: PrivateKey; jwk: JWK };
  let verifier: TokenVerifier;
  const now = () => Math.floor(Date.now() / 1000);

  beforeAll(async () => {
    const { privateKey, publicKey } = await generateKeyPair('ES256', { extractable: true });
    const jwk = await exportJWK(publicKey);
    key = { privateKey, jwk: { ...jwk, alg: 'ES256', use: 'sig', kid: await calculateJwkThumbprint(jwk) } };
    verifier = createTokenVerifier({ issuer: ISSUER, audience: AUDIENCE, jwks: { keys: [key.jwk] } });
  });

  /** An access token of alice (a user) or of the client itself (a machine), with the given claims. */
  function token(claims: Record<string, unknown>, sub = 'alice'): Promise<string> {
    return new SignJWT({ client_id: 'client-1', scope: 'scim.read', tenant: 'acme', ...claims })
      .setProtectedHeader({ alg: 'ES256', typ: 'at+jwt', kid: key.jwk.kid! })
      .setIssuer(ISSUER).setAudience(AUDIENCE).setSubject(sub)
      .setIssuedAt(now() - 10).setExpirationTime(now() + 300).setJti(String(Math.random()))
      .sign(key.privateKey);
  }
  const verified = async (claims: Record<string, unknown>, sub?: string) => verifier.verify(await token(claims, sub));

  describe('checkSecondFactor', () => {
    it.each([
      ['amr with mfa', { amr: ['pwd', 'otp', 'mfa'], acr: ACR_MFA }],
      ['amr with mfa, no acr', { amr: ['pwd', 'hwk', 'mfa'] }],
      ['the mfa class, no amr', { acr: ACR_MFA }],
    ])('lets a user\'s token with %s through', async (_name, claims) => {
      const auth = await verified(claims);
      expect(() => checkSecondFactor(auth, REALM)).not.toThrow();
    });

    it.each([
      ['a password sign-in', { amr: ['pwd'], acr: ACR_PASSWORD }],
      ['two methods but no mfa claimed', { amr: ['pwd', 'otp'], acr: ACR_PASSWORD }],
      ['no sign-in claims at all', {}],
      ['an amr that is not a list', { amr: 'mfa' }],
      ['an acr of another server', { acr: 'urn:example:acr:mfa' }],
    ])('refuses a user\'s token of %s: 401 insufficient_user_authentication naming the mfa class', async (_name, claims) => {
      const auth = await verified(claims);
      expect(() => checkSecondFactor(auth, REALM)).toThrow(expect.objectContaining({
        status: 401, error: 'insufficient_user_authentication', challenge: MFA_CHALLENGE,
      }));
    });

    it('refuses a machine token, even one claiming mfa: 403 insufficient_scope (no sign-in can help it)', async () => {
      const auth = await verified({ amr: ['mfa'], acr: ACR_MFA }, 'client-1');
      expect(auth.isNamedUser).toBe(false);
      expect(() => checkSecondFactor(auth, REALM)).toThrow(expect.objectContaining({
        status: 403, error: 'insufficient_scope', description: 'this route needs the token of a signed-in user',
      }));
    });
  });

  describe('checkRecentSignIn', () => {
    it('lets a sign-in within the minutes through, up to the last second', async () => {
      const at = now();
      expect(() => checkRecentSignIn(verifiedSync(at - 60), 5, REALM, at * 1000)).not.toThrow();
      expect(() => checkRecentSignIn(verifiedSync(at - 300), 5, REALM, at * 1000)).not.toThrow();
    });

    it('refuses one a second older than the minutes: 401 with max_age in seconds', async () => {
      const at = now();
      expect(() => checkRecentSignIn(verifiedSync(at - 301), 5, REALM, at * 1000)).toThrow(expect.objectContaining({
        status: 401, error: 'insufficient_user_authentication', challenge: recentChallenge(300),
      }));
    });

    it('refuses a user\'s token that does not say when she signed in, or says it in another form', async () => {
      for (const claims of [{}, { auth_time: String(now()) }]) {
        const auth = await verified(claims);
        expect(auth.authTime).toBeUndefined();
        expect(() => checkRecentSignIn(auth, 5, REALM)).toThrow(expect.objectContaining({ status: 401, challenge: recentChallenge(300) }));
      }
    });

    it('refuses a machine token: 403 insufficient_scope', async () => {
      const auth = await verified({ auth_time: now() }, 'client-1');
      expect(() => checkRecentSignIn(auth, 5, REALM)).toThrow(expect.objectContaining({ status: 403, error: 'insufficient_scope' }));
    });

    it.each([0, -1, Number.NaN, Number.POSITIVE_INFINITY, '5' as unknown as number])('a route asking for %p minutes is a mistake, told at once', (minutes) => {
      expect(() => requireRecentSignIn(verifier, minutes)).toThrow(TypeError);
      expect(() => expressRequireRecentSignIn(verifier, minutes)).toThrow(TypeError);
    });

    /** A verified user's token as the kit gives it, with `auth_time` set (no signature round trip). */
    function verifiedSync(authTime: number) {
      return { sub: 'alice', clientId: 'client-1', tenant: 'acme', scopes: new Set<string>(), constraints: {}, isNamedUser: true, amr: ['pwd'], acr: ACR_PASSWORD, authTime, claims: {} };
    }
  });

  async function serve(app: (req: IncomingMessage, res: ServerResponse) => void) {
    const http = createServer(app);
    await new Promise<void>((resolve) => http.listen(0, '127.0.0.1', resolve));
    const base = `http://127.0.0.1:${(http.address() as AddressInfo).port}`;
    return {
      get: (path: string, bearer?: string) => fetch(`${base}${path}`, bearer ? { headers: { authorization: `Bearer ${bearer}` } } : {}),
      close: async () => {
        http.closeAllConnections();
        await new Promise((resolve) => http.close(resolve));
      },
    };
  }

  it('in Koa and in Express, per route: /salary needs a second factor, /delete a sign-in within 5 minutes', async () => {
    const koa = new Koa();
    koa.use(authenticate(verifier));
    const salary = requireSecondFactor(verifier);
    const remove = requireRecentSignIn(verifier, 5);
    koa.use(async (ctx, next) => (ctx.path === '/salary' ? salary(ctx, next) : ctx.path === '/delete' ? remove(ctx, next) : next()));
    koa.use((ctx) => {
      ctx.body = { ok: ctx.path };
    });
    const api = express();
    api.get('/salary', expressAuthenticate(verifier), expressRequireSecondFactor(verifier), (req, res) => { res.json({ ok: req.path }); });
    api.get('/delete', expressAuthenticate(verifier), expressRequireRecentSignIn(verifier, 5), (req, res) => { res.json({ ok: req.path }); });

    const strongAndFresh = await token({ amr: ['pwd', 'otp', 'mfa'], acr: ACR_MFA, auth_time: now() - 30 });
    const passwordAndOld = await token({ amr: ['pwd'], acr: ACR_PASSWORD, auth_time: now() - 3600 });
    for (const server of [await serve(koa.callback()), await serve(api)]) {
      try {
        for (const path of ['/salary', '/delete']) {
          const ok = await server.get(path, strongAndFresh);
          expect({ status: ok.status, body: await ok.json() }).toEqual({ status: 200, body: { ok: path } });
          expect((await server.get(path)).status).toBe(401);
        }
        const weak = await server.get('/salary', passwordAndOld);
        expect(weak.status).toBe(401);
        expect(weak.headers.get('www-authenticate')).toBe(MFA_CHALLENGE);
        expect(weak.headers.get('cache-control')).toBe('no-store');
        expect(await weak.json()).toEqual({ error: 'insufficient_user_authentication', error_description: 'this route needs a sign-in with a second factor' });
        const old = await server.get('/delete', passwordAndOld);
        expect(old.status).toBe(401);
        expect(old.headers.get('www-authenticate')).toBe(recentChallenge(300));
      } finally {
        await server.close();
      }
    }
  });

  it("a real password sign-in's token: recent enough, but no second factor", async () => {
    const server = await startServer({ accounts: testAccounts([alice]) });
    try {
      const app = await server.auth.appRegistrations.create({ name: 'Kit app', redirectUris: ['https://app.example.com/cb'], clientType: 'confidential' });
      const { code, verifier: codeVerifier } = await signInForCode(server, { clientId: app.clientId, redirectUri: 'https://app.example.com/cb' }, alice);
      const answer = await postToken(server.oauthUrl, { grant_type: 'authorization_code', code, redirect_uri: 'https://app.example.com/cb', code_verifier: codeVerifier }, { authorization: basic(app.clientId, app.clientSecret!) });
      expect(answer.status).toBe(200);
      const kit = createTokenVerifier({ issuer: server.oauthUrl, audience: server.auth.audience, jwks: new URL(`${server.oauthUrl}/jwks`) });
      const auth = await kit.verify(answer.body.access_token as string);
      expect(() => checkRecentSignIn(auth, 5, kit.realm)).not.toThrow();
      expect(() => checkSecondFactor(auth, kit.realm)).toThrow(expect.objectContaining({ status: 401, error: 'insufficient_user_authentication' }));
    } finally {
      await server.stop();
    }
  });
});
