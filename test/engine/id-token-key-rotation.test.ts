import { mkdtempSync, readFileSync, rmSync, writeFileSync } from 'node:fs';
import { UserAgent } from '../support/user-agent.js';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { createLocalJWKSet, decodeProtectedHeader, jwtVerify, type JSONWebKeySet } from 'jose';
import { alice, testAccounts } from '../support/accounts.js';
import { cliInProcess } from '../support/cli.js';
import { startRedis, type RedisServer } from '../support/redis.js';
import { basic, postToken, startServer, type RunningServer } from '../support/server.js';
import { signInForCode } from '../support/sign-in.js';

const WEB = 'https://app.example.com/cb';
const COOKIE_KEYS = ['cookie-key-shared-by-every-instance-0001'];

/**
 * The rotation rule of docs/keys.md for an ID-token algorithm other than RS256: EdDSA keys of an
 * app that registered EdDSA are added, promoted and retired with the CLI like the access-token
 * keys, the server restarted on the same Redis after each step. The kid of new ID tokens changes
 * exactly at the restart after `keys promote`; an ID token of the old key keeps verifying against
 * what the server publishes until the key is retired.
 */
describe('EdDSA ID-token keys rotate by the same rule (Redis, restarts)', () => {
  let redis: RedisServer;
  let dir: string;
  let file: string;
  let server: RunningServer | undefined;
  let app: { clientId: string; clientSecret: string };

  /** The CLI in process, --json. */
  const talentAuth = cliInProcess(() => dir);

  /** The server (re)started with the key file as it is now. */
  async function restart(idTokenAlgorithms: Array<'RS256' | 'EdDSA'> = ['RS256', 'EdDSA']): Promise<RunningServer> {
    await server?.stop();
    server = await startServer({
      store: { type: 'redis', url: redis.url, keyPrefix: 'id-rotation:' },
      keys: { jwks: JSON.parse(readFileSync(file, 'utf8')) },
      idTokenAlgorithms,
      accounts: testAccounts([alice]),
      cookieKeys: COOKIE_KEYS,
    });
    return server;
  }

  async function idToken(running: RunningServer): Promise<string> {
    const { code, verifier } = await signInForCode(running, { clientId: app.clientId, redirectUri: WEB }, alice, 'openid');
    const answer = await postToken(running.oauthUrl, { grant_type: 'authorization_code', code, redirect_uri: WEB, code_verifier: verifier }, {
      authorization: basic(app.clientId, app.clientSecret),
    });
    expect(answer.status).toBe(200);
    return answer.body.id_token as string;
  }

  async function verifiesWithPublished(running: RunningServer, token: string): Promise<void> {
    const published = (await (await fetch(`${running.oauthUrl}/jwks`)).json()) as JSONWebKeySet;
    // The signature and audience: each restart listens on a new port, so the issuer differs.
    await jwtVerify(token, createLocalJWKSet(published), { algorithms: ['EdDSA'], audience: app.clientId });
  }

  const publishedKids = async (running: RunningServer) =>
    ((await (await fetch(`${running.oauthUrl}/jwks`)).json()) as JSONWebKeySet).keys.filter((key) => key.kty === 'OKP').map((key) => key.kid);

  beforeAll(async () => {
    redis = await startRedis();
    dir = mkdtempSync(join(tmpdir(), 'talent-auth-id-rotation-'));
    file = join(dir, 'jwks.json');
    await talentAuth('keys', 'generate', '--out', file, '--alg', 'ES256', '--alg', 'RS256', '--alg', 'EdDSA');
    const running = await restart();
    const registered = await running.auth.appRegistrations.create({ name: 'Ed app', redirectUris: [WEB], clientType: 'confidential', idTokenSigningAlg: 'EdDSA' });
    app = { clientId: registered.clientId, clientSecret: registered.clientSecret! };
  });
  afterAll(async () => {
    await server?.stop();
    await redis?.stop();
    rmSync(dir, { recursive: true, force: true });
  });

  it('add, promote, retire: the EdDSA kid changes at the switch only, and old ID tokens verify until their key is retired', async () => {
    const [oldKid] = (await talentAuth('keys', 'list', '--file', file)).keys
      .filter((key: { alg: string }) => key.alg === 'EdDSA').map((key: { kid: string }) => key.kid);
    const before = await idToken(server!);
    expect(decodeProtectedHeader(before)).toMatchObject({ alg: 'EdDSA', kid: oldKid });

    // 1. Publish: the new key is at /jwks, the old one still signs.
    const added = await talentAuth('keys', 'add', '--file', file, '--alg', 'EdDSA');
    expect(added.added).toEqual([expect.objectContaining({ alg: 'EdDSA', state: 'published' })]);
    const newKid = added.added[0].kid as string;
    let running = await restart();
    expect((await publishedKids(running)).sort()).toEqual([oldKid, newKid].sort());
    expect(decodeProtectedHeader(await idToken(running)).kid).toBe(oldKid);

    // 2. Switch: from this restart the new key signs; the old one stays published.
    await talentAuth('keys', 'promote', '--file', file, '--kid', newKid);
    running = await restart();
    const after = await idToken(running);
    expect(decodeProtectedHeader(after)).toMatchObject({ alg: 'EdDSA', kid: newKid });
    await verifiesWithPublished(running, before);
    await verifiesWithPublished(running, after);

    // 3. Retire: the old key leaves /jwks; its tokens no longer verify, the new ones do.
    await talentAuth('keys', 'retire', '--file', file, '--kid', oldKid);
    running = await restart();
    expect(await publishedKids(running)).toEqual([newKid]);
    await verifiesWithPublished(running, await idToken(running));
    await expect(verifiesWithPublished(running, before)).rejects.toThrow(/no applicable key found/);
  });

  it('an algorithm dropped while an app still names it: its sign-ins stop with an error page (no redirect) until the app changes', async () => {
    // After the rotation above, the EdDSA key and the algorithm go: RS256 (and the access tokens' ES256) remain.
    const jwks = JSON.parse(readFileSync(file, 'utf8')) as { keys: Array<{ kty: string }> };
    writeFileSync(file, JSON.stringify({ keys: jwks.keys.filter((key) => key.kty !== 'OKP') }));
    const running = await restart(['RS256']);
    const query = new URLSearchParams({
      response_type: 'code', client_id: app.clientId, redirect_uri: WEB, scope: 'openid', state: 's',
      code_challenge: 'E9Melhoa2OwvFrEMTJguCHaoeK1t8URWbuGJSstw-cM', code_challenge_method: 'S256',
    });
    const step = await new UserAgent(running.baseUrl).request(`${running.oauthUrl}/authorize?${query}`);
    expect(step.status).toBe(400);
    expect(step.location).toBeUndefined();
    expect(step.html).toContain('invalid_client_metadata');
    expect(step.html).toContain('id_token_signed_response_alg must be');
    // Registered with an algorithm the server signs with again, the app signs its users in.
    await running.auth.appRegistrations.update(app.clientId, { idTokenSigningAlg: 'RS256' });
    expect(decodeProtectedHeader(await idToken(running)).alg).toBe('RS256');
  });
});
