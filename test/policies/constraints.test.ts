import {
  checkConstraintsSize, constraintsClaimBytes, constraintsForGrantedScopes, MAX_CONSTRAINT_VALUE_LENGTH, MAX_CONSTRAINTS_CLAIM_BYTES,
  validateConstraints,
} from '../../policies/constraints.js';
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

describe('validateConstraints: what each refusal says', () => {
  it.each<[string, string, Record<string, string[]>, string]>([
    ['an undeclared dimension', 'scim', { region: ['eu'] }, 'f.region: API \'scim\' does not support the constraint \'region\' (supported: group, department)'],
    ['a dimension on an API without any', 'users', { group: ['eng'] }, 'f.group: API \'users\' does not support the constraint \'group\' (supported: none)'],
    ['no values', 'scim', { group: [] }, 'f.group: at least one value is required'],
    ['an empty value', 'scim', { group: ['eng', ''] }, 'f.group: values must be non-empty strings'],
    ['a value too long', 'scim', { group: ['x'.repeat(101)] }, 'f.group: values must be at most 100 characters'],
  ])('%s', (_name, api, filters, description) => {
    expect(() => validateConstraints(catalog, api, filters, 'f')).toThrow(expect.objectContaining({ description }));
  });
  it('accepts a value of exactly the longest length', () => {
    expect(MAX_CONSTRAINT_VALUE_LENGTH).toBe(100);
    const value = 'x'.repeat(MAX_CONSTRAINT_VALUE_LENGTH);
    expect(validateConstraints(catalog, 'scim', { group: [value] }, 'f')).toEqual({ group: [value] });
  });
});

describe('checkConstraintsSize (the whole claim, registration time)', () => {
  // A claim of exactly `bytes` bytes of JSON: {"scim":{"group":["xxx..."]}}
  const claimOf = (bytes: number) => {
    const overhead = constraintsClaimBytes({ scim: { group: [''] } });
    return { scim: { group: ['x'.repeat(bytes - overhead)] } };
  };
  it('counts bytes of UTF-8 JSON, not characters', () => {
    expect(constraintsClaimBytes({ a: { b: ['\u00e9'] } })).toBe(JSON.stringify({ a: { b: ['x'] } }).length + 1);
  });
  it('accepts a claim of exactly the bound, refuses one byte more with its size', () => {
    expect(MAX_CONSTRAINTS_CLAIM_BYTES).toBe(3072);
    expect(constraintsClaimBytes(claimOf(3072))).toBe(3072);
    expect(() => checkConstraintsSize(claimOf(3072), 'f')).not.toThrow();
    expect(() => checkConstraintsSize(claimOf(3073), 'f')).toThrow(expect.objectContaining({
      field: 'f',
      description: 'f: the constraints would take 3073 bytes in every token; at most 3072 are allowed',
    }));
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
