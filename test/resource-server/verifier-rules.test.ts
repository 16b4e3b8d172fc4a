import { afterAll, afterEach, beforeAll, describe, expect, it, jest } from '@jest/globals';
import { createServer, type Server } from 'node:http';
import type { AddressInfo } from 'node:net';
import { randomUUID } from 'node:crypto';
import { calculateJwkThumbprint, exportJWK, generateKeyPair, SignJWT, type CryptoKey, type JWK } from 'jose';
import { checkScopes, checkTenant, createTokenVerifier, introspector, recentSignInSeconds, type AccessTokenContext, type TokenVerifierOptions } from '../../src/resource-server/verifier.js';
import { DpopNonces } from '../../src/resource-server/dpop.js';

/*
 * The token verifier's rules one row at a time (src/resource-server/verifier.ts), with keys and
 * tokens of this file: what a token must hold (algorithms, claims, constraints' shape, the clock's
 * tolerance), how the Authorization header is read, the options said wrong at start, the
 * introspection cache, and the scope, tenant and recent-sign-in checks' words. The whole kit
 * against the real server is in verifier.test.ts and test/dpop/.
 */

const ISSUER = 'https://auth.example.test/oauth2';
const AUDIENCE = 'https://auth.example.test/api';

interface SigningKey { alg: string; privateKey: CryptoKey; jwk: JWK }

async function keyOf(alg: string): Promise<SigningKey> {
  const { privateKey, publicKey } = await generateKeyPair(alg, { extractable: true });
  const jwk = await exportJWK(publicKey);
  return { alg, privateKey, jwk: { ...jwk, alg, use: 'sig', kid: await calculateJwkThumbprint(jwk) } };
}

const keys: Record<string, SigningKey> = {};
const ALGORITHMS = ['ES256', 'RS256', 'PS256', 'EdDSA', 'ES384'];

/** A token of ours: `claims` over the usual ones (undefined removes one), signed with `alg`'s key. */
function tokenOf(claims: Record<string, unknown> = {}, alg = 'ES256'): Promise<string> {
  const now = Math.floor(Date.now() / 1000);
  const payload = Object.fromEntries(Object.entries({
    iss: ISSUER, aud: AUDIENCE, sub: 'client-1', client_id: 'client-1', scope: 'scim.read', tenant: 'acme', iat: now - 10, exp: now + 300, jti: randomUUID(), ...claims,
  }).filter(([, value]) => value !== undefined));
  const key = keys[alg]!;
  return new SignJWT(payload).setProtectedHeader({ alg, typ: 'at+jwt', kid: key.jwk.kid! }).sign(key.privateKey);
}

const verifierOf = (options: Partial<TokenVerifierOptions> = {}) => createTokenVerifier({
  issuer: ISSUER, audience: AUDIENCE, jwks: { keys: Object.values(keys).map((key) => key.jwk) }, ...options,
} as TokenVerifierOptions);

beforeAll(async () => {
  for (const alg of ALGORITHMS) keys[alg] = await keyOf(alg);
});

