/**
 * Adversarial token request bodies: content types, duplicates, sizes, encodings, methods, grant
 * types, array-ish and NUL-laden parameters. Each refused request carries a live authorization code
 * (or valid client credentials), and the test then shows that the code is still redeemable: a
 * malformed request never consumes, revokes or half-processes anything.
 */
import { alice, testAccounts } from '../support/accounts.js';
import { basic, postToken, type RunningServer, startServer } from '../support/server.js';
import { signInForCode } from '../support/sign-in.js';
import { STORE_KINDS, useStore } from '../support/stores.js';
import { UserAgent } from '../support/user-agent.js';
import { exchangeCode, expectOAuthError, expectTokens, FORM, type PublicApp, rawPost, SPA } from './helpers.js';

const LIMIT = 2048;

interface Pending {
  code: string;
  verifier: string;
}

interface Malformed {
  body?: RequestInit['body'];
  headers?: Record<string, string>;
  method?: string;
  /** Sent as the query string instead of a body. */
  query?: string;
}

type Row = [name: string, build: (p: Pending, spa: PublicApp) => Malformed, status: number, error: string];

const enc = encodeURIComponent;

/** The well-formed public-client exchange of `p`, urlencoded. */
function good(p: Pending, spa: PublicApp): string {
  return `grant_type=authorization_code&client_id=${spa.clientId}&code=${p.code}&redirect_uri=${enc(SPA)}&code_verifier=${p.verifier}`;
}

/** `good` with one parameter's name=value pair replaced by raw text. */
function withPair(p: Pending, spa: PublicApp, name: string, raw: string): string {
  return good(p, spa)
    .split('&')
    .map((pair) => (pair.startsWith(`${name}=`) ? raw : pair))
    .join('&');
}

const form = (body: string | Uint8Array): Malformed => ({ body, headers: FORM });

function multipart(fields: Array<[string, string | Blob]>): FormData {
  const data = new FormData();
  for (const [name, value] of fields) data.append(name, value);
  return data;
}

function fields(p: Pending, spa: PublicApp): Array<[string, string]> {
  return [['grant_type', 'authorization_code'], ['client_id', spa.clientId], ['code', p.code], ['redirect_uri', SPA], ['code_verifier', p.verifier]];
}

/** A body streamed in chunks, without Content-Length (Transfer-Encoding: chunked). */
function chunked(text: string): ReadableStream<Uint8Array> {
  const bytes = Buffer.from(text);
  let offset = 0;
  return new ReadableStream({
    pull(controller) {
      if (offset >= bytes.length) {
        controller.close();
        return;
      }
      controller.enqueue(new Uint8Array(bytes.subarray(offset, offset + 512)));
      offset += 512;
    },
  });
}

const contentTypes: Row[] = [
  ['JSON', (p, spa) => ({ body: JSON.stringify(Object.fromEntries(fields(p, spa))), headers: { 'content-type': 'application/json' } }), 400, 'invalid_request'],
  ['text/plain', (p, spa) => ({ body: good(p, spa), headers: { 'content-type': 'text/plain' } }), 400, 'invalid_request'],
  ['no content type at all', (p, spa) => ({ body: Buffer.from(good(p, spa)) }), 400, 'invalid_request'],
  ['a look-alike type', (p, spa) => ({ body: good(p, spa), headers: { 'content-type': 'application/x-www-form-urlencoded-x' } }), 400, 'invalid_request'],
  ['multipart without a boundary', (p, spa) => ({ body: good(p, spa), headers: { 'content-type': 'multipart/form-data' } }), 400, 'invalid_request'],
  ['multipart with a file part', (p, spa) => ({ body: multipart([...fields(p, spa), ['file', new Blob(['x'])]]) }), 400, 'invalid_request'],
  ['XML', (p) => ({ body: `<code>${p.code}</code>`, headers: { 'content-type': 'application/xml' } }), 400, 'invalid_request'],
];

