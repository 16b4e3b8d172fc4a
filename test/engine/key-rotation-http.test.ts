import { jest } from '@jest/globals';
import { mkdtempSync, readFileSync, rmSync } from 'node:fs';
import { createServer, request as httpRequest, type Server } from 'node:http';
import type { AddressInfo } from 'node:net';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { createLocalJWKSet, createRemoteJWKSet, decodeProtectedHeader, jwtVerify, type JSONWebKeySet } from 'jose';
import { createTokenVerifier, TokenError, type TokenVerifier } from '../../src/resource-server/verifier.js';
import { alice, testAccounts } from '../support/accounts.js';
import { cliInProcess } from '../support/cli.js';
import { startRedis, type RedisServer } from '../support/redis.js';
import { basic, postToken, startServer, type RunningServer } from '../support/server.js';
import { signInForCode } from '../support/sign-in.js';

/**
 * The key-rotation procedure of docs/keys.md, end to end: two server instances behind a load
 * balancer on one Redis store, the JWKS file changed by the CLI and the instances restarted one
 * after the other (a rolling restart) at each step. At every point every token issued so far that
 * has not expired verifies, for a resource server using the kit with the remote JWKS (one verifier
 * kept for the whole test, so its cache counts) and for an app verifying ID tokens with a remote
 * JWKS, and against the key set each instance publishes; and the kid of new tokens changes exactly
 * when an instance restarts after `keys promote`.
 *
 * Waits are scaled down: the verifiers cache the JWKS for 3 s (cooldown 1 s) where the kit's
 * default is 600 s (30 s); the hour the old tokens live is skipped by moving the clock.
 */
const CACHE_SECONDS = 3;
const COOLDOWN_SECONDS = 1;
const CLOCK_SKEW_SECONDS = 5;
const TOKEN_LIFETIME_SECONDS = 3600;
const RP_REDIRECT = 'https://rp.example/callback';
const COOKIE_KEYS = ['cookie-key-shared-by-every-instance-0001'];

type Alg = 'ES256' | 'RS256';

interface Instance {
  name: string;
  server: RunningServer;
  /** The kid that signs each algorithm in the file this instance started with (keys list). */
  signs: Record<Alg, string>;
}

interface Issued {
  label: string;
  kind: 'access' | 'id';
  token: string;
  kid: string;
  exp: number;
  /** The ID token's audience. */
  audience?: string;
}

/** A load balancer: round robin over the instances it is given, like the one in front of a deployment. */
async function startBalancer(): Promise<{ url: string; route(instances: Instance[]): void; stop(): Promise<void> }> {
  let backends: string[] = [];
  let turn = 0;
  const server: Server = createServer((req, res) => {
    const backend = backends[turn++ % backends.length];
    if (!backend) {
      res.writeHead(503).end();
      return;
    }
    const upstream = httpRequest(new URL(req.url!, backend), { method: req.method, headers: req.headers, agent: false }, (response) => {
      res.writeHead(response.statusCode!, response.headers);
      response.pipe(res);
    });
    upstream.on('error', () => res.headersSent ? res.destroy() : res.writeHead(502).end());
    req.pipe(upstream);
  });
  await new Promise<void>((resolve) => server.listen(0, '127.0.0.1', resolve));
  return {
    url: `http://127.0.0.1:${(server.address() as AddressInfo).port}`,
    route(instances) {
      backends = instances.map((instance) => instance.server.baseUrl);
    },
    async stop() {
      server.closeAllConnections();
      await new Promise((resolve) => server.close(resolve));
    },
  };
}

