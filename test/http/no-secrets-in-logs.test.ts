import { Writable } from 'node:stream';
import debug from 'debug';
import { createLogger } from '../../src/index.js';
import { alice, testAccounts } from '../support/accounts.js';
import { startRedis } from '../support/redis.js';
import { basic, postToken, startServer } from '../support/server.js';
import { signInForCode } from '../support/sign-in.js';
import { UserAgent, type Step } from '../support/user-agent.js';

/** Captures everything written: engine debug output, stdout, stderr. Returns the lines and a restore. */
function captureOutput(): { captured: string[]; restore: () => void } {
  const captured: string[] = [];
  const originalLog = debug.log;
  const originalStderr = process.stderr.write.bind(process.stderr);
  const originalStdout = process.stdout.write.bind(process.stdout);
  debug.log = (...args: unknown[]) => void captured.push(args.map(String).join(' '));
  debug.enable('oidc-provider:*');
  process.stderr.write = ((chunk: string | Uint8Array) => captured.push(String(chunk)) > 0) as typeof process.stderr.write;
  process.stdout.write = ((chunk: string | Uint8Array) => captured.push(String(chunk)) > 0) as typeof process.stdout.write;
  return {
    captured,
    restore() {
      debug.disable();
      debug.log = originalLog;
      process.stderr.write = originalStderr;
      process.stdout.write = originalStdout;
    },
  };
}

/** The real pino logger, writing into memory. */
function pinoCapture(): { logger: ReturnType<typeof createLogger>; lines: string[] } {
  const lines: string[] = [];
  const destination = new Writable({
    write(chunk: Buffer, _encoding, done) {
      lines.push(chunk.toString('utf8'));
      done();
    },
  });
  return { logger: createLogger({ destination }), lines };
}

/** Never log client secrets, codes, access tokens or refresh tokens: whoever reads logs must not be able to use them. */
describe('logs', () => {
  it('never contain a secret or a token, even with the engine debug output on', async () => {
    const { captured, restore } = captureOutput();
    const server = await startServer();
    const secrets: string[] = [];
    try {
      const { clientId, clientSecret } = await server.auth.clientConfigurations.create({
        tenant: 'acme', name: 'n', category: 'c', resources: { scim: { scopes: ['scim.read'] } },
      });
      secrets.push(clientSecret);
      const rotated = await server.auth.clientConfigurations.rotateSecret(clientId);
      secrets.push(rotated.clientSecret);
      const good = basic(clientId, rotated.clientSecret);
      const ok = await postToken(server.oauthUrl, 'grant_type=client_credentials', { authorization: good });
      secrets.push(ok.body.access_token as string);
      const attempts: Array<[string, Record<string, string>]> = [
        ['grant_type=client_credentials', { authorization: basic(clientId, clientSecret) }],
        [`grant_type=client_credentials&client_secret=${rotated.clientSecret}`, {}],
        [`grant_type=client_credentials&client_secret=${rotated.clientSecret}`, { authorization: good }],
        ['grant_type=client_credentials&scope=scim.write', { authorization: good }],
        ['grant_type=client_credentials&scope=%zz', { authorization: good }],
        [`grant_type=refresh_token&refresh_token=${ok.body.access_token as string}`, { authorization: good }],
        [`grant_type=authorization_code&code=${rotated.clientSecret}&client_id=${clientId}`, {}],
        ['grant_type=client_credentials', { authorization: `Basic ${Buffer.from(`${clientId}:${rotated.clientSecret}x`).toString('base64')}` }],
        ['grant_type=client_credentials', { authorization: `Bearer ${ok.body.access_token as string}` }],
      ];
      for (const [body, headers] of attempts) await postToken(server.oauthUrl, body, headers);
    } finally {
      await server.stop();
      restore();
    }
    const everything = [...captured, ...server.logLines].join('\n');
    expect(captured.some((line) => line.includes('oidc-provider'))).toBe(true);
    for (const secret of secrets) expect(everything).not.toContain(secret);
  });
});

