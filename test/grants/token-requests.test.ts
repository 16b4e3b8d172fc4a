import { InvalidClient, InvalidRequest, UnsupportedGrantType } from '../../policies/errors.js';
import { checkTokenRequest, GRANTS, normalizeTokenRequest } from '../../src/grants/index.js';

const basic = () => ({ clientId: 'c', clientSecret: 's' });
const none = () => undefined;
const form = (entries: Record<string, string>) => new Map(Object.entries(entries));

describe('token requests against their grant (src/grants)', () => {
  it('has exactly the three grants', () => {
    expect([...GRANTS.keys()]).toEqual(['client_credentials', 'authorization_code', 'refresh_token']);
  });

  it.each([
    // [request, credentials, expected grant or error, message]
    [{}, basic, InvalidRequest, "missing required parameter 'grant_type'"],
    [{ grant_type: 'password' }, basic, UnsupportedGrantType, 'unsupported grant_type'],
    [{ grant_type: 'client_credentials' }, basic, 'client_credentials', ''],
    [{ grant_type: 'client_credentials', scope: 'a', resource: 'x', unknown: 'ignored' }, basic, 'client_credentials', ''],
    [{ grant_type: 'client_credentials' }, none, InvalidClient, 'HTTP Basic or a client assertion is required'],
    [{ grant_type: 'client_credentials', code: 'x' }, basic, InvalidRequest, "'code' does not belong to grant_type client_credentials"],
    [{ grant_type: 'client_credentials', code_verifier: 'x' }, basic, InvalidRequest, "'code_verifier' does not belong"],
    [{ grant_type: 'client_credentials', redirect_uri: 'x' }, basic, InvalidRequest, "'redirect_uri' does not belong"],
    [{ grant_type: 'client_credentials', refresh_token: 'x' }, basic, InvalidRequest, "'refresh_token' does not belong"],
    [{ grant_type: 'authorization_code', code: 'c', redirect_uri: 'r' }, basic, 'authorization_code', ''],
    [{ grant_type: 'authorization_code', code: 'c', redirect_uri: 'r', code_verifier: 'v', client_id: 'p' }, none, 'authorization_code', ''],
    [{ grant_type: 'authorization_code', code: 'c', redirect_uri: 'r', client_id: 'p' }, none, InvalidRequest, "missing required parameter 'code_verifier'"],
    [{ grant_type: 'authorization_code', redirect_uri: 'r' }, basic, InvalidRequest, "missing required parameter 'code'"],
    [{ grant_type: 'authorization_code', code: 'c' }, basic, InvalidRequest, "missing required parameter 'redirect_uri'"],
    [{ grant_type: 'authorization_code', code: 'c', redirect_uri: 'r', refresh_token: 't' }, basic, InvalidRequest, "'refresh_token' does not belong"],
    [{ grant_type: 'authorization_code', code: 'c', redirect_uri: 'r', code_verifier: 'v' }, none, InvalidClient, 'client_id is required'],
    [{ grant_type: 'refresh_token', refresh_token: 't' }, basic, 'refresh_token', ''],
    [{ grant_type: 'refresh_token', refresh_token: 't', scope: 'a' }, basic, 'refresh_token', ''],
    [{ grant_type: 'refresh_token', refresh_token: 't', client_id: 'p' }, none, InvalidClient, 'HTTP Basic or a client assertion is required'],
    [{ grant_type: 'refresh_token' }, basic, InvalidRequest, "missing required parameter 'refresh_token'"],
    [{ grant_type: 'refresh_token', refresh_token: 't', code: 'c' }, basic, InvalidRequest, "'code' does not belong"],
    [{ grant_type: 'refresh_token', refresh_token: 't', redirect_uri: 'r' }, basic, InvalidRequest, "'redirect_uri' does not belong"],
    [{ grant_type: 'refresh_token', refresh_token: 't', client_secret: 's' }, basic, InvalidClient, 'must not be sent in the request body'],
  ] as const)('%j (%p) → %p %s', (request, credentials, expected, message) => {
    const check = () => checkTokenRequest(form(request), credentials);
    if (typeof expected === 'string') expect(check()).toBe(expected);
    else {
      let thrown: unknown;
      try {
        check();
      } catch (error) {
        thrown = error;
      }
      expect(thrown).toBeInstanceOf(expected);
      expect((thrown as Error).message).toContain(message);
    }
  });
});

describe('a request as the engine is to see it (normalizeTokenRequest)', () => {
  it.each([
    ['refresh_token', 'openid offline_access scim.read', true, 'openid scim.read'],
    ['refresh_token', 'offline_access', true, undefined],
    ['refresh_token', 'openid scim.read', false, 'openid scim.read'],
    ['refresh_token', undefined, false, undefined],
    ['authorization_code', 'openid offline_access', false, 'openid offline_access'],
    ['client_credentials', 'offline_access scim.read', false, 'offline_access scim.read'],
  ] as const)('%s with scope %p: changed %p, scope %p', (grantType, scope, changed, after) => {
    const params = new Map<string, string>([['grant_type', grantType], ...(scope !== undefined ? [['scope', scope] as [string, string]] : [])]);
    expect(normalizeTokenRequest(grantType, params)).toBe(changed);
    expect(params.get('scope')).toBe(after);
  });
});
