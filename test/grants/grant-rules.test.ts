import { describe, expect, it } from '@jest/globals';
import { checkParameterSet, type TokenRequestRule } from '../../src/grants/grant.js';
import { GRANTS, normalizeTokenRequest } from '../../src/grants/index.js';
import { alignAnswerScope, namedUserTokenScope } from '../../src/grants/named-user.js';
import { tokenRequestState } from '../../src/engine/token-request.js';
import { TokenRequest } from '../../src/http/wire.js';
import { InvalidRequest } from '../../policies/errors.js';

/*
 * Each grant's rule, row by row (src/grants/): the parameters it requires, accepts and refuses as
 * another grant's; the refresh's `offline_access`; a named-user token's `scope` and the answer's.
 */

const rule = (grantType: string): TokenRequestRule => GRANTS.get(grantType)!;
const paramsOf = (names: readonly string[]) => new Map(names.map((name) => [name, `${name}-value`]));

const EXPECTED = {
  client_credentials: { required: [], ofPublic: [], accepted: ['scope', 'resource', 'client_id'], foreign: ['code', 'code_verifier', 'redirect_uri', 'refresh_token'] },
  authorization_code: { required: ['code', 'redirect_uri'], ofPublic: ['code_verifier'], accepted: ['code_verifier', 'client_id', 'resource'], foreign: ['refresh_token'] },
  refresh_token: { required: ['refresh_token'], ofPublic: [], accepted: ['scope', 'client_id', 'resource'], foreign: ['code', 'code_verifier', 'redirect_uri'] },
} as const;

describe('each grant: the parameters it requires, accepts, and refuses', () => {
  describe.each(Object.entries(EXPECTED))('%s', (grantType, expected) => {
    it('requires its parameters, and of a public client its own besides', () => {
      expect(rule(grantType).required).toEqual(expected.required);
      expect(rule(grantType).requiredOfPublicClients).toEqual(expected.ofPublic);
      expect(() => checkParameterSet(rule(grantType), paramsOf(expected.required), false)).not.toThrow();
      expect(() => checkParameterSet(rule(grantType), paramsOf([...expected.required, ...expected.ofPublic]), true)).not.toThrow();
      for (const missing of [...expected.required, ...expected.ofPublic]) {
        const params = paramsOf([...expected.required, ...expected.ofPublic].filter((name) => name !== missing));
        expect(() => checkParameterSet(rule(grantType), params, true)).toThrow(new InvalidRequest(`missing required parameter '${missing}'`));
      }
    });

    it.each(expected.foreign.map((name) => [name]))("refuses %s, another grant's parameter", (name) => {
      const params = paramsOf([...expected.required, ...expected.ofPublic, name]);
      expect(() => checkParameterSet(rule(grantType), params, false)).toThrow(new InvalidRequest(`parameter '${name}' does not belong to grant_type ${grantType}`));
    });

    it('its wire schema takes each accepted parameter as it is', () => {
      expect(rule(grantType).accepted).toEqual(expected.accepted);
      const sample: Record<string, string> = { code_verifier: 'v'.repeat(43), resource: 'https://api.example.test', redirect_uri: 'https://app.example.test/cb' };
      const body = { grant_type: grantType, ...Object.fromEntries([...expected.required, ...expected.accepted].map((name) => [name, sample[name] ?? `${name}-value`])) };
      expect(TokenRequest.parse(body)).toEqual(body);
    });
  });
});

describe("a refresh's offline_access: what the refresh token in hand already is", () => {
  it.each<[string | undefined, string | undefined, boolean]>([
    ['openid offline_access scim.read', 'openid scim.read', true],
    ['offline_access  scim.read', 'scim.read', true],
    ['offline_access', undefined, true],
    ['offline_access ', undefined, true],
    ['openid scim.read', 'openid scim.read', false],
    [undefined, undefined, false],
  ])('scope %j becomes %j (changed: %p)', (scope, after, changed) => {
    const params = new Map([['grant_type', 'refresh_token'], ['refresh_token', 'rt'], ...(scope === undefined ? [] : [['scope', scope] as [string, string]])]);
    expect(normalizeTokenRequest('refresh_token', params)).toBe(changed);
    expect(params.get('scope')).toBe(after);
  });
});

describe("a named-user token's scope: the OIDC scopes requested and allowed, then its API scopes", () => {
  it.each<[string, string[], string[], string[], string[]]>([
    ['every OIDC scope requested and allowed, in their order', ['scim.read'], ['email', 'openid', 'profile'], ['openid', 'profile', 'email'], ['openid', 'profile', 'email', 'scim.read']],
    ['one requested, not allowed', ['scim.read'], ['openid', 'email'], ['openid'], ['openid', 'scim.read']],
    ['one allowed, not requested', [], ['openid'], ['openid', 'profile'], ['openid']],
    ['an API scope named like an OIDC one is said once', ['openid', 'scim.read'], ['openid'], ['openid'], ['openid', 'scim.read']],
    ['no OIDC scope', ['scim.read', 'scim.write'], [], [], ['scim.read', 'scim.write']],
    ['an OIDC scope not of userinfo is not carried', [], ['openid', 'offline_access'], ['openid', 'offline_access'], ['openid']],
  ])('%s', (_name, resourceScopes, requested, allowed, expected) => {
    expect(namedUserTokenScope(resourceScopes, new Set(requested), new Set(allowed))).toEqual(expected);
  });

  it("the answer's scope is made the token's own; without one, the answer is left as it is", () => {
    const state: Record<PropertyKey, unknown> = {};
    tokenRequestState(state).scope = 'openid scim.read';
    const ctx = { state, body: { access_token: 'at', scope: 'scim.read' } as unknown };
    alignAnswerScope(ctx);
    expect(ctx.body).toEqual({ access_token: 'at', scope: 'openid scim.read' });
    const untouched = { state: {}, body: { access_token: 'at', scope: 'scim.read' } };
    alignAnswerScope(untouched);
    expect(untouched.body).toEqual({ access_token: 'at', scope: 'scim.read' });
    const noBody = { state, body: undefined };
    expect(() => alignAnswerScope(noBody)).not.toThrow();
    const textBody = { state, body: 'text' };
    alignAnswerScope(textBody);
    expect(textBody.body).toBe('text');
  });
});
