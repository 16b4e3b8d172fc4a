import { createServer, type Server } from 'node:http';
import type { AddressInfo } from 'node:net';
import { context, propagation, trace, SpanKind, SpanStatusCode } from '@opentelemetry/api';
import { InMemorySpanExporter, NodeTracerProvider, SimpleSpanProcessor, type ReadableSpan } from '@opentelemetry/sdk-trace-node';
import { CompositePropagator, W3CBaggagePropagator, W3CTraceContextPropagator } from '@opentelemetry/core';
import { JWT_BEARER_ASSERTION } from '../../policies/client-authentication.js';
import { NO_TRACING, startTracing } from '../../src/observability/tracing.js';
import { alice, testAccounts } from '../support/accounts.js';
import { authorize, federate, startFederationRig, throughUpstream, tokensOf, UPSTREAM_CLIENT } from '../support/federation.js';
import { clientAssertion, clientKeyPair } from '../support/keys.js';
import { startRecordingListener, type RecordingListener } from '../support/recording-listener.js';
import { basic, postToken, startServer, type RunningServer } from '../support/server.js';
import { signInForCode } from '../support/sign-in.js';
import { STORE_KINDS, useStore } from '../support/stores.js';
import type { UserAgent } from '../support/user-agent.js';

/*
 * TRACING (src/observability/tracing.ts) with the SDK as a host registers it: an in-memory
 * exporter, the AsyncLocalStorage context manager and the W3C propagator. Our spans join the
 * caller's trace (traceparent) or the host's span; the engine's token issuance, the store's calls
 * and our outgoing requests are children, the outgoing ones carrying the trace on; and no span
 * holds a secret, a token, a code, a password or a cookie.
 */

const exporter = new InMemorySpanExporter();
const provider = new NodeTracerProvider({ spanProcessors: [new SimpleSpanProcessor(exporter)] });
const WEB = 'https://app.example.com/cb';
const SIGNED_OUT = 'https://app.example.com/signed-out';
const resources = { scim: { scopes: ['scim.read'] } };

// The host's propagator sends trace state and baggage too: what goes to others' endpoints must not.
beforeAll(() => provider.register({ propagator: new CompositePropagator({ propagators: [new W3CTraceContextPropagator(), new W3CBaggagePropagator()] }) }));
afterAll(async () => {
  await provider.shutdown();
  trace.disable();
  context.disable();
  propagation.disable();
});
beforeEach(() => exporter.reset());

/** A W3C traceparent of a caller's span. */
const CALLER = { traceId: '4bf92f3577b34da6a3ce929d0e0e4736', spanId: '00f067aa0ba902b7' };
const traceparent = (ids: { traceId: string; spanId: string }) => `00-${ids.traceId}-${ids.spanId}-01`;

const spans = (): ReadableSpan[] => exporter.getFinishedSpans();
const named = (name: string): ReadableSpan[] => spans().filter((span) => span.name === name);
const parentOf = (span: ReadableSpan): string | undefined => span.parentSpanContext?.spanId;
const childrenOf = (parent: ReadableSpan): ReadableSpan[] => spans().filter((span) => parentOf(span) === parent.spanContext().spanId);
/** Every span below `root`, at any depth. */
const below = (root: ReadableSpan): ReadableSpan[] => childrenOf(root).flatMap((child) => [child, ...below(child)]);

/** Everything every exported span says: names, attributes, events, statuses. */
function everythingRecorded(): string {
  return JSON.stringify(spans().map((span) => ({
    name: span.name, attributes: span.attributes, status: span.status, links: span.links,
    events: span.events.map((event) => ({ name: event.name, attributes: event.attributes })),
  })));
}

/** Fails naming the secret (by its label, never quoting it) that some span recorded. */
function expectNoSecretIn(recorded: string, secrets: Record<string, string | undefined>): void {
  const leaked = Object.entries(secrets).filter(([, value]) => value !== undefined && value.length > 0 && recorded.includes(value)).map(([label]) => label);
  expect(leaked).toEqual([]);
}

