import { ApiCatalog } from '../../policies/catalog.js';
import { InvalidGrant } from '../../policies/errors.js';
import { MANAGEMENT_SCOPE } from '../../policies/management.js';
import { namedUserClaims, namedUserResource } from '../../src/grants/named-user.js';
import { issuesRefreshTokens } from '../../src/grants/refresh-token.js';

const catalog = new ApiCatalog([{ id: 'scim', name: 'SCIM', scopes: { 'scim.read': 'r', 'scim.write': 'w' }, constraints: [] }]);
const thirdParty = { clientId: 'app', firstParty: false };
const firstParty = { clientId: 'portal', firstParty: true };
const admin = { tenant: 'acme', permissions: ['integration_setup'] };

describe('named-user tokens (src/grants/named-user.ts)', () => {
  it.each([
    ['before sign-in, a third-party app: every API scope', thirdParty, undefined, {}, ['scim.read', 'scim.write'], 300],
    ['before sign-in, a first-party app: and the management right', firstParty, undefined, {}, ['scim.read', 'scim.write', MANAGEMENT_SCOPE], 300],
    ['a user who holds some scopes', thirdParty, { tenant: 'acme', scopes: ['scim.read'] }, {}, ['scim.read'], 300],
    ['narrowed by her tenant, with its lifetime', thirdParty, { tenant: 'acme' }, { allowedScopes: ['scim.write'], accessTokenTtl: 900 }, ['scim.write'], 900],
    ['an admin at a first-party app', firstParty, admin, {}, ['scim.read', 'scim.write', MANAGEMENT_SCOPE], 300],
    ['an admin at a third-party app', thirdParty, admin, {}, ['scim.read', 'scim.write'], 300],
  ] as const)('%s', (_name, app, user, policy, scopes, lifetime) => {
    expect(namedUserResource(catalog, app, user, policy, 300)).toEqual({ scopes, lifetime });
  });

  it.each([
    ['an app her tenant no longer allows', thirdParty, { allowedApps: ['other'] }],
    ["another tenant's app", { ...thirdParty, tenant: 'globex' }, {}],
  ])('refuses a token for %s (invalid_grant)', (_name, app, policy) => {
    expect(() => namedUserResource(catalog, app, { tenant: 'acme' }, policy, 300)).toThrow(InvalidGrant);
  });

  it('claims: the tenant of the user', () => {
    expect(namedUserClaims({ tenant: 'acme' })).toEqual({ tenant: 'acme' });
  });

  it('claims: how and when she signed in, as the code or refresh token recorded it; malformed records left out', () => {
    const acr = 'urn:talent-auth:acr:pwd';
    expect(namedUserClaims({ tenant: 'acme' }, { acr, amr: ['pwd'], authTime: 1_700_000_000 }))
      .toEqual({ tenant: 'acme', acr, amr: ['pwd'], auth_time: 1_700_000_000 });
    expect(namedUserClaims({ tenant: 'acme' }, { acr: 1, amr: ['pwd', 2], authTime: '1700000000' })).toEqual({ tenant: 'acme' });
  });
});

describe('refresh tokens (src/grants/refresh-token.ts)', () => {
  const client = (clientAuthMethod: string, grants: string[]) => ({ clientAuthMethod, grantTypeAllowed: (type: string) => grants.includes(type) });
  it.each([
    ['a confidential app', client('client_secret_basic', ['authorization_code', 'refresh_token']), true],
    ['a public app', client('none', ['authorization_code', 'refresh_token']), false],
    ['a machine client', client('client_secret_basic', ['client_credentials']), false],
  ])('%s gets refresh tokens: %s', (_name, app, expected) => {
    expect(issuesRefreshTokens(app)).toBe(expected);
  });
});
