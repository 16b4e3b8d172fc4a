import { createServer, type IncomingMessage, type Server, type ServerResponse } from 'node:http';
import type { AddressInfo } from 'node:net';
import Koa from 'koa';
import { calculateJwkThumbprint, exportJWK, generateKeyPair, SignJWT, UnsecuredJWT, type JWK } from 'jose';
import express, { type Request } from 'express';
import {
  authenticate,
  checkTenant,
  createTokenVerifier,
  expressAuthenticate,
  expressRequireScopes,
  expressRequireTenant,
  requireScopes,
  requireTenant,
  type AccessTokenContext,
  type AuthState,
  type TokenVerifier,
} from '../../src/index.js';

const ISSUER = 'https://auth.example.test/oauth2';
const AUDIENCE = 'https://auth.example.test/api';

type PrivateKey = Awaited<ReturnType<typeof generateKeyPair>>['privateKey'];

async function signingKey(): Promise<{ privateKey: PrivateKey; jwk: JWK }> {
  const { privateKey, publicKey } = await generateKeyPair('ES256', { extractable: true });
  const jwk = await exportJWK(publicKey);
  return { privateKey, jwk: { ...jwk, alg: 'ES256', use: 'sig', kid: await calculateJwkThumbprint(jwk) } };
}

function token(key: { privateKey: PrivateKey; jwk: JWK }, claims: Record<string, unknown> = {}, options: { typ?: string; exp?: number; iss?: string; aud?: string; kid?: string } = {}) {
  const now = Math.floor(Date.now() / 1000);
  return new SignJWT({ client_id: 'client-1', scope: 'scim.read', tenant: 'acme', ...claims })
    .setProtectedHeader({ alg: 'ES256', typ: options.typ ?? 'at+jwt', kid: options.kid ?? key.jwk.kid! })
    .setIssuer(options.iss ?? ISSUER).setAudience(options.aud ?? AUDIENCE).setSubject(String(claims.sub ?? 'client-1'))
    .setIssuedAt(now - 10).setExpirationTime(options.exp ?? now + 300).setJti(String(Math.random()))
    .sign(key.privateKey);
}

/** A JWKS endpoint whose keys the test changes, counting fetches. */
async function jwksServer(): Promise<{ url: URL; keys: JWK[]; fetches: () => number; close(): Promise<void> }> {
  let count = 0;
  const state = { keys: [] as JWK[] };
  const server: Server = createServer((_req, res) => {
    count += 1;
    res.setHeader('content-type', 'application/json');
    res.end(JSON.stringify({ keys: state.keys }));
  });
  await new Promise<void>((resolve) => server.listen(0, '127.0.0.1', resolve));
  return {
    url: new URL(`http://127.0.0.1:${(server.address() as AddressInfo).port}/jwks`),
    get keys() {
      return state.keys;
    },
    set keys(value) {
      state.keys = value;
    },
    fetches: () => count,
    close: () => new Promise<void>((resolve) => server.close(() => resolve())),
  } as never;
}

