import { readFileSync } from 'node:fs';
import { createServer, type RequestListener, type Server } from 'node:http';
import type { AddressInfo } from 'node:net';
import { decodeJwt, exportJWK, generateKeyPair, type CryptoKey } from 'jose';
import * as oauth from 'oauth4webapi';
import * as client from 'openid-client';
import * as o4w from '../../examples/recipes/oauth4webapi.js';
import * as oc from '../../examples/recipes/openid-client.js';
import { addClientKey, payslipApis, registerPayrollSync, retireClientKey } from '../../examples/recipes/server-side.js';
import type { ClientJwk } from '../../policies/client-keys.js';
import { alice, testAccounts } from '../support/accounts.js';
import { startServer, type RunningServer } from '../support/server.js';
import { STORE_KINDS, useStore } from '../support/stores.js';
import { UserAgent } from '../support/user-agent.js';

const DOC = 'docs/client-recipes.md';
const RECIPE_FILES = ['examples/recipes/oauth4webapi.ts', 'examples/recipes/openid-client.ts', 'examples/recipes/server-side.ts'];
const WEB = 'https://payroll.example.com/cb';
const insecure: o4w.Http = { [oauth.allowInsecureRequests]: true };
const insecureDiscovery: client.DiscoveryRequestOptions = { execute: [client.allowInsecureRequests] };

