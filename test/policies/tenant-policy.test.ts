import { narrowScopes, tenantPolicy } from '../../policies/tenant-policy.js';

describe('tenant policy', () => {
  it.each([300, 900, 3600])('accepts a named-user lifetime of %i s (5..60 minutes)', async (accessTokenTtl) => {
    await expect(tenantPolicy(() => ({ accessTokenTtl }), 'acme')).resolves.toEqual({ accessTokenTtl });
  });

  it.each([299, 3601, 1.5, 0])('refuses a named-user lifetime of %d s, naming the field', async (accessTokenTtl) => {
    await expect(tenantPolicy(() => ({ accessTokenTtl }), 'acme')).rejects.toThrow(/tenantPolicy\("acme"\).*accessTokenTtl/);
  });

  it.each(['optional', 'required'] as const)('accepts sso %s', async (sso) => {
    await expect(tenantPolicy(() => ({ sso }), 'acme')).resolves.toEqual({ sso });
  });

  it.each(['on', true, 'REQUIRED'])('refuses sso %j, naming the field', async (sso) => {
    await expect(tenantPolicy(() => ({ sso }) as never, 'acme')).rejects.toThrow(/tenantPolicy\("acme"\).*sso/);
  });

  it('refuses unknown fields rather than ignoring them', async () => {
    await expect(tenantPolicy(() => ({ accessTokenTtl: 900, maxTtl: 1 }) as never, 'acme')).rejects.toThrow(/invalid policy/);
    // The path of what is wrong, to the element.
    await expect(tenantPolicy(() => ({ allowedApps: ['a', 7] }) as never, 'acme')).rejects.toThrow(/^tenantPolicy\("acme"\) returned an invalid policy: allowedApps\.1: /);
  });

  it('narrows nothing without a policy, or for a caller without a tenant', async () => {
    expect(await tenantPolicy(undefined, 'acme')).toEqual({});
    expect(await tenantPolicy(() => ({ allowedApps: [] }), undefined)).toEqual({});
    expect(await tenantPolicy(async () => undefined, 'acme')).toEqual({});
  });

  it('narrows scopes in their order', () => {
    expect(narrowScopes(['a', 'b', 'c'], { allowedScopes: ['c', 'a'] })).toEqual(['a', 'c']);
    expect(narrowScopes(['a'], {})).toEqual(['a']);
  });
});
