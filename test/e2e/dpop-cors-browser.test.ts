import { createServer, type Server } from 'node:http';
import type { AddressInfo } from 'node:net';
import type { Browser } from 'playwright-core';
import { alice, testAccounts } from '../support/accounts.js';
import { launchChromium } from '../support/chromium.js';
import { startServer, type RunningServer } from '../support/server.js';
import { signInForCode } from '../support/sign-in.js';

const SLOW = 120_000;

/** What the browser script reports back. */
interface SeenByPage {
  tokenStatus: number;
  tokenType: unknown;
  tokenNonce: string | null;
  forgedStatus: number;
  forgedError: unknown;
  forgedNonce: string | null;
  userinfoStatus: number;
  userinfoSub: unknown;
  refusedStatus: number;
  refusedChallenge: string | null;
  revokeStatus: number;
}

/**
 * The SPA's script, run in the page at the app's origin (a string: the test's TypeScript has no DOM
 * types). With a WebCrypto ES256 key it makes DPoP proofs, exchanges its code at the token
 * endpoint, is refused a made-up nonce (and reads the DPoP-Nonce to use), reads userinfo with its
 * bound token, is refused a proof for another token (and reads the challenge), and revokes. A
 * header the CORS answer does not expose reads as null; an answer without CORS makes fetch throw.
 */
const PAGE_SCRIPT = `async ({ oauthUrl, clientId, redirectUri, code, verifier }) => {
  const b64u = (bytes) => btoa(String.fromCharCode(...new Uint8Array(bytes))).replace(/=+$/, '').replace(/\\+/g, '-').replace(/\\//g, '_');
  const text = (value) => new TextEncoder().encode(value);
  const keys = await crypto.subtle.generateKey({ name: 'ECDSA', namedCurve: 'P-256' }, false, ['sign']);
  const { kty, crv, x, y } = await crypto.subtle.exportKey('jwk', keys.publicKey);
  const header = b64u(text(JSON.stringify({ typ: 'dpop+jwt', alg: 'ES256', jwk: { kty, crv, x, y } })));
  async function proof(htm, htu, extra = {}) {
    const payload = b64u(text(JSON.stringify({ htm, htu, jti: crypto.randomUUID(), iat: Math.floor(Date.now() / 1000), ...extra })));
    const signature = await crypto.subtle.sign({ name: 'ECDSA', hash: 'SHA-256' }, keys.privateKey, text(header + '.' + payload));
    return header + '.' + payload + '.' + b64u(signature);
  }
  const ath = async (token) => b64u(await crypto.subtle.digest('SHA-256', text(token)));
  const form = { 'content-type': 'application/x-www-form-urlencoded' };
  const exchange = (dpop) => fetch(oauthUrl + '/token', { method: 'POST', headers: { ...form, dpop },
    body: new URLSearchParams({ grant_type: 'authorization_code', code, redirect_uri: redirectUri, code_verifier: verifier, client_id: clientId }) });
  const forged = await exchange(await proof('POST', oauthUrl + '/token', { nonce: 'not-a-nonce-of-the-server' }));
  const forgedBody = await forged.json();
  const answer = await exchange(await proof('POST', oauthUrl + '/token'));
  const tokens = await answer.json();
  const info = await fetch(oauthUrl + '/userinfo', { headers: { authorization: 'DPoP ' + tokens.access_token,
    dpop: await proof('GET', oauthUrl + '/userinfo', { ath: await ath(tokens.access_token) }) } });
  const infoBody = await info.json();
  const refused = await fetch(oauthUrl + '/userinfo', { headers: { authorization: 'DPoP ' + tokens.access_token,
    dpop: await proof('GET', oauthUrl + '/userinfo', { ath: await ath('another token') }) } });
  const revoked = await fetch(oauthUrl + '/revoke', { method: 'POST', headers: form, body: new URLSearchParams({ token: tokens.access_token, client_id: clientId }) });
  return {
    tokenStatus: answer.status, tokenType: tokens.token_type, tokenNonce: answer.headers.get('dpop-nonce'),
    forgedStatus: forged.status, forgedError: forgedBody.error, forgedNonce: forged.headers.get('dpop-nonce'),
    userinfoStatus: info.status, userinfoSub: infoBody.sub,
    refusedStatus: refused.status, refusedChallenge: refused.headers.get('www-authenticate'),
    revokeStatus: revoked.status,
  };
}`;

/**
 * A browser app (a public SPA on its own origin) with DPoP, in real Chromium: it must be able to
 * read `DPoP-Nonce` and `WWW-Authenticate` of the token endpoint's and userinfo's answers, so
 * CORS exposes them (src/http/cors.ts; the engine's own CORS at the token endpoint), and our own
 * answers (userinfo, revocation) carry CORS at all. Then the CORS rules over plain HTTP: the
 * preflight of a userinfo GET, no CORS for another origin nor for a caller without Origin.
 */