describe('resource-server kit: token verification', () => {
  let key: Awaited<ReturnType<typeof signingKey>>;
  let verifier: TokenVerifier;

  beforeAll(async () => {
    key = await signingKey();
    verifier = createTokenVerifier({ issuer: ISSUER, audience: AUDIENCE, jwks: { keys: [key.jwk] } });
  });

  it('exposes who, which client, tenant, scopes, constraints and whether a user signed in', async () => {
    const machine = await verifier.verify(await token(key, { constraints: { scim: { group: ['eng'] } } }));
    expect(machine).toMatchObject({ sub: 'client-1', clientId: 'client-1', tenant: 'acme', constraints: { scim: { group: ['eng'] } }, isNamedUser: false });
    expect([...machine.scopes]).toEqual(['scim.read']);
    const user = await verifier.verify(await token(key, { sub: 'alice' }));
    expect(user).toMatchObject({ sub: 'alice', clientId: 'client-1', isNamedUser: true, constraints: {} });
  });

  it.each([
    ['no scope claim', { scope: undefined }, []],
    ['a scope claim that is not a string', { scope: ['scim.read'] }, []],
    ['an empty scope claim', { scope: '' }, []],
    ['a scope claim with extra spaces', { scope: ' scim.read  jobs.read ' }, ['scim.read', 'jobs.read']],
  ])('scopes of a token with %s: only what the claim names', async (_name, claims, scopes) => {
    const verified = await verifier.verify(await token(key, claims));
    expect([...verified.scopes]).toEqual(scopes);
  });

  it.each([
    ['expired', () => token(key, {}, { exp: Math.floor(Date.now() / 1000) - 60 }), /expired/],
    ['another issuer', () => token(key, {}, { iss: 'https://evil.example/oauth2' }), /not valid/],
    ['another audience', () => token(key, {}, { aud: 'https://other.example/api' }), /not valid/],
    ['not an access token (typ JWT, e.g. an ID token)', () => token(key, {}, { typ: 'JWT' }), /not valid/],
    ['malformed constraints', () => token(key, { constraints: { scim: { group: 'eng' } } }), /not valid/],
    ['no client_id', () => token(key, { client_id: undefined }), /not valid/],
    ['an unknown key', async () => token(await signingKey(), {}, { kid: key.jwk.kid }), /not valid/],
    ['alg none', async () => new UnsecuredJWT({ client_id: 'c', sub: 'c' }).setIssuer(ISSUER).setAudience(AUDIENCE).setIssuedAt().setExpirationTime('5m').encode(), /not valid/],
  ])('refuses a token that is %s (401 invalid_token)', async (_name, make, message) => {
    const error = await verifier.verify(await make()).catch((e: unknown) => e);
    expect(error).toMatchObject({ error: 'invalid_token', status: 401 });
    expect((error as Error).message).toMatch(message);
  });

  it('reads Bearer headers strictly (RFC 6750 §2.1)', async () => {
    const good = await token(key);
    await expect(verifier.verifyAuthorization(`bearer ${good}`)).resolves.toBeTruthy();
    await expect(verifier.verifyAuthorization(undefined)).rejects.toMatchObject({ status: 401, challenge: `Bearer realm="${AUDIENCE}"` });
    await expect(verifier.verifyAuthorization(`Basic ${good}`)).rejects.toMatchObject({ status: 400, error: 'invalid_request' });
    await expect(verifier.verifyAuthorization(`Bearer ${good} extra`)).rejects.toMatchObject({ status: 400 });
  });

  describe('with a remote JWKS', () => {
    it('follows a key rotation with one refetch, and a flood of unknown kids cannot refetch more than once per cooldown', async () => {
      const jwks = await jwksServer();
      try {
        const next = await signingKey();
        jwks.keys = [key.jwk];
        const remote = createTokenVerifier({ issuer: ISSUER, audience: AUDIENCE, jwks: jwks.url, jwksCooldownSeconds: 1 });
        await remote.verify(await token(key));
        await remote.verify(await token(key));
        expect(jwks.fetches()).toBe(1);
        jwks.keys = [key.jwk, next.jwk];
        await new Promise((resolve) => setTimeout(resolve, 1100));
        await expect(remote.verify(await token(next))).resolves.toMatchObject({ clientId: 'client-1' });
        expect(jwks.fetches()).toBe(2);
        const strangers = await Promise.all(Array.from({ length: 30 }, async (_, i) => token(next, {}, { kid: `unknown-${i}` })));
        const results = await Promise.allSettled(strangers.map((jwt) => remote.verify(jwt)));
        expect(results.every((result) => result.status === 'rejected')).toBe(true);
        expect(jwks.fetches()).toBe(2);
        await expect(remote.verify(await token(key))).resolves.toBeTruthy();
      } finally {
        await jwks.close();
      }
    });

    it('answers 503 when the keys cannot be fetched', async () => {
      const down = createTokenVerifier({ issuer: ISSUER, audience: AUDIENCE, jwks: new URL('http://127.0.0.1:1/jwks') });
      await expect(down.verify(await token(key))).rejects.toMatchObject({ status: 503, error: 'temporarily_unavailable' });
    });
  });

  describe('in Koa', () => {
    let http: Server;
    let base: string;

    beforeAll(async () => {
      const app = new Koa();
      app.use(authenticate(verifier));
      app.use(requireScopes(verifier, 'scim.read'));
      app.use((ctx) => {
        ctx.body = { sub: (ctx.state as AuthState).auth.sub };
      });
      http = createServer(app.callback());
      await new Promise<void>((resolve) => http.listen(0, '127.0.0.1', resolve));
      base = `http://127.0.0.1:${(http.address() as AddressInfo).port}`;
    });
    afterAll(async () => {
      http.closeAllConnections();
      await new Promise((resolve) => http.close(resolve));
    });

    it('lets a token with the scope through, and says which scope is missing otherwise', async () => {
      const ok = await fetch(base, { headers: { authorization: `Bearer ${await token(key)}` } });
      expect(ok.status).toBe(200);
      expect(await ok.json()).toEqual({ sub: 'client-1' });
      const lacking = await fetch(base, { headers: { authorization: `Bearer ${await token(key, { scope: 'user.read' })}` } });
      expect(lacking.status).toBe(403);
      expect(lacking.headers.get('www-authenticate')).toContain('error="insufficient_scope"');
      expect(lacking.headers.get('www-authenticate')).toContain('scope="scim.read"');
      expect(((await lacking.json()) as { error_description: string }).error_description).toContain("'scim.read'");
      const none = await fetch(base);
      expect(none.status).toBe(401);
      expect(none.headers.get('www-authenticate')).toBe(`Bearer realm="${AUDIENCE}"`);
    });
  });

  describe('in Express (structural req/res)', () => {
    function run(middleware: ReturnType<typeof expressAuthenticate>, req: { headers: { authorization?: string }; auth?: AccessTokenContext }) {
      return new Promise<{ status?: number; headers: Record<string, string>; body?: unknown; next: boolean }>((resolve) => {
        const result = { headers: {} as Record<string, string>, next: false } as { status?: number; headers: Record<string, string>; body?: unknown; next: boolean };
        const res = {
          status(code: number) { result.status = code; return res; },
          set(name: string, value: string) { result.headers[name] = value; return res; },
          json(body: unknown) { result.body = body; resolve(result); },
        };
        middleware(req, res, () => { result.next = true; resolve(result); });
      });
    }

    it('authenticates into req.auth and enforces scopes', async () => {
      const req: { headers: { authorization?: string }; auth?: AccessTokenContext } = { headers: { authorization: `Bearer ${await token(key)}` } };
      expect((await run(expressAuthenticate(verifier), req)).next).toBe(true);
      expect(req.auth?.clientId).toBe('client-1');
      expect((await run(expressRequireScopes(verifier, 'scim.read'), req)).next).toBe(true);
      const refused = await run(expressRequireScopes(verifier, 'scim.write'), req);
      expect(refused).toMatchObject({ status: 403, next: false, body: { error: 'insufficient_scope' } });
      const anonymous = await run(expressAuthenticate(verifier), { headers: {} });
      expect(anonymous).toMatchObject({ status: 401, next: false });
      expect(anonymous.headers['WWW-Authenticate']).toBe(`Bearer realm="${AUDIENCE}"`);
    });
  });

  describe('the tenant guard', () => {
    /** [token's tenant claim, request's tenant, expected status] */
    const cases: Array<[string | undefined, string | undefined, number]> = [
      ['acme', 'acme', 200],
      ['acme', 'globex', 403],
      ['globex', 'acme', 403],
      ['acme', undefined, 403],
      [undefined, 'acme', 403],
      ['acme', 'ACME', 403],
      ['acme', '', 403],
      // An operator app's token has no tenant; a request whose tenant is unknown is not a match.
      [undefined, undefined, 403],
    ];

    it.each(cases)('checkTenant: token of %s, request for %s → %s', async (tokenTenant, requestTenant, status) => {
      const auth = await verifier.verify(await token(key, { tenant: tokenTenant }));
      const check = () => checkTenant(auth, requestTenant, verifier.realm);
      if (status === 200) expect(check).not.toThrow();
      else expect(check).toThrow(expect.objectContaining({ status: 403, error: 'insufficient_scope', description: 'the access token belongs to another tenant' }));
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

    it('in Koa (requireTenant) and in Express (expressRequireTenant): only the token\'s own tenant', async () => {
      const koa = new Koa();
      koa.use(authenticate(verifier));
      koa.use(requireTenant(verifier, (ctx: Koa.Context) => /^\/tenants\/([^/]+)\//.exec(ctx.path)?.[1]));
      koa.use((ctx) => {
        ctx.body = { tenant: (ctx.state as AuthState).auth.tenant };
      });
      const api = express();
      api.get('/tenants/:tenant/users', expressAuthenticate(verifier), expressRequireTenant(verifier, (req: Request) => req.params.tenant as string),
        (req, res) => { res.json({ tenant: req.auth?.tenant }); });
      const acme = await token(key, { tenant: 'acme' });
      for (const server of [await serve(koa.callback()), await serve(api)]) {
        try {
          const own = await server.get('/tenants/acme/users', acme);
          expect({ status: own.status, body: await own.json() }).toEqual({ status: 200, body: { tenant: 'acme' } });
          const other = await server.get('/tenants/globex/users', acme);
          expect(other.status).toBe(403);
          expect(other.headers.get('www-authenticate')).toContain('error="insufficient_scope"');
          expect(await other.json()).toEqual({ error: 'insufficient_scope', error_description: 'the access token belongs to another tenant' });
          expect((await server.get('/tenants/acme/users')).status).toBe(401);
        } finally {
          await server.close();
        }
      }
    });
  });
});
