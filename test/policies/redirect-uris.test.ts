import { allHttps, checkRedirectUri, redirectUriMatches, validateRedirectUris } from '../../policies/redirect-uris.js';
import { ValidationError } from '../../policies/errors.js';

const accepted: Array<[string, 'https' | 'loopback' | 'deep-link']> = [
  ['https://app.example.com/callback', 'https'],
  ['https://app.example.com', 'https'],
  ['https://app.example.com/', 'https'],
  ['https://app.example.com:8443/cb', 'https'],
  ['https://app.example.com:1/cb', 'https'],
  ['https://app.example.com:65535/cb', 'https'],
  ['https://app.example.com/cb?tenant=acme', 'https'],
  ['https://sub.domain.example.co.uk/a/b/c', 'https'],
  ['HTTPS://app.example.com/cb', 'https'],
  ['https://localhost/cb', 'https'],
  ['https://[2001:db8::1]/cb', 'https'],
  ['https://10.0.0.5/cb', 'https'],
  ['http://localhost/cb', 'loopback'],
  ['http://localhost:3000/cb', 'loopback'],
  ['http://localhost:65535/cb', 'loopback'],
  ['http://127.0.0.1/cb', 'loopback'],
  ['http://127.0.0.1:8080/callback', 'loopback'],
  ['http://127.0.0.1:1', 'loopback'],
  ['http://LOCALHOST:8080/cb', 'loopback'],
  ['com.example.app://callback', 'deep-link'],
  ['myapp://oauth/callback', 'deep-link'],
  ['my-app+v2.beta://cb', 'deep-link'],
  ['talent://auth?x=1', 'deep-link'],
  ['com.googleusercontent.apps.123456://oauth2redirect', 'deep-link'],
  ['msauth.com.example.app://auth', 'deep-link'],
  ['exp+myapp://expo-development-client', 'deep-link'],
  ['https://[::1]:8443/cb', 'https'],
  [`https://app.example.com/${'a'.repeat(2000 - 'https://app.example.com/'.length)}`, 'https'],
];

