import { ApiCatalog } from '../../policies/catalog.js';

const SCIM = {
  id: 'scim', name: 'SCIM', constraints: ['country'],
  scopes: { 'scim.read': 'Read users', 'scim.write': 'Change users' },
  scopeTranslations: { 'scim.read': { EN: 'Read the users (reviewed)', de: 'Benutzer lesen', 'fr-CA': 'Lire les utilisateurs (CA)' } },
};
const JOBS = { id: 'jobs', name: 'Jobs', constraints: [], scopes: { 'jobs.read': 'Read jobs' } };

/** THE API CATALOG (policies/catalog.ts): which API a scope belongs to, and its words per language. */
describe('the API catalog (policies/catalog.ts)', () => {
  const catalog = new ApiCatalog([SCIM, JOBS]);

  it('lists its APIs and scopes in the order given, and finds an API by id or by scope', () => {
    expect(catalog.apis.map((api) => api.id)).toEqual(['scim', 'jobs']);
    expect(catalog.scopes).toEqual(['scim.read', 'scim.write', 'jobs.read']);
    expect(catalog.api('jobs')).toBe(JOBS);
    expect(catalog.api('nope')).toBeUndefined();
    expect(catalog.apiOfScope('scim.write')).toBe(SCIM);
    expect(catalog.apiOfScope('scim')).toBeUndefined();
  });

  it.each<[string, string | undefined, string | undefined]>([
    ['scim.read', undefined, 'Read the users (reviewed)'],
    ['scim.read', 'en', 'Read the users (reviewed)'],
    ['scim.read', 'DE-ch', 'Benutzer lesen'],
    ['scim.read', 'fr-ca', 'Lire les utilisateurs (CA)'],
    ['scim.read', 'fr', 'Read users'],
    ['scim.write', 'de', 'Change users'],
    ['nope.read', 'en', undefined],
  ])('the words of %s in %s', (scope, lang, words) => {
    expect(lang === undefined ? catalog.scopeWords(scope) : catalog.scopeWords(scope, lang)).toBe(words);
  });
});
