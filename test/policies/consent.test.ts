import { appRefusal, appServesTenant, checkAppForUser } from '../../policies/consent.js';
import { AccessDenied, InvalidGrant } from '../../policies/errors.js';

describe('the consent rule (policies/consent.ts)', () => {
  it.each([
    ['an operator app serves every tenant', {}, 'acme', true],
    ["a tenant's app serves its tenant", { tenant: 'acme' }, 'acme', true],
    ["a tenant's app does not serve another tenant", { tenant: 'acme' }, 'globex', false],
    ["a tenant's app the operator opened serves every tenant", { tenant: 'acme', openToAllTenants: true }, 'globex', true],
    ['not opened is not opened', { tenant: 'acme', openToAllTenants: false }, 'globex', false],
  ])('%s', (_name, owner, tenant, expected) => {
    expect(appServesTenant(owner, tenant)).toBe(expected);
  });

  it.each([
    ['no policy, operator app', { clientId: 'a' }, 'acme', {}, undefined],
    ['policy lists the app', { clientId: 'a' }, 'acme', { allowedApps: ['a'] }, undefined],
    ['policy does not list the app', { clientId: 'a' }, 'acme', { allowedApps: ['b'] }, 'not-allowed-by-tenant'],
    ['policy with no apps', { clientId: 'a' }, 'acme', { allowedApps: [] }, 'not-allowed-by-tenant'],
    ["another tenant's app", { clientId: 'a', tenant: 'globex' }, 'acme', {}, 'another-tenants-app'],
    ["another tenant's app, listed by the policy", { clientId: 'a', tenant: 'globex' }, 'acme', { allowedApps: ['a'] }, 'another-tenants-app'],
    ['policy first: listed nowhere and foreign', { clientId: 'a', tenant: 'globex' }, 'acme', { allowedApps: [] }, 'not-allowed-by-tenant'],
  ] as const)('%s → %s', (_name, app, tenant, policy, expected) => {
    expect(appRefusal(app, tenant, policy)).toBe(expected);
  });

  it('is access_denied at the authorization request and invalid_grant at token time, passes otherwise', () => {
    const foreign = { clientId: 'a', tenant: 'globex' };
    expect(() => checkAppForUser(foreign, 'acme', {}, 'authorize')).toThrow(AccessDenied);
    expect(() => checkAppForUser(foreign, 'acme', {}, 'authorize')).toThrow('this application belongs to another organization');
    expect(() => checkAppForUser({ clientId: 'a' }, 'acme', { allowedApps: [] }, 'authorize')).toThrow('your organization does not allow this application');
    expect(() => checkAppForUser(foreign, 'acme', {}, 'token')).toThrow(InvalidGrant);
    expect(() => checkAppForUser(foreign, 'acme', {}, 'token')).toThrow("the user's organization does not allow this application");
    expect(() => checkAppForUser(foreign, 'globex', {}, 'token')).not.toThrow();
    expect(() => checkAppForUser(foreign, 'globex', {}, 'authorize')).not.toThrow();
  });
});
