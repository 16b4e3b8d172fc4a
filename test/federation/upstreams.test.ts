import { afterAll, beforeAll, describe, expect, it } from '@jest/globals';
import { createServer, type IncomingMessage, type Server, type ServerResponse } from 'node:http';
import type { AddressInfo } from 'node:net';
import { decodeJwt, generateKeyPair } from 'jose';
import * as client from 'openid-client';
import { DeliveryError, type DeliveryFailure } from '../../src/engine/backchannel-delivery.js';
import { failureOf, UpstreamFailure, Upstreams, type UpstreamsSetup } from '../../src/federation/upstreams.js';
import type { ConnectionForSignIn } from '../../src/federation/connections.js';
import type { Tracing } from '../../src/observability/tracing.js';

/*
 * The relying party's own parts (src/federation/upstreams.ts), one rule per row, against a small
 * provider of this file on a real socket: the configuration cache (its version, expiry, bound and
 * forgetting), the client authentication sent, the loopback exception of the operator's provider,
 * the end-session URL, and the failure table. The whole exchange against a real node-oidc-provider
 * is in upstream-relying-party.test.ts.
 */

const CALLBACK = 'http://127.0.0.1:1/oauth2/federation/callback';

/** How one issuer path of the fake provider answers its discovery. */
interface IssuerBehaviour {
  status?: number;
  headers?: Record<string, string>;
  /** The discovery document's issuer (default: the issuer itself). */
  issuer?: string;
  endSession?: boolean;
  delayMs?: number;
}

interface TokenRequest {
  authorization: string | undefined;
  body: URLSearchParams;
}

/** A provider answering discovery for any issuer path under it, and a token endpoint that records. */
class FakeProvider {
  readonly discoveries: string[] = [];
  readonly tokenRequests: TokenRequest[] = [];
  readonly behaviours = new Map<string, IssuerBehaviour>();
  readonly traceparents: Array<string | undefined> = [];
  tokenAnswer: Record<string, unknown> = { access_token: 'upstream-at', token_type: 'Bearer', expires_in: 60 };
  origin = '';
  readonly #server: Server = createServer((request, response) => void this.#answer(request, response));