describe('what a token must hold', () => {
  it.each(['ES256', 'RS256', 'PS256', 'EdDSA'])('takes a token signed with %s by default', async (alg) => {
    await expect(verifierOf().verify(await tokenOf({}, alg))).resolves.toMatchObject({ clientId: 'client-1' });
  });

  it('refuses another algorithm by default, and takes it when the options name it', async () => {
    const token = await tokenOf({}, 'ES384');
    await expect(verifierOf().verify(token)).rejects.toMatchObject({ status: 401, description: 'the access token is not valid' });
    await expect(verifierOf({ algorithms: ['ES384'] }).verify(token)).resolves.toBeDefined();
  });

  it.each(['exp', 'iat', 'sub', 'client_id'])('refuses a token without %s', async (claim) => {
    await expect(verifierOf().verify(await tokenOf({ [claim]: undefined }))).rejects.toMatchObject({ status: 401, description: 'the access token is not valid' });
  });

  it('allows 5 s of clock difference by default: expired 3 s ago is taken, 7 s ago is not', async () => {
    const now = Math.floor(Date.now() / 1000);
    await expect(verifierOf().verify(await tokenOf({ exp: now - 3 }))).resolves.toBeDefined();
    await expect(verifierOf().verify(await tokenOf({ exp: now - 7 }))).rejects.toMatchObject({ description: 'the access token has expired' });
    await expect(verifierOf({ clockToleranceSeconds: 0 }).verify(await tokenOf({ exp: now - 3 }))).rejects.toMatchObject({ description: 'the access token has expired' });
  });

  it.each<[string, unknown]>([
    ['a text', 'payroll'],
    ['a number', 5],
    ['true', true],
    ["an API's filters as a number", { payroll: 5 }],
    ['null', null],
    ['a list', [{ payroll: { department: ['sales'] } }]],
    ["an API's filters as a text", { payroll: 'department=sales' }],
    ["an API's filters as null", { payroll: null }],
    ["an API's filters as a list", { payroll: [['sales']] }],
    ['a filter of a text', { payroll: { department: 'sales' } }],
    ['a filter of numbers', { payroll: { department: [1] } }],
    ['a filter of a text and a number', { payroll: { department: ['sales', 1] } }],
    ['a second filter that is wrong', { payroll: { department: ['sales'], region: 'eu' } }],
  ])('refuses constraints that are %s', async (_name, constraints) => {
    await expect(verifierOf().verify(await tokenOf({ constraints }))).rejects.toMatchObject({ status: 401, description: 'the access token is not valid' });
  });

  it('takes well-formed constraints as they are, and none as no constraint', async () => {
    const constraints = { payroll: { department: ['sales', 'hr'], region: [] }, scim: {} };
    await expect(verifierOf().verify(await tokenOf({ constraints }))).resolves.toMatchObject({ constraints });
    await expect(verifierOf().verify(await tokenOf())).resolves.toMatchObject({ constraints: {} });
  });

  it('reads amr only as a list of texts', async () => {
    await expect(verifierOf().verify(await tokenOf({ amr: 'mfa' }))).resolves.toMatchObject({ amr: [] });
    await expect(verifierOf().verify(await tokenOf({ amr: ['pwd', 'mfa'] }))).resolves.toMatchObject({ amr: ['pwd', 'mfa'] });
  });
});

describe('the Authorization header', () => {
  it.each([
    ['Bearer <token>'],
    ['bearer <token>'],
    ['Bearer   <token>'],
    ['  Bearer <token>  '],
  ])('takes %j', async (header) => {
    const token = await tokenOf();
    await expect(verifierOf().verifyAuthorization(header.replace('<token>', token))).resolves.toMatchObject({ clientId: 'client-1' });
  });

  it.each([
    ['xBearer <token>'],
    ['Bearer <token> extra'],
    ['Bearer'],
    ['Basic <token>'],
    ['Bearer<token>'],
  ])('refuses %j as a bad request', async (header) => {
    const token = await tokenOf();
    await expect(verifierOf().verifyAuthorization(header.replace('<token>', token))).rejects.toMatchObject({ status: 400, error: 'invalid_request' });
  });

  it('reads a DPoP header with spaces around it as DPoP, and refuses a token bound to no key presented so', async () => {
    const token = await tokenOf();
    const { privateKey, publicKey } = await generateKeyPair('ES256');
    const proof = await new SignJWT({ htm: 'GET', htu: 'https://api.example.test/payslips', jti: randomUUID() })
      .setProtectedHeader({ alg: 'ES256', typ: 'dpop+jwt', jwk: await exportJWK(publicKey) }).setIssuedAt().sign(privateKey);
    const request = { authorization: `  DPoP ${token}`, dpop: proof, method: 'GET', url: 'https://api.example.test/payslips' };
    const refusal = await verifierOf({ dpop: true }).verifyRequest(request).catch((error: unknown) => error);
    expect(refusal).toMatchObject({ status: 401, description: 'the access token is not bound to a DPoP key: present it as Bearer' });
    expect((refusal as { challenge: string }).challenge).toMatch(/^DPoP /);
  });
});

