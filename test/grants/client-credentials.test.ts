import { ApiCatalog } from '../../policies/catalog.js';
import { InvalidScope } from '../../policies/errors.js';
import {
  CLIENT_CREDENTIALS_TOKEN_SECONDS,
  clientCredentialsClaims,
  clientCredentialsScopes,
  clientCredentialsGrant,
} from '../../src/grants/client-credentials.js';
import type { GrantSetup } from '../../src/grants/grant.js';

const catalog = new ApiCatalog([
  { id: 'scim', name: 'SCIM', scopes: { 'scim.read': 'r', 'scim.write': 'w' }, constraints: ['country'] },
  { id: 'jobs', name: 'Jobs', scopes: { 'jobs.read': 'r' }, constraints: ['site'] },
]);
const assigned = ['scim.read', 'scim.write', 'jobs.read'];

describe('client_credentials (src/grants/client-credentials.ts)', () => {
  it('a machine token lives one hour', () => {
    expect(CLIENT_CREDENTIALS_TOKEN_SECONDS).toBe(3600);
  });

  it.each([
    ['omitted: every assigned scope', undefined, {}, assigned],
    ['blank: every assigned scope', '  ', {}, assigned],
    ['a subset, repeated once', 'scim.read scim.read', {}, ['scim.read']],
    ['omitted, narrowed by the tenant', undefined, { allowedScopes: ['jobs.read', 'scim.read'] }, ['scim.read', 'jobs.read']],
    ['a scope not assigned', 'scim.delete', {}, InvalidScope],
    ['a scope the tenant does not allow', 'scim.write', { allowedScopes: ['scim.read'] }, InvalidScope],
    ['a malformed scope', 'scim."read"', {}, InvalidScope],
  ] as const)('%s', (_name, requested, policy, expected) => {
    const scopes = () => clientCredentialsScopes(requested, assigned, policy);
    if (Array.isArray(expected)) expect(scopes()).toEqual(expected);
    else expect(scopes).toThrow(expected as typeof InvalidScope);
  });

  const both = { scim: { country: ['DE'] }, jobs: { site: ['x'] } };
  it.each([
    ['the constraints of the APIs its scopes reach', both, ['scim.read'], { tenant: 't', constraints: { scim: { country: ['DE'] } } }],
    ['no constraints claim for an API without filters', { scim: { country: ['DE'] } }, ['jobs.read'], { tenant: 't' }],
    ['no constraints claim for a client without any', undefined, ['scim.read'], { tenant: 't' }],
    ['both APIs', both, ['jobs.read', 'scim.write'], { tenant: 't', constraints: both }],
  ])('claims: %s', (_name, constraints, scopes, expected) => {
    expect(clientCredentialsClaims(catalog, { tenant: 't', constraints }, scopes)).toEqual(expected);
  });
});

/**
 * The grant's hooks as the engine calls them, for a client the engine holds without any scope (a
 * client configuration whose scopes were all taken away): no scope is invented for it.
 */
describe('client_credentials hooks for a client without scopes', () => {
  const setup = { catalog, audience: 'https://api.example.com', accessTokenFormat: { accessTokenFormat: 'jwt' }, tenantPolicy: undefined } as unknown as GrantSetup;
  const grant = clientCredentialsGrant(setup);

  it('an omitted scope grants nothing, and the engine is told so', async () => {
    const ctx = { oidc: { params: {} as Record<string, unknown> } };
    const resource = await grant.resource!(ctx as never, { tenant: 't' } as never);
    expect(resource).toMatchObject({ scope: '', audience: 'https://api.example.com' });
    expect(ctx.oidc.params['scope']).toBe('');
  });

  it('a requested scope is refused (invalid_scope)', async () => {
    const ctx = { oidc: { params: { scope: 'scim.read' } as Record<string, unknown> } };
    await expect(grant.resource!(ctx as never, { tenant: 't' } as never)).rejects.toBeInstanceOf(InvalidScope);
  });

  it('a token without scopes carries its tenant and no constraints', async () => {
    const claims = await grant.claims!({} as never, { client: { tenant: 't', constraints: { scim: { country: ['DE'] } } } } as never);
    expect(claims).toEqual({ tenant: 't' });
  });
});