describe('DPoP from a browser app: CORS exposes the nonce and the challenge', () => {
  let server: RunningServer;
  let spa: Server;
  let spaOrigin: string;
  let clientId: string;
  let launching: Promise<Browser> | undefined;

  beforeAll(async () => {
    launching = launchChromium(SLOW);
    spa = createServer((_req, res) => {
      res.writeHead(200, { 'content-type': 'text/html; charset=utf-8' }).end('<!doctype html><html lang="en"><head><meta charset="utf-8"><title>SPA</title></head><body><h1>SPA</h1></body></html>');
    });
    await new Promise<void>((resolve) => spa.listen(0, '127.0.0.1', resolve));
    spaOrigin = `http://127.0.0.1:${(spa.address() as AddressInfo).port}`;
    server = await startServer({ accounts: testAccounts([alice]) });
    clientId = (await server.auth.appRegistrations.create({ name: 'SPA', redirectUris: [`${spaOrigin}/callback`], clientType: 'public' })).clientId;
  }, SLOW);
  afterAll(async () => {
    await (await launching?.catch(() => undefined))?.close();
    await server?.stop();
    spa?.closeAllConnections();
    await new Promise((resolve) => spa?.close(resolve));
  });

  it('the SPA reads DPoP-Nonce at the token endpoint, its userinfo, the DPoP challenge of a refusal, and its revocation', async () => {
    const browser = await launching!;
    const context = await browser.newContext();
    try {
      const page = await context.newPage();
      await page.goto(`${spaOrigin}/`);
      const redirectUri = `${spaOrigin}/callback`;
      const { code, verifier } = await signInForCode(server, { clientId, redirectUri }, alice, 'openid');
      const seen = await page.evaluate(`(${PAGE_SCRIPT})(${JSON.stringify({ oauthUrl: server.oauthUrl, clientId, redirectUri, code, verifier })})`) as SeenByPage;
      expect(seen).toEqual({
        tokenStatus: 200,
        tokenType: 'DPoP',
        tokenNonce: expect.stringMatching(/^[A-Za-z0-9_-]+$/),
        forgedStatus: 400,
        forgedError: 'use_dpop_nonce',
        forgedNonce: expect.stringMatching(/^[A-Za-z0-9_-]+$/),
        userinfoStatus: 200,
        userinfoSub: alice.sub,
        refusedStatus: 401,
        refusedChallenge: expect.stringMatching(/^DPoP realm="[^"]+", error="invalid_dpop_proof"/),
        revokeStatus: 200,
      });
    } finally {
      await context.close();
    }
  }, SLOW);

  it('a userinfo preflight allows GET with the Authorization and DPoP headers; answers expose DPoP-Nonce and WWW-Authenticate to the app origin only', async () => {
    const preflight = await fetch(`${server.oauthUrl}/userinfo`, {
      method: 'OPTIONS',
      headers: { origin: spaOrigin, 'access-control-request-method': 'GET', 'access-control-request-headers': 'authorization,dpop' },
    });
    expect(preflight.status).toBe(204);
    expect(preflight.headers.get('access-control-allow-origin')).toBe(spaOrigin);
    expect(preflight.headers.get('access-control-allow-methods')).toBe('GET, POST');
    expect(preflight.headers.get('access-control-allow-headers')).toBe('authorization,dpop');
    const refused = await fetch(`${server.oauthUrl}/userinfo`, { headers: { origin: spaOrigin, authorization: 'DPoP not-a-token' } });
    expect(refused.status).toBe(401);
    expect(refused.headers.get('access-control-allow-origin')).toBe(spaOrigin);
    expect(refused.headers.get('access-control-expose-headers')).toBe('DPoP-Nonce, WWW-Authenticate');
    // The engine's answer (an unknown code): its own CORS, which exposes the same two.
    const tokenAnswer = await fetch(`${server.oauthUrl}/token`, {
      method: 'POST',
      headers: { origin: spaOrigin, 'content-type': 'application/x-www-form-urlencoded' },
      body: new URLSearchParams({ grant_type: 'authorization_code', code: 'x', client_id: clientId, redirect_uri: `${spaOrigin}/callback`, code_verifier: 'v'.repeat(43) }),
    });
    expect(tokenAnswer.status).toBe(400);
    expect(tokenAnswer.headers.get('access-control-allow-origin')).toBe(spaOrigin);
    expect(tokenAnswer.headers.get('access-control-expose-headers')?.split(/, ?/)).toEqual(expect.arrayContaining(['DPoP-Nonce', 'WWW-Authenticate']));
    for (const origin of [{ origin: 'https://evil.example' }, {}] as Array<Record<string, string>>) {
      const answer = await fetch(`${server.oauthUrl}/userinfo`, { headers: { ...origin, authorization: 'DPoP not-a-token' } });
      expect(answer.status).toBe(401);
      expect([...answer.headers.keys()].filter((name) => name.startsWith('access-control-'))).toEqual([]);
    }
  });
});
