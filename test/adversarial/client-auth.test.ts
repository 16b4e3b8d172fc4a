/**
 * Adversarial client authentication at the token endpoint. Every refusal is 401 invalid_client with
 * `WWW-Authenticate: Basic realm="{issuer}", error="invalid_client"` (or the exact other error),
 * issues nothing, leaves the client record as it was, and the correct credentials work afterwards
 * (for code and refresh exchanges: the code or refresh token was not consumed).
 *
 * Failed authentications are rate limited per client ID and per source address: every test uses
 * fresh clients (fewer than 8 failures each) and every describe block a fresh server.
 */
import { alice, testAccounts } from '../support/accounts.js';
import { basic, postToken, type RunningServer, startServer } from '../support/server.js';
import { signInForCode } from '../support/sign-in.js';
import { STORE_KINDS, useStore, type StoreHandle } from '../support/stores.js';
import {
  type ConfidentialApp,
  exchangeCode,
  expectOAuthError,
  expectTokens,
  type PublicApp,
  refresh,
  SPA,
  WEB,
} from './helpers.js';

const b64 = (text: string) => Buffer.from(text, 'utf8').toString('base64');
const CC = 'grant_type=client_credentials';

interface Machine {
  clientId: string;
  secret: string;
}

/** A server of its own for one describe block, so that failure counters start at zero. */
function ownServer(store: StoreHandle): () => RunningServer {
  let server: RunningServer;
  beforeAll(async () => {
    server = await startServer({ store: store.option(), accounts: testAccounts([alice]) });
  });
  afterAll(async () => {
    await server.stop();
  });
  return () => server;
}

async function newMachine(server: RunningServer): Promise<Machine> {
  const created = await server.auth.clientConfigurations.create({
    tenant: 'acme', name: 'Sync', category: 'hr', resources: { scim: { scopes: ['scim.read'] } },
  });
  return { clientId: created.clientId, secret: created.clientSecret };
}

async function newConfidential(server: RunningServer, redirectUri = WEB): Promise<ConfidentialApp> {
  const created = await server.auth.appRegistrations.create({ name: 'Portal', redirectUris: [redirectUri], clientType: 'confidential' });
  return { clientId: created.clientId, redirectUri, secret: created.clientSecret! };
}

async function newPublic(server: RunningServer): Promise<PublicApp> {
  const created = await server.auth.appRegistrations.create({ name: 'SPA', redirectUris: [SPA], clientType: 'public' });
  return { clientId: created.clientId, redirectUri: SPA };
}

/** Machine client: refused as given, record unchanged, the right secret still gets a token. */
async function expectMachineRefused(
  server: RunningServer,
  machine: Machine,
  request: { body?: string; headers?: Record<string, string> },
  status = 401,
  error = 'invalid_client',
): Promise<void> {
  const before = await server.auth.clientConfigurations.get(machine.clientId);
  expectOAuthError(server, await postToken(server.oauthUrl, request.body ?? CC, request.headers ?? {}), status, error);
  expect(await server.auth.clientConfigurations.get(machine.clientId)).toEqual(before);
  expectTokens(await postToken(server.oauthUrl, CC, { authorization: basic(machine.clientId, machine.secret) }));
}

