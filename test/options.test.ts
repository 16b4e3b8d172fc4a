import { resolveOptions, type AuthServerOptions } from '../src/options.js';
import { demoApis } from './support/fixtures.js';

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
      idTokenAlgorithms: ['RS256'],
      namedUserAccessTokenTtl: 300,
      limits: { tokenRequestBytes: 16384, apiRequestBytes: 65536, formRequestBytes: 4096 },
      rateLimits: {
        failedClientAuth: { perClient: { max: 10, windowSeconds: 60 }, perAddress: { max: 100, windowSeconds: 60 } },
      },
      observability: { health: true, metrics: false },
      proxy: false,
      backchannelLogout: { privateHosts: [] },
    });
    expect(resolveOptions({ ...valid, pathPrefix: '/auth2' }).issuer).toBe('https://auth.example.com/auth2/oauth2');
  });

  it('takes the ID-token algorithms the engine signs with, RS256 among them', () => {
    expect(resolveOptions({ ...valid, idTokenAlgorithms: ['RS256', 'ES256', 'EdDSA', 'PS256'] }).idTokenAlgorithms)
      .toEqual(['RS256', 'ES256', 'EdDSA', 'PS256']);
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
    ['a redis store with both url and cluster', { store: { type: 'redis', url: 'redis://a', cluster: { nodes: ['redis://b'] } } }, /exactly one of url, cluster or sentinel/],
    ['a redis store with no connection', { store: { type: 'redis' } }, /exactly one of url, cluster or sentinel/],
    ['a cluster node that is not a redis URL', { store: { type: 'redis', cluster: { nodes: ['http://b'] } } }, /store\.cluster\.nodes\.0/],
    ['a sentinel without a master name', { store: { type: 'redis', sentinel: { sentinels: [{ host: 'h', port: 26379 }] } } }, /store\.sentinel\.name/],
    ['a sentinel port out of range', { store: { type: 'redis', sentinel: { name: 'm', sentinels: [{ host: 'h', port: 0 }] } } }, /store\.sentinel\.sentinels\.0\.port/],
    ['a database index that is a word', { store: { type: 'redis', url: 'redis://a:6379/abc' } }, /store\.url: the database \(the path after host:port\) must be a non-negative integer/],
    ['a database index with a letter after it (ioredis would take it as 1)', { store: { type: 'redis', url: 'redis://a:6379/1x' } }, /store\.url: the database/],
    ['a negative database index', { store: { type: 'redis', url: 'redis://a:6379/-1' } }, /store\.url: the database/],
    ['a database index with a leading zero', { store: { type: 'redis', url: 'rediss://a/01' } }, /store\.url: the database/],
    ['a database path of two segments', { store: { type: 'redis', url: 'redis://a/1/2' } }, /store\.url: the database/],
    ['a db parameter that is not a number', { store: { type: 'redis', url: 'redis://a:6379?db=x' } }, /store\.url: the db parameter must be a non-negative integer/],
    ['a cluster node with a database that is a word', { store: { type: 'redis', cluster: { nodes: ['redis://b:7000', 'redis://c:7000/abc'] } } }, /store\.cluster\.nodes\.1: the database/],
    ['a command timeout under 50 ms', { store: { type: 'redis', url: 'redis://a', commandTimeoutMs: 1 } }, /store\.commandTimeoutMs/],
    ['an unknown algorithm', { accessTokenAlgorithm: 'HS256' }, /accessTokenAlgorithm/],
    ['ID-token algorithms without RS256', { idTokenAlgorithms: ['ES256', 'EdDSA'] }, /idTokenAlgorithms: must include RS256 \(the ID-token algorithm of every app that names none\)/],
    ['an ID-token algorithm we do not sign with', { idTokenAlgorithms: ['RS256', 'HS256'] }, /idTokenAlgorithms\.1/],
    ['no ID-token algorithm', { idTokenAlgorithms: [] }, /idTokenAlgorithms/],
    ['ID-token algorithms that are a string', { idTokenAlgorithms: 'RS256' }, /idTokenAlgorithms/],
    ['a named-user lifetime under 5 minutes', { namedUserAccessTokenTtl: 299 }, /namedUserAccessTokenTtl/],
    ['a named-user lifetime over 60 minutes', { namedUserAccessTokenTtl: 3601 }, /namedUserAccessTokenTtl/],
    ['a named-user lifetime that is not whole seconds', { namedUserAccessTokenTtl: 1.5 }, /namedUserAccessTokenTtl/],
    ['an API body limit over 1 MiB', { limits: { apiRequestBytes: 2 * 1024 * 1024 } }, /limits\.apiRequestBytes/],
    ['a form limit under 1 KiB', { limits: { formRequestBytes: 100 } }, /limits\.formRequestBytes/],
    ['a rate limit of 0', { rateLimits: { failedClientAuth: { perClient: { max: 0, windowSeconds: 60 } } } }, /rateLimits\.failedClientAuth/],
    ['a rate-limit window of a week', { rateLimits: { failedClientAuth: { perAddress: { max: 5, windowSeconds: 604800 } } } }, /rateLimits\.failedClientAuth/],
    ['observability that is not a boolean', { observability: { metrics: 'yes' } }, /observability\.metrics/],
    ['a tiny body limit', { limits: { tokenRequestBytes: 10 } }, /limits\.tokenRequestBytes/],
    ['an unknown option', { colour: 'blue' }, /colour|Unrecognized/],
    ['an account store without functions', { accounts: { authenticate: 1 } }, /accounts/],
    ['a back-channel private host that is a URL', { backchannelLogout: { privateHosts: ['http://localhost'] } }, /backchannelLogout\.privateHosts\.0: http:\/\/localhost: must be a host name, an IP address or a CIDR range/],
    ['a back-channel private host with a wildcard', { backchannelLogout: { privateHosts: ['*.internal'] } }, /backchannelLogout\.privateHosts\.0/],
    ['a back-channel CIDR with a prefix too long', { backchannelLogout: { privateHosts: ['10.0.0.0/8', '10.0.0.0/33'] } }, /backchannelLogout\.privateHosts\.1: 10\.0\.0\.0\/33: the prefix length must be 0\.\.32/],
    ['an unknown back-channel option', { backchannelLogout: { allowedHosts: ['localhost'] } }, /backchannelLogout/],
    ['a findByUsername that is not a function', { accounts: { authenticate: async () => undefined, findAccount: async () => undefined, findByUsername: 'x' } }, /accounts\.findByUsername/],
  ])('refuses %s, naming the field', (_name, change, field) => {
    expect(() => resolveOptions({ ...valid, ...change } as AuthServerOptions)).toThrow(field);
  });
});