const duplicates: Row[] = [
  ['code twice, same value', (p, spa) => form(`${good(p, spa)}&code=${p.code}`), 400, 'invalid_request'],
  ['grant_type twice, two values', (p, spa) => form(`grant_type=client_credentials&${good(p, spa)}`), 400, 'invalid_request'],
  ['client_id twice', (p, spa) => form(`${good(p, spa)}&client_id=${spa.clientId}`), 400, 'invalid_request'],
  ['redirect_uri twice, the second different', (p, spa) => form(`${good(p, spa)}&redirect_uri=${enc('https://evil.example/cb')}`), 400, 'invalid_request'],
  ['a duplicate with an empty value', (p, spa) => form(`${good(p, spa)}&code_verifier=`), 400, 'invalid_request'],
  ['a duplicate whose name is percent-encoded', (p, spa) => form(`${good(p, spa)}&c%6Fde=${p.code}`), 400, 'invalid_request'],
  ['a duplicate in a multipart body', (p, spa) => ({ body: multipart([...fields(p, spa), ['code', p.code]]) }), 400, 'invalid_request'],
];

const encodings: Row[] = [
  ['a lone % at the end of the code', (p, spa) => form(withPair(p, spa, 'code', `code=${p.code}%`)), 400, 'invalid_request'],
  ['a %G1 escape', (p, spa) => form(`${good(p, spa)}&state=%G1`), 400, 'invalid_request'],
  ['a truncated escape (%A)', (p, spa) => form(`${good(p, spa)}&state=%A`), 400, 'invalid_request'],
  ['percent-encoded invalid UTF-8 (%C3%28)', (p, spa) => form(`${good(p, spa)}&state=%C3%28`), 400, 'invalid_request'],
  ['a percent-encoded overlong slash (%C0%AF)', (p, spa) => form(`${good(p, spa)}&state=%C0%AF`), 400, 'invalid_request'],
  ['a percent-encoded UTF-16 surrogate (%ED%A0%80)', (p, spa) => form(`${good(p, spa)}&state=%ED%A0%80`), 400, 'invalid_request'],
  ['an IIS-style %u escape', (p, spa) => form(`${good(p, spa)}&state=%u0041`), 400, 'invalid_request'],
  ['a raw 0xFF byte', (p, spa) => form(Buffer.concat([Buffer.from(`${good(p, spa)}&state=`), Buffer.from([0xff])])), 400, 'invalid_request'],
  ['raw overlong UTF-8 bytes', (p, spa) => form(Buffer.concat([Buffer.from(`${good(p, spa)}&state=`), Buffer.from([0xc0, 0xaf])])), 400, 'invalid_request'],
  ['a Latin-1 byte in the code', (p, spa) => form(Buffer.concat([Buffer.from(withPair(p, spa, 'code', `code=${p.code}`)), Buffer.from([0xe9])])), 400, 'invalid_request'],
  ['a bad escape in a name', (p, spa) => form(`${good(p, spa)}&st%zate=x`), 400, 'invalid_request'],
  ['a byte-order mark before the first name', (p, spa) => form(`\uFEFF${good(p, spa)}`), 400, 'invalid_request'],
];

const arrayish: Row[] = [
  ['code[] instead of code', (p, spa) => form(withPair(p, spa, 'code', `code[]=${p.code}`)), 400, 'invalid_request'],
  ['code[0] instead of code', (p, spa) => form(withPair(p, spa, 'code', `code[0]=${p.code}`)), 400, 'invalid_request'],
  ['redirect_uri[] instead of redirect_uri', (p, spa) => form(withPair(p, spa, 'redirect_uri', `redirect_uri[]=${enc(SPA)}`)), 400, 'invalid_request'],
  ['code_verifier[] instead of code_verifier', (p, spa) => form(withPair(p, spa, 'code_verifier', `code_verifier[]=${p.verifier}`)), 400, 'invalid_request'],
  ['grant_type[] instead of grant_type', (p, spa) => form(withPair(p, spa, 'grant_type', 'grant_type[]=authorization_code')), 400, 'invalid_request'],
  ['client_id[] instead of client_id', (p, spa) => form(withPair(p, spa, 'client_id', `client_id[]=${spa.clientId}`)), 401, 'invalid_client'],
  ['client_id[key] instead of client_id', (p, spa) => form(withPair(p, spa, 'client_id', `client_id[a]=${spa.clientId}`)), 401, 'invalid_client'],
];

