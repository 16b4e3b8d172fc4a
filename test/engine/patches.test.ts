/**
 * The engine behaviours src/engine/patches.ts relies on, checked against a bare node-oidc-provider
 * (nothing of ours but the patch under test): each test shows the engine without the patch, then
 * with it, so an engine upgrade that moves one of them fails here, in one file.
 */
import { createHash, randomBytes } from 'node:crypto';
import { createServer, type Server } from 'node:http';
import type { AddressInfo } from 'node:net';
import { decodeJwt, exportJWK, generateKeyPair, SignJWT } from 'jose';
import { jest } from '@jest/globals';
import Provider, { type Configuration } from 'oidc-provider';
import { PrivateHosts } from '../../policies/backchannel-logout.js';
import { createMemoryStore } from '../../adapters/memory.js';
import type { Store } from '../../adapters/types.js';
import { deliveryFetch } from '../../src/engine/backchannel-delivery.js';
import { ClientLookups } from '../../src/engine/client-cache.js';
import { followKeys, patchEngine } from '../../src/engine/patches.js';
import { LiveKeys } from '../../src/engine/live-keys.js';
import { engineRequest } from '../../src/engine/request.js';
import { SingleUse } from '../../src/engine/single-use.js';
import { digestSecret } from '../../src/records/secrets.js';
import { testJwks } from '../support/keys.js';

const AUDIENCE = 'https://api.example.test';
const SECRET = 'a-secret-that-is-long-enough-for-the-engine-0123456789';
const LOOPBACK = 'http://127.0.0.1/cb';

interface Engine {
  provider: Provider;
  store: Store;
  url: string;
  seen: Array<{ grantType: unknown } | undefined>;
  close(): Promise<void>;
}

/** What a test adds to the bare engine: an app with a back-channel logout URI, the fetch hook. */
interface BareExtras {
  backchannelLogoutUri?: string;
  sessionRequired?: boolean;
  fetch?: Configuration['fetch'];
  dpop?: boolean;
  /** A private_key_jwt client 'signer' whose keys are at this URL. */
  jwksUri?: string;
}

async function bareEngine(patched: boolean, extras: BareExtras = {}): Promise<Engine> {
  const store = createMemoryStore();
  const seen: Engine['seen'] = [];
  const secret = patched ? digestSecret(SECRET) : SECRET;
  const configuration: Configuration = {
    adapter: (model: string) => store.engine(model),
    jwks: (await testJwks(['ES256', 'RS256'])).jwks as Configuration['jwks'],
    scopes: ['openid', 'api.read'],
    clients: [
      { client_id: 'service', client_secret: secret, grant_types: ['client_credentials'], response_types: [], redirect_uris: [], scope: 'api.read' },
      {
        client_id: 'app',
        client_secret: secret,
        application_type: 'native',
        grant_types: ['authorization_code', 'refresh_token'],
        response_types: ['code'],
        redirect_uris: [LOOPBACK],
      },
      ...(extras.backchannelLogoutUri ? [{
        client_id: 'logout-app',
        client_secret: secret,
        application_type: 'native' as const,
        grant_types: ['authorization_code'],
        response_types: ['code' as const],
        redirect_uris: [LOOPBACK],
        backchannel_logout_uri: extras.backchannelLogoutUri,
        backchannel_logout_session_required: extras.sessionRequired ?? false,
      }] : []),
      ...(extras.jwksUri ? [{
        client_id: 'signer',
        token_endpoint_auth_method: 'private_key_jwt' as const,
        jwks_uri: extras.jwksUri,
        grant_types: ['client_credentials'],
        response_types: [],
        redirect_uris: [],
        scope: 'api.read',
      }] : []),
    ],
    ...(extras.jwksUri ? { clientAuthMethods: ['client_secret_basic', 'private_key_jwt'] } : {}),
    ...(extras.fetch ? { fetch: extras.fetch } : {}),
    async findAccount(_ctx, sub) {
      return { accountId: sub, claims: async () => ({ sub }) };
    },
    expiresWithSession: async () => false,
    issueRefreshToken: async () => true,
    rotateRefreshToken: true,
    features: {
      devInteractions: { enabled: false },
      clientCredentials: { enabled: true },
      backchannelLogout: { enabled: true },
      ...(extras.dpop ? { dPoP: { enabled: true } } : {}),
      resourceIndicators: {
        enabled: true,
        defaultResource: () => AUDIENCE,
        useGrantedResource: () => true,
        getResourceServerInfo: () => {
          seen.push(engineRequest() ? { grantType: engineRequest()?.oidc?.params?.grant_type } : undefined);
          return { scope: 'api.read', audience: AUDIENCE, accessTokenFormat: 'jwt', jwt: { sign: { alg: 'ES256' } } };
        },
      },
    },
  };
  const provider = new Provider('http://127.0.0.1', configuration);
  if (patched) {
    patchEngine(provider, {
      clients: new ClientLookups(store.records),
      singleUse: new SingleUse(store, { reuseWindowSeconds: 60, successorKey: randomBytes(32) }),
    });
  }
  const server: Server = createServer(provider.callback());
  await new Promise<void>((resolve) => server.listen(0, '127.0.0.1', resolve));
  const url = `http://127.0.0.1:${(server.address() as AddressInfo).port}`;
  return {
    provider,
    store,
    url,
    seen,
    close: async () => {
      await new Promise((resolve) => server.close(resolve));
      await store.close();
    },
  };
}

