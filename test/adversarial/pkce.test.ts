/**
 * Adversarial PKCE: missing, wrong and malformed verifiers at the token endpoint, malformed
 * challenges and methods at /authorize, and downgrades both ways. Every refused exchange leaves the
 * code redeemable with the right verifier; every refused authorization issues no code.
 */
import { createHash } from 'node:crypto';
import { alice, testAccounts } from '../support/accounts.js';
import { type RunningServer, startServer } from '../support/server.js';
import { signInForCode } from '../support/sign-in.js';
import { STORE_KINDS, useStore } from '../support/stores.js';
import { UserAgent } from '../support/user-agent.js';
import {
  type ConfidentialApp,
  codeWith,
  exchangeCode,
  expectOAuthError,
  expectTokens,
  type PublicApp,
  pkcePair,
  registerApps,
} from './helpers.js';

const LEGACY = 'https://legacy.example.com/cb';
const s256 = (verifier: string) => createHash('sha256').update(verifier, 'ascii').digest('base64url');

describe.each(STORE_KINDS)('adversarial PKCE (%s store)', (kind) => {
  const store = useStore(kind);
  let server: RunningServer;
  let spa: PublicApp;
  let web: ConfidentialApp;
  let legacy: ConfidentialApp;
  let agent: UserAgent;

  beforeAll(async () => {
    server = await startServer({ store: store.option(), accounts: testAccounts([alice]) });
    ({ spa, web } = await registerApps(server));
    const created = await server.auth.appRegistrations.create({ name: 'Legacy', redirectUris: [LEGACY], clientType: 'confidential', pkceEnabled: false });
    legacy = { clientId: created.clientId, redirectUri: LEGACY, secret: created.clientSecret! };
    agent = new UserAgent(server.baseUrl);
  });
  afterAll(async () => {
    await server.stop();
  });


  /** A code of `app` for a fresh verifier; the exchange `attempt` is refused as expected; the right one then works. */
  async function refusedThenRedeemed(
    app: PublicApp | ConfidentialApp,
    verifierToSend: (verifier: string) => string | undefined,
    status: number,
    error: string,
  ): Promise<void> {
    const { code, verifier } = await signInForCode(server, app, alice, 'openid scim.read', agent);
    expectOAuthError(server, await exchangeCode(server, app, code, verifierToSend(verifier)), status, error);
    expectTokens(await exchangeCode(server, app, code, verifier));
  }

  describe.each(['public', 'confidential'])('%s app, at the token endpoint', (type) => {
    const app = (): PublicApp | ConfidentialApp => (type === 'public' ? spa : web);
    // docs/decisions.md: a public app's missing code_verifier is a malformed request; for a confidential app
    // (authenticated, PKCE-enabled) it is a PKCE mismatch.
    const missingVerifier = type === 'public' ? 'invalid_request' : 'invalid_grant';

    it(`no code_verifier → 400 ${missingVerifier}`, async () => {
      await refusedThenRedeemed(app(), () => undefined, 400, missingVerifier);
    });

    it(`an empty code_verifier (counts as omitted) → 400 ${missingVerifier}`, async () => {
      await refusedThenRedeemed(app(), () => '', 400, missingVerifier);
    });

    it.each([
      ['another well-formed verifier', () => pkcePair().verifier],
      ['the verifier with its last character changed', (v: string) => v.slice(0, -1) + (v.endsWith('A') ? 'B' : 'A')],
      ['the verifier in upper case', (v: string) => v.toUpperCase()],
      ['the challenge itself (a plain-method downgrade)', (v: string) => s256(v)],
      ['the verifier with a character appended', (v: string) => `${v}A`],
    ])('%s → 400 invalid_grant', async (_name, wrong) => {
      await refusedThenRedeemed(app(), wrong, 400, 'invalid_grant');
    });

    it.each([
      ['42 characters', () => 'a'.repeat(42)],
      ['129 characters', () => 'a'.repeat(129)],
      ['1 character', () => 'a'],
      ['4096 characters', () => 'a'.repeat(4096)],
      ['a "+"', () => `${'a'.repeat(42)}+`],
      ['a "/"', () => `${'a'.repeat(42)}/`],
      ['base64 padding "="', (v: string) => `${v}=`],
      ['a space', () => `${'a'.repeat(21)} ${'a'.repeat(21)}`],
      ['a "%"', () => `${'a'.repeat(42)}%`],
      ['a "!"', () => `${'a'.repeat(42)}!`],
      ['a non-ASCII letter', () => `${'a'.repeat(42)}é`],
      ['a NUL', (v: string) => `${v}\u0000`],
      ['a newline', (v: string) => `${v}\n`],
    ])('a code_verifier with %s → 400 invalid_request', async (_name, malformed) => {
      await refusedThenRedeemed(app(), malformed, 400, 'invalid_request');
    });

    it.each([
      ['43 characters (the minimum)', 'a'.repeat(43)],
      ['128 characters (the maximum)', 'Z'.repeat(128)],
      ['every unreserved punctuation character', `-._~${'a'.repeat(39)}`],
    ])('a verifier of %s with its S256 challenge is accepted', async (_name, verifier) => {
      const code = await codeWith(server, app(), { challenge: s256(verifier) });
      expectTokens(await exchangeCode(server, app(), code, verifier));
    });
  });

  describe('at /authorize: no code for a bad challenge or method', () => {
    const { challenge } = pkcePair();

    /** The authorize request goes back to the app with `error` and the state, and no code. */
    async function expectErrorRedirect(app: PublicApp, params: Record<string, string | undefined>, error: string): Promise<void> {
      const query = new URLSearchParams(Object.entries({
        response_type: 'code', client_id: app.clientId, redirect_uri: app.redirectUri, scope: 'openid scim.read', state: 'st', ...params,
      }).filter((entry): entry is [string, string] => entry[1] !== undefined));
      const step = await new UserAgent(server.baseUrl).request(`${server.oauthUrl}/authorize?${query}`);
      expect(step.location).toBeDefined();
      const back = new URL(step.location!);
      expect(back.origin + back.pathname).toBe(app.redirectUri);
      expect(back.searchParams.get('error')).toBe(error);
      expect(back.searchParams.get('state')).toBe('st');
      expect(back.searchParams.has('code')).toBe(false);
    }

    it.each([
      ['plain', { code_challenge: challenge, code_challenge_method: 'plain' }],
      ['PLAIN', { code_challenge: challenge, code_challenge_method: 'PLAIN' }],
      ['s256 (lower case)', { code_challenge: challenge, code_challenge_method: 's256' }],
      ['S512', { code_challenge: challenge, code_challenge_method: 'S512' }],
      ['a challenge without a method (no plain default)', { code_challenge: challenge, code_challenge_method: undefined }],
      ['a method without a challenge', { code_challenge: undefined, code_challenge_method: 'S256' }],
      ['neither (public app)', { code_challenge: undefined, code_challenge_method: undefined }],
      ['a 42-character challenge', { code_challenge: challenge.slice(0, 42), code_challenge_method: 'S256' }],
      ['a 129-character challenge', { code_challenge: 'a'.repeat(129), code_challenge_method: 'S256' }],
      ['a challenge with "+" and "/" (base64, not base64url)', { code_challenge: `${challenge.slice(0, 41)}+/`, code_challenge_method: 'S256' }],
      ['a challenge with a space', { code_challenge: `${challenge.slice(0, 42)} `, code_challenge_method: 'S256' }],
    ])('public app, %s → invalid_request', async (_name, params) => {
      await expectErrorRedirect(spa, params, 'invalid_request');
    });

    it.each([
      ['a padded challenge (44 characters, "=")', `${challenge}=`],
      ['a 44-character challenge', `${challenge}A`],
      ['a 128-character challenge', 'a'.repeat(128)],
    ])('public app, %s → invalid_request (an S256 challenge is exactly 43 base64url characters)', async (_name, wrong) => {
      await expectErrorRedirect(spa, { code_challenge: wrong, code_challenge_method: 'S256' }, 'invalid_request');
    });

    it('confidential PKCE-enabled app without a challenge → invalid_request', async () => {
      await expectErrorRedirect(web, { code_challenge: undefined, code_challenge_method: undefined }, 'invalid_request');
    });

    it('legacy app (PKCE off) asking for plain → invalid_request', async () => {
      await expectErrorRedirect(legacy, { code_challenge: challenge, code_challenge_method: 'plain' }, 'invalid_request');
    });
  });

  describe('downgrades', () => {
    it('challenge at authorize, no verifier at the token endpoint (confidential, Basic) → 400 invalid_grant; the code still works', async () => {
      await refusedThenRedeemed(web, () => undefined, 400, 'invalid_grant');
    });

    it('legacy app (PKCE off) that sent a challenge anyway: a verifier is then required → 400 invalid_grant; the code still works', async () => {
      const { verifier, challenge } = pkcePair();
      const code = await codeWith(server, legacy, { challenge });
      expectOAuthError(server, await exchangeCode(server, legacy, code, undefined), 400, 'invalid_grant');
      expectTokens(await exchangeCode(server, legacy, code, verifier));
    });

    it('no challenge at authorize (legacy app) but a verifier at the token endpoint → 400 invalid_grant; the code still works without', async () => {
      const code = await codeWith(server, legacy, {});
      expectOAuthError(server, await exchangeCode(server, legacy, code, pkcePair().verifier), 400, 'invalid_grant');
      expectTokens(await exchangeCode(server, legacy, code, undefined));
    });

    it('a PKCE-enabled app that managed without a challenge gets no code: the authorize request is refused before sign-in', async () => {
      const step = await new UserAgent(server.baseUrl).request(`${server.oauthUrl}/authorize?${new URLSearchParams({
        response_type: 'code', client_id: web.clientId, redirect_uri: web.redirectUri, scope: 'openid', state: 's',
      })}`);
      expect(new URL(step.location!).searchParams.get('error')).toBe('invalid_request');
    });
  });
});
