import { constraintsFor, filterByConstraints, passesConstraints, type AccessTokenContext } from '../../src/index.js';

const auth = (constraints: AccessTokenContext['constraints']): AccessTokenContext => ({
  sub: 'c', clientId: 'c', tenant: 't', scopes: new Set(['scim.read']), constraints, isNamedUser: false, amr: [], acr: undefined, authTime: undefined, claims: {},
});

const users = [
  { id: 1, group: 'eng', department: 'rnd' },
  { id: 2, group: 'eng', department: 'ops' },
  { id: 3, group: 'sales', department: 'ops' },
  { id: 4, group: ['sales', 'eng'], department: 'rnd' },
  { id: 5, department: 'rnd' },
];

describe('resource-server kit: constraints', () => {
  it('passes everything when the token carries no filter for the API', () => {
    expect(filterByConstraints(auth({}), 'scim', users)).toHaveLength(5);
    expect(filterByConstraints(auth({ subscriptions: { region: ['eu'] } }), 'scim', users)).toHaveLength(5);
    expect(constraintsFor(auth({ scim: {} }), 'scim')).toBeUndefined();
  });

  it('keeps a record only when every constrained dimension holds an allowed value', () => {
    const ids = (filters: Record<string, string[]>) => filterByConstraints(auth({ scim: filters }), 'scim', users).map((user) => user.id);
    expect(ids({ group: ['eng'] })).toEqual([1, 2, 4]);
    expect(ids({ group: ['eng'], department: ['rnd'] })).toEqual([1, 4]);
    expect(ids({ department: ['ops'] })).toEqual([2, 3]);
    expect(ids({ group: ['nobody'] })).toEqual([]);
  });

  it('fails a record that lacks a constrained dimension, and reads values through valueOf', () => {
    expect(passesConstraints({ group: ['eng'] }, () => undefined)).toBe(false);
    const records = [{ attrs: { team: 'eng' } }, { attrs: { team: 'x' } }];
    expect(filterByConstraints(auth({ scim: { group: ['eng'] } }), 'scim', records, (record) => record.attrs.team)).toEqual([records[0]]);
  });
});