describe.each(STORE_KINDS)('adversarial client authentication (%s store)', (kind) => {
  const store = useStore(kind);

  describe('malformed Basic headers → 401 invalid_client', () => {
    const server = ownServer(store);

    const malformed: Array<[string, (m: Machine) => string]> = [
      ['no colon', (m) => `Basic ${b64(`${m.clientId}${m.secret}`)}`],
      ['not base64', () => 'Basic ***'],
      ['base64 with a space inside', (m) => `Basic ${b64(`${m.clientId}:${m.secret}`).replace(/^(.{8})/, '$1 ')}`],
      ['over-padded base64', (m) => `Basic ${b64(`${m.clientId}:${m.secret}`)}==`],
      ['base64 of nothing', () => 'Basic '],
      ['the scheme alone', () => 'Basic'],
      ['an empty client ID', (m) => `Basic ${b64(`:${m.secret}`)}`],
      ['an empty secret', (m) => `Basic ${b64(`${m.clientId}:`)}`],
      ['both parts empty', () => `Basic ${b64(':')}`],
      ['a client ID that is not a UUID', (m) => basic('not-a-uuid', m.secret)],
      ['the client ID in upper case', (m) => basic(m.clientId.toUpperCase(), m.secret)],
      ['the client ID in braces', (m) => basic(`{${m.clientId}}`, m.secret)],
      ['two spaces after Basic', (m) => `Basic  ${b64(`${m.clientId}:${m.secret}`)}`],
      ['a tab after Basic', (m) => `Basic\t${b64(`${m.clientId}:${m.secret}`)}`],
      ['a space before the client ID', (m) => `Basic ${b64(` ${m.clientId}:${m.secret}`)}`],
      ['a space after the colon', (m) => `Basic ${b64(`${m.clientId}: ${m.secret}`)}`],
      ['the secret twice', (m) => `Basic ${b64(`${m.clientId}:${m.secret}:${m.secret}`)}`],
      ['a non-ASCII character in the secret', (m) => `Basic ${b64(`${m.clientId}:${m.secret}é`)}`],
      ['a NUL in the secret', (m) => `Basic ${b64(`${m.clientId}:${m.secret}\u0000`)}`],
      ['two credentials in one header', (m) => `Basic ${b64(`${m.clientId}:${m.secret}`)}, Basic ${b64(`${m.clientId}:${m.secret}`)}`],
      ['the Bearer scheme with the secret', (m) => `Bearer ${m.secret}`],
      ['the Bearer scheme with Basic credentials', (m) => `Bearer ${b64(`${m.clientId}:${m.secret}`)}`],
      ['the Digest scheme', (m) => `Digest username="${m.clientId}", response="${m.secret}"`],
      ['a made-up scheme Basic2', (m) => `Basic2 ${b64(`${m.clientId}:${m.secret}`)}`],
      ['no scheme at all', (m) => b64(`${m.clientId}:${m.secret}`)],
    ];

    it.each(malformed)('%s', async (_name, header) => {
      const machine = await newMachine(server());
      await expectMachineRefused(server(), machine, { headers: { authorization: header(machine) } });
    });

    it.each([
      ['a lower-case scheme (RFC 9110 §11.1: case-insensitive)', (m: Machine) => `basic ${b64(`${m.clientId}:${m.secret}`)}`],
      ['an upper-case scheme', (m: Machine) => `BASIC ${b64(`${m.clientId}:${m.secret}`)}`],
      [
        'form-urlencoded credentials, every character escaped (RFC 6749 §2.3.1)',
        (m: Machine) => `Basic ${b64([m.clientId, m.secret].map((part) => [...part].map((c) => `%${c.charCodeAt(0).toString(16).padStart(2, '0')}`).join('')).join(':'))}`,
      ],
    ])('accepted: %s', async (_name, header) => {
      const machine = await newMachine(server());
      expectTokens(await postToken(server().oauthUrl, CC, { authorization: header(machine) }));
    });
  });

  describe('wrong and unknown credentials → 401 invalid_client', () => {
    const server = ownServer(store);

    const flip = (secret: string) => secret.slice(0, -1) + (secret.endsWith('A') ? 'B' : 'A');
    it.each([
      ['the last character changed', (m: Machine) => flip(m.secret)],
      ['truncated by one', (m: Machine) => m.secret.slice(0, -1)],
      ['one character more', (m: Machine) => `${m.secret}A`],
      ['in another case', (m: Machine) => (m.secret.toUpperCase() === m.secret ? m.secret.toLowerCase() : m.secret.toUpperCase())],
      ['base64 instead of base64url', (m: Machine) => Buffer.from(m.secret, 'base64url').toString('base64')],
      ['its SHA-256 digest', (m: Machine) => Buffer.from(m.secret).toString('hex')],
    ])('the secret %s', async (_name, wrong) => {
      const machine = await newMachine(server());
      await expectMachineRefused(server(), machine, { headers: { authorization: basic(machine.clientId, wrong(machine)) } });
    });

    it("another client's secret", async () => {
      const [machine, other] = [await newMachine(server()), await newMachine(server())];
      await expectMachineRefused(server(), machine, { headers: { authorization: basic(machine.clientId, other.secret) } });
    });

    it('the old secret after a rotation, at once', async () => {
      const machine = await newMachine(server());
      expectTokens(await postToken(server().oauthUrl, CC, { authorization: basic(machine.clientId, machine.secret) }));
      const { clientSecret } = await server().auth.clientConfigurations.rotateSecret(machine.clientId);
      await expectMachineRefused(server(), { ...machine, secret: clientSecret }, { headers: { authorization: basic(machine.clientId, machine.secret) } });
    });

    it('an unknown client ID with a real secret', async () => {
      const machine = await newMachine(server());
      await expectMachineRefused(server(), machine, { headers: { authorization: basic('00000000-0000-4000-8000-000000000000', machine.secret) } });
    });

    it('a deleted client, at once (no cached client survives)', async () => {
      const machine = await newMachine(server());
      expectTokens(await postToken(server().oauthUrl, CC, { authorization: basic(machine.clientId, machine.secret) }));
      expect(await server().auth.clientConfigurations.delete(machine.clientId)).toBe(true);
      expectOAuthError(server(), await postToken(server().oauthUrl, CC, { authorization: basic(machine.clientId, machine.secret) }), 401, 'invalid_client');
      expect(await server().auth.clientConfigurations.get(machine.clientId)).toBeUndefined();
    });

    it("an app's client ID with a machine client's secret", async () => {
      const machine = await newMachine(server());
      const app = await newConfidential(server());
      await expectMachineRefused(server(), machine, { headers: { authorization: basic(app.clientId, machine.secret) } });
    });
  });

  describe('credentials in the body, or in both body and header', () => {
    const server = ownServer(store);

    it('client_secret_post (client_id and client_secret in the body) is refused for client_credentials', async () => {
      const machine = await newMachine(server());
      await expectMachineRefused(server(), machine, { body: `${CC}&client_id=${machine.clientId}&client_secret=${machine.secret}` });
    });

    it('a correct Basic header plus the same secret in the body', async () => {
      const machine = await newMachine(server());
      await expectMachineRefused(server(), machine, {
        body: `${CC}&client_secret=${machine.secret}`,
        headers: { authorization: basic(machine.clientId, machine.secret) },
      });
    });

    it('a wrong Basic secret with the right one in the body: no fallback to the body', async () => {
      const machine = await newMachine(server());
      await expectMachineRefused(server(), machine, {
        body: `${CC}&client_id=${machine.clientId}&client_secret=${machine.secret}`,
        headers: { authorization: basic(machine.clientId, 'wrong') },
      });
    });

    it("Basic of one client with another client's client_id in the body → 400 invalid_request", async () => {
      const [machine, other] = [await newMachine(server()), await newMachine(server())];
      await expectMachineRefused(
        server(),
        machine,
        { body: `${CC}&client_id=${other.clientId}`, headers: { authorization: basic(machine.clientId, machine.secret) } },
        400,
        'invalid_request',
      );
    });

    it('a client assertion instead of a secret (private_key_jwt is not offered)', async () => {
      const machine = await newMachine(server());
      const assertion = 'eyJhbGciOiJub25lIn0.eyJpc3MiOiJ4In0.';
      await expectMachineRefused(server(), machine, {
        body: `${CC}&client_id=${machine.clientId}&client_assertion_type=${encodeURIComponent('urn:ietf:params:oauth:client-assertion-type:jwt-bearer')}&client_assertion=${assertion}`,
      });
    });

    it('client assertion parameters beside a correct Basic header are refused: two methods at once (invalid_request)', async () => {
      const machine = await newMachine(server());
      const assertion = 'eyJhbGciOiJub25lIn0.eyJpc3MiOiJ4In0.';
      const response = await postToken(
        server().oauthUrl,
        `${CC}&client_assertion_type=${encodeURIComponent('urn:ietf:params:oauth:client-assertion-type:jwt-bearer')}&client_assertion=${assertion}`,
        { authorization: basic(machine.clientId, machine.secret) },
      );
      expect(response.status).toBe(400);
      expect(response.body).toEqual(expect.objectContaining({ error: 'invalid_request' }));
    });

    it('the same client_id in the body beside Basic is accepted (not a second mechanism)', async () => {
      const machine = await newMachine(server());
      expectTokens(await postToken(server().oauthUrl, `${CC}&client_id=${machine.clientId}`, { authorization: basic(machine.clientId, machine.secret) }));
    });
  });

  describe('apps: each type authenticates its own way only; the code or refresh token survives a refusal', () => {
    const server = ownServer(store);

    /** A fresh code for `app`; `attempt` must be refused as given; then the proper exchange works. */
    async function codeSurvives(
      app: PublicApp | ConfidentialApp,
      attempt: (code: string, verifier: string) => Promise<Awaited<ReturnType<typeof postToken>>>,
      status = 401,
      error = 'invalid_client',
    ): Promise<void> {
      const { code, verifier } = await signInForCode(server(), app, alice);
      const before = await server().auth.appRegistrations.get(app.clientId);
      expectOAuthError(server(), await attempt(code, verifier), status, error);
      expect(await server().auth.appRegistrations.get(app.clientId)).toEqual(before);
      expectTokens(await exchangeCode(server(), app, code, verifier));
    }

    const exchange = (app: PublicApp, code: string, verifier: string) => ({
      grant_type: 'authorization_code', code, redirect_uri: app.redirectUri, code_verifier: verifier,
    });

    it('public app with a Basic secret', async () => {
      const spa = await newPublic(server());
      await codeSurvives(spa, (code, verifier) =>
        postToken(server().oauthUrl, exchange(spa, code, verifier), { authorization: basic(spa.clientId, 'any-secret') }));
    });

    it('public app with an empty Basic secret', async () => {
      const spa = await newPublic(server());
      await codeSurvives(spa, (code, verifier) =>
        postToken(server().oauthUrl, { ...exchange(spa, code, verifier), client_id: spa.clientId }, { authorization: `Basic ${b64(`${spa.clientId}:`)}` }));
    });

    it('public app with client_secret in the body', async () => {
      const spa = await newPublic(server());
      await codeSurvives(spa, (code, verifier) =>
        postToken(server().oauthUrl, { ...exchange(spa, code, verifier), client_id: spa.clientId, client_secret: 'x' }));
    });

    it("public app with a confidential app's real credentials", async () => {
      const spa = await newPublic(server());
      const web = await newConfidential(server());
      await codeSurvives(spa, (code, verifier) =>
        postToken(server().oauthUrl, exchange(spa, code, verifier), { authorization: basic(web.clientId, web.secret) }), 400, 'invalid_grant');
    });

    it('public exchange without any client_id', async () => {
      const spa = await newPublic(server());
      await codeSurvives(spa, (code, verifier) => postToken(server().oauthUrl, exchange(spa, code, verifier)));
    });

    it('confidential app with client_id only (no secret)', async () => {
      const web = await newConfidential(server());
      await codeSurvives(web, (code, verifier) =>
        postToken(server().oauthUrl, { ...exchange(web, code, verifier), client_id: web.clientId }));
    });

    it('confidential app with an empty Basic secret', async () => {
      const web = await newConfidential(server());
      await codeSurvives(web, (code, verifier) =>
        postToken(server().oauthUrl, exchange(web, code, verifier), { authorization: `Basic ${b64(`${web.clientId}:`)}` }));
    });

    it('confidential app with a wrong secret', async () => {
      const web = await newConfidential(server());
      await codeSurvives(web, (code, verifier) =>
        postToken(server().oauthUrl, exchange(web, code, verifier), { authorization: basic(web.clientId, `${web.secret.slice(0, -1)}_`) }));
    });

    it('confidential app with client_secret_post', async () => {
      const web = await newConfidential(server());
      await codeSurvives(web, (code, verifier) =>
        postToken(server().oauthUrl, { ...exchange(web, code, verifier), client_id: web.clientId, client_secret: web.secret }));
    });

    it('confidential app with the secret of the other confidential app', async () => {
      const web = await newConfidential(server());
      const other = await newConfidential(server());
      await codeSurvives(web, (code, verifier) =>
        postToken(server().oauthUrl, exchange(web, code, verifier), { authorization: basic(web.clientId, other.secret) }));
    });

    it('a machine client posing as a public client (client_id only) on a code exchange', async () => {
      const web = await newConfidential(server());
      const machine = await newMachine(server());
      await codeSurvives(web, (code, verifier) =>
        postToken(server().oauthUrl, { ...exchange(web, code, verifier), client_id: machine.clientId }));
    });

    describe('refresh_token grant', () => {
      async function refreshTokenOf(web: ConfidentialApp): Promise<string> {
        const { code, verifier } = await signInForCode(server(), web, alice);
        const tokens = await exchangeCode(server(), web, code, verifier);
        expectTokens(tokens);
        return tokens.body.refresh_token as string;
      }

      it.each([
        ['client_id only', (web: ConfidentialApp) => ({ body: { client_id: web.clientId }, headers: {} })],
        ['client_secret_post', (web: ConfidentialApp) => ({ body: { client_id: web.clientId, client_secret: web.secret }, headers: {} })],
        ['a wrong secret', (web: ConfidentialApp) => ({ body: {}, headers: { authorization: basic(web.clientId, 'wrong') } })],
        ['no credentials at all', () => ({ body: {}, headers: {} })],
      ])('%s → 401 invalid_client, and the refresh token still works', async (_name, credentials) => {
        const web = await newConfidential(server());
        const refreshToken = await refreshTokenOf(web);
        const { body, headers } = credentials(web);
        const response = await postToken(server().oauthUrl, { grant_type: 'refresh_token', refresh_token: refreshToken, ...body }, headers);
        expectOAuthError(server(), response, 401, 'invalid_client');
        expectTokens(await refresh(server(), web, refreshToken));
      });
    });
  });

  describe('a correctly authenticated client on a grant type it does not have', () => {
    const server = ownServer(store);

    interface WrongGrant {
      name: string;
      /** Sends the request; answers a check that what it aimed at is untouched. */
      run(): Promise<{ response: Awaited<ReturnType<typeof postToken>>; untouched(): Promise<void> }>;
    }

    const cases: WrongGrant[] = [
      {
        name: "a machine client redeeming an app's code",
        async run() {
          const [web, machine] = [await newConfidential(server()), await newMachine(server())];
          const { code, verifier } = await signInForCode(server(), web, alice);
          const response = await postToken(
            server().oauthUrl,
            { grant_type: 'authorization_code', code, redirect_uri: web.redirectUri, code_verifier: verifier },
            { authorization: basic(machine.clientId, machine.secret) },
          );
          return { response, untouched: async () => expectTokens(await exchangeCode(server(), web, code, verifier)) };
        },
      },
      {
        name: "a machine client using an app's refresh token",
        async run() {
          const [web, machine] = [await newConfidential(server()), await newMachine(server())];
          const { code, verifier } = await signInForCode(server(), web, alice);
          const refreshToken = (await exchangeCode(server(), web, code, verifier)).body.refresh_token as string;
          const response = await postToken(server().oauthUrl, { grant_type: 'refresh_token', refresh_token: refreshToken }, { authorization: basic(machine.clientId, machine.secret) });
          return { response, untouched: async () => expectTokens(await refresh(server(), web, refreshToken)) };
        },
      },
      {
        name: 'an app asking for client_credentials',
        async run() {
          const web = await newConfidential(server());
          const before = await server().auth.appRegistrations.get(web.clientId);
          const response = await postToken(server().oauthUrl, CC, { authorization: basic(web.clientId, web.secret) });
          return { response, untouched: async () => expect(await server().auth.appRegistrations.get(web.clientId)).toEqual(before) };
        },
      },
    ];

    it.each(cases)('$name → 400, nothing issued, nothing consumed', async ({ run }) => {
      const { response, untouched } = await run();
      expect(response.status).toBe(400);
      expect(response.body).not.toHaveProperty('access_token');
      expect(response.body).not.toHaveProperty('refresh_token');
      await untouched();
    });

    // RFC 6749 §5.2: "the authenticated client is not authorized to use this authorization grant
    // type"; the engine says invalid_request, which src/endpoints/token/token-endpoint.ts renames.
    it.each(cases)('$name → exactly 400 unauthorized_client (RFC 6749 §5.2)', async ({ run }) => {
      const { response } = await run();
      expectOAuthError(server(), response, 400, 'unauthorized_client');
    });
  });
});