describe('logs of the named-user, API, rate-limit and store-fault failure paths', () => {
  it('never contain a secret, password, code, verifier or token (pino logger, engine debug on)', async () => {
    const WEB = 'https://app.example.com/cb';
    const SPA = 'http://127.0.0.1:5173/cb';
    const redis = await startRedis();
    const { captured, restore } = captureOutput();
    const pinoLines = pinoCapture();
    const secrets: string[] = [alice.password];
    const server = await startServer({
      store: { type: 'redis', url: redis.url },
      accounts: testAccounts([alice]),
      logger: pinoLines.logger,
      rateLimits: { failedClientAuth: { perClient: { max: 3, windowSeconds: 60 }, perAddress: { max: 1000, windowSeconds: 60 } } },
    });
    try {
      const web = await server.auth.appRegistrations.create({ name: 'Web', redirectUris: [WEB], clientType: 'confidential' });
      const spa = await server.auth.appRegistrations.create({ name: 'SPA', redirectUris: [SPA], clientType: 'public' });
      const webAuth = { authorization: basic(web.clientId, web.clientSecret!) };
      secrets.push(web.clientSecret!);
      const exchange = (code: string, verifier: string, headers: Record<string, string> = webAuth, redirectUri = WEB) =>
        postToken(server.oauthUrl, { grant_type: 'authorization_code', code, redirect_uri: redirectUri, code_verifier: verifier }, headers);

      // Wrong password, then a good sign-in.
      const agent = new UserAgent(server.baseUrl);
      const query = new URLSearchParams({ response_type: 'code', client_id: web.clientId, redirect_uri: WEB, scope: 'openid user.read', state: 's', code_challenge: 'E9Melhoa2OwvFrEMTJguCHaoeK1t8URWbuGJSstw-cM', code_challenge_method: 'S256' });
      const login: Step = await agent.request(`${server.oauthUrl}/authorize?${query}`);
      await agent.submit(login, { username: alice.sub, password: `${alice.password}-wrong` });
      secrets.push(`${alice.password}-wrong`);

      const first = await signInForCode(server, { clientId: web.clientId, redirectUri: WEB }, alice, 'openid user.read');
      secrets.push(first.code, first.verifier);
      expect((await exchange(first.code, `${first.verifier}x`)).body.error).toBe('invalid_grant'); // PKCE mismatch
      const second = await signInForCode(server, { clientId: web.clientId, redirectUri: WEB }, alice, 'openid user.read', first.agent);
      secrets.push(second.code, second.verifier);
      expect((await exchange(second.code, second.verifier, webAuth, 'https://app.example.com/other')).body.error).toBe('invalid_grant');
      const third = await signInForCode(server, { clientId: web.clientId, redirectUri: WEB }, alice, 'openid user.read', first.agent);
      secrets.push(third.code, third.verifier);
      const tokens = await exchange(third.code, third.verifier);
      expect(tokens.status).toBe(200);
      const { access_token: accessToken, refresh_token: refreshToken, id_token: idToken } = tokens.body as Record<string, string>;
      secrets.push(accessToken!, refreshToken!, idToken!);
      const refreshed = await postToken(server.oauthUrl, { grant_type: 'refresh_token', refresh_token: refreshToken! }, webAuth);
      expect(refreshed.status).toBe(200);
      secrets.push(refreshed.body.refresh_token as string, refreshed.body.access_token as string);
      await postToken(server.oauthUrl, { grant_type: 'refresh_token', refresh_token: refreshed.body.refresh_token as string }, { authorization: basic(spa.clientId, 'x') });
      await postToken(server.oauthUrl, { grant_type: 'refresh_token', refresh_token: refreshToken! }, webAuth); // reuse
      expect((await exchange(third.code, third.verifier)).body.error).toBe('invalid_grant'); // replay
      // A public client sending a secret, a code in the body of another client.
      await postToken(server.oauthUrl, { grant_type: 'authorization_code', client_id: spa.clientId, client_secret: web.clientSecret!, code: third.code, redirect_uri: SPA, code_verifier: third.verifier });

      // The consent and management APIs with the wrong kind of token.
      for (const bearer of [refreshToken!, idToken!, third.code, `${accessToken!}x`]) {
        await fetch(`${server.baseUrl}/api/oauth2/consents`, { headers: { authorization: `Bearer ${bearer}` } });
        await fetch(`${server.baseUrl}/api/oauth2/client-configurations`, { headers: { authorization: `Bearer ${bearer}` } });
      }

      // Userinfo, introspection, revocation and sign-out, with good and wrong tokens and secrets.
      const form = (fields: Record<string, string>) => ({ method: 'POST', headers: { ...webAuth, 'content-type': 'application/x-www-form-urlencoded' }, body: new URLSearchParams(fields).toString() });
      for (const bearer of [refreshed.body.access_token as string, idToken!, refreshToken!, `${accessToken!}x`]) {
        await fetch(`${server.oauthUrl}/userinfo`, { headers: { authorization: `Bearer ${bearer}` } });
        await fetch(`${server.oauthUrl}/userinfo?access_token=${bearer}`);
        await fetch(`${server.oauthUrl}/introspect`, form({ token: bearer }));
      }
      await fetch(`${server.oauthUrl}/introspect`, { ...form({ token: accessToken! }), headers: { authorization: basic(web.clientId, `${web.clientSecret!}x`), 'content-type': 'application/x-www-form-urlencoded' } });
      await fetch(`${server.oauthUrl}/revoke`, form({ token: refreshed.body.refresh_token as string }));
      await fetch(`${server.oauthUrl}/revoke`, form({ token: refreshed.body.access_token as string }));
      await first.agent.request(`${server.oauthUrl}/session/end?${new URLSearchParams({ id_token_hint: idToken!, post_logout_redirect_uri: 'https://evil.example/' })}`);
      const signOut = await first.agent.request(`${server.oauthUrl}/session/end?${new URLSearchParams({ id_token_hint: idToken! })}`);
      await first.agent.submit(signOut, {});

      // The rate limit.
      for (let attempt = 0; attempt < 5; attempt += 1) {
        const guess = `guess-${attempt}-${web.clientSecret!}`;
        secrets.push(guess);
        await postToken(server.oauthUrl, 'grant_type=client_credentials', { authorization: basic(web.clientId, guess) });
      }

      // Redis down, then back.
      const client = await server.auth.clientConfigurations.create({ tenant: 'acme', name: 'n', category: 'c', resources: { scim: { scopes: ['scim.read'] } } });
      secrets.push(client.clientSecret);
      await redis.kill();
      expect((await postToken(server.oauthUrl, 'grant_type=client_credentials', { authorization: basic(client.clientId, client.clientSecret) })).status).toBe(503);
      await postToken(server.oauthUrl, { grant_type: 'refresh_token', refresh_token: refreshed.body.refresh_token as string }, webAuth);
      // Reconnection attempts fail while it is down: each one is reported.
      for (let waited = 0; waited < 3000 && !pinoLines.lines.some((line) => line.includes('redis connection error')); waited += 100) {
        await new Promise((resolve) => setTimeout(resolve, 100));
      }
      await redis.restart();
    } finally {
      await server.stop();
      await redis.stop();
      restore();
    }
    const everything = [...captured, ...pinoLines.lines, ...server.logLines].join('\n');
    expect(captured.some((line) => line.includes('oidc-provider'))).toBe(true);
    expect(pinoLines.lines.some((line) => line.includes('client authentication failed'))).toBe(true);
    expect(pinoLines.lines.some((line) => line.includes('redis connection error'))).toBe(true);
    for (const secret of secrets) expect(everything).not.toContain(secret);
  });
});
