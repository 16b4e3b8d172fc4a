import { checkCodeChallenge, pkceAtRegistration, pkceRequired, s256Challenge } from '../../policies/pkce.js';

describe('PKCE policy', () => {
  it('computes the RFC 7636 Appendix B challenge', () => {
    expect(s256Challenge('dBjftJeZ4CVP-mB92K27uhbUJU1p1r_wW1gFWFOEjXk')).toBe('E9Melhoa2OwvFrEMTJguCHaoeK1t8URWbuGJSstw-cM');
  });

  it('is required for public apps, whatever their flag says', () => {
    expect(pkceRequired({ clientAuthMethod: 'none' })).toBe(true);
    expect(pkceRequired({ clientAuthMethod: 'none', pkce_enabled: false })).toBe(true);
  });

  it('is required for confidential apps unless their registration turned it off', () => {
    expect(pkceRequired({ clientAuthMethod: 'client_secret_basic', pkce_enabled: true })).toBe(true);
    expect(pkceRequired({ clientAuthMethod: 'client_secret_basic' })).toBe(true);
    expect(pkceRequired({ clientAuthMethod: 'client_secret_basic', pkce_enabled: false })).toBe(false);
  });
});

describe('PKCE at registration (pkceAtRegistration)', () => {
  const https = ['https://app.example.com/cb'];
  const mixed = ['https://app.example.com/cb', 'http://127.0.0.1:8080/cb'];
  it.each<[string, 'public' | 'confidential', boolean | undefined, readonly string[], boolean | string]>([
    ['public, not said', 'public', undefined, mixed, true],
    ['public, asked on', 'public', true, mixed, true],
    ['public, asked off', 'public', false, https, 'pkceEnabled: PKCE is always on for public apps'],
    ['confidential, not said', 'confidential', undefined, mixed, true],
    ['confidential, asked on', 'confidential', true, mixed, true],
    ['confidential, off with https redirect URIs only', 'confidential', false, https, false],
    ['confidential, off with a loopback http redirect URI', 'confidential', false, mixed, 'pkceEnabled: PKCE may be turned off only when every redirect URI is https'],
    ['confidential, off with a deep link', 'confidential', false, ['com.example.app://cb'], 'pkceEnabled: PKCE may be turned off only when every redirect URI is https'],
  ])('%s', (_name, type, requested, uris, expected) => {
    if (typeof expected === 'boolean') expect(pkceAtRegistration(type, requested, uris)).toBe(expected);
    else expect(() => pkceAtRegistration(type, requested, uris)).toThrow(expect.objectContaining({ field: 'pkceEnabled', description: expected }));
  });
});

describe('the code challenge of an authorization request (checkCodeChallenge)', () => {
  const good = s256Challenge('dBjftJeZ4CVP-mB92K27uhbUJU1p1r_wW1gFWFOEjXk');
  it.each<[string, unknown, boolean]>([
    ['none sent', undefined, true],
    ['an S256 challenge', good, true],
    ['44 characters', `${good}A`, false],
    ['42 characters', good.slice(1), false],
    ['padded', `${good}=`, false],
    ['a character outside base64url', `${good.slice(1)}+`, false],
    ['a number', 43, false],
    ['empty', '', false],
  ])('%s', (_name, challenge, accepted) => {
    if (accepted) expect(() => checkCodeChallenge(challenge)).not.toThrow();
    else expect(() => checkCodeChallenge(challenge)).toThrow(expect.objectContaining({ error: 'invalid_request', description: 'code_challenge must be the S256 challenge: 43 base64url characters (RFC 7636 section 4.2)' }));
  });
});
