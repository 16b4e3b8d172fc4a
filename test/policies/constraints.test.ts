import { constraintsForGrantedScopes, validateConstraints } from '../../policies/constraints.js';
import { ApiCatalog } from '../../policies/catalog.js';
import { ValidationError } from '../../policies/errors.js';

const catalog = new ApiCatalog([
  { id: 'scim', name: 'SCIM', scopes: { 'scim.read': 'r', 'scim.write': 'w' }, constraints: ['group', 'department'] },
  { id: 'subs', name: 'Subs', scopes: { 'manage.subscriptions': 'm' }, constraints: ['region'] },
  { id: 'users', name: 'Users', scopes: { 'user.read': 'r' }, constraints: [] },
]);

describe('validateConstraints (registration time)', () => {
  it('accepts declared dimensions with values, without duplicates', () => {
    expect(validateConstraints(catalog, 'scim', { group: ['eng', 'eng', 'ops'] }, 'f')).toEqual({ group: ['eng', 'ops'] });
  });
  it.each([
    ['an undeclared dimension', 'scim', { region: ['eu'] }, 'f.region'],
    ['a dimension on an API without any', 'users', { group: ['eng'] }, 'f.group'],
    ['no values', 'scim', { group: [] }, 'f.group'],
    ['an empty value', 'scim', { group: [' '] }, 'f.group'],
    ['a non-string value', 'scim', { group: [1 as unknown as string] }, 'f.group'],
  ])('refuses %s', (_name, api, filters, field) => {
    expect(() => validateConstraints(catalog, api, filters, 'f')).toThrow(ValidationError);
    expect(() => validateConstraints(catalog, api, filters, 'f')).toThrow(expect.objectContaining({ field }));
  });
  it('refuses an API the catalog does not hold, naming it', () => {
    expect(() => validateConstraints(catalog, 'payroll', { group: ['eng'] }, 'f')).toThrow(expect.objectContaining({ field: 'f', description: "f: unknown API 'payroll'" }));
  });
});

describe('constraintsForGrantedScopes (token time)', () => {
  const configured = { scim: { group: ['eng'] }, subs: { region: ['eu'] } };
  it('carries only the constraints of APIs with a granted scope', () => {
    expect(constraintsForGrantedScopes(catalog, configured, ['scim.read'])).toEqual({ scim: { group: ['eng'] } });
    expect(constraintsForGrantedScopes(catalog, configured, ['scim.read', 'scim.write', 'manage.subscriptions'])).toEqual(configured);
  });
  it('is undefined when no granted API is constrained', () => {
    expect(constraintsForGrantedScopes(catalog, configured, ['user.read'])).toBeUndefined();
    expect(constraintsForGrantedScopes(catalog, {}, ['scim.read'])).toBeUndefined();
    expect(constraintsForGrantedScopes(catalog, configured, [])).toBeUndefined();
  });
});
