import { resolveOptions, type AuthServerOptions } from '../../src/options.js';
import { demoApis } from '../support/fixtures.js';

const valid: AuthServerOptions = { baseUrl: 'https://auth.example.com/', apis: demoApis };

describe('createAuthServer options', () => {
  it('applies the documented defaults', () => {
    const options = resolveOptions(valid);
    expect(options).toMatchObject({
      baseUrl: 'https://auth.example.com',
      pathPrefix: '',
      store: { type: 'memory' },
      audience: 'https://auth.example.com/api',
      issuer: 'https://auth.example.com/oauth2',
      accessTokenAlgorithm: 'ES256',
      limits: { tokenRequestBytes: 16384 },
      proxy: false,
    });
    expect(resolveOptions({ ...valid, pathPrefix: '/auth2' }).issuer).toBe('https://auth.example.com/auth2/oauth2');
  });

  it.each<[string, Record<string, unknown>, RegExp]>([
    ['a relative baseUrl', { baseUrl: '/x' }, /baseUrl/],
    ['a baseUrl with a query', { baseUrl: 'https://a.example/?x=1' }, /baseUrl/],
    ['a pathPrefix without a leading slash', { pathPrefix: 'auth2' }, /pathPrefix/],
    ['a pathPrefix with a trailing slash', { pathPrefix: '/auth2/' }, /pathPrefix/],
    ['no APIs', { apis: [] }, /apis/],
    ['an API without scopes', { apis: [{ id: 'a', name: 'A', scopes: {} }] }, /apis\.0\.scopes/],
    ['a scope in two APIs', { apis: [{ id: 'a', name: 'A', scopes: { x: '' } }, { id: 'b', name: 'B', scopes: { x: '' } }] }, /scope "x"/],
    ['a duplicate API id', { apis: [{ id: 'a', name: 'A', scopes: { x: '' } }, { id: 'a', name: 'B', scopes: { y: '' } }] }, /duplicate API id/],
    ['a scope with a space', { apis: [{ id: 'a', name: 'A', scopes: { 'x y': '' } }] }, /apis\.0\.scopes/],
    ['an unknown store', { store: { type: 'postgres' } }, /store/],
    ['a redis store without a redis URL', { store: { type: 'redis', url: 'http://x' } }, /store\.url/],
    ['an unknown algorithm', { accessTokenAlgorithm: 'HS256' }, /accessTokenAlgorithm/],
    ['a tiny body limit', { limits: { tokenRequestBytes: 10 } }, /limits\.tokenRequestBytes/],
    ['an unknown option', { colour: 'blue' }, /colour|Unrecognized/],
    ['an account store without functions', { accounts: { authenticate: 1 } }, /accounts/],
  ])('refuses %s, naming the field', (_name, change, field) => {
    expect(() => resolveOptions({ ...valid, ...change } as AuthServerOptions)).toThrow(field);
  });
});