const refused: Array<[string, RegExp]> = [
  ['http://app.example.com/cb', /plain http/],
  ['http://example.com', /plain http/],
  ['http://[::1]/cb', /plain http/],
  ['http://127.0.0.2/cb', /plain http/],
  ['http://localhost.evil.com/cb', /plain http/],
  ['http://127.1/cb', /plain http/],
  ['http://0x7f.0.0.1/cb', /plain http/],
  ['http://2130706433/cb', /plain http/],
  ['https://user:pass@app.example.com/cb', /user information/],
  ['https://user@app.example.com/cb', /user information/],
  ['http://user@localhost/cb', /user information/],
  ['myapp://user@cb', /user information/],
  ['myapp://a<b/cb', /not a valid URI/],
  ['myapp://[zz]/cb', /not a valid URI/],
  ['https://app.example.com:0/cb', /between 1 and 65535/],
  ['http://localhost:0/cb', /between 1 and 65535/],
  ['http://127.0.0.1:65536/cb', /between 1 and 65535/],
  ['https://app.example.com:99999/cb', /between 1 and 65535/],
  ['https://app.example.com:/cb', /empty port/],
  ['https://app.example.com:80a/cb', /must be a number/],
  ['https://app.example.com:a80/cb', /must be a number/],
  ['1myapp://cb', /must start with a scheme/],
  ['-myapp://cb', /must start with a scheme/],
  ['vbscript://x', /vbscript: scheme is not allowed/],
  ['https://app.1/cb', /^is not a valid URI$/],
  ['myapp:callback', /scheme:\/\//],
  ['myapp:/callback', /scheme:\/\//],
  ['urn:ietf:wg:oauth:2.0:oob', /scheme:\/\//],
  ['file:///etc/passwd', /file: scheme/],
  ['FILE:///etc/passwd', /file: scheme/],
  ['javascript://alert(1)', /javascript: scheme/],
  ['JavaScript:alert(1)', /javascript: scheme/],
  ['data:text/html,<script>alert(1)</script>', /data: scheme/],
  ['Data://x', /data: scheme/],
  ['blob:https://app.example.com/uuid', /blob: scheme/],
  ['BLOB://x', /blob: scheme/],
  // Network and browser-internal schemes are not an app's deep link.
  ['ws://evil.example/cb', /ws: scheme is a network or browser scheme/],
  ['wss://evil.example/cb', /wss: scheme is a network or browser scheme/],
  ['WS://evil.example/cb', /ws: scheme is a network or browser scheme/],
  ['ftp://evil.example/cb', /ftp: scheme is a network or browser scheme/],
  ['intent://cb#Intent;scheme=x;end', /intent: scheme is a network or browser scheme/],
  ['intent://callback/', /intent: scheme is a network or browser scheme/],
  ['chrome-extension://abcdefghijklmnop/cb', /chrome-extension: scheme/],
  ['moz-extension://1234-5678/cb', /moz-extension: scheme/],
  ['about://blank', /about: scheme/],
  ['view-source://https://app.example.com', /view-source: scheme/],
  ['ssh://evil.example/cb', /ssh: scheme/],
  ['mailto://someone@evil.example', /mailto: scheme/],
  ['tel://+15555550123', /tel: scheme/],
  ['sms://+15555550123', /sms: scheme/],
  ['ldap://evil.example/cb', /ldap: scheme/],
  ['chrome://settings', /chrome: scheme/],
  ['https://app.example.com/cb#frag', /fragment/],
  ['https://app.example.com/cb#', /fragment/],
  ['myapp://cb#x', /fragment/],
  ['https://*.example.com/cb', /wildcards/],
  ['https://app.example.com/cb*', /wildcards/],
  ['https://app.example.com/a/../cb', /path segments/],
  ['https://app.example.com/a/%2e%2e/cb', /path segments/],
  ['https://app.example.com/./cb', /path segments/],
  ['https://app .example.com/cb', /whitespace/],
  [' https://app.example.com/cb', /whitespace/],
  ['https://app.example.com/cb\n', /whitespace/],
  ['https:\\\\app.example.com\\cb', /backslashes/],
  ['/relative/callback', /scheme/],
  ['app.example.com/cb', /scheme/],
  ['', /non-empty/],
  ['https://', /^is not a valid URI$/],
  ['https:///cb', /host/],
  ['https://exa_mple.com/cb', /host/],
  [`https://app.example.com/${'a'.repeat(2001)}`, /at most/],
];

describe('redirect-URI policy (registration)', () => {
  it('has a table of at least 40 cases', () => {
    expect(accepted.length + refused.length).toBeGreaterThanOrEqual(40);
  });

  it.each(accepted)('accepts %s', (uri, kind) => {
    expect(checkRedirectUri(uri)).toEqual({ ok: true, kind });
  });

  it.each(refused)('refuses %s', (uri, rule) => {
    const verdict = checkRedirectUri(uri);
    expect(verdict.ok).toBe(false);
    expect(verdict.ok ? '' : verdict.rule).toMatch(rule);
  });

  it('refuses non-strings', () => {
    for (const value of [undefined, null, 42, {}, ['https://a.example/cb']]) expect(checkRedirectUri(value).ok).toBe(false);
  });

  it('names the URI and the rule, and requires at least one', () => {
    expect(() => validateRedirectUris(['https://ok.example/cb', 'http://evil.example/cb'])).toThrow(
      new ValidationError('redirectUris.1', '"http://evil.example/cb" plain http is allowed only for localhost and 127.0.0.1; use https'),
    );
    expect(() => validateRedirectUris([])).toThrow(new ValidationError('redirectUris', 'at least one redirect URI is required'));
    expect(validateRedirectUris([], 'postLogoutRedirectUris', true)).toEqual([]);
    expect(validateRedirectUris(['https://a.example/cb', 'https://a.example/cb'])).toEqual(['https://a.example/cb']);
  });

  it('tells when every URI is https (PKCE may then be turned off)', () => {
    expect(allHttps(['https://a.example/cb', 'HTTPS://b.example/'])).toBe(true);
    expect(allHttps(['https://a.example/cb', 'http://localhost/cb'])).toBe(false);
    expect(allHttps(['myapp://cb'])).toBe(false);
    expect(allHttps(['myapp://cb?next=https://a.example/'])).toBe(false);
  });
});

describe('the network and browser schemes: never an app\'s deep link', () => {
  it.each([
    'ws', 'wss', 'ftp', 'ftps', 'sftp', 'ssh', 'telnet', 'gopher', 'ldap', 'ldaps', 'smb', 'nfs', 'irc', 'ircs',
    'mailto', 'tel', 'sms', 'news', 'nntp', 'rtsp', 'sip', 'sips', 'xmpp', 'git', 'svn', 'redis', 'rediss',
    'intent', 'android-app', 'about', 'view-source', 'chrome', 'chrome-extension', 'chrome-untrusted', 'edge',
    'moz-extension', 'resource', 'jar', 'safari-extension', 'safari-web-extension', 'ms-browser-extension',
    'opera', 'brave', 'devtools', 'filesystem', 'ws+unix', 'wyciwyg',
  ])('%s://', (scheme) => {
    expect(checkRedirectUri(`${scheme}://host/cb`)).toEqual({
      ok: false,
      rule: `the ${scheme}: scheme is a network or browser scheme, not an app's; use https or the app's own scheme`,
    });
  });
});

describe('redirect-URI policy (use time): exact match only', () => {
  const registered = ['https://app.example.com/callback', 'http://localhost:3000/cb', 'myapp://cb'];
  it('matches a registered string', () => {
    for (const uri of registered) expect(redirectUriMatches(registered, uri)).toBe(true);
  });
  it.each([
    ['a trailing slash', 'https://app.example.com/callback/'],
    ['another case', 'https://APP.example.com/callback'],
    ['another path case', 'https://app.example.com/Callback'],
    ['an explicit default port', 'https://app.example.com:443/callback'],
    ['another loopback port', 'http://localhost:3001/cb'],
    ['no loopback port', 'http://localhost/cb'],
    ['127.0.0.1 for localhost', 'http://127.0.0.1:3000/cb'],
    ['an added query', 'https://app.example.com/callback?x=1'],
    ['a prefix', 'https://app.example.com/call'],
    ['an extension', 'https://app.example.com/callback/evil'],
    ['percent-encoding', 'https://app.example.com/%63allback'],
    ['a dot segment', 'https://app.example.com/x/../callback'],
    ['another host', 'https://app.example.com.evil.com/callback'],
    ['http for https', 'http://app.example.com/callback'],
    ['a fragment', 'https://app.example.com/callback#x'],
    ['a deep link with a path', 'myapp://cb/x'],
  ])('refuses %s', (_name, uri) => {
    expect(redirectUriMatches(registered, uri)).toBe(false);
  });
  it('refuses non-strings', () => {
    expect(redirectUriMatches(registered, undefined)).toBe(false);
    expect(redirectUriMatches(registered, ['https://app.example.com/callback'])).toBe(false);
  });
});