describe.each(STORE_KINDS)('tracing on the %s store', (kind) => {
  const store = useStore(kind);
  let server: RunningServer;
  let listener: RecordingListener;
  let client: { clientId: string; clientSecret: string };

  beforeAll(async () => {
    listener = await startRecordingListener();
    server = await startServer({ store: store.option(), accounts: testAccounts([alice]), backchannelLogout: { privateHosts: ['127.0.0.1'] } });
    client = await server.auth.clientConfigurations.create({ tenant: 'acme', name: 'Sync', category: 'hr', resources });
  });
  afterAll(async () => {
    await server.stop();
    await listener.close();
  });

  it("a token request carrying a traceparent: our SERVER span is the caller's span's child, the engine's issuance and the store's calls ours", async () => {
    const answer = await postToken(server.oauthUrl, { grant_type: 'client_credentials', scope: 'scim.read' }, {
      authorization: basic(client.clientId, client.clientSecret), traceparent: traceparent(CALLER),
    });
    expect(answer.status).toBe(200);

    const [request] = named('POST /oauth2/token');
    expect(request).toBeDefined();
    expect(request!.kind).toBe(SpanKind.SERVER);
    expect(request!.spanContext().traceId).toBe(CALLER.traceId);
    expect(parentOf(request!)).toBe(CALLER.spanId);
    expect(request!.attributes).toEqual({
      'http.request.method': 'POST', 'http.route': '/oauth2/token', 'http.response.status_code': 200,
      'oauth.grant_type': 'client_credentials', 'oauth.client_id': client.clientId,
    });

    const [issuance] = childrenOf(request!).filter((span) => span.name === 'engine token');
    expect(issuance?.attributes).toEqual({ 'oauth.grant_type': 'client_credentials' });
    const storeCalls = below(request!).filter((span) => span.name.startsWith('store '));
    // The client's configuration at least (a cached one is not asked again: the first request asks).
    expect(storeCalls.length).toBeGreaterThan(0);
    for (const call of storeCalls) {
      expect(call.kind).toBe(SpanKind.CLIENT);
      expect(call.attributes['db.system.name']).toBe(kind);
      expect(Object.keys(call.attributes).sort()).toEqual(expect.arrayContaining(['db.operation.name', 'db.system.name']));
    }
    // Every span of the request is in the caller's trace.
    for (const span of below(request!)) expect(span.spanContext().traceId).toBe(CALLER.traceId);
    expectNoSecretIn(everythingRecorded(), {
      'client secret': client.clientSecret, 'authorization header': basic(client.clientId, client.clientSecret).slice('Basic '.length), 'access token': answer.body.access_token as string,
    });
  });

  it('a failed authentication: the span has the grant type and the status, not the client id nor the secret tried', async () => {
    const answer = await postToken(server.oauthUrl, { grant_type: 'client_credentials', scope: 'scim.read' }, { authorization: basic(client.clientId, 'not-the-secret-0123456789') });
    expect(answer.status).toBe(401);
    const [request] = named('POST /oauth2/token');
    expect(request!.attributes).toEqual({ 'http.request.method': 'POST', 'http.route': '/oauth2/token', 'http.response.status_code': 401, 'oauth.grant_type': 'client_credentials' });
    expect(request!.status.code).not.toBe(SpanStatusCode.ERROR);
    expectNoSecretIn(everythingRecorded(), { 'secret tried': 'not-the-secret-0123456789' });
  });

  it("a host's own span around our app (its instrumentation): ours is its child, the traceparent then ignored", async () => {
    const host: Server = createServer((req, res) => {
      const tracer = trace.getTracer('host');
      tracer.startActiveSpan('host request', (span) => {
        res.on('finish', () => span.end());
        server.auth.app.callback()(req, res);
      });
    });
    await new Promise<void>((resolve) => host.listen(0, '127.0.0.1', resolve));
    try {
      const answer = await postToken(`http://127.0.0.1:${(host.address() as AddressInfo).port}/oauth2`, { grant_type: 'client_credentials', scope: 'scim.read' }, {
        authorization: basic(client.clientId, client.clientSecret), traceparent: traceparent(CALLER),
      });
      expect(answer.status).toBe(200);
    } finally {
      host.closeAllConnections();
      await new Promise((resolve) => host.close(resolve));
    }
    const [hostSpan] = named('host request');
    const [request] = named('POST /oauth2/token');
    expect(parentOf(request!)).toBe(hostSpan!.spanContext().spanId);
    expect(request!.spanContext().traceId).toBe(hostSpan!.spanContext().traceId);
  });

  it('a sign-in, a code exchange, a refresh and a sign-out with back-channel logout: spans by route template, the trace carried to the app, nothing secret recorded', async () => {
    const app = await server.auth.appRegistrations.create({
      name: 'Web app', redirectUris: [WEB], postLogoutRedirectUris: [SIGNED_OUT], clientType: 'confidential',
      backchannelLogoutUri: `http://127.0.0.1:${listener.port}/backchannel?session=kept-out`,
    });
    const signedIn = await signInForCode(server, { clientId: app.clientId, redirectUri: WEB }, alice, 'openid offline_access');
    const exchanged = await postToken(server.oauthUrl, { grant_type: 'authorization_code', code: signedIn.code, redirect_uri: WEB, code_verifier: signedIn.verifier }, {
      authorization: basic(app.clientId, app.clientSecret!),
    });
    expect(exchanged.status).toBe(200);
    const refreshed = await postToken(server.oauthUrl, { grant_type: 'refresh_token', refresh_token: exchanged.body.refresh_token as string }, {
      authorization: basic(app.clientId, app.clientSecret!),
    });
    expect(refreshed.status).toBe(200);
    const exchange = named('POST /oauth2/token').find((span) => span.attributes['oauth.grant_type'] === 'authorization_code');
    expect(exchange?.attributes['oauth.client_id']).toBe(app.clientId);
    expect(below(exchange!).some((span) => span.name === 'store consumeCompleting' || span.name === 'store find')).toBe(true);

    // The sign-out: the app's back-channel endpoint gets the logout token, and the trace.
    const agent: UserAgent = signedIn.agent;
    const cookies = [...(agent as unknown as { cookies: Map<string, string> }).cookies.values()];
    const query = new URLSearchParams({ id_token_hint: exchanged.body.id_token as string, post_logout_redirect_uri: SIGNED_OUT, client_id: app.clientId });
    const page = await agent.request(`${server.oauthUrl}/session/end?${query}`);
    expect(page.status).toBe(200);
    const xsrf = /name="xsrf" value="([^"]+)"/.exec(page.html)![1]!;
    const action = /<form[^>]*action="([^"]+)"/.exec(page.html)![1]!.replace(/&amp;/g, '&');
    const done = await agent.request(action, { method: 'POST', body: new URLSearchParams({ xsrf, logout: 'yes' }).toString() });
    expect(done.location).toBe(SIGNED_OUT);

    const delivered = listener.requests.at(-1)!;
    expect(delivered.body).toContain('logout_token=');
    const [delivery] = named('POST backchannel_logout_uri');
    expect(delivery?.kind).toBe(SpanKind.CLIENT);
    expect(delivery!.attributes).toEqual({ 'http.request.method': 'POST', 'server.address': '127.0.0.1', 'server.port': listener.port, 'http.response.status_code': 200 });
    expect(delivered.headers.traceparent).toBe(traceparent({ traceId: delivery!.spanContext().traceId, spanId: delivery!.spanContext().spanId }));
    // Its parent is the sign-out's request span (named by its route, never by its path and query).
    const signOut = spans().find((span) => span.spanContext().spanId === parentOf(delivery!));
    expect(signOut?.kind).toBe(SpanKind.SERVER);
    expect(signOut!.attributes['http.route']).toMatch(/^\/oauth2\//);
    for (const span of spans()) if (span.kind === SpanKind.SERVER) expect(span.name).toBe(`${span.attributes['http.request.method'] as string} ${span.attributes['http.route'] as string}`);

    const logoutToken = new URLSearchParams(delivered.body).get('logout_token')!;
    expectNoSecretIn(everythingRecorded(), {
      'client secret': app.clientSecret, code: signedIn.code, 'code verifier': signedIn.verifier, 'access token': exchanged.body.access_token as string,
      'refresh token': exchanged.body.refresh_token as string, 'rotated refresh token': refreshed.body.refresh_token as string,
      'ID token': exchanged.body.id_token as string, 'logout token': logoutToken, password: alice.password, 'user name': alice.sub,
      ...Object.fromEntries(cookies.map((value, index) => [`cookie ${index}`, value])),
      'the back-channel query': 'kept-out',
    });
  });

  it("a private_key_jwt client's jwks_uri: fetched in a CLIENT span of the token request, the trace carried", async () => {
    const key = await clientKeyPair('k1');
    listener.answer = (res) => res.writeHead(200, { 'content-type': 'application/json' }).end(JSON.stringify({ keys: [key.jwk] }));
    try {
      const { clientId } = await server.auth.clientConfigurations.create({
        tenant: 'acme', name: 'Keyed', category: 'hr', resources, tokenEndpointAuthMethod: 'private_key_jwt', jwksUri: `http://127.0.0.1:${listener.port}/jwks`,
      });
      const assertion = await clientAssertion(clientId, key, server.auth.issuer);
      const answer = await postToken(server.oauthUrl, { grant_type: 'client_credentials', scope: 'scim.read', client_assertion_type: JWT_BEARER_ASSERTION, client_assertion: assertion }, {
        traceparent: traceparent(CALLER), tracestate: 'host=internal-state', baggage: 'user.id=internal-baggage',
      });
      expect(answer.status).toBe(200);
      // The client's jwks_uri is someone else's: the trace goes out as a traceparent alone.
      expect(listener.requests.at(-1)!.headers.tracestate).toBeUndefined();
      expect(listener.requests.at(-1)!.headers.baggage).toBeUndefined();
      const [fetched] = named('GET jwks_uri');
      expect(fetched?.attributes).toMatchObject({ 'http.request.method': 'GET', 'server.address': '127.0.0.1', 'http.response.status_code': 200 });
      const [request] = named('POST /oauth2/token');
      expect(below(request!)).toContain(fetched);
      expect(listener.requests.at(-1)!.headers.traceparent).toBe(traceparent({ traceId: fetched!.spanContext().traceId, spanId: fetched!.spanContext().spanId }));
      expectNoSecretIn(everythingRecorded(), { assertion, 'access token': answer.body.access_token as string });
    } finally {
      listener.answer = (res) => res.writeHead(200, { 'cache-control': 'no-store' }).end();
    }
  });
});

