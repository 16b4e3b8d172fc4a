import { startRecordingListener, type RecordingListener } from '../../support/recording-listener.js';
import { spawn, type ChildProcess } from 'node:child_process';
import { existsSync } from 'node:fs';
import { join } from 'node:path';
import { createRemoteJWKSet, decodeJwt, jwtVerify } from 'jose';
import * as client from 'openid-client';
import { alice, testAccounts } from '../../support/accounts.js';
import { testJwks } from '../../support/keys.js';
import { basic, postToken, startServer, type RunningServer } from '../../support/server.js';
import { signInForCode } from '../../support/sign-in.js';
import { pkcePair, UserAgent } from '../../support/user-agent.js';

/**
 * OpenID Connect sessions end to end: every ID token names its session (`sid`), and a sign-out
 * posts the app a logout token with that `sid`, received here by a real listener and verified
 * with the server's published keys. Delivery goes to the operator's local hosts only when the
 * operator listed them (`backchannelLogout.privateHosts`); otherwise nothing connects.
 */

const WEB = 'https://app.example.com/cb';
const SIGNED_OUT = 'https://app.example.com/signed-out';
const BACKCHANNEL_EVENT = 'http://schemas.openid.net/event/backchannel-logout';

type Listener = RecordingListener;
const listen = startRecordingListener;

/** The app's configuration in openid-client, from discovery. */
async function appConfig(oauthUrl: string, clientId: string, clientSecret: string): Promise<client.Configuration> {
  return client.discovery(new URL(oauthUrl), clientId, undefined, client.ClientSecretBasic(clientSecret), {
    execute: [client.allowInsecureRequests],
  });
}

/** A sign-in as alice through openid-client: the tokens and the browser (its session cookie). */
async function signIn(oauthUrl: string, baseUrl: string, config: client.Configuration): Promise<{ tokens: client.TokenEndpointResponse & client.TokenEndpointResponseHelpers; agent: UserAgent }> {
  const { verifier, challenge } = pkcePair();
  const state = client.randomState();
  const url = client.buildAuthorizationUrl(config, { redirect_uri: WEB, scope: 'openid', state, code_challenge: challenge, code_challenge_method: 'S256' });
  expect(url.href.startsWith(oauthUrl)).toBe(true);
  const agent = new UserAgent(baseUrl);
  let step = await agent.request(url.href);
  if (step.html.includes('name="password"')) step = await agent.submit(step, { username: alice.sub, password: alice.password });
  if (step.html.includes('value="allow"')) step = await agent.submit(step, { decision: 'allow' });
  const tokens = await client.authorizationCodeGrant(config, new URL(step.location!), { pkceCodeVerifier: verifier, expectedState: state });
  return { tokens, agent };
}

/** The sign-out an app starts (openid-client's end-session URL), confirmed by the user. */
async function signOut(config: client.Configuration, agent: UserAgent, idToken: string): Promise<string | undefined> {
  const page = await agent.request(client.buildEndSessionUrl(config, { id_token_hint: idToken, post_logout_redirect_uri: SIGNED_OUT }).href);
  expect(page.status).toBe(200);
  const xsrf = /name="xsrf" value="([^"]+)"/.exec(page.html)![1]!;
  const action = /<form[^>]*action="([^"]+)"/.exec(page.html)![1]!.replace(/&amp;/g, '&');
  const done = await agent.request(action, { method: 'POST', body: new URLSearchParams({ xsrf, logout: 'yes' }).toString() });
  return done.location;
}

