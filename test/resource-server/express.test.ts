import { InvalidToken } from '../../policies/errors.js';
import { expressAuthenticate, expressRequireTenant, type ExpressLikeRequest, type ExpressLikeResponse } from '../../src/resource-server/express.js';
import type { AccessTokenContext, AuthorizedRequest, TokenVerifier } from '../../src/resource-server/verifier.js';

const REALM = 'https://api.example.com';

const machine: AccessTokenContext = {
  sub: 'c', clientId: 'c', tenant: 'acme', scopes: new Set(), constraints: {}, isNamedUser: false, amr: [], acr: undefined, authTime: undefined, claims: {},
};

/** A verifier that records the request the middleware built, and answers `answer`. */
function recordingVerifier(answer: () => Promise<AccessTokenContext>): TokenVerifier & { requests: AuthorizedRequest[] } {
  const requests: AuthorizedRequest[] = [];
  return {
    requests,
    realm: REALM,
    verify: answer,
    verifyAuthorization: answer,
    verifyRequest: (request) => {
      requests.push(request);
      return answer();
    },
  };
}

function response(): ExpressLikeResponse & { statusCode?: number; headers: Record<string, string>; body?: unknown } {
  const res = {
    headers: {} as Record<string, string>,
    statusCode: undefined as number | undefined,
    body: undefined as unknown,
    status(code: number) {
      res.statusCode = code;
      return res;
    },
    set(name: string, value: string) {
      res.headers[name] = value;
      return res;
    },
    json(body: unknown) {
      res.body = body;
    },
  };
  return res;
}

/** Runs a middleware to its end: what it passed to next (or undefined when it answered itself). */
function run(middleware: (req: ExpressLikeRequest, res: ExpressLikeResponse, next: (error?: unknown) => void) => void, req: ExpressLikeRequest, res = response()) {
  return new Promise<{ next: boolean; error: unknown; res: ReturnType<typeof response> }>((resolve) => {
    res.json = (body: unknown) => {
      res.body = body;
      resolve({ next: false, error: undefined, res });
    };
    middleware(req, res, (error?: unknown) => resolve({ next: true, error, res }));
  });
}

/**
 * The Express middleware of the resource-server kit on Express-like requests (the HTTP tests run
 * real Express; these rows are the shapes an older Express or a stand-in gives it): the URL a DPoP
 * proof is checked against, two DPoP headers, errors that are not token errors.
 */
describe('expressAuthenticate and the checks after it (src/resource-server/express.ts)', () => {
  const base = { method: 'GET', protocol: 'https', originalUrl: '/payslips?page=2' };

  it.each<[string, ExpressLikeRequest, string]>([
    ['req.host (Express 5, trust proxy honoured)', { ...base, host: 'api.example.com:8443', get: () => 'raw.example.com', headers: { host: 'header.example.com' } }, 'https://api.example.com:8443/payslips?page=2'],
    ['no req.host: the Host header as req.get reads it', { ...base, get: (name) => (name.toLowerCase() === 'host' ? 'raw.example.com' : undefined), headers: { host: 'header.example.com' } }, 'https://raw.example.com/payslips?page=2'],
    ['neither: the raw headers', { ...base, headers: { host: 'header.example.com' } }, 'https://header.example.com/payslips?page=2'],
    ['no host at all: no URL (a proof then matches none)', { ...base, headers: {} }, ''],
    ['no scheme: no URL', { method: 'GET', originalUrl: '/x', host: 'api.example.com', headers: {} }, ''],
  ])('the URL of the request: %s', async (_name, req, url) => {
    const verifier = recordingVerifier(() => Promise.resolve(machine));
    const outcome = await run(expressAuthenticate(verifier), req);
    expect(outcome).toMatchObject({ next: true, error: undefined });
    expect(verifier.requests[0]).toMatchObject({ url, method: req.method ?? '' });
    expect(req.auth).toBe(machine);
  });

  it.each<[string, string | undefined, string | undefined]>([
    ['DPoP', 'DPoP abc', 'nonce-1'],
    ['dpop in lower case, with spaces before it', '  dpop abc', 'nonce-1'],
    ['Bearer', 'Bearer abc', undefined],
    ['Bearer of a token that says DPoP', 'Bearer DPoP abc', undefined],
    ['none', undefined, undefined],
  ])('the current DPoP nonce is handed out with an Authorization of %s: %s', async (_name, authorization, nonce) => {
    const verifier = { ...recordingVerifier(() => Promise.resolve(machine)), dpopNonce: () => 'nonce-1' };
    const outcome = await run(expressAuthenticate(verifier), { ...base, host: 'api.example.com', headers: authorization === undefined ? {} : { authorization } });
    expect(outcome.res.headers['DPoP-Nonce']).toBe(nonce);
  });

  it('a request without a method is passed on with an empty one (the verifier then refuses any proof)', async () => {
    const verifier = recordingVerifier(() => Promise.resolve(machine));
    await run(expressAuthenticate(verifier), { protocol: 'https', originalUrl: '/x', host: 'api.example.com', headers: {} });
    expect(verifier.requests[0]!.method).toBe('');
  });

  it('two DPoP headers are passed on as two proofs (comma-joined), which the verifier refuses', async () => {
    const verifier = recordingVerifier(() => Promise.resolve(machine));
    await run(expressAuthenticate(verifier), { ...base, host: 'api.example.com', headers: { authorization: 'DPoP t', dpop: ['p1', 'p2'] } });
    expect(verifier.requests[0]).toMatchObject({ authorization: 'DPoP t', dpop: 'p1,p2' });
  });

  it('a token error is answered (401 with its challenge, no-store); any other error goes to Express', async () => {
    const refused = await run(expressAuthenticate(recordingVerifier(() => Promise.reject(new InvalidToken('the access token is not valid', REALM)))), { ...base, headers: {} });
    expect(refused).toMatchObject({ next: false, res: { statusCode: 401, body: { error: 'invalid_token' } } });
    expect(refused.res.headers).toMatchObject({ 'Cache-Control': 'no-store', 'WWW-Authenticate': expect.stringContaining(`Bearer realm="${REALM}"`) });
    const broken = new Error('the key set could not be read');
    expect(await run(expressAuthenticate(recordingVerifier(() => Promise.reject(broken))), { ...base, headers: {} })).toMatchObject({ next: true, error: broken });
  });

  it("a check's own error that is not a token error (the API's tenantOf failing) goes to Express, not answered as 403", async () => {
    const verifier = recordingVerifier(() => Promise.resolve(machine));
    const broken = new Error('no tenant in this path');
    const guard = expressRequireTenant(verifier, () => {
      throw broken;
    });
    expect(await run(guard, { ...base, headers: {}, auth: machine })).toMatchObject({ next: true, error: broken });
    const other = await run(expressRequireTenant(verifier, () => 'globex'), { ...base, headers: {}, auth: machine });
    expect(other).toMatchObject({ next: false, res: { statusCode: 403 } });
    expect(await run(expressRequireTenant(verifier, () => 'acme'), { ...base, headers: {}, auth: machine })).toMatchObject({ next: true, error: undefined });
  });
});
