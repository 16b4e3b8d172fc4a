import { holdsIntegrationSetup, MANAGEMENT_SCOPE, MANAGEMENT_SCOPE_WORDS, mayRequestManagement } from '../../policies/management.js';
import { ApiCatalog } from '../../policies/catalog.js';
import { InvalidScope } from '../../policies/errors.js';
import { namedUserResourceScopes, validateAuthorizationScopes } from '../../policies/scopes.js';
import { foldUsername, waitInWords } from '../../src/limits/sign-in.js';

const catalog = new ApiCatalog([{ id: 'scim', name: 'SCIM', scopes: { 'scim.read': 'r', 'scim.write': 'w' }, constraints: [] }]);

describe('the management right (policies/management.ts)', () => {
  it.each([
    [['integration_setup'], true],
    [['integration_setup', 'other'], true],
    [['other'], false],
    [[], false],
    [undefined, false],
  ])('permissions %j hold integration setup: %s', (permissions, expected) => {
    expect(holdsIntegrationSetup(permissions)).toBe(expected);
  });

  it('only first-party apps may ask for it', () => {
    expect(mayRequestManagement(true)).toBe(true);
    expect(mayRequestManagement(false)).toBe(false);
    expect(() => validateAuthorizationScopes(catalog, `openid ${MANAGEMENT_SCOPE}`, false)).toThrow(InvalidScope);
    expect(() => validateAuthorizationScopes(catalog, `openid ${MANAGEMENT_SCOPE}`, true)).not.toThrow();
  });

  it.each([
    [{ permissions: ['integration_setup'] }, true, ['scim.read', 'scim.write', MANAGEMENT_SCOPE]],
    [{ permissions: ['integration_setup'] }, false, ['scim.read', 'scim.write']],
    [{ permissions: [] }, true, ['scim.read', 'scim.write']],
    [{ scopes: ['scim.read'], permissions: ['integration_setup'] }, true, ['scim.read', MANAGEMENT_SCOPE]],
  ])('a token of %j (first-party app: %s) may carry %j', (account, firstParty, expected) => {
    expect(namedUserResourceScopes(catalog, account, {}, firstParty)).toEqual(expected);
  });

  it('a tenant policy narrows API scopes, never the management right', () => {
    expect(namedUserResourceScopes(catalog, { permissions: ['integration_setup'] }, { allowedScopes: ['scim.read'] }, true)).toEqual(['scim.read', MANAGEMENT_SCOPE]);
  });
});

describe('sign-in throttling helpers', () => {
  it.each([['Alice', 'alice'], ['ALICE', 'alice'], ['ａｌｉｃｅ', 'alice'], ['Ärger', 'ärger']])('folds %s to %s', (typed, folded) => {
    expect(foldUsername(typed)).toBe(folded);
  });
  it.each([[1, '1 second'], [45, '45 seconds'], [89, '89 seconds'], [90, '2 minutes'], [899, '15 minutes']])('%s s is "%s"', (seconds, words) => {
    expect(waitInWords(seconds)).toBe(words);
  });
});

describe('the words of the management right', () => {
  it('say what it allows, on the consent page and in the consent API', () => {
    expect(MANAGEMENT_SCOPE_WORDS).toBe("Create and update your organization's integrations (client configurations and app registrations)");
  });
});
