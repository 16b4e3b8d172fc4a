import { fork, type ChildProcess } from 'node:child_process';
import { generateKeyPairSync, sign as signWith } from 'node:crypto';
import { mkdtempSync, rmSync, writeFileSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { decodeProtectedHeader, type JWK } from 'jose';
import * as client from 'openid-client';
import { createTokenVerifier } from '../../src/resource-server/verifier.js';
import type { ExternalSigner } from '../../src/index.js';
import { alice, testAccounts } from '../support/accounts.js';
import { basic, postToken, startServer, type RunningServer } from '../support/server.js';
import { pkcePair, UserAgent } from '../support/user-agent.js';

/**
 * EXTERNAL SIGNERS (`keys.signers`, docs/keys.md "External signers"): keys whose private part
 * never enters the server. Here the signer is another process (as a KMS or an HSM would be): it
 * makes its keys, gives the server only their public halves, and answers each signing request
 * over IPC. The server publishes those public keys, and its access tokens (ES256) and ID tokens
 * (RS256) carry the signer's kids and verify with the kit and with openid-client. A signer that
 * fails or does not answer makes the request 503 temporarily_unavailable with Retry-After, never
 * a 500, and its error text reaches no log.
 */

const SIGNER_SOURCE = `
import { generateKeyPairSync, sign } from 'node:crypto';
const keys = {
  ES256: generateKeyPairSync('ec', { namedCurve: 'P-256' }),
  RS256: generateKeyPairSync('rsa', { modulusLength: 2048 }),
};
let mode = 'sign';
process.on('message', (message) => {
  if (message.type === 'public') {
    process.send({ type: 'public', keys: Object.fromEntries(Object.entries(keys).map(([alg, pair]) => [alg, pair.publicKey.export({ format: 'jwk' })])) });
  } else if (message.type === 'mode') {
    mode = message.mode;
    process.send({ type: 'mode', id: message.id });
  } else if (message.type === 'sign') {
    if (mode === 'silent') return;
    if (mode === 'fail') return process.send({ type: 'sign', id: message.id, error: 'KMS says: secret-detail-xyz' });
    if (mode === 'der') return process.send({ type: 'sign', id: message.id, signature: sign('sha256', Buffer.from(message.data, 'base64'), keys.ES256.privateKey).toString('base64') });
    const data = Buffer.from(message.data, 'base64');
    const key = keys[message.alg].privateKey;
    const signature = message.alg === 'ES256' ? sign('sha256', data, { key, dsaEncoding: 'ieee-p1363' }) : sign('sha256', data, key);
    process.send({ type: 'sign', id: message.id, signature: signature.toString('base64') });
  }
});
`;

const WEB = 'https://app.example.com/cb';

/** The signing process, and signers that ask it over IPC. */
class SigningProcess {
  readonly #child: ChildProcess;
  readonly #pending = new Map<number, (message: { signature?: string; error?: string }) => void>();
  #next = 0;
  requests = 0;

  constructor(file: string) {
    this.#child = fork(file, [], { stdio: ['ignore', 'ignore', 'inherit', 'ipc'] });
    this.#child.on('message', (message: { type: string; id: number; signature?: string; error?: string }) => {
      if (message.type === 'sign' || message.type === 'mode') this.#pending.get(message.id)?.(message);
    });
  }

  async publicKeys(): Promise<Record<'ES256' | 'RS256', JWK>> {
    return new Promise((resolve) => {
      this.#child.once('message', (message: { keys: Record<'ES256' | 'RS256', JWK> }) => resolve(message.keys));
      this.#child.send({ type: 'public' });
    });
  }

  async mode(mode: 'sign' | 'fail' | 'silent' | 'der'): Promise<void> {
    const id = this.#next++;
    await new Promise((resolve) => {
      this.#pending.set(id, resolve);
      this.#child.send({ type: 'mode', id, mode });
    });
  }

  signer(alg: 'ES256' | 'RS256', kid: string, publicKey: JWK): ExternalSigner {
    return {
      kid,
      alg,
      publicKey,
      sign: (data) => new Promise((resolve, reject) => {
        const id = this.#next++;
        this.requests += 1;
        this.#pending.set(id, (message) => {
          this.#pending.delete(id);
          if (message.error) reject(new Error(message.error));
          else resolve(Buffer.from(message.signature!, 'base64'));
        });
        this.#child.send({ type: 'sign', id, alg, data: Buffer.from(data).toString('base64') });
      }),
    };
  }

  stop(): void {
    this.#child.kill();
  }
}

