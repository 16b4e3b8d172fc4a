import { namedUserResourceScopes, resolveRequestedScopes, userGrantableScopes, validateAssignedScopes } from '../../policies/scopes.js';
import { ApiCatalog } from '../../policies/catalog.js';
import { InvalidScope, ValidationError } from '../../policies/errors.js';

const catalog = new ApiCatalog([
  { id: 'scim', name: 'SCIM', scopes: { 'scim.read': 'r', 'scim.write': 'w' }, constraints: ['group'] },
  { id: 'users', name: 'Users', scopes: { 'user.read': 'r' }, constraints: [] },
]);

describe('validateAssignedScopes (registration time)', () => {
  it('accepts scopes the API defines, without duplicates', () => {
    expect(validateAssignedScopes(catalog, 'scim', ['scim.read', 'scim.read', 'scim.write'], 'f')).toEqual(['scim.read', 'scim.write']);
  });
  it.each([
    ['no scope', 'scim', []],
    ['an unknown API', 'nope', ['scim.read']],
    ['a scope of another API', 'scim', ['user.read']],
    ['an unknown scope', 'scim', ['scim.delete']],
    ['an inherited property name', 'scim', ['toString']],
  ])('refuses %s', (_name, api, scopes) => {
    expect(() => validateAssignedScopes(catalog, api, scopes, 'f')).toThrow(ValidationError);
  });
});

describe('resolveRequestedScopes (request time)', () => {
  const assigned = new Set(['scim.read', 'user.read']);
  it('grants every assigned scope when none is requested', () => {
    expect(resolveRequestedScopes(undefined, assigned)).toEqual(['scim.read', 'user.read']);
    expect(resolveRequestedScopes('  ', assigned)).toEqual(['scim.read', 'user.read']);
  });
  it('grants a requested subset', () => {
    expect(resolveRequestedScopes('user.read', assigned)).toEqual(['user.read']);
    expect(resolveRequestedScopes('user.read  scim.read user.read', assigned)).toEqual(['user.read', 'scim.read']);
  });
  it('refuses any scope not assigned, naming it', () => {
    expect(() => resolveRequestedScopes('scim.read scim.write', assigned)).toThrow(new InvalidScope('scope "scim.write" is not assigned to this client'));
  });
  it('refuses characters outside RFC 6749 scope tokens', () => {
    expect(() => resolveRequestedScopes('scim.read "x"', assigned)).toThrow(InvalidScope);
    expect(() => resolveRequestedScopes('scim\\read', assigned)).toThrow(InvalidScope);
  });
});

describe('userGrantableScopes (the scopes a user holds bound her tokens)', () => {
  it.each<[string, readonly string[] | undefined, string[]]>([
    ['no list: the catalog only', undefined, ['scim.read', 'scim.write', 'user.read']],
    ['a list: only the scopes on it', ['scim.read', 'nope'], ['scim.read']],
    // An empty list is a user who holds no scope, not a user without a limit.
    ['an empty list: none', [], []],
  ])('%s', (_name, userScopes, expected) => {
    expect(userGrantableScopes(catalog, userScopes)).toEqual(expected);
  });

  it('an account with scopes: [] gets no API scope, only the management right it holds otherwise', () => {
    expect(namedUserResourceScopes(catalog, { scopes: [] }, {}, true)).toEqual([]);
    expect(namedUserResourceScopes(catalog, { scopes: [], permissions: ['integration_setup'] }, {}, true)).toEqual(['manage.integrations']);
  });
});