describe('tracing a sign-in through a tenant\'s identity provider', () => {
  it('every request to the provider is a CLIENT span of the request that made it, the trace carried to the provider; its secret and tokens recorded nowhere', async () => {
    const rig = await startFederationRig({
      accounts: [{ sub: 'ada@acme.example', password: 'ada-password-1', tenant: 'acme', claims: { email: 'ada@acme.example' } }],
      users: [{ sub: 'up-ada', email: 'ada@acme.example', email_verified: true }],
    });
    try {
      exporter.reset();
      const started = await authorize(rig);
      const back = await throughUpstream(started.agent, await federate(started.agent, started.step, { connection: rig.connection.id }), 'up-ada');
      const tokens = await tokensOf(rig, started, back);
      expect(tokens.access_token).toBeTruthy();

      const calls = spans().filter((span) => / upstream$/.test(span.name));
      // Discovery, the provider's key set, the code exchange at least.
      expect(calls.length).toBeGreaterThanOrEqual(3);
      for (const call of calls) {
        expect(call.kind).toBe(SpanKind.CLIENT);
        expect(call.attributes).toMatchObject({ 'server.address': '127.0.0.1', 'server.port': rig.upstream.port });
        expect(spans().find((span) => span.spanContext().spanId === parentOf(call))?.kind).toBe(SpanKind.SERVER);
      }
      // Each request of ours the provider received names its span as the parent.
      const ours = new Set(calls.map((call) => traceparent({ traceId: call.spanContext().traceId, spanId: call.spanContext().spanId })));
      // (The browser's requests to the provider carry none: it is not ours.)
      const backChannel = rig.upstream.traceparents.filter((header) => header !== undefined);
      expect(backChannel.length).toBe(calls.length);
      for (const header of backChannel) expect(ours.has(header)).toBe(true);
      const upstreamTokens = rig.upstream.issued.flatMap((issued) => [issued.idToken, issued.accessToken]).filter((token): token is string => token !== undefined);
      expect(upstreamTokens.length).toBeGreaterThan(0);
      expectNoSecretIn(everythingRecorded(), {
        'upstream client secret': UPSTREAM_CLIENT.secret, 'access token': tokens.access_token, 'ID token': tokens.id_token,
        ...Object.fromEntries(upstreamTokens.map((token, index) => [`upstream token ${index}`, token])),
      });
    } finally {
      await rig.stop();
    }
  });
});