describe('sid and back-channel logout, delivered to a local host the operator listed', () => {
  let listener: Listener;
  let server: RunningServer;

  beforeAll(async () => {
    listener = await listen();
    server = await startServer({
      accounts: testAccounts([alice]),
      keys: await testJwks(['ES256', 'RS256']),
      backchannelLogout: { privateHosts: ['127.0.0.1'] },
    });
  });
  afterAll(async () => {
    await server.stop();
    await listener.close();
  });

  it('discovery says sid is supported; the ID token carries a sid, and the logout token (signature checked with the JWKS) the same one', async () => {
    const app = await server.auth.appRegistrations.create({
      name: 'Local app', redirectUris: [WEB], postLogoutRedirectUris: [SIGNED_OUT], clientType: 'confidential',
      backchannelLogoutUri: `http://127.0.0.1:${listener.port}/backchannel`,
    });
    const config = await appConfig(server.oauthUrl, app.clientId, app.clientSecret!);
    expect(config.serverMetadata()).toMatchObject({ backchannel_logout_supported: true, backchannel_logout_session_supported: true });

    const { tokens, agent } = await signIn(server.oauthUrl, server.baseUrl, config);
    const claims = tokens.claims()!;
    expect(typeof claims.sid).toBe('string');
    expect((claims.sid as string).length).toBeGreaterThan(0);

    expect(await signOut(config, agent, tokens.id_token!)).toBe(SIGNED_OUT);

    expect(listener.requests).toHaveLength(1);
    const [post] = listener.requests;
    expect(post!.url).toBe('/backchannel');
    expect(post!.headers['content-type']).toBe('application/x-www-form-urlencoded');
    const logoutToken = new URLSearchParams(post!.body).get('logout_token')!;
    const jwks = createRemoteJWKSet(new URL(`${server.oauthUrl}/jwks`));
    // OpenID Connect Back-Channel Logout 1.0 §2.4: iss, aud, iat, jti, events, sub and/or sid; no nonce.
    const { payload, protectedHeader } = await jwtVerify(logoutToken, jwks, { issuer: server.oauthUrl, audience: app.clientId, typ: 'logout+jwt' });
    expect(protectedHeader.alg).toBe('RS256');
    expect(payload.events).toEqual({ [BACKCHANNEL_EVENT]: {} });
    expect(payload.sid).toBe(claims.sid);
    expect(payload.sub).toBe(claims.sub);
    expect(payload.sub).toBe(alice.sub);
    expect(typeof payload.jti).toBe('string');
    expect(payload.exp! - payload.iat!).toBe(120);
    expect(payload).not.toHaveProperty('nonce');
    expect(server.logLines.join('\n')).not.toContain('back-channel logout not delivered');
  });

  it("every app's ID tokens carry the sid, with or without a back-channel URI; a refreshed ID token keeps it", async () => {
    const app = await server.auth.appRegistrations.create({ name: 'Plain app', redirectUris: [WEB], clientType: 'confidential' });
    const config = await appConfig(server.oauthUrl, app.clientId, app.clientSecret!);
    const { tokens } = await signIn(server.oauthUrl, server.baseUrl, config);
    const sid = tokens.claims()!.sid;
    expect(typeof sid).toBe('string');
    expect((sid as string).length).toBeGreaterThan(0);
    const refreshed = await client.refreshTokenGrant(config, tokens.refresh_token!);
    expect(decodeJwt(refreshed.id_token!).sid).toBe(sid);
  });
});

describe('back-channel logout without the operator\'s option', () => {
  let listener: Listener;
  let server: RunningServer;

  beforeAll(async () => {
    listener = await listen();
    server = await startServer({ accounts: testAccounts([alice]), keys: await testJwks(['ES256', 'RS256']) });
  });
  afterAll(async () => {
    await server.stop();
    await listener.close();
  });

  it.each([
    ['an address', (port: number) => `http://127.0.0.1:${port}/backchannel`, '127.0.0.1 is a special-use address (loopback)'],
    ['a name that resolves to loopback', (port: number) => `http://localhost:${port}/backchannel`, 'localhost resolves to 127.0.0.1, a special-use address (loopback)'],
  ])('%s: the sign-out completes, nothing connects to the listener, the refusal is logged without the token', async (_kind, uri, detail) => {
    const app = await server.auth.appRegistrations.create({
      name: 'Local app', redirectUris: [WEB], postLogoutRedirectUris: [SIGNED_OUT], clientType: 'confidential',
      backchannelLogoutUri: uri(listener.port),
    });
    const config = await appConfig(server.oauthUrl, app.clientId, app.clientSecret!);
    const { tokens, agent } = await signIn(server.oauthUrl, server.baseUrl, config);
    const logged = server.logLines.length;
    expect(await signOut(config, agent, tokens.id_token!)).toBe(SIGNED_OUT);
    expect(listener.connections).toBe(0);
    const lines = server.logLines.slice(logged).filter((line) => line.includes('back-channel logout not delivered'));
    expect(lines).toHaveLength(1);
    expect(JSON.parse(lines[0]!)).toMatchObject({ level: 'warn', client_id: app.clientId, outcome: 'refused', detail });
    // Neither the logout token, nor the ID token, nor the session's id.
    const sid = tokens.claims()!.sid as string;
    expect(server.logLines.join('\n')).not.toMatch(/eyJ/);
    expect(server.logLines.join('\n')).not.toContain(sid);
  });
});