describe('key rotation: publish, switch, retire with rolling restarts; every live token keeps verifying', () => {
  let redis: RedisServer;
  let dir: string;
  let jwksFile: string;
  let balancer: Awaited<ReturnType<typeof startBalancer>>;
  let issuer: string;
  let audience: string;
  const instances: Instance[] = [];
  const issued: Issued[] = [];
  let client: { clientId: string; clientSecret: string };
  let app: { clientId: string; clientSecret: string };
  /** The resource server of the platform: the kit with the remote JWKS, kept across every step. */
  let resourceServer: TokenVerifier;
  /** An app verifying its ID tokens with the remote JWKS, kept across every step. */
  let relyingPartyKeys: ReturnType<typeof createRemoteJWKSet>;
  /** A resource server whose JWKS cache (120 s) is longer than the wait before the switch. */
  let lateResourceServer: TokenVerifier;
  const kids = { oldEs: '', oldRs: '', newEs: '', newRs: '' };

  /** The CLI in process, --json. */
  const talentAuth = cliInProcess(() => dir);

  async function startInstance(name: string): Promise<Instance> {
    const listed = await talentAuth('keys', 'list', '--file', jwksFile);
    const signing = (alg: Alg) => listed.keys.find((key: { alg: string; state: string }) => key.alg === alg && key.state === 'signing').kid;
    const server = await startServer({
      baseUrl: balancer.url,
      store: { type: 'redis', url: redis.url, keyPrefix: 'rotation:' },
      // What examples/server.ts does with JWKS_FILE: the file as it is at startup.
      keys: { jwks: JSON.parse(readFileSync(jwksFile, 'utf8')) },
      accounts: testAccounts([alice]),
      cookieKeys: COOKIE_KEYS,
    });
    return { name, server, signs: { ES256: signing('ES256'), RS256: signing('RS256') } };
  }

  /** Restarts instance `slot` with the file as it is now; the balancer sends it nothing meanwhile. */
  async function restart(slot: number): Promise<void> {
    const old = instances[slot]!;
    balancer.route(instances.filter((instance) => instance !== old));
    await old.server.stop();
    instances[slot] = await startInstance(old.name);
    balancer.route(instances);
  }

  /** A client_credentials token and a sign-in (ID token + named-user access token) answered by `instance`. */
  async function issueAt(instance: Instance, step: string): Promise<Issued[]> {
    const label = `${step}@${instance.name}`;
    const machine = await postToken(instance.server.oauthUrl, 'grant_type=client_credentials', {
      authorization: basic(client.clientId, client.clientSecret),
    });
    expect(machine.status).toBe(200);
    // The sign-in pages go through the balancer (any instance); the code is redeemed at `instance`.
    const front = { baseUrl: balancer.url, oauthUrl: `${balancer.url}/oauth2` } as RunningServer;
    const { code, verifier } = await signInForCode(front, { clientId: app.clientId, redirectUri: RP_REDIRECT }, alice);
    const user = await postToken(
      instance.server.oauthUrl,
      { grant_type: 'authorization_code', code, redirect_uri: RP_REDIRECT, code_verifier: verifier },
      { authorization: basic(app.clientId, app.clientSecret) },
    );
    expect(user.status).toBe(200);
    const made = [
      { label: `${label} client_credentials`, kind: 'access' as const, token: machine.body.access_token as string },
      { label: `${label} named-user`, kind: 'access' as const, token: user.body.access_token as string },
      { label: `${label} id_token`, kind: 'id' as const, token: user.body.id_token as string, audience: app.clientId },
    ].map((token) => {
      const payload = JSON.parse(Buffer.from(token.token.split('.')[1]!, 'base64url').toString()) as { exp: number };
      return { ...token, kid: decodeProtectedHeader(token.token).kid!, exp: payload.exp };
    });
    // Issued now, by the clock of the servers and the verifiers alike.
    for (const token of made) expect(token.exp).toBeGreaterThan(Date.now() / 1000 + 250);
    // New tokens are signed with the key that signs in the file this instance started with.
    expect(made.map((token) => [token.label, token.kid])).toEqual([
      [made[0]!.label, instance.signs.ES256],
      [made[1]!.label, instance.signs.ES256],
      [made[2]!.label, instance.signs.RS256],
    ]);
    issued.push(...made);
    return made;
  }

  async function published(instance: Instance): Promise<JSONWebKeySet> {
    return (await (await fetch(`${instance.server.oauthUrl}/jwks`)).json()) as JSONWebKeySet;
  }

  /**
   * The invariant: every token issued so far that has not expired verifies, with the live
   * verifiers and against what each running instance publishes now; expired ones are refused.
   */
  async function expectEveryLiveTokenVerifies(when: string): Promise<void> {
    const sets = await Promise.all(instances.map(async (instance) => createLocalJWKSet(await published(instance))));
    const now = Date.now() / 1000;
    const outcomes: Array<[string, string, string]> = [];
    for (const token of issued) {
      const live = token.exp > now;
      let outcome: string;
      try {
        if (token.kind === 'access') {
          await resourceServer.verify(token.token);
        } else {
          await jwtVerify(token.token, relyingPartyKeys, { issuer, audience: token.audience!, clockTolerance: CLOCK_SKEW_SECONDS });
        }
        outcome = 'verifies';
      } catch (error) {
        outcome = `refused: ${(error as Error).message}`;
      }
      if (live) {
        for (const [index, keys] of sets.entries()) {
          try {
            await jwtVerify(token.token, keys, { issuer, ...(token.kind === 'access' ? { audience, typ: 'at+jwt' } : { audience: token.audience! }) });
          } catch (error) {
            outcome += ` / not by the keys ${instances[index]!.name} publishes: ${(error as Error).message}`;
          }
        }
      }
      outcomes.push([token.label, live ? 'live' : 'expired', outcome]);
    }
    expect({ when, outcomes }).toEqual({
      when,
      outcomes: outcomes.map(([label, state]) => [label, state, state === 'live' ? 'verifies' : expect.stringMatching(/^refused: /) as unknown as string]),
    });
  }

  const publishedKids = async (instance: Instance) => (await published(instance)).keys.map((key) => key.kid).sort();

  beforeAll(async () => {
    redis = await startRedis();
    dir = mkdtempSync(join(tmpdir(), 'talent-auth-rotation-'));
    jwksFile = join(dir, 'jwks.json');
    balancer = await startBalancer();
    await talentAuth('keys', 'generate', '--out', jwksFile);
    instances.push(await startInstance('A'), await startInstance('B'));
    balancer.route(instances);
    const { auth } = instances[0]!.server;
    issuer = auth.issuer;
    audience = auth.audience;
    client = await auth.clientConfigurations.create({
      tenant: 'acme', name: 'Payroll sync', category: 'payroll', resources: { scim: { scopes: ['scim.read'] } },
    });
    const registered = await auth.appRegistrations.create({ name: 'HR portal', redirectUris: [RP_REDIRECT], clientType: 'confidential' });
    app = { clientId: registered.clientId, clientSecret: registered.clientSecret! };
    const jwksUrl = new URL(`${issuer}/jwks`);
    const remote = { jwks: jwksUrl, jwksCacheMaxAgeSeconds: CACHE_SECONDS, jwksCooldownSeconds: COOLDOWN_SECONDS };
    resourceServer = createTokenVerifier({ issuer, audience, clockToleranceSeconds: CLOCK_SKEW_SECONDS, ...remote });
    relyingPartyKeys = createRemoteJWKSet(jwksUrl, { cacheMaxAge: CACHE_SECONDS * 1000, cooldownDuration: COOLDOWN_SECONDS * 1000 });
    lateResourceServer = createTokenVerifier({ issuer, audience, jwks: jwksUrl, jwksCacheMaxAgeSeconds: 120, jwksCooldownSeconds: 120 });
  });

  afterAll(async () => {
    jest.useRealTimers();
    for (const instance of instances) await instance.server.stop();
    await balancer?.stop();
    await redis?.stop();
    rmSync(dir, { recursive: true, force: true });
  });

  it('before: one key per algorithm, and it signs', async () => {
    const listed = await talentAuth('keys', 'list', '--file', jwksFile);
    expect(listed.keys.map((key: { alg: string; state: string }) => [key.alg, key.state])).toEqual([['ES256', 'signing'], ['RS256', 'signing']]);
    [kids.oldEs, kids.oldRs] = listed.keys.map((key: { kid: string }) => key.kid);
    for (const instance of instances) {
      expect(instance.signs).toEqual({ ES256: kids.oldEs, RS256: kids.oldRs });
      await issueAt(instance, 'before');
    }
    await expectEveryLiveTokenVerifies('before');
    // The late resource server fetches the key set now and holds it for 120 s.
    await lateResourceServer.verify(issued[0]!.token);
  });

  it('1. publish: keys add; every instance restarted publishes the new keys, the old ones still sign', async () => {
    const added = await talentAuth('keys', 'add', '--file', jwksFile, '--alg', 'ES256', '--alg', 'RS256');
    expect(added.added.map((key: { alg: string; state: string }) => [key.alg, key.state])).toEqual([['ES256', 'published'], ['RS256', 'published']]);
    [kids.newEs, kids.newRs] = added.added.map((key: { kid: string }) => key.kid);

    for (const slot of [0, 1]) {
      await restart(slot);
      const restarted = instances[slot]!;
      expect(await publishedKids(restarted)).toEqual([kids.oldEs, kids.oldRs, kids.newEs, kids.newRs].sort());
      expect(restarted.signs).toEqual({ ES256: kids.oldEs, RS256: kids.oldRs });
      for (const instance of instances) await issueAt(instance, `publish, ${restarted.name} restarted`);
      await expectEveryLiveTokenVerifies(`publish, ${restarted.name} restarted`);
    }
    expect(issued.every((token) => [kids.oldEs, kids.oldRs].includes(token.kid))).toBe(true);

    // The wait: at least the verifiers' JWKS cache time, from the last restart.
    await new Promise((resolve) => setTimeout(resolve, (CACHE_SECONDS + 0.5) * 1000));
  });

  it('2. switch: keys promote; each instance signs with the new keys from its restart, the old keys stay published', async () => {
    await talentAuth('keys', 'promote', '--file', jwksFile, '--kid', kids.newEs);
    await talentAuth('keys', 'promote', '--file', jwksFile, '--kid', kids.newRs);
    const listed = await talentAuth('keys', 'list', '--file', jwksFile);
    expect(listed.keys.map((key: { kid: string; state: string }) => [key.kid, key.state])).toEqual([
      [kids.newEs, 'signing'], [kids.oldEs, 'published'], [kids.newRs, 'signing'], [kids.oldRs, 'published'],
    ]);
    const before = issued.length;

    // Instance A restarts: its new tokens carry the new kids; B, not restarted yet, still signs with the old keys.
    await restart(0);
    const [a, b] = instances as [Instance, Instance];
    expect(a.signs).toEqual({ ES256: kids.newEs, RS256: kids.newRs });
    expect(b.signs).toEqual({ ES256: kids.oldEs, RS256: kids.oldRs });
    // Each instance says at startup which keys sign.
    expect(JSON.parse(a.server.logLines.find((line) => line.includes('"signing keys"'))!)).toMatchObject({
      signing: { ES256: kids.newEs, RS256: kids.newRs },
      publishedOnly: [kids.oldEs, kids.oldRs],
    });
    const fromA = await issueAt(a, 'switch, A restarted');
    const fromB = await issueAt(b, 'switch, A restarted');
    expect(fromA.map((token) => token.kid)).toEqual([kids.newEs, kids.newEs, kids.newRs]);
    expect(fromB.map((token) => token.kid)).toEqual([kids.oldEs, kids.oldEs, kids.oldRs]);
    expect(await publishedKids(a)).toEqual([kids.oldEs, kids.oldRs, kids.newEs, kids.newRs].sort());
    await expectEveryLiveTokenVerifies('switch, A restarted');

    // Why the wait before the switch must cover every verifier's cache: one that fetched the key
    // set before the new key was published (and may not refetch yet) refuses the new tokens.
    await expect(lateResourceServer.verify(fromA[0]!.token)).rejects.toThrow(TokenError);
    await expect(lateResourceServer.verify(fromB[0]!.token)).resolves.toMatchObject({ clientId: client.clientId });

    await restart(1);
    for (const instance of instances) {
      expect((await issueAt(instance, 'switch, B restarted')).map((token) => token.kid)).toEqual([kids.newEs, kids.newEs, kids.newRs]);
    }
    await expectEveryLiveTokenVerifies('switch, B restarted');
    // The kid changed exactly at the switch: every earlier token has an old kid, every token of a
    // restarted instance the new one.
    const after = issued.slice(before);
    expect(issued.slice(0, before).every((token) => [kids.oldEs, kids.oldRs].includes(token.kid))).toBe(true);
    expect(after.filter((token) => token.label.includes('@B') && token.label.startsWith('switch, A restarted')).map((token) => token.kid))
      .toEqual([kids.oldEs, kids.oldEs, kids.oldRs]);
    expect(after.filter((token) => !(token.label.includes('@B') && token.label.startsWith('switch, A restarted'))).every((token) =>
      [kids.newEs, kids.newRs].includes(token.kid))).toBe(true);
  });

  it('the wait: once the longest token lifetime plus clock skew has passed, no token of the old keys is live', async () => {
    const lastOld = Math.max(...issued.filter((token) => [kids.oldEs, kids.oldRs].includes(token.kid)).map((token) => token.exp));
    expect(lastOld - Date.now() / 1000).toBeLessThanOrEqual(TOKEN_LIFETIME_SECONDS);
    // Skip the hour: only Date moves (timers stay real), for the servers and the verifiers alike.
    jest.useFakeTimers({
      now: Date.now() + (TOKEN_LIFETIME_SECONDS + CLOCK_SKEW_SECONDS + 1) * 1000,
      advanceTimers: true,
      doNotFake: ['hrtime', 'nextTick', 'performance', 'queueMicrotask', 'requestAnimationFrame', 'cancelAnimationFrame',
        'requestIdleCallback', 'cancelIdleCallback', 'setImmediate', 'clearImmediate', 'setInterval', 'clearInterval',
        'setTimeout', 'clearTimeout'],
    });
    expect(Date.now() / 1000).toBeGreaterThan(lastOld + CLOCK_SKEW_SECONDS);
    // Refused because they expired, while their keys are still published.
    for (const token of issued.filter((candidate) => candidate.kind === 'access' && candidate.kid === kids.oldEs)) {
      await expect(resourceServer.verify(token.token)).rejects.toThrow('the access token has expired');
    }
    for (const instance of instances) await issueAt(instance, 'after the wait');
    await expectEveryLiveTokenVerifies('after the wait');
    // The late resource server's cache has long expired: it knows the new keys now.
    await expect(lateResourceServer.verify(issued.at(-3)!.token)).resolves.toMatchObject({ clientId: client.clientId });
  });

  it('3. retire: keys retire; the old keys disappear from the JWKS as the instances restart, new tokens keep verifying', async () => {
    await talentAuth('keys', 'retire', '--file', jwksFile, '--kid', kids.oldEs);
    await talentAuth('keys', 'retire', '--file', jwksFile, '--kid', kids.oldRs);
    await expect(talentAuth('keys', 'retire', '--file', jwksFile, '--kid', kids.newEs)).rejects.toThrow(/is the signing ES256 key/);

    for (const slot of [0, 1]) {
      await restart(slot);
      const restarted = instances[slot]!;
      expect(await publishedKids(restarted)).toEqual([kids.newEs, kids.newRs].sort());
      for (const instance of instances) {
        expect((await issueAt(instance, `retire, ${restarted.name} restarted`)).map((token) => token.kid)).toEqual([kids.newEs, kids.newEs, kids.newRs]);
      }
      await expectEveryLiveTokenVerifies(`retire, ${restarted.name} restarted`);
    }
    expect(JSON.parse(readFileSync(jwksFile, 'utf8')).keys.map((key: { kid: string }) => key.kid)).toEqual([kids.newEs, kids.newRs]);
  });
});
