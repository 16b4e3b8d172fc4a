import { createServer, type Server } from 'node:http';
import type { AddressInfo } from 'node:net';
import { createServerApp } from '../../../src/compose/app.js';
import { assembleServer, type AssembledServer } from '../../../src/compose/parts.js';
import { resolveOptions } from '../../../src/options.js';
import { Sealer } from '../../../src/records/sealed.js';
import { testAccounts } from '../../support/accounts.js';
import { capturingLogger, demoApis } from '../../support/fixtures.js';
import { basic, postToken } from '../../support/server.js';
import { signInForCode } from '../../support/sign-in.js';
import { federate } from '../../support/federation.js';
import { STORE_KINDS, useStore } from '../../support/stores.js';
import { passUpstreamSignIn, startUpstreamProvider, type RunningUpstreamProvider } from '../../support/upstream-provider.js';
import { pkcePair, UserAgent } from '../../support/user-agent.js';

const WEB = 'https://app.example.com/cb';
const SIGNED_OUT = 'https://app.example.com/signed-out';
const COOKIE_KEYS = ['a-test-cookie-key-of-32-characters!!'];
const UPSTREAM_CLIENT = { client_id: 'our-client', client_secret: 'upstream-secret-of-our-client' };

/**
 * The provider's sign-out after ours (src/endpoints/sign-out/upstream-sign-out.ts), against a
 * real node-oidc-provider as the tenant's identity provider, on both stores: our sign-out done,
 * the browser goes to the provider's end-session endpoint (its ID token as the hint, our client
 * ID, our post-logout URI, a sealed state), and from our post-logout URI on to the app's
 * registered URI with its state; a forged, altered or old state gets a page, never a redirect; a
 * provider that cannot be reached leaves the browser where our sign-out sends it; a connection
 * that does not ask for it, our sign-out only; a session begun with her password never goes to
 * the provider. The federated session is made by a sign-in through the connection (its button,
 * the provider's sign-in, our callback).
 */