const nulBytes: Row[] = [
  ['%00 after the code', (p, spa) => form(withPair(p, spa, 'code', `code=${p.code}%00`)), 400, 'invalid_grant'],
  ['%00 before the code', (p, spa) => form(withPair(p, spa, 'code', `code=%00${p.code}`)), 400, 'invalid_grant'],
  ['a raw NUL byte after the code', (p, spa) => form(withPair(p, spa, 'code', `code=${p.code}\u0000`)), 400, 'invalid_grant'],
  ['%00 after the verifier', (p, spa) => form(withPair(p, spa, 'code_verifier', `code_verifier=${p.verifier}%00`)), 400, 'invalid_request'],
  ['%00 after the redirect URI', (p, spa) => form(withPair(p, spa, 'redirect_uri', `redirect_uri=${enc(SPA)}%00`)), 400, 'invalid_grant'],
  ['%00 after the client_id', (p, spa) => form(withPair(p, spa, 'client_id', `client_id=${spa.clientId}%00`)), 401, 'invalid_client'],
  ['%00 after the grant type', (p, spa) => form(withPair(p, spa, 'grant_type', 'grant_type=authorization_code%00')), 400, 'unsupported_grant_type'],
  ['%00 inside a name', (p, spa) => form(withPair(p, spa, 'code', `co%00de=${p.code}`)), 400, 'invalid_request'],
];

const methods: Row[] = [
  ['GET with the exchange in the query', (p, spa) => ({ method: 'GET', query: good(p, spa) }), 405, 'invalid_request'],
  ['PUT', (p, spa) => ({ method: 'PUT', ...form(good(p, spa)) }), 405, 'invalid_request'],
  ['PATCH', (p, spa) => ({ method: 'PATCH', ...form(good(p, spa)) }), 405, 'invalid_request'],
  ['DELETE', (p, spa) => ({ method: 'DELETE', ...form(good(p, spa)) }), 405, 'invalid_request'],
];

const sizes: Row[] = [
  ['one byte over the limit (Content-Length)', (p, spa) => form(padTo(good(p, spa), LIMIT + 1)), 413, 'invalid_request'],
  ['far over the limit (Content-Length)', (p, spa) => form(padTo(good(p, spa), LIMIT * 8)), 413, 'invalid_request'],
  ['over the limit, chunked (no Content-Length)', (p, spa) => ({ body: chunked(padTo(good(p, spa), LIMIT * 4)), headers: FORM }), 413, 'invalid_request'],
  ['over the limit, multipart', (p, spa) => ({ body: multipart([...fields(p, spa), ['state', 'a'.repeat(LIMIT * 2)]]) }), 413, 'invalid_request'],
];

/** `body` plus an ignored parameter, `length` bytes in all. */
function padTo(body: string, length: number): string {
  const prefix = `${body}&pad=`;
  return prefix + 'a'.repeat(length - prefix.length);
}