const basic = (clientId: string, secret: string) => `Basic ${Buffer.from(`${clientId}:${secret}`).toString('base64')}`;

async function token(engine: Engine, clientId: string, body: Record<string, string>, headers: Record<string, string> = {}): Promise<{ status: number; body: Record<string, unknown> }> {
  const response = await fetch(`${engine.url}/token`, {
    method: 'POST',
    headers: { authorization: basic(clientId, SECRET), 'content-type': 'application/x-www-form-urlencoded', ...headers },
    body: new URLSearchParams(body),
  });
  return { status: response.status, body: (await response.json()) as Record<string, unknown> };
}

/** A code as the engine's authorization endpoint makes one after consent (bench/mint-codes.ts does the same). */
async function mintCode(engine: Engine): Promise<{ code: string; verifier: string }> {
  const { provider } = engine;
  const grant = new provider.Grant({ accountId: 'user-1', clientId: 'app' });
  grant.addOIDCScope('openid api.read');
  grant.addResourceScope(AUDIENCE, 'api.read');
  const grantId = await grant.save();
  const verifier = randomBytes(32).toString('base64url');
  const client = await provider.Client.find('app');
  const code = new provider.AuthorizationCode({
    accountId: 'user-1',
    authTime: Math.floor(Date.now() / 1000),
    client,
    codeChallenge: createHash('sha256').update(verifier).digest('base64url'),
    codeChallengeMethod: 'S256',
    grantId,
    redirectUri: LOOPBACK,
    resource: AUDIENCE,
    scope: 'openid api.read',
  } as ConstructorParameters<Provider['AuthorizationCode']>[0]);
  return { code: await code.save(), verifier };
}

/** A minted code exchanged: the first answer, with its refresh token. */
async function exchangeMinted(engine: Engine, headers: Record<string, string> = {}): Promise<{ first: Awaited<ReturnType<typeof token>>; exchange: Record<string, string>; code: string }> {
  const { code, verifier } = await mintCode(engine);
  const exchange = { grant_type: 'authorization_code', code, redirect_uri: LOOPBACK, code_verifier: verifier };
  return { first: await token(engine, 'app', exchange, headers), exchange, code };
}

function authorize(engine: Engine, extra: Record<string, string>): Promise<Response> {
  const query = new URLSearchParams({
    client_id: 'app',
    response_type: 'code',
    scope: 'openid',
    redirect_uri: LOOPBACK,
    state: 'st',
    code_challenge: createHash('sha256').update('v'.repeat(43)).digest('base64url'),
    code_challenge_method: 'S256',
    ...extra,
  });
  return fetch(`${engine.url}/auth?${query}`, { redirect: 'manual' });
}

