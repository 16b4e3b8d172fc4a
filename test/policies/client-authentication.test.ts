import { JWT_BEARER_ASSERTION, checkClientAuthentication, claimedClientId, type BasicCredentials } from '../../policies/client-authentication.js';
import { InvalidClient, InvalidRequest } from '../../policies/errors.js';

const basic: BasicCredentials = { clientId: 'app', clientSecret: 's' };
const form = (entries: Record<string, string>) => new Map(Object.entries(entries));
const b64 = (value: unknown) => Buffer.from(JSON.stringify(value)).toString('base64url');
/** An assertion's shape (nothing here verifies it: the engine does): a JWT whose subject is `app`. */
const jwt = `${b64({ alg: 'ES256' })}.${b64({ iss: 'app', sub: 'app' })}.c2ln`;
const assertion = { client_assertion_type: JWT_BEARER_ASSERTION, client_assertion: jwt };

describe('client authentication (policies/client-authentication.ts)', () => {
  it.each([
    ['Basic for a Basic-only grant', 'basic', basic, {}, undefined],
    ['Basic with the same client_id in the body', 'basic', basic, { client_id: 'app' }, undefined],
    ['Basic with another client_id in the body', 'basic', basic, { client_id: 'other' }, InvalidRequest],
    ['a secret in the body', 'basic', undefined, { client_id: 'app', client_secret: 's' }, InvalidClient],
    ['a secret in the body beside Basic', 'basic-or-none', basic, { client_secret: 's' }, InvalidClient],
    ['no Basic for a Basic-only grant', 'basic', undefined, { client_id: 'app' }, InvalidClient],
    ['a public client: client_id alone', 'basic-or-none', undefined, { client_id: 'app' }, undefined],
    ['a confidential app: Basic', 'basic-or-none', basic, {}, undefined],
    ['neither Basic nor client_id', 'basic-or-none', undefined, {}, InvalidClient],
    ['an assertion beside Basic', 'basic', basic, assertion, InvalidRequest],
    ['an assertion beside Basic, public-or-not grant', 'basic-or-none', basic, assertion, InvalidRequest],
    ['an assertion without its type', 'basic', undefined, { client_assertion: jwt }, InvalidRequest],
    ['an assertion type without the assertion', 'basic', undefined, { client_assertion_type: JWT_BEARER_ASSERTION }, InvalidRequest],
    ['an assertion of another type', 'basic', undefined, { ...assertion, client_assertion_type: 'urn:ietf:params:oauth:client-assertion-type:saml2-bearer' }, InvalidRequest],
    ['an assertion with a secret in the body', 'basic', undefined, { ...assertion, client_secret: 's' }, InvalidClient],
    ['an assertion that is not a JWT (RFC 7523 §3.2)', 'basic', undefined, { ...assertion, client_assertion: 'a.b.c' }, InvalidClient],
    ['an assertion of two parts', 'basic', undefined, { ...assertion, client_assertion: `${b64({ alg: 'ES256' })}.${b64({ sub: 'app' })}` }, InvalidClient],
    ['an assertion whose payload is no object', 'basic', undefined, { ...assertion, client_assertion: `${b64({ alg: 'ES256' })}.${b64('app')}.c2ln` }, InvalidClient],
    ['an assertion for another client than the client_id in the body', 'basic-or-none', undefined, { ...assertion, client_id: 'other' }, InvalidRequest],
  ] as const)('%s', (_name, rule, credentials, params, refusal) => {
    const check = () => checkClientAuthentication(rule, () => credentials, form(params));
    if (refusal) expect(check).toThrow(refusal);
    else expect(check()).toEqual(credentials);
  });

  it.each([
    ['a Basic-only grant', 'basic', { ...assertion }],
    ['a grant open to public apps', 'basic-or-none', { ...assertion, client_id: 'app' }],
  ] as const)('an assertion with its type is a private_key_jwt authentication (%s), not credentials in the body', (_name, rule, params) => {
    expect(checkClientAuthentication(rule, () => undefined, form(params))).toEqual({ clientAssertion: jwt });
  });

  it('reads the header only after the body is known to carry no secret', () => {
    let reads = 0;
    const header = () => {
      reads += 1;
      return basic;
    };
    expect(() => checkClientAuthentication('basic', header, form({ client_secret: 's' }))).toThrow('must not be sent in the request body');
    expect(reads).toBe(0);
    checkClientAuthentication('basic', header, form({}));
    expect(reads).toBe(1);
  });

  it.each([
    [{ clientId: '1F0E8C84-5C3B-4B9A-9D7E-0A1B2C3D4E5F', clientSecret: 'x' }, '1f0e8c84-5c3b-4b9a-9d7e-0a1b2c3d4e5f'],
    [{ clientId: 'made-up', clientSecret: 'x' }, undefined],
    [undefined, undefined],
  ])('the counted client ID of %j is %s (UUIDs only, one spelling)', (credentials, expected) => {
    expect(claimedClientId(credentials)).toBe(expected);
  });
});