describe('external signers: the private keys stay in another process', () => {
  let dir: string;
  let signing: SigningProcess;
  let server: RunningServer;
  let machine: { clientId: string; clientSecret: string };

  beforeAll(async () => {
    dir = mkdtempSync(join(tmpdir(), 'talent-auth-signer-'));
    const file = join(dir, 'signer.mjs');
    writeFileSync(file, SIGNER_SOURCE);
    signing = new SigningProcess(file);
    const keys = await signing.publicKeys();
    server = await startServer({
      accounts: testAccounts([alice]),
      keys: { signers: [signing.signer('ES256', 'kms-es256', keys.ES256), signing.signer('RS256', 'kms-rs256', keys.RS256)] },
    });
    machine = await server.auth.clientConfigurations.create({ tenant: 'acme', name: 'Payroll sync', category: 'payroll', resources: { scim: { scopes: ['scim.read'] } } });
  }, 60_000);

  afterAll(async () => {
    await server?.stop();
    signing?.stop();
    rmSync(dir, { recursive: true, force: true });
  });

  afterEach(async () => {
    await signing.mode('sign');
  });

  it('publishes the signers\' public keys, and no key of its own was made (no warning about generated keys)', async () => {
    const published = (await (await fetch(`${server.oauthUrl}/jwks`)).json()) as { keys: JWK[] };
    expect(published.keys.map((key) => [key.kid, key.alg, key.use])).toEqual([['kms-es256', 'ES256', 'sig'], ['kms-rs256', 'RS256', 'sig']]);
    for (const key of published.keys) expect(Object.keys(key)).not.toContain('d');
    expect(server.logLines.join('\n')).not.toContain('NO SIGNING KEYS CONFIGURED');
  });

  it('signs access tokens through the signer: the kit verifies them with the published key set', async () => {
    const before = signing.requests;
    const answer = await postToken(server.oauthUrl, 'grant_type=client_credentials', { authorization: basic(machine.clientId, machine.clientSecret) });
    expect(answer.status).toBe(200);
    const token = answer.body.access_token as string;
    expect(decodeProtectedHeader(token)).toMatchObject({ alg: 'ES256', kid: 'kms-es256', typ: 'at+jwt' });
    expect(signing.requests).toBe(before + 1);
    const verifier = createTokenVerifier({ issuer: server.auth.issuer, audience: server.auth.audience, jwks: new URL(`${server.oauthUrl}/jwks`) });
    await expect(verifier.verify(token)).resolves.toMatchObject({ clientId: machine.clientId, tenant: 'acme' });
  });

  it('signs ID tokens through the signer: openid-client verifies them against the JWKS (non-repudiation checks)', async () => {
    const app = await server.auth.appRegistrations.create({ name: 'HR portal', redirectUris: [WEB], clientType: 'confidential' });
    const config = await client.discovery(new URL(server.oauthUrl), app.clientId, {}, client.ClientSecretBasic(app.clientSecret!), {
      execute: [client.allowInsecureRequests, client.enableNonRepudiationChecks],
    });
    const agent = new UserAgent(server.baseUrl);
    const { verifier, challenge } = pkcePair();
    const state = client.randomState();
    let step = await agent.request(client.buildAuthorizationUrl(config, { redirect_uri: WEB, scope: 'openid scim.read', state, code_challenge: challenge, code_challenge_method: 'S256' }).href);
    step = await agent.submit(step, { username: alice.sub, password: alice.password });
    if (step.html.includes('value="allow"')) step = await agent.submit(step, { decision: 'allow' });
    const tokens = await client.authorizationCodeGrant(config, new URL(step.location!), { pkceCodeVerifier: verifier, expectedState: state });
    expect(decodeProtectedHeader(tokens.id_token!)).toMatchObject({ alg: 'RS256', kid: 'kms-rs256' });
    expect(tokens.claims()!.sub).toBe(alice.sub);
    expect(decodeProtectedHeader(tokens.access_token)).toMatchObject({ kid: 'kms-es256' });
  });

  it.each([
    ['fails', 'fail'],
    ['does not answer within the time allowed', 'silent'],
  ] as const)('a signer that %s: 503 temporarily_unavailable with Retry-After, never a 500, its words in no log', async (_what, mode) => {
    await signing.mode(mode);
    const answer = await postToken(server.oauthUrl, 'grant_type=client_credentials', { authorization: basic(machine.clientId, machine.clientSecret) });
    expect(answer.status).toBe(503);
    expect(answer.body).toMatchObject({ error: 'temporarily_unavailable' });
    expect(answer.headers.get('retry-after')).toMatch(/^\d+$/);
    expect(server.logLines.join('\n')).not.toContain('secret-detail-xyz');
    await signing.mode('sign');
    expect((await postToken(server.oauthUrl, 'grant_type=client_credentials', { authorization: basic(machine.clientId, machine.clientSecret) })).status).toBe(200);
  }, 20_000);

  it('checks each signer at start: a DER-encoded ES256 signature, another key\'s signature, a public key of another type are refused', async () => {
    const pair = generateKeyPairSync('ec', { namedCurve: 'P-256' });
    const other = generateKeyPairSync('ec', { namedCurve: 'P-256' });
    const publicKey = pair.publicKey.export({ format: 'jwk' }) as JWK;
    const der: ExternalSigner = { kid: 'der', alg: 'ES256', publicKey, sign: async (data) => signWith('sha256', data, pair.privateKey) };
    await expect(startServer({ keys: { signers: [der] } })).rejects.toThrow('keys.signers: signer der did not sign at start (external signer: a signature of the wrong length)');
    const foreign: ExternalSigner = { kid: 'foreign', alg: 'ES256', publicKey, sign: async (data) => signWith('sha256', data, { key: other.privateKey, dsaEncoding: 'ieee-p1363' }) };
    await expect(startServer({ keys: { signers: [foreign] } })).rejects.toThrow('keys.signers: signer foreign gave a signature its publicKey does not verify');
    const keys = await signing.publicKeys();
    await expect(startServer({ keys: { signers: [{ kid: 'rsa-as-es', alg: 'ES256', publicKey: keys.RS256, sign: async () => new Uint8Array(64) }] } }))
      .rejects.toThrow(/publicKey is not a key of its alg/);
  });

  it('answers 503 for a signature of the wrong length once running (a signer that changed its form), not a token nobody can verify', async () => {
    await signing.mode('der');
    const answer = await postToken(server.oauthUrl, 'grant_type=client_credentials', { authorization: basic(machine.clientId, machine.clientSecret) });
    expect(answer.status).toBe(503);
    expect(answer.body).toMatchObject({ error: 'temporarily_unavailable' });
  });

  it('refuses a signer given a private key, and two signers with one kid, at start', async () => {
    const keys = await signing.publicKeys();
    const sign = async () => new Uint8Array([1]);
    await expect(startServer({ keys: { signers: [{ kid: 'x', alg: 'ES256', publicKey: { ...keys.ES256, d: 'private' }, sign }] } }))
      .rejects.toThrow(/must be a public key: the private part stays with the signer/);
    await expect(startServer({ keys: { signers: [{ kid: 'x', alg: 'ES256', publicKey: keys.ES256, sign }, { kid: 'x', alg: 'RS256', publicKey: keys.RS256, sign }] } }))
      .rejects.toThrow(/keys.signers: each kid once/);
  });
});