/** Cookies the engine set, sent back on the next request (its interaction and session cookies). */
class Cookies {
  private readonly jar = new Map<string, string>();
  keep(response: Response): Response {
    for (const header of response.headers.getSetCookie()) {
      const [pair] = header.split(';');
      const eq = pair!.indexOf('=');
      this.jar.set(pair!.slice(0, eq), pair!.slice(eq + 1));
    }
    return response;
  }
  get header(): string {
    return [...this.jar].map(([name, value]) => `${name}=${value}`).join('; ');
  }
}

/**
 * A sign-in through the engine's authorization endpoint, as our interaction pages end one (the
 * interaction's result saved, the browser sent back to resume): the ID token of the code it gives.
 */
async function signInForIdToken(engine: Engine): Promise<string> {
  const { provider } = engine;
  const cookies = new Cookies();
  const started = cookies.keep(await authorize(engine, {}));
  const uid = /^\/interaction\/([^/?]+)/.exec(started.headers.get('location') ?? '')![1]!;
  const interaction = await provider.Interaction.find(uid);
  const grant = new provider.Grant({ accountId: 'user-1', clientId: 'app' });
  grant.addOIDCScope('openid');
  grant.addResourceScope(AUDIENCE, 'api.read');
  interaction!.result = { login: { accountId: 'user-1' }, consent: { grantId: await grant.save() } };
  await interaction!.save(60);
  const resumed = await fetch(new URL(interaction!.returnTo, engine.url), { redirect: 'manual', headers: { cookie: cookies.header } });
  const code = new URL(resumed.headers.get('location')!).searchParams.get('code')!;
  const answer = await token(engine, 'app', { grant_type: 'authorization_code', code, redirect_uri: LOOPBACK, code_verifier: 'v'.repeat(43) });
  return answer.body.id_token as string;
}

/** A listener for logout tokens on 127.0.0.1: the bodies it was posted. */
async function logoutListener(): Promise<{ uri: string; bodies: string[]; close(): Promise<void> }> {
  const bodies: string[] = [];
  const server = createServer((req, res) => {
    let body = '';
    req.on('data', (chunk: Buffer) => (body += chunk.toString()));
    req.on('end', () => {
      bodies.push(body);
      res.writeHead(200).end();
    });
  });
  await new Promise<void>((resolve) => server.listen(0, '127.0.0.1', resolve));
  return {
    uri: `http://127.0.0.1:${(server.address() as AddressInfo).port}/bc`,
    bodies,
    close: async () => {
      server.closeAllConnections();
      await new Promise((resolve) => server.close(resolve));
    },
  };
}