describe.each(STORE_KINDS)('the provider\'s sign-out after ours (%s store)', (kind) => {
  const handle = useStore(kind);
  let http: Server;
  let origin: string;
  let server: AssembledServer;
  let upstream: RunningUpstreamProvider;
  let app: { clientId: string; clientSecret: string };
  // Her username is her address: the provider's email finds her (findByUsername).
  const amy = { sub: 'amy@acme.example', password: 'amy-pw', tenant: 'acme' };
  const AMY = { tenant: 'acme', sub: amy.sub };

  beforeAll(async () => {
    http = createServer();
    await new Promise<void>((resolve) => http.listen(0, '127.0.0.1', resolve));
    origin = `http://127.0.0.1:${(http.address() as AddressInfo).port}`;
    upstream = await startUpstreamProvider({
      clients: [{
        ...UPSTREAM_CLIENT,
        redirect_uris: [`${origin}/oauth2/federation/callback`],
        post_logout_redirect_uris: [`${origin}/oauth2/federation/signed-out`],
      }],
      users: [{ sub: 'up-amy', email: 'amy@acme.example', email_verified: true }],
    });
    server = await assembleServer(resolveOptions({
      baseUrl: origin, apis: demoApis, logger: capturingLogger().logger, rateLimits: { authorize: false }, observability: { health: true, metrics: true },
      store: handle.option(), accounts: testAccounts([amy]), cookieKeys: COOKIE_KEYS,
    }));
    const { app: koa } = createServerApp(server, undefined);
    http.on('request', koa.callback());
    const created = await server.parts.apps.create({ name: 'Web', tenant: 'acme', redirectUris: [WEB], postLogoutRedirectUris: [SIGNED_OUT], clientType: 'confidential' });
    app = { clientId: created.clientId, clientSecret: created.clientSecret! };
  });
  afterAll(async () => {
    http.closeAllConnections();
    await new Promise((resolve) => http.close(resolve));
    await server.parts.store.close();
    await upstream.close();
  });

  /** The upstream sign-outs counted with `outcome` (the metric). */
  const counted = async (outcome: string) => ((await server.parts.metrics!.upstreamSignOuts.get()).values.find((value) => value.labels.outcome === outcome)?.value ?? 0);
  const running = () => ({ auth: undefined as never, baseUrl: origin, oauthUrl: `${origin}/oauth2`, logLines: [], storeOption: undefined, stop: async () => undefined });

  async function connect(issuer: string, signOutUpstream = true) {
    return server.parts.connections.create({
      tenant: 'acme', name: 'Acme IdP', issuer, clientId: UPSTREAM_CLIENT.client_id,
      // No domain: its button only (her address is at a domain no connection owns).
      clientSecret: UPSTREAM_CLIENT.client_secret, domains: [], signOutUpstream,
    });
  }

  /**
   * Amy signed in through `connectionId` (its button, the provider's sign-in, our callback, consent):
   * her browser, our ID token, and the provider's (`from`: the provider's tokens it answered with).
   */
  async function federatedSession(connectionId: string, from: RunningUpstreamProvider = upstream): Promise<{ agent: UserAgent; ours: string; idToken: string }> {
    const agent = new UserAgent(origin);
    const { verifier, challenge } = pkcePair();
    const page = await agent.request(`${origin}/oauth2/authorize?${new URLSearchParams({ response_type: 'code', client_id: app.clientId, redirect_uri: WEB, scope: 'openid', state: 's', code_challenge: challenge, code_challenge_method: 'S256' })}`);
    const toProvider = await federate(agent, page, { connection: connectionId });
    let back = await agent.request((await passUpstreamSignIn(toProvider.location!, 'up-amy')).callbackUrl);
    if (back.html.includes('value="allow"')) back = await agent.submit(back, { decision: 'allow' });
    const code = new URL(back.location!).searchParams.get('code')!;
    const tokens = await postToken(`${origin}/oauth2`, { grant_type: 'authorization_code', code, redirect_uri: WEB, code_verifier: verifier }, { authorization: basic(app.clientId, app.clientSecret) });
    expect(tokens.status).toBe(200);
    return { agent, ours: tokens.body.id_token as string, idToken: from.issued.at(-1)!.idToken! };
  }

  /** Our sign-out, confirmed: where the browser is sent. */
  async function signOut(agent: UserAgent, ours: string): Promise<string> {
    const page = await agent.request(`${origin}/oauth2/session/end?${new URLSearchParams({ id_token_hint: ours, post_logout_redirect_uri: SIGNED_OUT, state: 'app-state' })}`);
    const xsrf = /name="xsrf" value="([^"]+)"/.exec(page.html)![1]!;
    const done = await agent.request(`${origin}/oauth2/session/end/confirm`, { method: 'POST', body: new URLSearchParams({ xsrf, logout: 'yes' }).toString() });
    expect(done.location).toBeDefined();
    return done.location!;
  }

  /** The browser at the provider's sign-out: its form posted ("Yes, sign me out"); where it sends the browser back. */
  async function atProvider(url: string): Promise<string> {
    const jar: string[] = [];
    const keep = (response: Response) => jar.push(...response.headers.getSetCookie().map((header) => header.split(';')[0]!));
    const page = await fetch(url, { redirect: 'manual' });
    keep(page);
    const html = await page.text();
    // Its confirmation, or (no session of hers there: this test's browser never kept one) the form it posts itself.
    const action = /<form[^>]* action="([^"]+)"/.exec(html)![1]!;
    const xsrf = /name="xsrf" value="([^"]+)"/.exec(html)![1]!;
    const done = await fetch(new URL(action, url), {
      method: 'POST', redirect: 'manual',
      headers: { 'content-type': 'application/x-www-form-urlencoded', cookie: jar.join('; ') },
      body: new URLSearchParams({ xsrf, logout: 'yes' }).toString(),
    });
    expect(done.status).toBe(303);
    return done.headers.get('location')!;
  }

  it("after our sign-out, the provider's, then back to the app's registered URI with its state", async () => {
    const connection = await connect(upstream.issuer);
    const { agent, ours, idToken } = await federatedSession(connection.id);

    const to = new URL(await signOut(agent, ours));
    expect(`${to.origin}${to.pathname}`).toBe(`${upstream.issuer}/session/end`);
    expect(to.searchParams.get('id_token_hint')).toBe(idToken);
    expect(to.searchParams.get('client_id')).toBe(UPSTREAM_CLIENT.client_id);
    expect(to.searchParams.get('post_logout_redirect_uri')).toBe(`${origin}/oauth2/federation/signed-out`);
    const state = to.searchParams.get('state')!;
    expect(state.length).toBeGreaterThan(20);
    expect(state).not.toContain('app.example.com');

    // Our sign-out is done: her session here ended, the entry forgotten.
    expect(await server.parts.signedInThrough.of(AMY)).toBeUndefined();
    const again = await agent.request(`${origin}/oauth2/authorize?${new URLSearchParams({ response_type: 'code', client_id: app.clientId, redirect_uri: WEB, scope: 'openid', state: 's', code_challenge: 'x'.repeat(43), code_challenge_method: 'S256' })}`);
    expect(again.html).toContain('name="password"');

    const back = await atProvider(to.href);
    expect(back.startsWith(`${origin}/oauth2/federation/signed-out?`)).toBe(true);
    expect(new URL(back).searchParams.get('state')).toBe(state);
    const onward = await agent.request(back);
    expect(onward.location).toBe(`${SIGNED_OUT}?state=app-state`);
    expect(await counted('redirected')).toBe(1);
  });

  it('a forged, altered, other-purpose or old state: a page that says so, never a redirect', async () => {
    const sealer = new Sealer(COOKIE_KEYS, 'talent-auth upstream sign-out');
    const now = Math.floor(Date.now() / 1000);
    const good = sealer.seal({ to: SIGNED_OUT, exp: now + 60 }, 'upstream sign-out return');
    const altered = `${good.slice(0, 20)}${good[20] === 'A' ? 'B' : 'A'}${good.slice(21)}`;
    const cases = [
      'https://evil.example/',
      altered,
      sealer.seal({ to: 'https://evil.example/', exp: now + 60 }, 'sign-out request'),
      new Sealer(['another-key-of-32-characters-long!!'], 'talent-auth upstream sign-out').seal({ to: 'https://evil.example/', exp: now + 60 }, 'upstream sign-out return'),
      sealer.seal({ to: 'https://evil.example/', exp: now - 1 }, 'upstream sign-out return'),
    ];
    for (const state of cases) {
      const answer = await fetch(`${origin}/oauth2/federation/signed-out?${new URLSearchParams({ state })}`, { redirect: 'manual', headers: { 'accept-language': 'de' } });
      expect(answer.status).toBe(400);
      expect(answer.headers.get('location')).toBeNull();
      expect(await answer.text()).toContain('Dieser Link von der Abmeldung Ihrer Organisation zurück ist ungültig oder abgelaufen.');
    }
    const none = await fetch(`${origin}/oauth2/federation/signed-out`, { redirect: 'manual' });
    expect(none.status).toBe(400);
    const twice = await fetch(`${origin}/oauth2/federation/signed-out?state=${good}&state=${good}`, { redirect: 'manual' });
    expect(twice.status).toBe(400);
    const fine = await fetch(`${origin}/oauth2/federation/signed-out?state=${good}`, { redirect: 'manual' });
    expect(fine.status).toBe(303);
    expect(fine.headers.get('location')).toBe(SIGNED_OUT);
  });

  it('a provider that cannot be reached never holds up our sign-out: the browser goes where ours sends it', async () => {
    const closed = await startUpstreamProvider({ clients: [{ ...UPSTREAM_CLIENT, redirect_uris: [`${origin}/oauth2/federation/callback`] }], users: [{ sub: 'up-amy', email: 'amy@acme.example', email_verified: true }] });
    const connection = await connect(closed.issuer);
    const { agent, ours } = await federatedSession(connection.id, closed);
    server.parts.upstreams.forget(connection.id);
    await closed.close();
    const started = Date.now();
    expect(await signOut(agent, ours)).toBe(`${SIGNED_OUT}?state=app-state`);
    expect(Date.now() - started).toBeLessThan(3000);
    expect(await counted('no_endpoint')).toBe(1);
    expect(await server.parts.signedInThrough.of(AMY)).toBeUndefined();
  });

  it('a connection that does not ask for it: our sign-out only (the entry forgotten all the same)', async () => {
    const connection = await connect(upstream.issuer, false);
    const { agent, ours } = await federatedSession(connection.id);
    expect(await signOut(agent, ours)).toBe(`${SIGNED_OUT}?state=app-state`);
    expect(await server.parts.signedInThrough.of(AMY)).toBeUndefined();
    expect(await counted('not_asked')).toBe(1);
  });

  it('a password sign-in (no provider remembered): our sign-out as ever', async () => {
    const { code, verifier, agent } = await signInForCode(running(), { clientId: app.clientId, redirectUri: WEB }, amy, 'openid');
    const tokens = await postToken(`${origin}/oauth2`, { grant_type: 'authorization_code', code, redirect_uri: WEB, code_verifier: verifier }, { authorization: basic(app.clientId, app.clientSecret) });
    expect(await signOut(agent, tokens.body.id_token as string)).toBe(`${SIGNED_OUT}?state=app-state`);
  });

  it("a password session while another browser's sign-in went through the provider: our sign-out only, that browser's entry kept", async () => {
    const connection = await connect(upstream.issuer);
    const federated = await federatedSession(connection.id);
    const { code, verifier, agent } = await signInForCode(running(), { clientId: app.clientId, redirectUri: WEB }, amy, 'openid');
    const tokens = await postToken(`${origin}/oauth2`, { grant_type: 'authorization_code', code, redirect_uri: WEB, code_verifier: verifier }, { authorization: basic(app.clientId, app.clientSecret) });
    const redirected = await counted('redirected');
    expect(await signOut(agent, tokens.body.id_token as string)).toBe(`${SIGNED_OUT}?state=app-state`);
    expect(await server.parts.signedInThrough.of(AMY)).toMatchObject({ connectionId: connection.id, idToken: federated.idToken });
    // The federated browser's sign-out still goes to the provider.
    expect(new URL(await signOut(federated.agent, federated.ours)).searchParams.get('id_token_hint')).toBe(federated.idToken);
    expect(await counted('redirected')).toBe(redirected + 1);
  });
});