describe('store options', () => {
  it.each<[string, Record<string, unknown>]>([
    ['a single node', { type: 'redis', url: 'rediss://user:pw@redis.example:6380/0', keyPrefix: 'ta:' }],
    ['a cluster', { type: 'redis', cluster: { nodes: ['redis://10.0.0.1:7000', 'redis://10.0.0.2:7000'] }, password: 'pw' }],
    ['a sentinel group', { type: 'redis', sentinel: { sentinels: [{ host: '10.0.0.1', port: 26379 }], name: 'mymaster' }, tls: true }],
  ])('accepts %s', (_name, store) => {
    expect(resolveOptions({ ...valid, store } as AuthServerOptions).store).toEqual(store);
  });

  it('takes host names, addresses and CIDR ranges the operator allows back-channel logout to reach', () => {
    const entries = ['localhost', 'billing.default.svc.cluster.local', '127.0.0.1', '::1', '10.0.0.0/8', 'fd00::/8'];
    expect(resolveOptions({ ...valid, backchannelLogout: { privateHosts: entries } }).backchannelLogout).toEqual({ privateHosts: entries });
  });

  // Whether the server has that many databases is its own call (`databases` in redis.conf).
  it.each(['redis://a', 'redis://a/', 'redis://a:6379/0', 'redis://a:6379/15', 'redis://a:6379/16', 'redis://a:6379/?db=3'])('accepts the database of %s', (url) => {
    expect(resolveOptions({ ...valid, store: { type: 'redis', url } } as AuthServerOptions).store).toEqual({ type: 'redis', url });
  });
});
