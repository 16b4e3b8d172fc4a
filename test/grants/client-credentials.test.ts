import { ApiCatalog } from '../../policies/catalog.js';
import { InvalidScope } from '../../policies/errors.js';
import {
  CLIENT_CREDENTIALS_TOKEN_SECONDS,
  clientCredentialsClaims,
  clientCredentialsScopes,
} from '../../src/grants/client-credentials.js';

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