describe('tracing off', () => {
  it('observability.tracing false: no span at all, the server answers as ever', async () => {
    const server = await startServer({ observability: { tracing: false } });
    try {
      const { clientId, clientSecret } = await server.auth.clientConfigurations.create({ tenant: 'acme', name: 'Sync', category: 'hr', resources });
      exporter.reset();
      const answer = await postToken(server.oauthUrl, { grant_type: 'client_credentials', scope: 'scim.read' }, { authorization: basic(clientId, clientSecret), traceparent: traceparent(CALLER) });
      expect(answer.status).toBe(200);
      expect(spans()).toEqual([]);
    } finally {
      await server.stop();
    }
  });

  it('@opentelemetry/api not installed (its import fails) or not the API: no tracing, told only when it was asked for', async () => {
    const missing = () => Promise.reject(Object.assign(new Error("Cannot find package '@opentelemetry/api'"), { code: 'ERR_MODULE_NOT_FOUND' }));
    const told: string[] = [];
    expect(await startTracing(undefined, () => told.push('default'), missing)).toBe(NO_TRACING);
    expect(await startTracing(true, () => told.push('asked'), missing)).toBe(NO_TRACING);
    expect(await startTracing(true, () => told.push('not the API'), () => Promise.resolve({ trace: {} }))).toBe(NO_TRACING);
    expect(told).toEqual(['asked', 'not the API']);
    // The off object does nothing: runs what it is given, makes no span.
    expect(NO_TRACING.enabled).toBe(false);
    expect(await NO_TRACING.inSpan('x', {}, () => Promise.resolve(7))).toBe(7);
    expect(NO_TRACING.startServerSpan('x', {}, {})).toBeUndefined();
    expect(spans()).toEqual([]);
    // Installed with an SDK registered, it is on unless turned off.
    expect((await startTracing(undefined, () => told.push('installed'))).enabled).toBe(true);
    expect(await startTracing(false, () => told.push('off'))).toBe(NO_TRACING);
    expect(told).toHaveLength(2);
    // Installed without an SDK (the API's no-op provider): off by default, on when asked for.
    trace.disable();
    try {
      expect(await startTracing(undefined, () => told.push('no SDK'))).toBe(NO_TRACING);
      expect((await startTracing(true, () => told.push('no SDK, asked'))).enabled).toBe(true);
    } finally {
      trace.setGlobalTracerProvider(provider);
    }
    expect(told).toHaveLength(2);
  });

});
