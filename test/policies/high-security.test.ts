import { ValidationError, UnauthorizedClient } from '../../policies/errors.js';
import {
  assertionAudienceAllowed,
  authorizationCodeSeconds,
  checkProfile,
  effectiveProfile,
  highSecurityProblems,
  PROFILE_METADATA,
  refuseNonConforming,
  tenantProfile,
  type ProfiledClient,
  type SecurityProfile,
} from '../../policies/high-security.js';

/** A client configuration that conforms to the high-security profile. */
const MACHINE: ProfiledClient = { kind: 'client', tokenEndpointAuthMethod: 'private_key_jwt', dpop: 'required' };
/** An app that conforms to the high-security profile. */
const APP: ProfiledClient = {
  kind: 'app', clientType: 'confidential', tokenEndpointAuthMethod: 'private_key_jwt', dpop: 'required',
  requirePushedAuthorizationRequests: true, pkceEnabled: true, redirectUris: ['https://app.example.com/cb'],
};
const ISSUER = 'https://auth.example.com';

/**
 * THE HIGH-SECURITY PROFILE's rule (policies/high-security.ts): one row per requirement, each with
 * a client that conforms (no problem) and one that breaks only that requirement (that problem, at
 * its field); then who is under the profile, and what holds at run time.
 */
describe('the high-security profile (policies/high-security.ts)', () => {
  it.each<[string, ProfiledClient, string | undefined]>([
    ['client configuration: conforming', MACHINE, undefined],
    ['client configuration: Basic', { ...MACHINE, tokenEndpointAuthMethod: 'client_secret_basic' }, 'tokenEndpointAuthMethod'],
    ['client configuration: no method (a record older than the field is Basic)', { ...MACHINE, tokenEndpointAuthMethod: undefined }, 'tokenEndpointAuthMethod'],
    ['client configuration: dpop optional', { ...MACHINE, dpop: 'optional' }, 'dpop'],
    ['client configuration: dpop absent', { ...MACHINE, dpop: undefined }, 'dpop'],
    ['app: conforming', APP, undefined],
    ['app: public', { ...APP, clientType: 'public', tokenEndpointAuthMethod: undefined }, 'clientType'],
    ['app: Basic', { ...APP, tokenEndpointAuthMethod: 'client_secret_basic' }, 'tokenEndpointAuthMethod'],
    ['app: dpop optional', { ...APP, dpop: 'optional' }, 'dpop'],
    ['app: PAR not required', { ...APP, requirePushedAuthorizationRequests: false }, 'requirePushedAuthorizationRequests'],
    ['app: PKCE off', { ...APP, pkceEnabled: false }, 'pkceEnabled'],
    ['app: a loopback http redirect URI', { ...APP, redirectUris: ['https://app.example.com/cb', 'http://127.0.0.1:8080/cb'] }, 'redirectUris.1'],
    ['app: a private-use scheme redirect URI', { ...APP, redirectUris: ['com.example.app:/cb'] }, 'redirectUris.0'],
    ['app: https only further in the URI', { ...APP, redirectUris: ['com.example.app:/cb?next=https://app.example.com/'] }, 'redirectUris.0'],
    ['app: https in upper case', { ...APP, redirectUris: ['HTTPS://app.example.com/cb'] }, undefined],
    ['app: no redirect URIs stated (a change that leaves them as they are)', { ...APP, redirectUris: undefined }, undefined],
  ])('%s', (_name, client, field) => {
    const problems = highSecurityProblems(client);
    if (field === undefined) expect(problems).toEqual([]);
    else expect(problems).toEqual([{ field, message: expect.stringContaining('the high-security profile requires') }]);
  });

  it('a public app is refused for what it is, not also for its (absent) method', () => {
    expect(highSecurityProblems({ ...APP, clientType: 'public', tokenEndpointAuthMethod: undefined }).map((problem) => problem.field)).toEqual(['clientType']);
  });

  it('lists every problem of a standard app, in the order of the requirements', () => {
    const standard: ProfiledClient = { kind: 'app', clientType: 'confidential', pkceEnabled: false, redirectUris: ['http://localhost:3000/cb'] };
    expect(highSecurityProblems(standard).map((problem) => problem.field)).toEqual([
      'tokenEndpointAuthMethod', 'dpop', 'requirePushedAuthorizationRequests', 'pkceEnabled', 'redirectUris.0',
    ]);
  });

  // own, tenant -> effective: high-security when either is.
  it.each<[SecurityProfile | undefined, SecurityProfile | undefined, SecurityProfile]>([
    [undefined, undefined, 'standard'],
    ['standard', 'standard', 'standard'],
    ['high-security', undefined, 'high-security'],
    ['high-security', 'standard', 'high-security'],
    [undefined, 'high-security', 'high-security'],
    ['standard', 'high-security', 'high-security'],
  ])('effective profile: own %s, tenant %s -> %s', (own, tenant, expected) => {
    expect(effectiveProfile(own, tenant)).toBe(expected);
  });

  // host, tenant's own settings -> the tenant's profile: high-security when either is.
  it.each<[SecurityProfile | undefined, SecurityProfile | undefined, SecurityProfile]>([
    [undefined, undefined, 'standard'],
    ['high-security', undefined, 'high-security'],
    ['high-security', 'standard', 'high-security'],
    [undefined, 'high-security', 'high-security'],
    ['standard', 'high-security', 'high-security'],
    ['standard', 'standard', 'standard'],
  ])("tenant's profile: host %s, tenant's settings %s -> %s", (host, tenant, expected) => {
    expect(tenantProfile({ profile: host }, { profile: tenant })).toBe(expected);
  });

  it('checkProfile: a standard client may have any settings; under the profile the first problem is a ValidationError at its field', () => {
    const basic: ProfiledClient = { kind: 'client', tokenEndpointAuthMethod: 'client_secret_basic' };
    expect(() => checkProfile(basic, 'standard', 'standard')).not.toThrow();
    expect(() => checkProfile(basic, undefined, undefined)).not.toThrow();
    expect(() => checkProfile(MACHINE, 'high-security')).not.toThrow();
    let error: unknown;
    try {
      checkProfile(basic, 'high-security');
    } catch (thrown) {
      error = thrown;
    }
    expect(error).toBeInstanceOf(ValidationError);
    expect(error).toMatchObject({ field: 'tokenEndpointAuthMethod', description: 'tokenEndpointAuthMethod: the high-security profile requires private_key_jwt' });
  });

  it("checkProfile: the tenant's profile applies to a standard client, and the error says it is the tenant's", () => {
    expect(() => checkProfile({ ...MACHINE, dpop: 'optional' }, 'standard', 'high-security'))
      .toThrow("dpop: the high-security profile requires dpop: 'required' (sender-constrained tokens) (the client's tenant selected it)");
  });

  it('authorization codes live 60 s under the profile, 5 minutes otherwise', () => {
    // The engine's client metadata carries the profile under this name (registered with the engine).
    expect(PROFILE_METADATA).toBe('security_profile');
    expect(authorizationCodeSeconds({ [PROFILE_METADATA]: 'high-security' })).toBe(60);
    expect(authorizationCodeSeconds({})).toBe(300);
    expect(authorizationCodeSeconds(undefined)).toBe(300);
  });

  it('run time: a client under the profile without private_key_jwt is refused (unauthorized_client); others pass', () => {
    const under = { [PROFILE_METADATA]: 'high-security' };
    expect(() => refuseNonConforming({ ...under, clientAuthMethod: 'private_key_jwt' })).not.toThrow();
    expect(() => refuseNonConforming({ clientAuthMethod: 'client_secret_basic' })).not.toThrow();
    expect(() => refuseNonConforming(undefined)).not.toThrow();
    expect(() => refuseNonConforming({ ...under, clientAuthMethod: 'client_secret_basic' })).toThrow(UnauthorizedClient);
    expect(() => refuseNonConforming({ ...under, clientAuthMethod: 'none' }))
      .toThrow('the high-security profile requires private_key_jwt; this client authenticates with none');
    expect(() => refuseNonConforming({ ...under } as { clientAuthMethod?: string }))
      .toThrow('the high-security profile requires private_key_jwt; this client authenticates with none');
  });

  it("run time: a client assertion's audience under the profile is the issuer identifier alone, as a string", () => {
    const under = { [PROFILE_METADATA]: 'high-security' };
    expect(assertionAudienceAllowed(under, ISSUER, ISSUER)).toBe(true);
    expect(assertionAudienceAllowed(under, `${ISSUER}/token`, ISSUER)).toBe(false);
    expect(assertionAudienceAllowed(under, [ISSUER], ISSUER)).toBe(false);
    expect(assertionAudienceAllowed({}, `${ISSUER}/token`, ISSUER)).toBe(true);
  });
});
