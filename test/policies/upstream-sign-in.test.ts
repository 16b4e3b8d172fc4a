import { afterFirstFactor, isMethodList, upstreamMethods } from '../../policies/upstream-sign-in.js';

/** How a sign-in through a tenant's identity provider counts (policies/upstream-sign-in.ts). */
describe('a sign-in through an identity provider (policies/upstream-sign-in.ts)', () => {
  const MFA_ACR = ['http://schemas.openid.net/pape/policies/2007/06/multi-factor'];

  it.each<[string, { amr?: unknown; acr?: unknown }, string[]]>([
    ['nothing said', {}, ['fed']],
    ['its registered methods, once each, in order', { amr: ['pwd', 'otp', 'pwd'] }, ['fed', 'pwd', 'otp']],
    ['anything unregistered dropped', { amr: ['pwd', 'urn:custom', 7, null, 'PWD'] }, ['fed', 'pwd']],
    ['an amr that is not a list', { amr: 'pwd' }, ['fed']],
    ['mfa said by the provider', { amr: ['pwd', 'mfa'] }, ['fed', 'pwd', 'mfa']],
    ['a multi-factor acr of the connection', { amr: ['pwd'], acr: MFA_ACR[0] }, ['fed', 'pwd', 'mfa']],
    ['both: mfa once', { amr: ['mfa'], acr: MFA_ACR[0] }, ['fed', 'mfa']],
    ['another acr', { amr: ['pwd'], acr: 'urn:weak' }, ['fed', 'pwd']],
    ['an acr that is not text', { acr: ['x'] }, ['fed']],
  ])('%s', (_name, claims, methods) => {
    expect(upstreamMethods(claims, MFA_ACR)).toEqual(methods);
  });

  it.each<[string, string[] | undefined, string[], string[]]>([
    ['the password first: as our steps say', undefined, ['pwd', 'otp', 'mfa'], ['pwd', 'otp', 'mfa']],
    ['a provider first, then our factor: its methods, ours, and mfa', ['fed', 'pwd'], ['pwd', 'otp'], ['fed', 'pwd', 'otp', 'mfa']],
    ['a provider first, our password only (no factor of ours): no mfa', ['fed'], ['pwd'], ['fed']],
    ['a provider first, our factor with mfa said: mfa once', ['fed'], ['pwd', 'hwk', 'mfa'], ['fed', 'hwk', 'mfa']],
    ['a provider that said mfa, then nothing of ours', ['fed', 'mfa'], ['pwd'], ['fed', 'mfa']],
    ['a provider first, our steps said only mfa: no factor of ours', ['fed'], ['mfa'], ['fed', 'mfa']],
  ])('%s', (_name, first, methods, expected) => {
    expect(afterFirstFactor(first as never, methods as never)).toEqual(expected);
  });

  it('after a provider, the list it returns is a new one (the caller may change it)', () => {
    const methods = ['pwd', 'otp'] as const;
    const combined = afterFirstFactor(undefined, [...methods]);
    expect(combined).toEqual(['pwd', 'otp']);
    combined.push('mfa');
    expect(methods).toEqual(['pwd', 'otp']);
  });

  it.each<[unknown, boolean]>([
    [['fed'], true],
    [['pwd', 'otp', 'mfa'], true],
    [['fed', 'face', 'fpt', 'geo', 'hwk', 'iris', 'kba', 'mca', 'mfa', 'otp', 'pin', 'pwd', 'rba', 'retina', 'sc', 'sms', 'swk', 'tel', 'user', 'vbm', 'wia'], true],
    [['fed', 'face', 'fpt', 'geo', 'hwk', 'iris', 'kba', 'mca', 'mfa', 'otp', 'pin', 'pwd', 'rba', 'retina', 'sc', 'sms', 'swk', 'tel', 'user', 'vbm', 'wia', 'pwd'], false],
    [[], false],
    [['urn:custom'], false],
    [['pwd', 7], false],
    ['pwd', false],
    [undefined, false],
  ])('%j is a list of methods: %j', (value, expected) => {
    expect(isMethodList(value)).toBe(expected);
  });
});