describe('options said wrong at start', () => {
  it('takes a replay cache of one proof, and refuses none', () => {
    expect(() => verifierOf({ dpop: { maxProofs: 1 } })).not.toThrow();
    expect(() => verifierOf({ dpop: { maxProofs: 0 } })).toThrow(new TypeError('dpop.maxProofs must be a positive integer, not 0'));
    expect(() => verifierOf({ dpop: { maxProofs: 1.5 } })).toThrow(TypeError);
  });

  it.each(['https://api.example.test', 'https://api.example.test/', 'http://api.example.test:8080'])('takes the public origin %j', (origin) => {
    expect(() => verifierOf({ dpop: { origin } })).not.toThrow();
  });

  it.each(['https://api.example.test/path', 'ftp://api.example.test', 'api.example.test', 'https://user@api.example.test'])('refuses the public origin %j, in words', (origin) => {
    expect(() => verifierOf({ dpop: { origin } })).toThrow(new TypeError(`dpop.origin must be an http(s) origin such as https://api.example.com, not ${origin}`));
  });

  it('refuses a nonce window given as text', () => {
    expect(() => new DpopNonces('realm', { windowSeconds: '300' as never })).toThrow(new TypeError('dpop.nonce.windowSeconds must be an integer from 10 to 3600, not 300'));
  });

  it.each<[unknown, number | string]>([
    [0.5, 30], [1 / 120, 1], [10, 600],
    [0, 'not'], [-1, 'not'], [Number.NaN, 'not'], [Number.POSITIVE_INFINITY, 'not'], ['5', 'not'],
  ])('a recent sign-in of %p minutes is %p seconds', (minutes, seconds) => {
    if (seconds === 'not') expect(() => recentSignInSeconds(minutes as number)).toThrow(new TypeError(`a recent sign-in is a positive number of minutes, not ${String(minutes)}`));
    else expect(recentSignInSeconds(minutes as number)).toBe(seconds);
  });
});

describe('the scope and tenant checks', () => {
  const auth = (over: Partial<AccessTokenContext> = {}) => ({
    sub: 'client-1', clientId: 'client-1', tenant: 'acme', scopes: new Set(['a']), constraints: {}, isNamedUser: false, amr: [], claims: {}, ...over,
  }) as AccessTokenContext;

  it('names every missing scope, quoted, in its words and its challenge', () => {
    const refusal = (() => { try { checkScopes(auth(), ['a', 'b', 'c'], 'realm'); } catch (error) { return error; } return undefined; })();
    expect(refusal).toMatchObject({ status: 403, error: 'insufficient_scope', description: "the access token lacks the scope 'b', 'c'" });
    expect((refusal as { challenge: string }).challenge).toContain('scope="a b c"');
  });

  it.each<[string, string | undefined, string | undefined, boolean]>([
    ["the token's tenant", 'acme', 'acme', true],
    ['another tenant', 'acme', 'globex', false],
    ['a request whose tenant is unknown', 'acme', undefined, false],
    ['an empty tenant on both sides', '', '', false],
    ['a token without a tenant, a request without one', undefined, undefined, false],
  ])('%s: allowed %p', (_name, tokenTenant, requestTenant, allowed) => {
    const check = () => checkTenant(auth({ tenant: tokenTenant }), requestTenant, 'realm');
    if (allowed) expect(check).not.toThrow();
    else expect(check).toThrow(expect.objectContaining({ status: 403, description: 'the access token belongs to another tenant' }) as never);
  });
});

