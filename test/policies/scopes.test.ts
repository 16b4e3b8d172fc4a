import {
  IDENTITY_CLAIMS, isResourceScope, namedUserResourceScopes, OIDC_SCOPES, resolveRequestedScopes, userGrantableScopes,
  validateAssignedScopes, validateAuthorizationScopes,
} from '../../policies/scopes.js';
import { ApiCatalog } from '../../policies/catalog.js';
import { InvalidRequest, InvalidScope, ValidationError } from '../../policies/errors.js';

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
  // The description names what is wrong, so an operator can fix the registration.
  it.each([
    ['scim', [], "f: at least one scope is required for API 'scim'"],
    ['nope', ['scim.read'], "f: unknown API 'nope'"],
    ['scim', ['scim.read', 'user.read'], "f: scope 'user.read' is not defined by API 'scim'"],
  ])('names the problem (%s, %j)', (api, scopes, message) => {
    expect(() => validateAssignedScopes(catalog, api, scopes, 'f')).toThrow(new ValidationError('f', message.slice(3)));
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
  // The charset is checked before the assignment, anywhere in the token: even a scope that was
  // somehow assigned with such a character is refused for its characters.
  it.each(['"x', 'x"', 'a\\b', 'x\u00e9'])('refuses %j for its characters, wherever they are', (scope) => {
    expect(() => resolveRequestedScopes(scope, new Set([scope]))).toThrow(new InvalidScope('scope contains invalid characters'));
  });
  it('accepts the edges of the scope-token set', () => {
    expect(resolveRequestedScopes('! ~ #', new Set(['!', '~', '#']))).toEqual(['!', '~', '#']);
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

describe('validateAuthorizationScopes (authorization requests)', () => {
  it.each([undefined, '', '   '])('requires a scope (%j)', (requested) => {
    expect(() => validateAuthorizationScopes(catalog, requested, true)).toThrow(new InvalidRequest("missing required parameter 'scope'"));
  });
  it('accepts the OIDC scopes, the API scopes and, for a first-party app, the management right', () => {
    expect(() => validateAuthorizationScopes(catalog, 'openid profile email offline_access', false)).not.toThrow();
    expect(() => validateAuthorizationScopes(catalog, 'openid  scim.read user.read', false)).not.toThrow();
    expect(() => validateAuthorizationScopes(catalog, 'openid manage.integrations', true)).not.toThrow();
  });
  it('refuses the management right to a third-party app', () => {
    expect(() => validateAuthorizationScopes(catalog, 'openid manage.integrations', false))
      .toThrow(new InvalidScope("the scope 'manage.integrations' is only for the platform's own apps"));
  });
  it.each(['scim.delete', 'address', 'phone', 'toString'])('refuses an unknown scope (%s), never drops it', (scope) => {
    expect(() => validateAuthorizationScopes(catalog, `openid ${scope}`, true)).toThrow(new InvalidScope(`unknown scope '${scope}'`));
  });
});

describe('isResourceScope (the scopes of our one audience)', () => {
  it.each<[string, boolean]>([
    ['scim.read', true], ['user.read', true], ['manage.integrations', true],
    ['openid', false], ['offline_access', false], ['unknown', false],
  ])('%s: %s', (scope, expected) => {
    expect(isResourceScope(catalog, scope)).toBe(expected);
  });
});

describe('the OIDC scopes and their claims', () => {
  it('are exactly these', () => {
    expect([...OIDC_SCOPES]).toEqual(['openid', 'profile', 'email', 'offline_access']);
    expect(IDENTITY_CLAIMS).toEqual({
      openid: ['sub'],
      profile: ['name', 'given_name', 'family_name', 'preferred_username'],
      email: ['email', 'email_verified'],
    });
  });
});
