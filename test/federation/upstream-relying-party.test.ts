import { afterAll, beforeAll, describe, expect, it } from '@jest/globals';
import { randomBytes } from 'node:crypto';
import { failureOf, UpstreamFailure, Upstreams } from '../../src/federation/upstreams.js';
import * as client from 'openid-client';
import type { ConnectionForSignIn } from '../../src/federation/connections.js';
import { passUpstreamSignIn, startUpstreamProvider, type RunningUpstreamProvider } from '../support/upstream-provider.js';

/*
 * The relying party of the federation core (src/federation/upstreams.ts) against a real
 * node-oidc-provider: discovery, the authorization URL, the code exchange with its ID token
 * checks. The sign-in flow through our pages is in the other files of this folder.
 */

const REDIRECT = 'http://127.0.0.1:1/oauth2/federation/callback';
let upstream: RunningUpstreamProvider;

function connectionFor(issuer: string, overrides: Partial<ConnectionForSignIn> = {}): ConnectionForSignIn {
  return {
    id: 'conn-1', tenant: 'acme', name: 'Acme IdP', issuer, clientId: 'talent-auth', tokenEndpointAuthMethod: 'client_secret_basic',
    hasClientSecret: true, scopes: ['openid', 'email', 'profile'], domains: ['acme.example'], verifiedDomains: ['acme.example'], claimMapping: {}, signOutUpstream: true,
    mfaAcrValues: [], createdAt: '2026-01-01T00:00:00Z', updatedAt: '2026-01-01T00:00:00Z', clientSecret: 'upstream-secret-1',
    trustedHost: new URL(issuer).hostname, ...overrides,
  };
}
const checks = () => ({ state: randomBytes(16).toString('base64url'), nonce: randomBytes(16).toString('base64url'), codeVerifier: randomBytes(32).toString('base64url') });
const upstreams = (timeoutMs = 3000) => new Upstreams({ timeoutMs, metadataCacheSeconds: 60, callbackBase: REDIRECT, signingKey: async () => { throw new Error('unused'); } });

beforeAll(async () => {
  upstream = await startUpstreamProvider({
    clients: [{ client_id: 'talent-auth', client_secret: 'upstream-secret-1', redirect_uris: [REDIRECT], token_endpoint_auth_method: 'client_secret_basic' }],
    users: [{ sub: 'u-1', email: 'ada@acme.example', email_verified: true, name: 'Ada' }],
  });
});
afterAll(async () => upstream.close());

async function signIn(rp: Upstreams, connection: ConnectionForSignIn, c = checks()) {
  const url = await rp.authorizationUrl(connection, c, 'ada@acme.example');
  const { callbackUrl } = await passUpstreamSignIn(url.href, 'u-1');
  return { url, callbackUrl, checks: c };
}

describe('the upstream relying party against a real provider', () => {
  it('builds the authorization URL (code, PKCE S256, state, nonce, login_hint) and exchanges the code for checked claims', async () => {
    const rp = upstreams();
    const connection = connectionFor(upstream.issuer);
    const { url, callbackUrl, checks: c } = await signIn(rp, connection);
    expect(url.origin).toBe(upstream.issuer);
    expect(url.searchParams.get('code_challenge_method')).toBe('S256');
    expect(url.searchParams.get('state')).toBe(c.state);
    expect(url.searchParams.get('nonce')).toBe(c.nonce);
    expect(url.searchParams.get('login_hint')).toBe('ada@acme.example');
    expect(url.searchParams.get('redirect_uri')).toBe(`${REDIRECT}/conn-1`);
    expect(callbackUrl.startsWith(REDIRECT)).toBe(true);
    const identity = await rp.exchange(connection, new URL(callbackUrl), c);
    expect(identity.claims).toMatchObject({ iss: upstream.issuer, sub: 'u-1', email: 'ada@acme.example', email_verified: true, name: 'Ada', amr: ['pwd'] });
    expect(identity.idToken.split('.')).toHaveLength(3);
  });

  it.each([
    ['a foreign signature', undefined, true],
    ['another nonce', (claims: Record<string, unknown>) => ({ ...claims, nonce: 'other' }), false],
    ['another issuer', (claims: Record<string, unknown>) => ({ ...claims, iss: 'http://127.0.0.1:9' }), false],
    ['another audience', (claims: Record<string, unknown>) => ({ ...claims, aud: 'someone-else' }), false],
    ['an expired ID token', (claims: Record<string, unknown>) => ({ ...claims, iat: Math.floor(Date.now() / 1000) - 7200, exp: Math.floor(Date.now() / 1000) - 3600 }), false],
  ])('refuses %s (invalid_response)', async (_name, fn, foreignKey) => {
    const rp = upstreams();
    const connection = connectionFor(upstream.issuer);
    const { callbackUrl, checks: c } = await signIn(rp, connection);
    upstream.tamper(fn ?? ((claims) => claims), { foreignKey });
    try {
      await expect(rp.exchange(connection, new URL(callbackUrl), c)).rejects.toMatchObject({ reason: 'invalid_response' });
    } finally {
      upstream.tamper(undefined);
    }
  });

  it('refuses a state that is not the one sent', async () => {
    const rp = upstreams();
    const connection = connectionFor(upstream.issuer);
    const { callbackUrl, checks: c } = await signIn(rp, connection);
    await expect(rp.exchange(connection, new URL(callbackUrl), { ...c, state: 'other' })).rejects.toBeInstanceOf(UpstreamFailure);
  });

  it('a wrong client secret is the provider refusing (error_response)', async () => {
    const rp = upstreams();
    const connection = connectionFor(upstream.issuer, { clientSecret: 'wrong' });
    const { callbackUrl, checks: c } = await signIn(rp, connection);
    await expect(rp.exchange(connection, new URL(callbackUrl), c)).rejects.toMatchObject({ reason: 'error_response', error: 'invalid_client' });
  });

  it('a slow provider is a timeout, a closed port unreachable', async () => {
    const slow = await startUpstreamProvider({ clients: [], users: [], delayMs: 1500 });
    try {
      await expect(upstreams(300).authorizationUrl(connectionFor(slow.issuer), checks())).rejects.toMatchObject({ reason: 'timeout' });
    } finally {
      await slow.close();
    }
    await expect(upstreams().authorizationUrl(connectionFor(slow.issuer), checks())).rejects.toMatchObject({ reason: 'unreachable' });
  });

  it.each<[unknown, string]>([
    ['invalid_grant', 'invalid_grant'],
    ['x'.repeat(65), 'malformed'],
    ['has "quotes"', 'malformed'],
    ['line\nbreak', 'malformed'],
    [42, 'malformed'],
  ])("the provider's error code %j is repeated (audit, log) as %j: an OAuth error code only, bounded", (error, expected) => {
    const answer = new client.ResponseBodyError('error', { cause: { error } as never, response: new Response(null, { status: 400 }) } as never);
    expect(failureOf(answer)).toMatchObject({ reason: 'error_response', error: expected });
  });
});
