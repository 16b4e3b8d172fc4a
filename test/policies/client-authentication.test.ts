import {
  JWT_BEARER_ASSERTION, checkClientAuthentication, claimedClientId, parseBasicAuthorization, type BasicCredentials,
} from '../../policies/client-authentication.js';
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

  it.each([
    ['x1f0e8c84-5c3b-4b9a-9d7e-0a1b2c3d4e5f'],
    ['1f0e8c84-5c3b-4b9a-9d7e-0a1b2c3d4e5fx'],
  ])('a UUID with more around it (%s) is not shaped like ours', (clientId) => {
    expect(claimedClientId({ clientId, clientSecret: 'x' })).toBeUndefined();
  });

  it('names the private_key_jwt assertion type (RFC 7523 §2.2)', () => {
    expect(JWT_BEARER_ASSERTION).toBe('urn:ietf:params:oauth:client-assertion-type:jwt-bearer');
  });

  // The error_description of each refusal: what the client's developer reads to fix the request.
  it.each([
    ['basic', undefined, { client_assertion_type: JWT_BEARER_ASSERTION }, 'client_assertion_type was sent without client_assertion'],
    ['basic', undefined, { ...assertion, client_assertion_type: 'x' }, `client_assertion_type must be ${JWT_BEARER_ASSERTION}`],
    ['basic', basic, assertion, 'a client assertion and HTTP Basic must not be sent together'],
    ['basic', undefined, { ...assertion, client_assertion: 'a.b.c' }, 'the client assertion is not a JWT'],
    ['basic', undefined, { ...assertion, client_id: 'other' }, "client_id in the body differs from the client assertion's subject"],
    ['basic', basic, { client_id: 'other' }, 'client_id in the body differs from the authenticated client'],
    ['basic', undefined, {}, 'client authentication with HTTP Basic or a client assertion is required'],
    ['basic-or-none', undefined, {}, 'client_id is required when no Authorization header is sent'],
  ] as const)('%s, %j, %j: %s', (rule, credentials, params, description) => {
    expect(() => checkClientAuthentication(rule, () => credentials, form(params))).toThrow(expect.objectContaining({ description }));
  });

  it.each([
    ['a header that is JSON null', `${b64(null)}.${b64({ sub: 'app' })}.c2ln`],
    ['a header that is a JSON string', `${b64('ES256')}.${b64({ sub: 'app' })}.c2ln`],
    ['a payload that is JSON null', `${b64({ alg: 'ES256' })}.${b64(null)}.c2ln`],
  ])('an assertion with %s is not a JWT', (_name, value) => {
    expect(() => checkClientAuthentication('basic', () => undefined, form({ ...assertion, client_assertion: value })))
      .toThrow(expect.objectContaining({ description: 'the client assertion is not a JWT' }));
  });

  it('an assertion without a subject beside a body client_id is left to the engine to refuse', () => {
    const noSubject = `${b64({ alg: 'ES256' })}.${b64({ iss: 'app' })}.c2ln`;
    expect(checkClientAuthentication('basic-or-none', () => undefined, form({ ...assertion, client_assertion: noSubject, client_id: 'app' })))
      .toEqual({ clientAssertion: noSubject });
  });
});

describe('parseBasicAuthorization (RFC 6749 §2.3.1: form-encoded, then Base64)', () => {
  const header = (text: string, scheme = 'Basic') => `${scheme} ${Buffer.from(text, 'utf8').toString('base64')}`;

  it.each<[string, string, BasicCredentials]>([
    ['plain', header('app:secret'), { clientId: 'app', clientSecret: 'secret' }],
    ['a one-character ID', header('a:s'), { clientId: 'a', clientSecret: 's' }],
    ['the scheme in any case', header('app:secret', 'bAsIc'), { clientId: 'app', clientSecret: 'secret' }],
    ['form-encoded: + is a space, %XX a byte', header('my+app:se+cr%3Aet%25'), { clientId: 'my app', clientSecret: 'se cr:et%' }],
    ['a colon in the secret', header('app:a:b'), { clientId: 'app', clientSecret: 'a:b' }],
    ['one padding character', 'Basic YXBwOnNlY3JldDE=', { clientId: 'app', clientSecret: 'secret1' }],
    ['two padding characters', 'Basic YXBwOnNlY3JldA==', { clientId: 'app', clientSecret: 'secret' }],
    ['Base64 with + and /', `Basic ${Buffer.from('app:>>>???').toString('base64')}`, { clientId: 'app', clientSecret: '>>>???' }],
  ])('reads %s', (_name, value, expected) => {
    expect(parseBasicAuthorization(value)).toEqual(expected);
  });

  it.each<[string, string, string]>([
    ['another scheme', header('app:secret', 'Bearer'), 'the Authorization header is not valid HTTP Basic'],
    ['the scheme alone', 'Basic', 'the Authorization header is not valid HTTP Basic'],
    ['the scheme and a space', 'Basic ', 'the Authorization header is not valid HTTP Basic'],
    ['two spaces', `Basic  ${Buffer.from('app:secret').toString('base64')}`, 'the Authorization header is not valid HTTP Basic'],
    ['text before the scheme', `x${header('app:secret')}`, 'the Authorization header is not valid HTTP Basic'],
    ['text after the value', `${header('app:secret')} x`, 'the Authorization header is not valid HTTP Basic'],
    ['three padding characters', 'Basic YXBwOnNlY3JldA===', 'the Authorization header is not valid HTTP Basic'],
    ['a character outside Base64', 'Basic YXBwOnNlY3Jld*A=', 'the Authorization header is not valid HTTP Basic'],
    ['no colon', header('appsecret'), 'the Authorization header must carry client_id:client_secret'],
    ['no ID', header(':secret'), 'the Authorization header must carry client_id:client_secret'],
    ['no secret', header('app:'), 'the Authorization header must carry client_id:client_secret'],
    ['a broken escape in the ID', header('%ZZ:secret'), 'the Authorization header credentials are not correctly encoded'],
    ['a broken escape in the secret', header('app:%E0%A4'), 'the Authorization header credentials are not correctly encoded'],
    ['a control character first in the ID', header('%01app:secret'), 'the Authorization header credentials hold characters a client ID or secret cannot have'],
    ['a control character last in the ID', header('app%7F:secret'), 'the Authorization header credentials hold characters a client ID or secret cannot have'],
    ['a control character first in the secret', header('app:%0Asecret'), 'the Authorization header credentials hold characters a client ID or secret cannot have'],
    ['a control character last in the secret', header('app:secret%00'), 'the Authorization header credentials hold characters a client ID or secret cannot have'],
    ['a non-ASCII secret', header('app:s%C3%A9cret'), 'the Authorization header credentials hold characters a client ID or secret cannot have'],
  ])('refuses %s as a failed authentication (401 invalid_client)', (_name, value, description) => {
    expect(() => parseBasicAuthorization(value)).toThrow(InvalidClient);
    expect(() => parseBasicAuthorization(value)).toThrow(expect.objectContaining({ description }));
  });
});
