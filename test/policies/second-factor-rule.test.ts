import { combineSecondFactorRules, mayCarryManagement, mustHaveSecondFactor, usedSecondFactor } from '../../policies/second-factor-rule.js';
import type { SecondFactorRule } from '../../policies/tenant-policy.js';

type Rule = SecondFactorRule | undefined;

describe('the second-factor rule of a tenant (policies/second-factor-rule.ts)', () => {
  // host, tenant -> what applies: the stricter wins; the host's unset rule is the default, the
  // tenant's unset rule says nothing (a tenant admin asks for more, never for less).
  it.each<[Rule, Rule, SecondFactorRule]>([
    [undefined, undefined, 'required_for_permissions'],
    [undefined, 'optional', 'required_for_permissions'],
    [undefined, 'required_for_permissions', 'required_for_permissions'],
    [undefined, 'required', 'required'],
    ['optional', undefined, 'optional'],
    ['optional', 'optional', 'optional'],
    ['optional', 'required_for_permissions', 'required_for_permissions'],
    ['optional', 'required', 'required'],
    ['required_for_permissions', undefined, 'required_for_permissions'],
    ['required_for_permissions', 'optional', 'required_for_permissions'],
    ['required_for_permissions', 'required', 'required'],
    ['required', undefined, 'required'],
    ['required', 'optional', 'required'],
    ['required', 'required_for_permissions', 'required'],
  ])('secondFactor: host %s, tenant %s -> %s', (host, tenant, expected) => {
    expect(combineSecondFactorRules({ secondFactor: host }, { secondFactor: tenant }).secondFactor).toBe(expected);
  });

  // host, tenant -> allowed: the host's false wins; else the tenant's choice, else the host's.
  it.each<[boolean | undefined, boolean | undefined, boolean]>([
    [undefined, undefined, false],
    [undefined, true, true],
    [undefined, false, false],
    [true, undefined, true],
    [true, true, true],
    [true, false, false],
    [false, undefined, false],
    [false, true, false],
    [false, false, false],
  ])('passkeyOnlySignIn: host %s, tenant %s -> %s', (host, tenant, expected) => {
    expect(combineSecondFactorRules({ passkeyOnlySignIn: host }, { passkeyOnlySignIn: tenant }).passkeyOnlySignIn).toBe(expected);
  });

  // host, tenant -> what applies: required when either says so (the host's required is not undone
  // by the tenant; a tenant's admin may require it for her tenant).
  it.each<['optional' | 'required' | undefined, 'optional' | 'required' | undefined, 'optional' | 'required']>([
    [undefined, undefined, 'optional'],
    [undefined, 'optional', 'optional'],
    [undefined, 'required', 'required'],
    ['optional', undefined, 'optional'],
    ['optional', 'required', 'required'],
    ['required', undefined, 'required'],
    ['required', 'optional', 'required'],
    ['required', 'required', 'required'],
  ])('sso: host %s, tenant %s -> %s', (host, tenant, expected) => {
    expect(combineSecondFactorRules({ sso: host }, { sso: tenant }).sso).toBe(expected);
  });

  const admin = { permissions: ['integration_setup'] };
  const plain = { permissions: ['other'] };
  it.each<[SecondFactorRule, { permissions?: string[] }, boolean]>([
    ['required', admin, true],
    ['required', plain, true],
    ['required', {}, true],
    ['required_for_permissions', admin, true],
    ['required_for_permissions', plain, false],
    ['required_for_permissions', {}, false],
    ['optional', admin, false],
    ['optional', plain, false],
  ])('under %s, %j must have a second factor: %s', (rule, account, expected) => {
    expect(mustHaveSecondFactor(rule, account)).toBe(expected);
  });

  it.each<[unknown, boolean]>([
    [['pwd', 'otp', 'mfa'], true],
    [['hwk', 'mfa'], true],
    [['pwd'], false],
    [['pwd', 'otp'], false],
    [[], false],
    [undefined, false],
    ['mfa', false],
  ])('amr %j used a second factor: %s', (amr, expected) => {
    expect(usedSecondFactor(amr)).toBe(expected);
  });

  it.each<[SecondFactorRule, { permissions?: string[] }, unknown, boolean]>([
    ['required_for_permissions', admin, ['pwd'], false],
    ['required_for_permissions', admin, ['pwd', 'otp', 'mfa'], true],
    ['required_for_permissions', admin, undefined, false],
    ['required', admin, ['pwd'], false],
    ['required', admin, ['pwd', 'otp', 'mfa'], true],
    ['optional', admin, ['pwd'], true],
    ['required_for_permissions', plain, ['pwd'], true],
  ])('under %s, %j signed in with %j may carry the management right: %s', (rule, account, amr, expected) => {
    expect(mayCarryManagement(rule, account, amr)).toBe(expected);
  });
});