describe('introspection: its request, its cache, its failures', () => {
  let server: Server;
  let url: URL;
  let active = true;
  let status = 200;
  const requests: Array<{ headers: Record<string, string | string[] | undefined>; body: URLSearchParams }> = [];

  beforeAll(async () => {
    server = createServer((request, response) => {
      let body = '';
      request.on('data', (chunk: Buffer) => { body += chunk.toString(); });
      request.on('end', () => {
        requests.push({ headers: request.headers, body: new URLSearchParams(body) });
        response.writeHead(status, { 'content-type': 'application/json' }).end(JSON.stringify({ active }));
      });
    });
    await new Promise<void>((resolve) => server.listen(0, '127.0.0.1', resolve));
    url = new URL(`http://127.0.0.1:${(server.address() as AddressInfo).port}/introspect`);
  });
  afterAll(() => new Promise<void>((resolve) => server.close(() => resolve())));
  afterEach(() => {
    jest.restoreAllMocks();
    active = true;
    status = 200;
  });

  const isLive = (cacheSeconds?: number, maxCached?: number) => introspector({ url, clientId: 'api-1', clientSecret: 'api-secret', ...(cacheSeconds === undefined ? {} : { cacheSeconds }) }, ISSUER, 'realm', maxCached);
  const asks = async (run: () => Promise<unknown>) => {
    const before = requests.length;
    await run();
    return requests.length - before;
  };

  it('asks with Basic authentication, a form and the token type hint, and reads active', async () => {
    await expect(isLive()('the-token')).resolves.toBe(true);
    const { headers, body } = requests.at(-1)!;
    expect(headers.authorization).toBe(`Basic ${Buffer.from('api-1:api-secret').toString('base64')}`);
    expect(headers['content-type']).toBe('application/x-www-form-urlencoded');
    expect(headers.accept).toBe('application/json');
    expect(Object.fromEntries(body)).toEqual({ token: 'the-token', token_type_hint: 'access_token' });
    active = false;
    await expect(isLive()('another-token')).resolves.toBe(false);
  });

  it('keeps an answer to the last millisecond of cacheSeconds (5 by default), and none with 0', async () => {
    let now = Date.parse('2026-03-01T00:00:00Z');
    jest.spyOn(Date, 'now').mockImplementation(() => now);
    const live = isLive();
    expect(await asks(() => live('t-1'))).toBe(1);
    now += 4_999;
    expect(await asks(() => live('t-1'))).toBe(0);
    now += 1;
    expect(await asks(() => live('t-1'))).toBe(1);
    const never = isLive(0);
    expect(await asks(() => never('t-2'))).toBe(1);
    expect(await asks(() => never('t-2'))).toBe(1);
  });

  it('keeps at most maxCached answers: the oldest goes first', async () => {
    const live = isLive(60, 2);
    expect(await asks(async () => { await live('a'); await live('b'); })).toBe(2);
    expect(await asks(() => live('a'))).toBe(0);
    expect(await asks(() => live('c'))).toBe(1);
    expect(await asks(() => live('b'))).toBe(0);
    expect(await asks(() => live('c'))).toBe(0);
    expect(await asks(() => live('a'))).toBe(1);
  });

  it('refuses with 503 when the endpoint answers otherwise than 200, and keeps no such answer', async () => {
    status = 500;
    const live = isLive();
    await expect(live('t-3')).rejects.toMatchObject({ status: 503, error: 'temporarily_unavailable' });
    status = 200;
    await expect(live('t-3')).resolves.toBe(true);
  });

  it('refuses with 503 when the endpoint cannot be reached', async () => {
    const closed = createServer();
    await new Promise<void>((resolve) => closed.listen(0, '127.0.0.1', resolve));
    const gone = new URL(`http://127.0.0.1:${(closed.address() as AddressInfo).port}/introspect`);
    await new Promise<void>((resolve) => closed.close(() => resolve()));
    const live = introspector({ url: gone, clientId: 'api-1', clientSecret: 'api-secret' }, ISSUER, 'realm');
    await expect(live('t-4')).rejects.toMatchObject({ status: 503, error: 'temporarily_unavailable' });
  });

  it('refuses a token the endpoint says is not active, in words', async () => {
    active = false;
    const verifier = verifierOf({ introspection: { url, clientId: 'api-1', clientSecret: 'api-secret' } });
    await expect(verifier.verify(await tokenOf())).rejects.toMatchObject({ status: 401, description: 'the access token is no longer valid' });
  });
});
