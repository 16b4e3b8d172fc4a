import type { AuthServerOptions } from '../src/index.js';

export const DEMO_TENANT = 'demo';

/** The APIs the spec names: user provisioning (SCIM), subscriptions, users. */
export const demoApis: AuthServerOptions['apis'] = [
  {
    id: 'scim',
    name: 'User provisioning',
    scopes: { 'scim.read': 'Read users and groups', 'scim.write': 'Create and update users and groups' },
    constraints: ['group', 'department'],
  },
  { id: 'subscriptions', name: 'Subscriptions', scopes: { 'manage.subscriptions': 'Manage subscriptions' } },
  { id: 'users', name: 'Users', scopes: { 'user.read': 'Read user profiles' } },
];

export const demoClient = {
  tenant: DEMO_TENANT,
  name: 'Demo integration',
  category: 'demo',
  description: 'Seeded by the example server',
  resources: {
    scim: { scopes: ['scim.read'], constraints: { group: ['engineering'] } },
    subscriptions: { scopes: ['manage.subscriptions'] },
  },
};
