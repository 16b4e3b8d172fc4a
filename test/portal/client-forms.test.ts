import { Form } from '../../src/http/forms.js';
import { clientValues, clientValuesOf, missingClientFields, resourcesOf } from '../../src/portal/client-forms.js';
import { PORTAL_TEXT } from '../../src/portal/text.js';
import type { ApiDefinition } from '../../policies/catalog.js';

/** The client configuration form's values: from the form, from the API's record, into the API's body. */

const demoApis: ApiDefinition[] = [
  { id: 'scim', name: 'User provisioning', scopes: { 'scim.read': 'Read users and groups', 'scim.write': 'Create and update users and groups' }, constraints: ['group', 'department'] },
  { id: 'subscriptions', name: 'Subscriptions', scopes: { 'manage.subscriptions': 'Manage subscriptions' }, constraints: [] },
  { id: 'users', name: 'Users', scopes: { 'user.read': 'Read user profiles' }, constraints: [] },
];
const form = (pairs: Array<[string, string]>) => new Form(pairs, new Set(['scope']));

describe('client configuration form values', () => {
  it('are read from the form as typed, scopes no API has dropped, every constraint field present', () => {
    const values = clientValues(form([
      ['name', 'Payroll sync'], ['category', 'payroll'], ['description', ''],
      ['scope', 'scim.read'], ['scope', 'not.a.scope'], ['scope', 'manage.subscriptions'], ['scope', ''],
      ['constraint.scim.group', 'engineering, sales'],
    ]), demoApis);
    expect(values).toEqual({
      name: 'Payroll sync', category: 'payroll', description: '',
      scopes: ['scim.read', 'manage.subscriptions'],
      constraints: { 'scim\ngroup': 'engineering, sales', 'scim\ndepartment': '' },
    });
  });

  it('become the API\'s resources: scopes per API, constraint values split at commas and lines, only for an API with a scope', () => {
    const values = {
      name: 'n', category: 'c', description: '', scopes: ['scim.read', 'scim.write', 'user.read'],
      constraints: { 'scim\ngroup': ' engineering,sales\nhr , ', 'scim\ndepartment': '  ', 'subscriptions\nplan': 'gold' },
    };
    expect(resourcesOf(values, demoApis)).toEqual({
      scim: { scopes: ['scim.read', 'scim.write'], constraints: { group: ['engineering', 'sales', 'hr'] } },
      users: { scopes: ['user.read'] },
    });
  });

  it('of the API\'s record, to edit it: constraint values comma-separated', () => {
    expect(clientValuesOf({
      client_id: 'c', name: 'Payroll', category: 'payroll',
      resources: { scim: { scopes: ['scim.read'], constraints: { group: ['engineering', 'sales'] } }, users: { scopes: ['user.read'] } },
    })).toEqual({ name: 'Payroll', category: 'payroll', description: '', scopes: ['scim.read', 'user.read'], constraints: { 'scim\ngroup': 'engineering, sales' } });
  });

  it('read back as they were written (record → form → resources)', () => {
    const resources = { scim: { scopes: ['scim.read'], constraints: { group: ['engineering', 'sales'], department: ['hr'] } } };
    const values = clientValuesOf({ client_id: 'c', name: 'n', category: 'c', description: 'd', resources });
    expect(resourcesOf(values, demoApis)).toEqual(resources);
  });

  it('must have a name, a category and a scope, each said at its field (blanks are missing)', () => {
    const errors = missingClientFields({ name: ' ', category: '', description: '', scopes: [], constraints: {} }, PORTAL_TEXT);
    expect([...errors]).toEqual([['client-name', PORTAL_TEXT.required.name], ['client-category', PORTAL_TEXT.required.category], ['apis', PORTAL_TEXT.required.scopes]]);
    expect(missingClientFields({ name: 'n', category: 'c', description: '', scopes: ['scim.read'], constraints: {} }, PORTAL_TEXT).size).toBe(0);
  });
});
