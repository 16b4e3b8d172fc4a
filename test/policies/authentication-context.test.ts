import { ACR_MFA, ACR_PASSWORD, ACR_VALUES, meetsAcrValues, requiredAcr, signInSignals } from '../../policies/authentication-context.js';

describe('how a user signed in (policies/authentication-context.ts)', () => {
  it('lists the two classes, lowest first', () => {
    expect(ACR_VALUES).toEqual(['urn:talent-auth:acr:pwd', 'urn:talent-auth:acr:mfa']);
  });

  it.each([
    [['pwd'], ['pwd'], ACR_PASSWORD],
    [['pwd', 'pwd'], ['pwd'], ACR_PASSWORD],
    [['hwk'], ['hwk'], ACR_PASSWORD],
    [['pwd', 'otp'], ['pwd', 'otp', 'mfa'], ACR_MFA],
    [['pwd', 'hwk'], ['pwd', 'hwk', 'mfa'], ACR_MFA],
    [['pwd', 'swk'], ['pwd', 'swk', 'mfa'], ACR_MFA],
    [['hwk', 'mfa'], ['hwk', 'mfa'], ACR_MFA],
    [['pwd', 'otp', 'mfa'], ['pwd', 'otp', 'mfa'], ACR_MFA],
    // Only pwd, otp, hwk and swk count as factors: a provider's sign-in and a password are not two.
    [['fed', 'pwd'], ['fed', 'pwd'], ACR_PASSWORD],
    [['fed', 'mfa'], ['fed', 'mfa'], ACR_MFA],
  ] as const)('methods %j: amr %j, acr %s', (methods, amr, acr) => {
    expect(signInSignals(methods)).toEqual({ amr, acr });
  });

  it('a sign-in without a method is a mistake of its caller', () => {
    expect(() => signInSignals([])).toThrow(new TypeError('a sign-in uses at least one method'));
  });

  it.each([
    [undefined, undefined],
    ['', undefined],
    [42, undefined],
    ['urn:example:gold phr', undefined],
    [ACR_PASSWORD, ACR_PASSWORD],
    [ACR_MFA, ACR_MFA],
    [`${ACR_MFA} ${ACR_PASSWORD}`, ACR_PASSWORD],
    [`urn:example:gold ${ACR_MFA}`, ACR_MFA],
  ])('acr_values %p need at least %p', (acrValues, required) => {
    expect(requiredAcr(acrValues)).toBe(required);
  });

  it.each([
    [ACR_PASSWORD, undefined, true],
    [ACR_PASSWORD, 'urn:example:gold', true],
    [ACR_PASSWORD, ACR_PASSWORD, true],
    [ACR_PASSWORD, ACR_MFA, false],
    [ACR_MFA, ACR_MFA, true],
    [ACR_MFA, ACR_PASSWORD, true],
    [undefined, ACR_PASSWORD, false],
    [undefined, undefined, true],
    ['urn:example:gold', ACR_MFA, false],
  ])('a sign-in of %p meets acr_values %p: %p', (acr, acrValues, meets) => {
    expect(meetsAcrValues(acr, acrValues)).toBe(meets);
  });
});