  async start(host = '127.0.0.1'): Promise<this> {
    await new Promise<void>((resolve) => this.#server.listen(0, host, resolve));
    const { port } = this.#server.address() as AddressInfo;
    this.origin = `http://${host.includes(':') ? `[${host}]` : host}:${port}`;
    return this;
  }

  close(): Promise<void> {
    this.#server.closeAllConnections();
    return new Promise((resolve) => this.#server.close(() => resolve()));
  }

  issuer(path = 'a'): string {
    return `${this.origin}/${path}`;
  }

  async #answer(request: IncomingMessage, response: ServerResponse): Promise<void> {
    this.traceparents.push(request.headers.traceparent as string | undefined);
    const chunks: Buffer[] = [];
    for await (const chunk of request) chunks.push(chunk as Buffer);
    const [, path, rest] = /^\/([^/]+)(\/.*)$/.exec(request.url ?? '') ?? [];
    const issuer = `${this.origin}/${path}`;
    if (rest === '/.well-known/openid-configuration') {
      this.discoveries.push(path!);
      const behaviour = this.behaviours.get(path!) ?? {};
      if (behaviour.delayMs) await new Promise((resolve) => setTimeout(resolve, behaviour.delayMs));
      response.writeHead(behaviour.status ?? 200, { 'content-type': 'application/json', ...behaviour.headers });
      response.end(JSON.stringify({
        issuer: behaviour.issuer ?? issuer,
        authorization_endpoint: `${issuer}/auth`,
        token_endpoint: `${issuer}/token`,
        jwks_uri: `${issuer}/jwks`,
        response_types_supported: ['code'],
        subject_types_supported: ['public'],
        id_token_signing_alg_values_supported: ['RS256'],
        ...(behaviour.endSession === false ? {} : { end_session_endpoint: `${issuer}/session/end` }),
      }));
      return;
    }
    if (rest === '/token') {
      this.tokenRequests.push({ authorization: request.headers.authorization, body: new URLSearchParams(Buffer.concat(chunks).toString()) });
      response.writeHead(200, { 'content-type': 'application/json' });
      response.end(JSON.stringify(this.tokenAnswer));
      return;
    }
    response.writeHead(404).end();
  }
}

let provider: FakeProvider;
let clock = Date.parse('2026-03-01T00:00:00Z');

function connectionOf(issuer: string, overrides: Partial<ConnectionForSignIn> = {}): ConnectionForSignIn {
  return {
    id: 'conn-1', tenant: 'acme', name: 'Acme IdP', issuer, clientId: 'talent-auth', tokenEndpointAuthMethod: 'client_secret_basic',
    hasClientSecret: true, scopes: ['openid', 'email'], domains: ['acme.example'], verifiedDomains: ['acme.example'], claimMapping: {}, signOutUpstream: true,
    mfaAcrValues: [], createdAt: '2026-01-01T00:00:00Z', updatedAt: '2026-01-01T00:00:00Z', clientSecret: 'upstream-secret-1',
    trustedHost: new URL(issuer).hostname, ...overrides,
  };
}

function upstreams(overrides: Partial<UpstreamsSetup> = {}): Upstreams {
  return new Upstreams({
    timeoutMs: 2000, metadataCacheSeconds: 60, callbackBase: CALLBACK, now: () => clock,
    signingKey: async () => { throw new Error('no signing key in this test'); },
    ...overrides,
  });
}

/** How many discoveries `run` caused. */
async function discoveriesDuring(run: () => Promise<unknown>): Promise<number> {
  const before = provider.discoveries.length;
  await run();
  return provider.discoveries.length - before;
}

beforeAll(async () => {
  provider = await new FakeProvider().start();
});
afterAll(async () => provider.close());

describe("the provider configuration cache: one discovery per connection's version, for metadataCacheSeconds", () => {
  it('keeps the configuration to the last millisecond of its lifetime, and discovers again at its end', async () => {
    const rp = upstreams();
    const connection = connectionOf(provider.issuer('life'));
    const start = clock;
    expect(await discoveriesDuring(() => rp.configuration(connection))).toBe(1);
    clock = start + 59_999;
    expect(await discoveriesDuring(() => rp.configuration(connection))).toBe(0);
    clock = start + 60_000;
    expect(await discoveriesDuring(() => rp.configuration(connection))).toBe(1);
    clock = start;
  });

  it.each<[string, Partial<ConnectionForSignIn>]>([
    ['its update time', { updatedAt: '2026-02-01T00:00:00Z' }],
    ['its issuer', { issuer: '' }],
    ['its client id', { clientId: 'another-client' }],
  ])('discovers again when the connection changes %s', async (_name, change) => {
    const rp = upstreams();
    const connection = connectionOf(provider.issuer('version'));
    const changed = { ...connection, ...change, issuer: change.issuer === undefined ? connection.issuer : provider.issuer('version-2') };
    expect(await discoveriesDuring(() => rp.configuration(connection))).toBe(1);
    expect(await discoveriesDuring(() => rp.configuration(connection))).toBe(0);
    expect(await discoveriesDuring(() => rp.configuration(changed))).toBe(1);
    expect(await discoveriesDuring(() => rp.configuration(changed))).toBe(0);
  });

  it('keeps nothing with metadataCacheSeconds 0, and keeps for 1 s with 1', async () => {
    const connection = connectionOf(provider.issuer('zero'));
    const never = upstreams({ metadataCacheSeconds: 0 });
    expect(await discoveriesDuring(() => never.configuration(connection))).toBe(1);
    expect(await discoveriesDuring(() => never.configuration(connection))).toBe(1);
    const brief = upstreams({ metadataCacheSeconds: 1 });
    const start = clock;
    expect(await discoveriesDuring(() => brief.configuration(connection))).toBe(1);
    clock = start + 999;
    expect(await discoveriesDuring(() => brief.configuration(connection))).toBe(0);
    clock = start + 1000;
    expect(await discoveriesDuring(() => brief.configuration(connection))).toBe(1);
    clock = start;
  });

  it('forgets one connection (the others kept), or every one', async () => {
    const rp = upstreams();
    const one = connectionOf(provider.issuer('forget'), { id: 'conn-1' });
    const two = connectionOf(provider.issuer('forget'), { id: 'conn-2' });
    expect(await discoveriesDuring(async () => { await rp.configuration(one); await rp.configuration(two); })).toBe(2);
    rp.forget('conn-1');
    expect(await discoveriesDuring(() => rp.configuration(two))).toBe(0);
    expect(await discoveriesDuring(() => rp.configuration(one))).toBe(1);
    rp.forget(undefined);
    expect(await discoveriesDuring(async () => { await rp.configuration(one); await rp.configuration(two); })).toBe(2);
  });

  it('keeps at most 500 configurations: the oldest goes first, the others stay', async () => {
    const rp = upstreams();
    const issuer = provider.issuer('bound');
    const connection = (n: number) => connectionOf(issuer, { id: `conn-${n}` });
    expect(await discoveriesDuring(async () => { for (let n = 0; n < 500; n += 1) await rp.configuration(connection(n)); })).toBe(500);
    expect(await discoveriesDuring(() => rp.configuration(connection(0)))).toBe(0);
    expect(await discoveriesDuring(() => rp.configuration(connection(500)))).toBe(1);
    // The first one in is the one dropped (conn-0, read again above, is still the oldest: the
    // cache keeps its order of entry, not of use).
    expect(await discoveriesDuring(() => rp.configuration(connection(1)))).toBe(0);
    expect(await discoveriesDuring(() => rp.configuration(connection(499)))).toBe(0);
    expect(await discoveriesDuring(() => rp.configuration(connection(0)))).toBe(1);
  });

  it('keeps no failed discovery, and a late failure does not drop the newer configuration', async () => {
    provider.behaviours.set('flaky', { status: 500 });
    const rp = upstreams();
    const connection = connectionOf(provider.issuer('flaky'));
    await expect(rp.configuration(connection)).rejects.toMatchObject({ reason: 'bad_metadata' });
    provider.behaviours.delete('flaky');
    expect(await discoveriesDuring(() => expect(rp.configuration(connection)).resolves.toBeDefined())).toBe(1);

    // A slow discovery that fails, overtaken by the connection's next version.
    provider.behaviours.set('slow-fail', { status: 500, delayMs: 150 });
    const before = connectionOf(provider.issuer('slow-fail'), { id: 'conn-race' });
    const after = connectionOf(provider.issuer('race-ok'), { id: 'conn-race' });
    const failing = rp.configuration(before);
    await rp.configuration(after);
    await expect(failing).rejects.toMatchObject({ reason: 'bad_metadata' });
    await new Promise((resolve) => setImmediate(resolve));
    expect(await discoveriesDuring(() => rp.configuration(after))).toBe(0);
  });
});

describe('discovery', () => {
  it.each<[string, IssuerBehaviour, RegExp]>([
    ['names another issuer', { issuer: 'http://127.0.0.1:9/other' }, /issuer/],
    ['answers 500', { status: 500 }, /status/i],
    ['answers 401 with a challenge', { status: 401, headers: { 'www-authenticate': 'Bearer error="invalid_token"' } }, /status/i],
  ])('a provider whose discovery %s has bad metadata', async (_name, behaviour, detail) => {
    const path = `bad-${Math.random().toString(36).slice(2)}`;
    provider.behaviours.set(path, behaviour);
    const failure = await upstreams().configuration(connectionOf(provider.issuer(path))).catch((error: unknown) => error);
    expect(failure).toBeInstanceOf(UpstreamFailure);
    expect(failure).toMatchObject({ reason: 'bad_metadata', detail: expect.stringMatching(detail) });
  });

  it('keeps the reason of a discovery that got no answer: timeout, unreachable, refused', async () => {
    provider.behaviours.set('late', { delayMs: 400 });
    await expect(upstreams({ timeoutMs: 150 }).configuration(connectionOf(provider.issuer('late')))).rejects.toMatchObject({ reason: 'timeout' });
    const closed = await new FakeProvider().start();
    await closed.close();
    await expect(upstreams().configuration(connectionOf(closed.issuer('gone')))).rejects.toMatchObject({ reason: 'unreachable' });
    // A tenant's provider at a special-use address (no host named by the operator).
    const https = `https://127.0.0.1:${new URL(provider.origin).port}/tenant`;
    await expect(upstreams().configuration(connectionOf(https, { trustedHost: undefined }))).rejects.toMatchObject({ reason: 'refused' });
  });

  it("talks plain http only to the operator's loopback provider", async () => {
    const issuer = provider.issuer('plain');
    // The operator's own loopback provider: discovered over http.
    expect(await discoveriesDuring(() => upstreams().configuration(connectionOf(issuer)))).toBe(1);
    // Anyone else's http issuer, the host named by the operator or not: refused before any request
    // (openid-client speaks only https to them), never sent and then refused as a special-use address.
    for (const trustedHost of [undefined, '10.1.2.3']) {
      let failure: unknown;
      expect(await discoveriesDuring(async () => { failure = await upstreams().configuration(connectionOf(issuer, { trustedHost })).catch((error: unknown) => error); })).toBe(0);
      expect(failure).toMatchObject({ reason: 'bad_metadata', detail: expect.stringMatching(/https/i) });
    }
  });

  it("reaches the operator's provider at an IPv6 loopback literal named in brackets", async () => {
    const six = await new FakeProvider().start('::1');
    try {
      const connection = connectionOf(six.issuer('v6'), { trustedHost: '[::1]' });
      await expect(upstreams().configuration(connection)).resolves.toBeDefined();
      expect(six.discoveries).toEqual(['v6']);
    } finally {
      await six.close();
    }
  });

  it("sends each request to a provider in a span named for the upstream, with its trace context", async () => {
    const names: string[] = [];
    const tracing = {
      enabled: true,
      outgoing: (name: string, _method: string, _target: URL, headers: Record<string, string>, exchange: () => Promise<Response>) => {
        names.push(name);
        headers.traceparent = '00-0af7651916cd43dd8448eb211c80319c-b7ad6b7169203331-01';
        return exchange();
      },
    } as unknown as Tracing;
    const before = provider.traceparents.length;
    await upstreams({ tracing }).configuration(connectionOf(provider.issuer('traced')));
    expect(names).toEqual(['GET upstream']);
    expect(provider.traceparents.slice(before)).toEqual(['00-0af7651916cd43dd8448eb211c80319c-b7ad6b7169203331-01']);
  });
});

describe('the code exchange', () => {
  const checks = { state: 'state-1', nonce: 'nonce-1', codeVerifier: 'v'.repeat(43) };
  const callback = new URL(`${CALLBACK}/conn-1?code=upstream-code&state=state-1`);

  async function tokenRequestOf(connection: ConnectionForSignIn, setup: Partial<UpstreamsSetup> = {}): Promise<{ request: TokenRequest; failure: unknown }> {
    const before = provider.tokenRequests.length;
    const failure = await upstreams(setup).exchange(connection, callback, checks).catch((error: unknown) => error);
    expect(provider.tokenRequests.length).toBe(before + 1);
    return { request: provider.tokenRequests.at(-1)!, failure };
  }

  it('refuses a token answer without an ID token (invalid_response), after sending the code with its verifier to our redirect URI', async () => {
    const { request, failure } = await tokenRequestOf(connectionOf(provider.issuer('exchange')));
    expect(failure).toBeInstanceOf(UpstreamFailure);
    expect(failure).toMatchObject({ reason: 'invalid_response' });
    expect(Object.fromEntries(request.body)).toMatchObject({ grant_type: 'authorization_code', code: 'upstream-code', code_verifier: checks.codeVerifier, redirect_uri: `${CALLBACK}/conn-1` });
  });

  it.each<[ConnectionForSignIn['tokenEndpointAuthMethod'], (request: TokenRequest) => void]>([
    ['client_secret_basic', (request) => {
      // The id and secret each form-encoded, then joined (RFC 6749 §2.3.1).
      const [scheme, credentials] = request.authorization!.split(' ');
      expect(scheme).toBe('Basic');
      expect(Buffer.from(credentials!, 'base64').toString().split(':').map(decodeURIComponent)).toEqual(['talent-auth', 'upstream-secret-1']);
      expect(request.body.has('client_secret')).toBe(false);
    }],
    ['client_secret_post', (request) => {
      expect(request.authorization).toBeUndefined();
      expect(request.body.get('client_id')).toBe('talent-auth');
      expect(request.body.get('client_secret')).toBe('upstream-secret-1');
    }],
  ])('authenticates with %s as the connection says', async (method, expectations) => {
    const { request } = await tokenRequestOf(connectionOf(provider.issuer(`auth-${method}`), { tokenEndpointAuthMethod: method }));
    expectations(request);
  });

  it('authenticates with private_key_jwt signed by our key, no secret sent', async () => {
    const { privateKey } = await generateKeyPair('ES256');
    const { request } = await tokenRequestOf(
      connectionOf(provider.issuer('auth-pkjwt'), { tokenEndpointAuthMethod: 'private_key_jwt', clientSecret: undefined }),
      { signingKey: async () => ({ key: privateKey, kid: 'our-key' }) },
    );
    expect(request.authorization).toBeUndefined();
    expect(request.body.has('client_secret')).toBe(false);
    expect(request.body.get('client_assertion_type')).toBe('urn:ietf:params:oauth:client-assertion-type:jwt-bearer');
    expect(decodeJwt(request.body.get('client_assertion')!)).toMatchObject({ iss: 'talent-auth', sub: 'talent-auth' });
  });
});

describe("the provider's end-session URL", () => {
  const parameters = { postLogoutRedirectUri: 'https://auth.example/oauth2/federation/signed-out', state: 'st-1' };

  it('names where to come back, the state, our client id and the ID token when there is one', async () => {
    const connection = connectionOf(provider.issuer('end'));
    const url = await upstreams().endSessionUrl(connection, { ...parameters, idTokenHint: 'id.token.hint' });
    expect(url?.origin + url!.pathname).toBe(`${provider.issuer('end')}/session/end`);
    expect(Object.fromEntries(url!.searchParams)).toEqual({ post_logout_redirect_uri: parameters.postLogoutRedirectUri, state: 'st-1', client_id: 'talent-auth', id_token_hint: 'id.token.hint' });
    const without = await upstreams().endSessionUrl(connection, parameters);
    expect(without!.searchParams.has('id_token_hint')).toBe(false);
  });

  it('is none when the provider names no end-session endpoint, or cannot be read now', async () => {
    provider.behaviours.set('no-end', { endSession: false });
    await expect(upstreams().endSessionUrl(connectionOf(provider.issuer('no-end')), parameters)).resolves.toBeUndefined();
    provider.behaviours.set('down', { status: 503 });
    await expect(upstreams().endSessionUrl(connectionOf(provider.issuer('down')), parameters)).resolves.toBeUndefined();
  });
});

describe('the failure table: what an error of openid-client or of our fetch stands for', () => {
  /** `error` under `depth` errors, each the cause of the one above. */
  const under = (error: unknown, depth: number): unknown => (depth === 0 ? error : new Error(`wrapper ${depth}`, { cause: under(error, depth - 1) }));
  // As AbortSignal.timeout's abort reason is named (a DOMException outside jest's sandbox).
  const timeout = () => Object.assign(new Error('The operation was aborted due to timeout'), { name: 'TimeoutError' });

  it('says the reason and the detail in its message, under its own name', () => {
    const failure = new UpstreamFailure('timeout', 'no answer in time');
    expect(failure.message).toBe('upstream sign-in failed (timeout): no answer in time');
    expect(failure.name).toBe('UpstreamFailure');
    expect(failureOf(failure)).toBe(failure);
  });

  it.each<[DeliveryFailure, string]>([
    ['refused', 'refused'],
    ['timeout', 'timeout'],
    ['unreachable', 'unreachable'],
    ['too_large', 'bad_metadata'],
  ])('a delivery %s, at any depth up to 4, is %s with its detail', (failure, reason) => {
    for (const depth of [0, 4]) {
      expect(failureOf(under(new DeliveryError(failure, 'idp.example: the detail'), depth))).toMatchObject({ reason, detail: 'idp.example: the detail' });
    }
  });

  it('a timeout, at any depth up to 4, is a timeout; deeper, it is not looked for', () => {
    for (const depth of [0, 1, 4]) expect(failureOf(under(timeout(), depth))).toMatchObject({ reason: 'timeout', detail: 'no answer in time' });
    expect(failureOf(under(timeout(), 5))).toMatchObject({ reason: 'invalid_response', detail: 'wrapper 5' });
    expect(failureOf(under(new DeliveryError('refused', 'deep'), 5))).toMatchObject({ reason: 'invalid_response', detail: 'wrapper 5' });
  });

  it('a challenge is the provider refusing: its error code, invalid_client when it names none, malformed when it is not a code', () => {
    const challenge = (parameters: Record<string, string>) => new client.WWWAuthenticateChallengeError('challenge', {
      cause: [{ scheme: 'basic', parameters }], response: new Response(null, { status: 401 }),
    } as never);
    expect(failureOf(challenge({ error: 'invalid_token' }))).toMatchObject({ reason: 'error_response', error: 'invalid_token', detail: 'the provider answered invalid_token' });
    expect(failureOf(challenge({ realm: 'idp' }))).toMatchObject({ reason: 'error_response', error: 'invalid_client', detail: 'the provider answered invalid_client' });
    expect(failureOf(challenge({ error: 'a "quoted" word' }))).toMatchObject({ reason: 'error_response', error: 'malformed', detail: 'the provider answered malformed' });
    const none = new client.WWWAuthenticateChallengeError('challenge', { cause: [], response: new Response(null, { status: 401 }) } as never);
    expect(failureOf(none)).toMatchObject({ error: 'invalid_client' });
  });

  it('an error answer is the provider refusing, in words', () => {
    const answer = new client.ResponseBodyError('error', { cause: { error: 'access_denied' } as never, response: new Response(null, { status: 400 }) } as never);
    expect(failureOf(answer)).toMatchObject({ reason: 'error_response', error: 'access_denied', detail: 'the provider answered access_denied' });
  });

  it.each<[string, unknown, string]>([
    ['an error with a code', Object.assign(new Error('the ID token is expired'), { code: 'OAUTH_JWT_TIMESTAMP_CHECK_FAILED' }), 'OAUTH_JWT_TIMESTAMP_CHECK_FAILED: the ID token is expired'],
    ['an error with a code that is not text', Object.assign(new Error('odd'), { code: 42 }), 'odd'],
    ['an error without a code', new TypeError('not JSON'), 'not JSON'],
    ['a thrown string', 'plain words', 'plain words'],
    ['a thrown undefined', undefined, 'undefined'],
    ['a thrown null', null, 'null'],
  ])('anything else (%s) is an invalid response with its words', (_name, error, detail) => {
    const failure = failureOf(error);
    expect(failure).toBeInstanceOf(UpstreamFailure);
    expect(failure).toMatchObject({ reason: 'invalid_response', detail });
    expect(failure.error).toBeUndefined();
  });
});
