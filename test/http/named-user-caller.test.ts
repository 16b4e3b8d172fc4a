/**
 * Who a caller of our own APIs (consents, management) is: a named-user token of ours whose account
 * still exists and still belongs to the token's tenant. The HTTP tests of those APIs reach most rows;
 * this table holds every row, the account deleted after the token was issued among them.
 */
import type { Context } from 'koa';
import type { Account, AccountStore } from '../../src/accounts.js';
import { namedUserCaller } from '../../src/http/named-user-caller.js';
import type { AccessTokenContext, TokenVerifier } from '../../src/resource-server/verifier.js';
import { InsufficientScope, InvalidToken, TenantMoved, type TokenError } from '../../policies/errors.js';

const realm = 'https://api.example.com';

function tokenOf(overrides: Partial<AccessTokenContext>): AccessTokenContext {
  return {
    sub: 'user-1',
    clientId: 'app-1',
    tenant: 'acme',
    scopes: new Set(['openid']),
    constraints: {},
    isNamedUser: true,
    amr: ['pwd'],
    acr: 'urn:talent-auth:acr:pwd',
    authTime: 1,
    claims: {},
    ...overrides,
  };
}

function verifierOf(token: AccessTokenContext): TokenVerifier & { seen: (string | undefined)[] } {
  const seen: (string | undefined)[] = [];
  return {
    seen,
    realm,
    verify: () => Promise.reject(new Error('not used')),
    verifyRequest: () => Promise.reject(new Error('not used')),
    verifyAuthorization: (header) => {
      seen.push(header);
      return Promise.resolve(token);
    },
  };
}

function accountsOf(accounts: Account[]): AccountStore {
  return {
    authenticate: () => Promise.resolve(undefined),
    findAccount: (sub) => Promise.resolve(accounts.find((account) => account.sub === sub)),
  };
}

function ctxOf(authorization: string | undefined): Context {
  return { get: (name: string) => (name.toLowerCase() === 'authorization' ? (authorization ?? '') : '') } as unknown as Context;
}

const alice: Account = { sub: 'user-1', tenant: 'acme' };

describe('namedUserCaller', () => {
  const refusals: [string, Partial<AccessTokenContext>, AccountStore | undefined, new (...args: never[]) => TokenError, number, string][] = [
    ['a machine token', { isNamedUser: false }, accountsOf([alice]), InsufficientScope, 403, 'a named-user access token is required'],
    ['a named-user token without a tenant', { tenant: undefined }, accountsOf([alice]), InsufficientScope, 403, 'a named-user access token is required'],
    ['the account deleted after the token was issued', {}, accountsOf([]), InvalidToken, 401, 'the user of this token no longer exists'],
    ['no account store at all', {}, undefined, InvalidToken, 401, 'the user of this token no longer exists'],
    ['the account moved to another tenant', {}, accountsOf([{ sub: 'user-1', tenant: 'globex' }]), TenantMoved, 403, 'this token belongs to another tenant of the user'],
  ];

  it.each(refusals)('refuses %s', async (_name, token, accounts, kind, status, description) => {
    const failure = await namedUserCaller(ctxOf('Bearer t'), verifierOf(tokenOf(token)), accounts).catch((error: unknown) => error);
    expect(failure).toBeInstanceOf(kind);
    expect(failure).toMatchObject({ status, description });
    expect((failure as TokenError).challenge).toContain(`Bearer realm="${realm}"`);
  });

  it('answers with the token and the account, the tenant stated', async () => {
    const verifier = verifierOf(tokenOf({}));
    const caller = await namedUserCaller(ctxOf('Bearer t'), verifier, accountsOf([alice]));
    expect(caller.account).toBe(alice);
    expect(caller.auth.tenant).toBe('acme');
    expect(caller.auth.sub).toBe('user-1');
    expect(verifier.seen).toEqual(['Bearer t']);
  });

  it('passes no header on as no header (not an empty string)', async () => {
    const verifier = verifierOf(tokenOf({}));
    await namedUserCaller(ctxOf(undefined), verifier, accountsOf([alice]));
    expect(verifier.seen).toEqual([undefined]);
  });
});
