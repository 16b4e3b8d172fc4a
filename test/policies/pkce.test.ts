import { pkceRequired, s256Challenge } from '../../policies/pkce.js';

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