describe.each(STORE_KINDS)('adversarial token request bodies (%s store)', (kind) => {
  const store = useStore(kind);
  let server: RunningServer;
  let spa: PublicApp;
  let machine: { clientId: string; secret: string };
  let agent: UserAgent;

  beforeAll(async () => {
    server = await startServer({ store: store.option(), accounts: testAccounts([alice]), limits: { tokenRequestBytes: LIMIT } });
    spa = { clientId: (await server.auth.appRegistrations.create({ name: 'SPA', redirectUris: [SPA], clientType: 'public' })).clientId, redirectUri: SPA };
    const created = await server.auth.clientConfigurations.create({
      tenant: 'acme', name: 'Sync', category: 'hr',
      resources: { scim: { scopes: ['scim.read'] }, subscriptions: { scopes: ['manage.subscriptions'] } },
    });
    machine = { clientId: created.clientId, secret: created.clientSecret };
    // One browser for the whole suite: after the first sign-in, authorize answers with a code at once.
    agent = new UserAgent(server.baseUrl);
  });
  afterAll(async () => {
    await server.stop();
  });

  async function pending(): Promise<Pending> {
    const { code, verifier } = await signInForCode(server, spa, alice, 'openid scim.read', agent);
    return { code, verifier };
  }

  function send({ body, headers = {}, method = 'POST', query }: Malformed) {
    return rawPost(server, body, headers, method, query);
  }

  /** The refused request left the code as it was: the proper exchange still succeeds. */
  async function expectStillRedeemable(p: Pending): Promise<void> {
    expectTokens(await exchangeCode(server, spa, p.code, p.verifier));
  }

  describe.each([
    ['content type', contentTypes],
    ['duplicate parameters', duplicates],
    ['percent-encoding and UTF-8', encodings],
    ['array-ish parameter names', arrayish],
    ['NUL bytes', nulBytes],
    ['methods other than POST', methods],
    ['body size', sizes],
  ] as const)('%s', (_area, rows) => {
    const cases = (rows as Row[]).map(([name, build, status, error]) => ({ name, build, status, error }));
    it.each(cases)('$name → $status $error, and the code is untouched', async ({ build, status, error }) => {
      const p = await pending();
      const response = await send(build(p, spa));
      expectOAuthError(server, response, status, error);
      if (status === 405) expect(response.headers.get('allow')).toBe('POST');
      await expectStillRedeemable(p);
    });
  });

  describe('what is accepted (controls)', () => {
    it('a charset parameter', async () => {
      const p = await pending();
      expectTokens(await rawPost(server, good(p, spa), { 'content-type': 'application/x-www-form-urlencoded; charset=UTF-8' }));
    });

    it('an upper-case media type (RFC 9110 §8.3.1: case-insensitive)', async () => {
      const p = await pending();
      expectTokens(await rawPost(server, good(p, spa), { 'content-type': 'Application/X-WWW-Form-URLEncoded' }));
    });

    it('code[] beside code: not a parameter, ignored (RFC 6749 §3.1); the exchange succeeds, once', async () => {
      const p = await pending();
      expectTokens(await rawPost(server, `${good(p, spa)}&code[]=${p.code}`, FORM));
      expectOAuthError(server, await exchangeCode(server, spa, p.code, p.verifier), 400, 'invalid_grant');
    });

    it('a multipart body with the code exchange fields', async () => {
      const p = await pending();
      expectTokens(await rawPost(server, multipart(fields(p, spa))));
    });

    it('a body of exactly the limit, and a chunked one under it', async () => {
      const p = await pending();
      expectTokens(await rawPost(server, padTo(good(p, spa), LIMIT), FORM));
      const q = await pending();
      expectTokens(await rawPost(server, chunked(good(q, spa)), FORM));
    });

    it('HEAD is refused like GET (405, Allow: POST), without a body', async () => {
      const response = await fetch(`${server.oauthUrl}/token`, { method: 'HEAD' });
      expect(response.status).toBe(405);
      expect(response.headers.get('allow')).toBe('POST');
      expect(await response.text()).toBe('');
    });
  });

  describe('empty and near-empty bodies', () => {
    it.each([
      ['an empty body', ''],
      ['only separators', '&&&'],
      ['a lone =', '='],
      ['an empty grant_type (counts as omitted)', 'grant_type='],
      ['whitespace', ' '],
      ['a name without = or value', 'grant_type'],
    ])('%s → 400 invalid_request', async (_name, body) => {
      expectOAuthError(server, await postToken(server.oauthUrl, body, { authorization: basic(machine.clientId, machine.secret) }), 400, 'invalid_request');
    });

    it('an empty body without a content type → 400 invalid_request', async () => {
      expectOAuthError(server, await rawPost(server, undefined, { authorization: basic(machine.clientId, machine.secret) }), 400, 'invalid_request');
    });
  });

  describe('grant types the server does not have', () => {
    it.each([
      'password',
      'implicit',
      'Client_Credentials',
      'CLIENT_CREDENTIALS',
      ' client_credentials',
      'client_credentials ',
      'client_credentials\t',
      'client_credentials authorization_code',
      'client_credentials,authorization_code',
      'urn:ietf:params:oauth:grant-type:token-exchange',
      'urn:ietf:params:oauth:grant-type:jwt-bearer',
      'urn:ietf:params:oauth:grant-type:saml2-bearer',
      'urn:openid:params:grant-type:ciba',
      'urn:ietf:params:oauth:grant-type:pre-authorized_code',
      '__proto__',
      'constructor',
      'refresh_token\u0000',
    ])('%j → 400 unsupported_grant_type, the client unharmed', async (grant) => {
      const auth = { authorization: basic(machine.clientId, machine.secret) };
      expectOAuthError(server, await postToken(server.oauthUrl, { grant_type: grant }, auth), 400, 'unsupported_grant_type');
      expectTokens(await postToken(server.oauthUrl, 'grant_type=client_credentials', auth));
    });
  });

  describe('client_credentials with odd scope parameters', () => {
    const auth = () => ({ authorization: basic(machine.clientId, machine.secret) });

    it('scope[]= is not a scope: ignored, so every assigned scope is granted (as when scope is omitted)', async () => {
      const response = await postToken(server.oauthUrl, 'grant_type=client_credentials&scope[]=manage.subscriptions', auth());
      expectTokens(response);
      expect(new Set(String(response.body.scope).split(' '))).toEqual(new Set(['scim.read', 'manage.subscriptions']));
    });

    it.each([
      ['a NUL after a scope', 'scim.read%00'],
      ['a NUL between scopes', 'scim.read%00manage.subscriptions'],
      ['a scope that differs in case', 'SCIM.READ'],
      ['a scope with a trailing dot', 'scim.read.'],
      ['a scope name of the prototype', '__proto__'],
    ])('%s → 400 invalid_scope', async (_name, scope) => {
      expectOAuthError(server, await postToken(server.oauthUrl, `grant_type=client_credentials&scope=${scope}`, auth()), 400, 'invalid_scope');
    });

    it('tabs, newlines and double spaces between scopes are not separators', async () => {
      for (const scope of ['scim.read%09manage.subscriptions', 'scim.read%0Amanage.subscriptions']) {
        expectOAuthError(server, await postToken(server.oauthUrl, `grant_type=client_credentials&scope=${scope}`, auth()), 400, 'invalid_scope');
      }
    });
  });

  describe('no spelling of the token path reaches the engine without the guard', () => {
    // client_secret_post would be accepted by the bare engine: the guard is what refuses it.
    it.each([
      ['/oauth2/TOKEN', 401],
      ['/OAUTH2/token', 401],
      ['/oauth2/token/', 401],
      ['/oauth2/token?x=1', 401],
      ['/oauth2/%74oken', 404],
      ['/oauth2/%74%6F%6B%65%6E', 404],
      ['/oauth2//token', 404],
      ['//oauth2/token', 404],
      ['/oauth2/token;x', 404],
      ['/oauth2/token%2F', 404],
      ['/oauth2/token%20', 404],
      ['/oauth2/token%00', 404],
    ])('%s → %i, no token', async (path, status) => {
      const response = await fetch(`${server.baseUrl}${path}`, {
        method: 'POST',
        headers: FORM,
        body: `grant_type=client_credentials&client_id=${machine.clientId}&client_secret=${machine.secret}`,
      });
      const text = await response.text();
      expect(response.status).toBe(status);
      expect(text).not.toContain('access_token');
      if (status === 401) expect((JSON.parse(text) as { error: string }).error).toBe('invalid_client');
    });
  });

  it('a refused request leaves the machine client record as it was', async () => {
    const before = await server.auth.clientConfigurations.get(machine.clientId);
    await postToken(server.oauthUrl, 'grant_type=client_credentials&grant_type=client_credentials', { authorization: basic(machine.clientId, machine.secret) });
    expect(await server.auth.clientConfigurations.get(machine.clientId)).toEqual(before);
    expectTokens(await postToken(server.oauthUrl, 'grant_type=client_credentials', { authorization: basic(machine.clientId, machine.secret) }));
  });
});
