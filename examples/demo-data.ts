import type { AuthServerOptions } from '../src/index.js';

export const DEMO_TENANT = 'demo';

/** The demo's APIs: user provisioning (SCIM), subscriptions, users. */
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

/** Demo users of the demo tenant (their passwords are printed at start: demo only). */
export const demoUsers = [
  {
    sub: 'ada',
    password: 'ada-demo-password',
    tenant: DEMO_TENANT,
    claims: { name: 'Ada Admin', email: 'ada@demo.example' },
    permissions: ['integration_setup'],
  },
  {
    sub: 'ben',
    password: 'ben-demo-password',
    tenant: DEMO_TENANT,
    claims: { name: 'Ben Reader', email: 'ben@demo.example' },
    scopes: ['scim.read', 'user.read'],
  },
];

export const demoApps = {
  public: { name: 'Demo SPA', description: 'A single-page app: public client, PKCE, no refresh token' },
  confidential: { name: 'Demo portal', description: 'A server-side web app: confidential client, PKCE, refresh tokens' },
};