/** The `// #region name` … `// #endregion` blocks of a recipe file, by name. */
function regions(file: string): Map<string, string> {
  const found = new Map<string, string>();
  for (const match of readFileSync(file, 'utf8').matchAll(/^\/\/ #region ([\w-]+)\n([\s\S]*?)^\/\/ #endregion$/gm)) {
    found.set(match[1]!, match[2]!.trimEnd());
  }
  return found;
}

/** The code block under each `<!-- recipe: file#name -->` marker of the doc. */
function documented(): Map<string, string> {
  const found = new Map<string, string>();
  for (const match of readFileSync(DOC, 'utf8').matchAll(/^<!-- recipe: ([\w/.-]+#[\w-]+) -->\n```ts\n([\s\S]*?)^```$/gm)) {
    found.set(match[1]!, match[2]!);
  }
  return found;
}

async function keyPair(kid: string): Promise<{ privateKey: CryptoKey; jwk: ClientJwk }> {
  const { privateKey, publicKey } = await generateKeyPair('ES256', { extractable: true });
  return { privateKey, jwk: { ...(await exportJWK(publicKey)), kid, alg: 'ES256' } as ClientJwk };
}

async function serve(listener: RequestListener): Promise<{ url: URL; close(): Promise<void> }> {
  const server: Server = createServer(listener);
  await new Promise<void>((resolve) => server.listen(0, '127.0.0.1', resolve));
  return {
    url: new URL(`http://127.0.0.1:${(server.address() as AddressInfo).port}/payslips`),
    close: () => new Promise<void>((resolve) => { server.closeAllConnections(); server.close(() => resolve()); }),
  };
}

/** Runs `body` with every clock of this process (server's and client's) `ms` ahead. */
async function later<T>(ms: number, body: () => Promise<T>): Promise<T> {
  const realNow = Date.now;
  Date.now = () => realNow() + ms;
  try {
    return await body();
  } finally {
    Date.now = realNow;
  }
}

/**
 * How oauth4webapi reports a 401 invalid_client: our answer carries a `WWW-Authenticate: Basic`
 * challenge, so the library throws its WWWAuthenticateChallengeError with the challenge's error.
 */
const invalidClient = {
  code: 'OAUTH_WWW_AUTHENTICATE_CHALLENGE',
  status: 401,
  cause: [expect.objectContaining({ scheme: 'basic', parameters: expect.objectContaining({ error: 'invalid_client' }) })],
};

/** The browser's part of a sign-in at `url`: login and consent as alice; the URL it is sent back to. */
async function browse(server: RunningServer, url: URL): Promise<URL> {
  const agent = new UserAgent(server.baseUrl);
  let step = await agent.request(url.href);
  if (step.html.includes('name="password"')) step = await agent.submit(step, { username: alice.sub, password: alice.password });
  if (step.html.includes('value="allow"')) step = await agent.submit(step, { decision: 'allow' });
  if (!step.location) throw new Error(`no redirect back to the app (status ${step.status}): ${step.html.slice(0, 300)}`);
  return new URL(step.location);
}

/**
 * docs/client-recipes.md shows the code of examples/recipes/ verbatim (each region under its
 * marker, every region shown), and that code works against a server: private_key_jwt, DPoP with
 * the server's nonce (a nonce that moved on is retried), PAR with PKCE through our sign-in pages,
 * key rotation, and the resource-server kit in Koa and Express refusing a bound token as Bearer.
 */
describe('client recipes: the documented code is the code that runs', () => {
  it('every recipe region is in the doc under its marker, character for character, and every marker names a region', () => {
    const shown = documented();
    const expected = new Map<string, string>(RECIPE_FILES.flatMap((file) => [...regions(file)].map(([name, code]): [string, string] => [`${file}#${name}`, code])));
    expect(expected.size).toBeGreaterThanOrEqual(9);
    for (const [key, code] of expected) {
      expect({ key, shown: shown.get(key)?.includes(code) ?? false }).toEqual({ key, shown: true });
    }
    expect([...shown.keys()].filter((key) => !expected.has(key))).toEqual([]);
  });
});

describe.each(STORE_KINDS)('client recipes against a server (%s store)', (kind) => {
  const store = useStore(kind);
  let server: RunningServer;
  let as: oauth.AuthorizationServer;
  let k1: Awaited<ReturnType<typeof keyPair>>;
  let machine: string;
  let web: { clientId: string; clientSecret: string };
  const apis: Array<{ name: string; url: URL; close(): Promise<void> }> = [];

  beforeAll(async () => {
    server = await startServer({ store: store.option(), accounts: testAccounts([alice]) });
    as = await o4w.discover(new URL(server.oauthUrl), insecure);
    k1 = await keyPair('k1');
    machine = (await server.auth.clientConfigurations.create({
      tenant: 'acme', name: 'Sync', category: 'hr', resources: { scim: { scopes: ['scim.read'] } },
      tokenEndpointAuthMethod: 'private_key_jwt', jwks: { keys: [k1.jwk] },
    })).clientId;
    const app = await server.auth.appRegistrations.create({ name: 'Payroll web', redirectUris: [WEB], clientType: 'confidential' });
    web = { clientId: app.clientId, clientSecret: app.clientSecret! };
    const { koa, express } = payslipApis(server.auth);
    apis.push({ name: 'Koa', ...await serve(koa.callback()) }, { name: 'Express', ...await serve(express) });
  });
  afterAll(async () => {
    await Promise.all(apis.map((api) => api.close()));
    await server.stop();
  });

  it('oauth4webapi and openid-client: client_credentials with private_key_jwt gives a Bearer token of the client', async () => {
    const viaOauth4webapi = await o4w.machineToken(as, machine, { key: k1.privateKey, kid: 'k1' }, insecure);
    const config = await oc.configure(new URL(server.oauthUrl), machine, { key: k1.privateKey, kid: 'k1' }, insecureDiscovery);
    const viaOpenidClient = await oc.machineToken(config);
    for (const tokens of [viaOauth4webapi, viaOpenidClient]) {
      expect(tokens.token_type).toBe('bearer');
      expect(decodeJwt(tokens.access_token)).toMatchObject({ client_id: machine, scope: 'scim.read' });
    }
  });

  it('a key the client does not hold is refused with invalid_client, which the library throws', async () => {
    const stranger = await keyPair('k1');
    await expect(o4w.machineToken(as, machine, { key: stranger.privateKey, kid: 'k1' }, insecure)).rejects.toMatchObject(invalidClient);
  });

  it.each(['Koa', 'Express'])('registered with a key and DPoP required (oauth4webapi): a bound token works at the %s API with its proof, not as Bearer', async (name) => {
    const api = apis.find((each) => each.name === name)!;
    const key = await keyPair('payroll-2026');
    const clientId = await registerPayrollSync(server.auth, key.jwk);
    const payroll = await o4w.dpopClient(as, clientId, oauth.PrivateKeyJwt({ key: key.privateKey, kid: 'payroll-2026' }), insecure);
    const tokens = await payroll.token();
    expect(tokens.token_type).toBe('dpop');
    expect(decodeJwt(tokens.access_token).cnf).toEqual({ jkt: expect.any(String) });
    const answer = await payroll.get(tokens.access_token, api.url);
    expect({ status: answer.status, body: await answer.json() }).toEqual({ status: 200, body: { sub: clientId } });
    const stolen = await fetch(api.url, { headers: { authorization: `Bearer ${tokens.access_token}` } });
    expect(stolen.status).toBe(401);
    expect(stolen.headers.get('www-authenticate')).toMatch(/error="invalid_token"/);
    // A thief with the token and a DPoP key of her own: the proof's key is not the token's.
    const thief = await o4w.dpopClient(as, clientId, oauth.PrivateKeyJwt({ key: key.privateKey, kid: 'payroll-2026' }), insecure);
    await expect(thief.get(tokens.access_token, api.url)).rejects.toMatchObject({
      code: 'OAUTH_WWW_AUTHENTICATE_CHALLENGE',
      status: 401,
      cause: [expect.objectContaining({ scheme: 'dpop', parameters: expect.objectContaining({ error: 'invalid_dpop_proof' }) })],
    });
    // DPoP required: the same client without a proof gets no token.
    await expect(o4w.machineToken(as, clientId, { key: key.privateKey, kid: 'payroll-2026' }, insecure)).rejects.toMatchObject({ code: 'OAUTH_RESPONSE_BODY_ERROR', status: 400, error: 'invalid_grant' });
  });

  it('oauth4webapi: a nonce that moved on (use_dpop_nonce) is retried once with the new one', async () => {
    const payroll = await o4w.dpopClient(as, machine, oauth.PrivateKeyJwt({ key: k1.privateKey, kid: 'k1' }), insecure);
    expect((await payroll.token()).token_type).toBe('dpop');
    // Ten minutes on, the nonce the handle kept is no longer current: refused once, then sent again.
    const tokens = await later(10 * 60_000, () => payroll.token());
    expect(tokens.token_type).toBe('dpop');
  });

  it('openid-client: DPoP-bound tokens, an API call with one, and a nonce that moved on', async () => {
    const config = await oc.configure(new URL(server.oauthUrl), machine, { key: k1.privateKey, kid: 'k1' }, insecureDiscovery);
    const payroll = await oc.dpopClient(config);
    const tokens = await payroll.token();
    expect(tokens.token_type).toBe('dpop');
    const answer = await payroll.get(tokens.access_token, apis[0]!.url);
    expect(answer.status).toBe(200);
    expect((await later(10 * 60_000, () => payroll.token())).token_type).toBe('dpop');
  });

  it('oauth4webapi: PAR with PKCE, through our sign-in and consent pages, to an ID token', async () => {
    const app: oauth.Client = { client_id: web.clientId };
    const clientAuth = oauth.ClientSecretBasic(web.clientSecret);
    const pending = await o4w.startSignIn(as, app, clientAuth, WEB, insecure);
    expect([...pending.url.searchParams.keys()].sort()).toEqual(['client_id', 'request_uri']);
    const callback = await browse(server, pending.url);
    const tokens = await o4w.finishSignIn(as, app, clientAuth, WEB, callback, pending, insecure);
    expect(decodeJwt(tokens.id_token!).sub).toBe(alice.sub);
  });

  it('openid-client: PAR with PKCE to tokens; a state that does not match is refused by the library', async () => {
    const config = await client.discovery(new URL(server.oauthUrl), web.clientId, undefined, client.ClientSecretBasic(web.clientSecret), insecureDiscovery);
    const pending = await oc.startSignIn(config, WEB);
    expect(pending.url.searchParams.get('request_uri')).toMatch(/^urn:ietf:params:oauth:request_uri:/);
    const callback = await browse(server, pending.url);
    await expect(oc.finishSignIn(config, callback, { ...pending, state: 'another' })).rejects.toMatchObject({
      cause: expect.objectContaining({ message: expect.stringMatching(/"state"/) }),
    });
    const tokens = await oc.finishSignIn(config, callback, pending);
    expect(tokens.claims()?.sub).toBe(alice.sub);
  });

  it('key rotation: both keys work while both are registered; the retired one is refused at once', async () => {
    const old = await keyPair('2025');
    const next = await keyPair('2026');
    const { clientId } = await server.auth.clientConfigurations.create({
      tenant: 'acme', name: 'Rotating', category: 'hr', resources: { scim: { scopes: ['scim.read'] } },
      tokenEndpointAuthMethod: 'private_key_jwt', jwks: { keys: [old.jwk] },
    });
    const token = (key: typeof old, kid: string) => o4w.machineToken(as, clientId, { key: key.privateKey, kid }, insecure);
    await expect(token(next, '2026')).rejects.toMatchObject(invalidClient);
    await addClientKey(server.auth, clientId, next.jwk);
    expect((await token(old, '2025')).token_type).toBe('bearer');
    expect((await token(next, '2026')).token_type).toBe('bearer');
    await retireClientKey(server.auth, clientId, '2025');
    await expect(token(old, '2025')).rejects.toMatchObject(invalidClient);
    expect((await token(next, '2026')).token_type).toBe('bearer');
  });
});