describe('the engine behaviours our patches rely on (src/engine/patches.ts)', () => {
  const engines: Engine[] = [];
  const start = async (patched: boolean, extras?: BareExtras) => {
    const engine = await bareEngine(patched, extras);
    engines.push(engine);
    return engine;
  };
  afterEach(async () => {
    await Promise.all(engines.splice(0).map((engine) => engine.close()));
  });

  it('12. the engine signs with its instance key set and serves /jwks from its instance state: replaced by followKeys at every change', async () => {
    const kidOf = async (engine: Engine) => {
      const answer = await token(engine, 'service', { grant_type: 'client_credentials' });
      return JSON.parse(Buffer.from((answer.body.access_token as string).split('.')[0]!, 'base64url').toString()).kid as string;
    };
    const jwksKids = async (engine: Engine) => ((await (await fetch(`${engine.url}/jwks`)).json()) as { keys: Array<{ kid: string }> }).keys.map((key) => key.kid);
    const next = (await testJwks(['ES256', 'RS256'])).jwks;
    // Bare: a key set changed after construction is not seen by the engine.
    const bare = await start(false);
    const before = await kidOf(bare);
    const unfollowed = new LiveKeys([], (await testJwks(['ES256', 'RS256'])).jwks, ['ES256', 'RS256']);
    unfollowed.replace(next);
    expect(await kidOf(bare)).toBe(before);
    // Followed: the next token is signed with the new ES256 key, and /jwks lists the new keys only.
    const patched = await start(true);
    const live = new LiveKeys([], (await testJwks(['ES256', 'RS256'])).jwks, ['ES256', 'RS256']);
    followKeys(patched.provider, live);
    live.replace(next);
    expect(await kidOf(patched)).toBe(next.keys[0]!.kid);
    expect(await jwksKids(patched)).toEqual(next.keys.map((key) => key.kid));
  });

  it('1. client_secret_basic is checked by Client.prototype.compareClientSecret: a stored digest authenticates its secret', async () => {
    const bare = await start(false);
    expect((await token(bare, 'service', { grant_type: 'client_credentials' })).status).toBe(200);
    const patched = await start(true);
    expect((await token(patched, 'service', { grant_type: 'client_credentials' })).status).toBe(200);
    const wrong = await fetch(`${patched.url}/token`, {
      method: 'POST',
      headers: { authorization: basic('service', `${SECRET}x`), 'content-type': 'application/x-www-form-urlencoded' },
      body: 'grant_type=client_credentials',
    });
    expect(wrong.status).toBe(401);
  });

  it('2. redirect URIs are checked by Client.prototype.redirectUriAllowed: a loopback URI on another port is refused', async () => {
    const otherPort = { redirect_uri: 'http://127.0.0.1:8421/cb' };
    const bare = await authorize(await start(false), otherPort);
    expect(bare.status).toBe(303);
    expect(bare.headers.get('location')).toMatch(/^\/interaction\//);
    const patched = await authorize(await start(true), otherPort);
    expect(patched.status).toBe(400);
    expect(await patched.text()).toContain('redirect_uri did not match any of the client');
  });

  it('3. response modes are checked by Client.prototype.responseModeAllowed with the request in Provider.ctx; the error goes back in the query', async () => {
    const bare = await authorize(await start(false), { response_mode: 'fragment' });
    expect(bare.headers.get('location')).toMatch(/^\/interaction\//);
    const patched = await authorize(await start(true), { response_mode: 'fragment' });
    expect(patched.status).toBe(303);
    const location = new URL(patched.headers.get('location')!);
    expect(`${location.origin}${location.pathname}`).toBe(LOOPBACK);
    expect(location.hash).toBe('');
    expect(location.searchParams.get('error')).toBe('invalid_request');
    expect(location.searchParams.get('state')).toBe('st');
    expect((await authorize(engines.at(-1)!, {})).headers.get('location')).toMatch(/^\/interaction\//);
  });

  it('4. every token request looks its client up with Client.find', async () => {
    const engine = await start(true);
    const find = engine.provider.Client.find;
    let lookups = 0;
    engine.provider.Client.find = (async (id: string) => {
      lookups += 1;
      return find.call(engine.provider.Client, id);
    }) as typeof find;
    await token(engine, 'service', { grant_type: 'client_credentials' });
    await token(engine, 'service', { grant_type: 'client_credentials' });
    expect(lookups).toBe(2);
  });

  it('6. Provider.ctx is the request the engine serves, inside its hooks', async () => {
    const engine = await start(true);
    await token(engine, 'service', { grant_type: 'client_credentials' });
    expect(engine.seen).toEqual([{ grantType: 'client_credentials' }]);
    expect(engineRequest()).toBeUndefined();
  });

  it('5. a code is found with AuthorizationCode.find and spent when its first refresh token is saved: a replay ends the grant', async () => {
    const engine = await start(true);
    const { first, exchange, code } = await exchangeMinted(engine);
    expect(first.status).toBe(200);
    expect(typeof first.body.refresh_token).toBe('string');
    // The engine's consume() was taken over (src/engine/single-use.ts): the code was consumed and
    // confirmed in the step that saved its refresh token, through the engine's RefreshToken adapter.
    // Presented again, it is a replay, refused with the engine's invalid_grant, and its grant ends.
    expect(await engine.store.engine('AuthorizationCode').consumption(code)).toEqual({ consumedAt: expect.any(Number), confirmed: true });
    const replay = await token(engine, 'app', exchange);
    expect(replay).toEqual({ status: 400, body: { error: 'invalid_grant', error_description: 'grant request is invalid' } });
    const refresh = await token(engine, 'app', { grant_type: 'refresh_token', refresh_token: first.body.refresh_token as string });
    expect(refresh.status).toBe(400);
  });

  it('5. a refresh token is found with RefreshToken.find, spent with consume(), and its successor named by generateTokenId()', async () => {
    const engine = await start(true);
    const { first } = await exchangeMinted(engine);
    const spent = first.body.refresh_token as string;
    const rotated = await token(engine, 'app', { grant_type: 'refresh_token', refresh_token: spent });
    expect(rotated.status).toBe(200);
    // The successor's id is the derived one: presenting the spent token again (a lost answer)
    // gives the same successor.
    const retried = await token(engine, 'app', { grant_type: 'refresh_token', refresh_token: spent });
    expect(retried.status).toBe(200);
    expect(retried.body.refresh_token).toBe(rotated.body.refresh_token);
    // Once the successor is used, the spent one is a reuse: the grant ends.
    expect((await token(engine, 'app', { grant_type: 'refresh_token', refresh_token: rotated.body.refresh_token as string })).status).toBe(200);
    expect((await token(engine, 'app', { grant_type: 'refresh_token', refresh_token: spent })).status).toBe(400);
  });

  it('5. without the patches, the engine ends the grant at the first repeat of a refresh token', async () => {
    const engine = await start(false);
    const { first } = await exchangeMinted(engine);
    const spent = first.body.refresh_token as string;
    const rotated = await token(engine, 'app', { grant_type: 'refresh_token', refresh_token: spent });
    expect(rotated.status).toBe(200);
    expect((await token(engine, 'app', { grant_type: 'refresh_token', refresh_token: spent })).status).toBe(400);
    expect((await token(engine, 'app', { grant_type: 'refresh_token', refresh_token: rotated.body.refresh_token as string })).status).toBe(400);
  });

  it("11. a confidential client's refresh token issued with a DPoP proof: unbound by the engine, bound to the proof's key once patched", async () => {
    const proofOf = async (engine: Engine) => {
      const { privateKey, publicKey } = await generateKeyPair('ES256');
      const jwk = await exportJWK(publicKey);
      return () => new SignJWT({ htm: 'POST', htu: `${engine.url}/token`, jti: randomBytes(12).toString('base64url') })
        .setProtectedHeader({ alg: 'ES256', typ: 'dpop+jwt', jwk }).setIssuedAt().sign(privateKey);
    };
    for (const patched of [false, true]) {
      const engine = await start(patched, { dpop: true });
      const [key, other] = [await proofOf(engine), await proofOf(engine)];
      const { first } = await exchangeMinted(engine, { dpop: await key() });
      expect(first.body.token_type).toBe('DPoP');
      const refresh = { grant_type: 'refresh_token', refresh_token: first.body.refresh_token as string };
      const withOtherKey = await token(engine, 'app', refresh, { dpop: await other() });
      expect(withOtherKey.status).toBe(patched ? 400 : 200);
      if (patched) {
        expect(withOtherKey.body).toMatchObject({ error: 'invalid_grant' });
        expect((await token(engine, 'app', refresh, { dpop: await key() })).status).toBe(200);
      }
    }
  });

  it('8. the sid of an ID token is decided by Client.prototype.includeSid: none without a back-channel URI, unless patched', async () => {
    const bare = await start(false);
    expect((await bare.provider.Client.find('app'))!.includeSid()).toBeFalsy();
    const bareToken = decodeJwt(await signInForIdToken(bare));
    expect(bareToken.sub).toBe('user-1');
    expect(bareToken).not.toHaveProperty('sid');
    const patched = await start(true);
    const sid = decodeJwt(await signInForIdToken(patched)).sid;
    expect(typeof sid).toBe('string');
    expect((sid as string).length).toBeGreaterThan(0);
  });

  it('8. a logout token carries the sid only for a client registered with backchannel_logout_session_required', async () => {
    const listener = await logoutListener();
    try {
      // The engine's own fetch refuses loopback: ours, with the listener allowed for the operator's apps.
      const fetch = deliveryFetch(new PrivateHosts(['127.0.0.1']));
      for (const sessionRequired of [false, true]) {
        const engine = await start(true, { backchannelLogoutUri: listener.uri, sessionRequired, fetch });
        const client = await engine.provider.Client.find('logout-app') as unknown as { backchannelLogout(sub: string, sid: string): Promise<void> };
        await client.backchannelLogout('user-1', 'the-sid');
        const payload = decodeJwt(new URLSearchParams(listener.bodies.at(-1)).get('logout_token')!);
        expect(payload).toMatchObject({ sub: 'user-1', aud: 'logout-app', events: { 'http://schemas.openid.net/event/backchannel-logout': {} } });
        if (sessionRequired) expect(payload.sid).toBe('the-sid');
        else expect(payload).not.toHaveProperty('sid');
      }
      expect(listener.bodies).toHaveLength(2);
    } finally {
      await listener.close();
    }
  });

  it("9. Client.prototype.backchannelLogout calls the configured fetch within its own async context: patched, it runs as the app's owner", async () => {
    const listener = await logoutListener();
    try {
      const fetch = deliveryFetch(new PrivateHosts(['127.0.0.1']));
      type LogoutClient = { backchannelLogout(sub: string, sid: string): Promise<void> };
      // Bare: no owner known, so none of the operator's exceptions: refused, nothing posted.
      const bare = await start(false, { backchannelLogoutUri: listener.uri, fetch });
      const refused = await ((await bare.provider.Client.find('logout-app')) as unknown as LogoutClient).backchannelLogout('user-1', 's').catch((error: unknown) => error);
      expect(refused).toMatchObject({ failure: 'refused' });
      expect(listener.bodies).toHaveLength(0);
      // Patched: the operator's app (no tenant) gets the operator's exceptions: delivered.
      const patched = await start(true, { backchannelLogoutUri: listener.uri, fetch });
      await ((await patched.provider.Client.find('logout-app')) as unknown as LogoutClient).backchannelLogout('user-1', 's');
      expect(listener.bodies).toHaveLength(1);
    } finally {
      await listener.close();
    }
  });

  it("10. a client's key set at its jwks_uri is read again only when no cached key verifies: bare, a key removed from the set works on; patched, not past 60 s", async () => {
    const { privateKey, publicKey } = await generateKeyPair('ES256', { extractable: true });
    const key = { ...(await exportJWK(publicKey)), kid: 'a', alg: 'ES256' };
    let keys: object[] = [key];
    const keyServer = createServer((_request, response) => {
      response.writeHead(200, { 'content-type': 'application/json', 'cache-control': 'max-age=3600' }).end(JSON.stringify({ keys }));
    });
    await new Promise<void>((resolve) => keyServer.listen(0, '127.0.0.1', resolve));
    const realNow = Date.now.bind(Date);
    let offsetMs = 0;
    const clock = jest.spyOn(Date, 'now').mockImplementation(() => realNow() + offsetMs);
    try {
      const jwksUri = `http://127.0.0.1:${(keyServer.address() as AddressInfo).port}/jwks`;
      const assertionToken = async (engine: Engine) => {
        const now = Math.floor(Date.now() / 1000);
        const jwt = await new SignJWT({}).setProtectedHeader({ alg: 'ES256', kid: 'a' }).setIssuer('signer').setSubject('signer')
          .setAudience('http://127.0.0.1').setIssuedAt(now).setExpirationTime(now + 60).setJti(randomBytes(8).toString('hex')).sign(privateKey);
        const response = await fetch(`${engine.url}/token`, {
          method: 'POST',
          headers: { 'content-type': 'application/x-www-form-urlencoded' },
          body: new URLSearchParams({ grant_type: 'client_credentials', client_assertion_type: 'urn:ietf:params:oauth:client-assertion-type:jwt-bearer', client_assertion: jwt }),
        });
        return response.status;
      };
      for (const [patched, afterRemoval] of [[false, 200], [true, 401]] as const) {
        keys = [key];
        offsetMs = 0;
        const engine = await start(patched, { jwksUri });
        expect(await assertionToken(engine)).toBe(200);
        keys = [];
        offsetMs = 61_000;
        expect({ patched, status: await assertionToken(engine) }).toEqual({ patched, status: afterRemoval });
      }
    } finally {
      clock.mockRestore();
      keyServer.closeAllConnections();
      await new Promise((resolve) => keyServer.close(resolve));
    }
  });
});