describe("a tenant's back-channel logout URI at the management API", () => {
  const admin = { sub: 'admin', password: 'admin-pw', tenant: 'acme', permissions: ['integration_setup'] };
  const PORTAL = 'https://portal.example/cb';
  let server: RunningServer;
  let token: string;

  beforeAll(async () => {
    server = await startServer({ accounts: testAccounts([admin]), backchannelLogout: { privateHosts: ['127.0.0.1', 'localhost', '10.0.0.0/8'] } });
    const portal = await server.auth.appRegistrations.create({ name: 'Portal', redirectUris: [PORTAL], clientType: 'confidential', firstParty: true });
    const { code, verifier } = await signInForCode(server, { clientId: portal.clientId, redirectUri: PORTAL }, admin, 'openid manage.integrations');
    const answer = await postToken(server.oauthUrl, { grant_type: 'authorization_code', code, redirect_uri: PORTAL, code_verifier: verifier }, { authorization: basic(portal.clientId, portal.clientSecret!) });
    token = answer.body.access_token as string;
  });
  afterAll(() => server.stop());

  const api = (path: string, method: string, body: unknown) => fetch(`${server.baseUrl}/api/oauth2/${path}`, {
    method, headers: { authorization: `Bearer ${token}`, 'content-type': 'application/json' }, body: JSON.stringify(body),
  });

  it.each([
    ['https://127.0.0.1.nip.io/', 'spells an IP address'],
    ['https://foo.localhost/', '.localhost names'],
    ['https://metadata.google.internal/', '.internal names'],
    ['https://intranet.corp/', '.corp names'],
    ['https://x.example:6379/', 'port 443'],
    ['https://[::1]/bc', 'not an IP address'],
    ['https://169.254.169.254/latest/meta-data', 'not an IP address'],
    ['http://127.0.0.1:4000/bc', 'https'],
    ['https://billing.default.svc.cluster.local/bc', '.local names'],
    ['https://intranet/bc', 'single label'],
  ])('refuses %s when created and when changed (400, the field named), whatever the operator allows for delivery', async (uri, rule) => {
    const body = { name: 'Tenant app', redirect_uris: [PORTAL], client_type: 'confidential' };
    const created = await api('app-registrations', 'POST', { ...body, backchannel_logout_uri: uri });
    expect(created.status).toBe(400);
    const refusal = (await created.json()) as { error: string; field: string; error_description: string };
    expect(refusal).toMatchObject({ error: 'invalid_request', field: 'backchannel_logout_uri' });
    expect(refusal.error_description).toContain(rule);
    const app = (await (await api('app-registrations', 'POST', body)).json()) as { client_id: string };
    const changed = await api(`app-registrations/${app.client_id}`, 'PATCH', { backchannel_logout_uri: uri });
    expect(changed.status).toBe(400);
    expect(((await changed.json()) as { field: string }).field).toBe('backchannel_logout_uri');
    expect((await server.auth.appRegistrations.get(app.client_id))).not.toHaveProperty('backchannelLogoutUri');
  });

  it('accepts a public https name on port 443, and removes it with an empty string', async () => {
    const created = await api('app-registrations', 'POST', {
      name: 'Tenant app', redirect_uris: [PORTAL], client_type: 'confidential', backchannel_logout_uri: 'https://hr.acme.example.com:443/backchannel',
    });
    expect(created.status).toBe(201);
    const app = (await created.json()) as { client_id: string; backchannel_logout_uri: string };
    expect(app.backchannel_logout_uri).toBe('https://hr.acme.example.com:443/backchannel');
    const removed = await api(`app-registrations/${app.client_id}`, 'PATCH', { backchannel_logout_uri: '' });
    expect(removed.status).toBe(200);
    expect(await removed.json()).not.toHaveProperty('backchannel_logout_uri');
  });

  it("the library with a tenant is held to the tenant's rule; the operator's own app is not", async () => {
    const apps = server.auth.appRegistrations;
    await expect(apps.create({ name: 'X', redirectUris: [PORTAL], clientType: 'public', tenant: 'acme', backchannelLogoutUri: 'https://foo.localhost/bc' }))
      .rejects.toMatchObject({ field: 'backchannelLogoutUri' });
    const own = await apps.create({ name: 'X', redirectUris: [PORTAL], clientType: 'public', backchannelLogoutUri: 'http://localhost:4000/bc' });
    expect(own.backchannelLogoutUri).toBe('http://localhost:4000/bc');
    const tenants = await apps.create({ name: 'X', redirectUris: [PORTAL], clientType: 'public', tenant: 'acme' });
    await expect(apps.update(tenants.clientId, { backchannelLogoutUri: 'https://10.0.0.5/bc' })).rejects.toMatchObject({ field: 'backchannelLogoutUri' });
  });
});

describe('delivery from a plain Node process (the built library, outside jest)', () => {
  const script = join(process.cwd(), 'test/support/backchannel-server.mjs');
  let listener: Listener;
  const children: ChildProcess[] = [];

  beforeAll(async () => {
    if (!existsSync(join(process.cwd(), 'dist/src/index.js'))) throw new Error('run `npm run build` first (the test command does)');
    listener = await listen();
  });
  afterAll(async () => {
    for (const child of children) {
      if (child.pid !== undefined && child.exitCode === null) {
        const exited = new Promise((resolve) => child.once('exit', resolve));
        process.kill(child.pid, 'SIGTERM');
        await exited;
      }
    }
    await listener.close();
  });

  /** Starts the script; its port, app and stderr lines. */
  async function start(privateHosts: string[] | undefined): Promise<{ baseUrl: string; clientId: string; clientSecret: string; stderr: () => string }> {
    const child = spawn(process.execPath, [script], {
      env: {
        ...process.env,
        BACKCHANNEL_SERVER_OPTIONS: JSON.stringify({
          privateHosts, redirectUri: WEB, postLogoutRedirectUri: SIGNED_OUT,
          backchannelLogoutUri: `http://127.0.0.1:${listener.port}/backchannel`, accounts: [alice],
        }),
      },
      stdio: ['pipe', 'pipe', 'pipe'],
    });
    children.push(child);
    let stderr = '';
    child.stderr!.on('data', (chunk: Buffer) => (stderr += chunk.toString()));
    const started = await new Promise<{ port: number; clientId: string; clientSecret: string }>((resolve, reject) => {
      let line = '';
      child.stdout!.on('data', (chunk: Buffer) => {
        line += chunk.toString();
        const match = /^(\{"port".*\})$/m.exec(line);
        if (match) resolve(JSON.parse(match[1]!) as { port: number; clientId: string; clientSecret: string });
      });
      child.once('exit', (code) => reject(new Error(`the server exited (${String(code)}):\n${stderr}`)));
      setTimeout(() => reject(new Error(`the server did not start:\n${stderr}`)), 20_000).unref();
    });
    return { baseUrl: `http://127.0.0.1:${started.port}`, clientId: started.clientId, clientSecret: started.clientSecret, stderr: () => stderr };
  }

  it('with privateHosts the logout token arrives; without it nothing connects and the refusal is logged', async () => {
    const allowed = await start(['127.0.0.1']);
    const allowedConfig = await appConfig(`${allowed.baseUrl}/oauth2`, allowed.clientId, allowed.clientSecret);
    const first = await signIn(`${allowed.baseUrl}/oauth2`, allowed.baseUrl, allowedConfig);
    expect(await signOut(allowedConfig, first.agent, first.tokens.id_token!)).toBe(SIGNED_OUT);
    expect(listener.requests).toHaveLength(1);
    const { payload } = await jwtVerify(new URLSearchParams(listener.requests[0]!.body).get('logout_token')!, createRemoteJWKSet(new URL(`${allowed.baseUrl}/oauth2/jwks`)), {
      issuer: `${allowed.baseUrl}/oauth2`, audience: allowed.clientId, typ: 'logout+jwt',
    });
    expect(payload.sid).toBe(first.tokens.claims()!.sid);
    expect(typeof payload.sid).toBe('string');
    expect(allowed.stderr()).not.toContain('back-channel logout not delivered');

    const connectionsBefore = listener.connections;
    const refused = await start(undefined);
    const refusedConfig = await appConfig(`${refused.baseUrl}/oauth2`, refused.clientId, refused.clientSecret);
    const second = await signIn(`${refused.baseUrl}/oauth2`, refused.baseUrl, refusedConfig);
    expect(await signOut(refusedConfig, second.agent, second.tokens.id_token!)).toBe(SIGNED_OUT);
    expect(listener.connections).toBe(connectionsBefore);
    expect(listener.requests).toHaveLength(1);
    const line = refused.stderr().split('\n').find((entry) => entry.includes('back-channel logout not delivered'));
    expect(JSON.parse(line!)).toMatchObject({ level: 'warn', client_id: refused.clientId, outcome: 'refused', detail: '127.0.0.1 is a special-use address (loopback)' });
  }, 60_000);
});
