import { generateKeyPairSync, type KeyObject } from 'node:crypto';
import { ValidationError } from '../../policies/errors.js';
import { CLIENT_AUTHENTICATION_FIELDS, CLIENT_JWKS_SCHEMA, jwksUriProblem, MAX_CLIENT_KEYS, MAX_JWKS_BYTES, validateClientAuthentication, validateClientJwks } from '../../policies/client-keys.js';

/**
 * A client's keys for private_key_jwt (policies/client-keys.ts): public signing keys only, each
 * type with its algorithms and curve, RSA of 2048 bits at least, key IDs distinct and present when
 * there are several; a key set URL ruled by who names it; exactly one of the two.
 */

const exported = ({ publicKey }: { publicKey: KeyObject }) => publicKey.export({ format: 'jwk' }) as Record<string, unknown>;
const EC = exported(generateKeyPairSync('ec', { namedCurve: 'P-256' }));
const RSA = exported(generateKeyPairSync('rsa', { modulusLength: 2048 }));
const OKP = exported(generateKeyPairSync('ed25519'));
const EC_P384 = exported(generateKeyPairSync('ec', { namedCurve: 'P-384' }));
const RSA_1024 = exported(generateKeyPairSync('rsa', { modulusLength: 1024 }));
const PRIVATE_EC = generateKeyPairSync('ec', { namedCurve: 'P-256' }).privateKey.export({ format: 'jwk' }) as Record<string, unknown>;

/** The field and rule of the ValidationError `run` throws (its words as the error table words them: `"` as `'`), or 'ok'. */
function problemOf(run: () => unknown): { field: string; rule: string } | 'ok' {
  try {
    run();
    return 'ok';
  } catch (error) {
    if (!(error instanceof ValidationError)) throw error;
    return { field: error.field, rule: error.message.slice(`${error.field}: `.length) };
  }
}
const keysProblem = (keys: Array<Record<string, unknown>>) => problemOf(() => validateClientJwks(CLIENT_JWKS_SCHEMA.parse({ keys })));

describe("a client's keys (policies/client-keys.ts)", () => {
  it.each<[string, Array<Record<string, unknown>>]>([
    ['an EC P-256 key', [EC]],
    ['an EC key for ES256, to sign', [{ ...EC, alg: 'ES256', use: 'sig' }]],
    ['an RSA key of 2048 bits, RS256 or PS256', [{ ...RSA, alg: 'RS256' }]],
    ['an RSA key for PS256', [{ ...RSA, alg: 'PS256' }]],
    // A member its type does not define is ignored (RFC 7517 §4): an RSA key has no curve to check.
    ['an RSA key with a stray crv member', [{ ...RSA, crv: 'P-256' }]],
    ['an Ed25519 key for EdDSA', [{ ...OKP, alg: 'EdDSA' }]],
    ['an Ed25519 key for Ed25519', [{ ...OKP, alg: 'Ed25519' }]],
    ['several keys, each with its own kid', [{ ...EC, kid: 'a' }, { ...RSA, kid: 'b' }, { ...OKP, kid: 'c' }]],
  ])('takes %s', (_name, keys) => {
    expect(keysProblem(keys)).toBe('ok');
  });

  it.each<[string, Array<Record<string, unknown>>, string, string]>([
    ['a private EC key', [PRIVATE_EC], 'jwks.keys.0', "must be a public key: the private member 'd' must never be registered"],
    ...(['p', 'q', 'dp', 'dq', 'qi', 'oth', 'k', 'priv'] as const).map((member): [string, Array<Record<string, unknown>>, string, string] =>
      [`a key with the private member ${member}`, [{ ...RSA, [member]: 'AA' }], 'jwks.keys.0', `must be a public key: the private member '${member}' must never be registered`]),
    ['an EC key for RS256', [{ ...EC, alg: 'RS256' }], 'jwks.keys.0', 'alg RS256 is not allowed for a EC key (allowed: ES256)'],
    ['an RSA key for ES256', [{ ...RSA, alg: 'ES256' }], 'jwks.keys.0', 'alg ES256 is not allowed for a RSA key (allowed: RS256, PS256)'],
    ['an OKP key for ES256', [{ ...OKP, alg: 'ES256' }], 'jwks.keys.0', 'alg ES256 is not allowed for a OKP key (allowed: EdDSA, Ed25519)'],
    ['a key to encrypt', [{ ...EC, use: 'enc' }], 'jwks.keys.0', "use must be 'sig' (a signing key)"],
    ['an EC key on P-384', [EC_P384], 'jwks.keys.0', 'a EC key must be on the curve P-256'],
    ['an OKP key on another curve', [{ ...OKP, crv: 'X25519' }], 'jwks.keys.0', 'a OKP key must be on the curve Ed25519'],
    ['an EC key whose point is not on the curve', [{ ...EC, x: EC.y }], 'jwks.keys.0', 'is not a valid EC public key'],
    ['an RSA key without its exponent', [{ kty: 'RSA', n: RSA.n }], 'jwks.keys.0', 'is not a valid RSA public key'],
    ['an RSA key of 1024 bits', [RSA_1024], 'jwks.keys.0', 'an RSA key must have at least 2048 bits'],
    ['a kid used twice', [{ ...EC, kid: 'a' }, { ...OKP, kid: 'a' }], 'jwks.keys.1.kid', 'the key ID a is used twice'],
    ['several keys, one without kid', [{ ...EC, kid: 'a' }, OKP], 'jwks.keys.1.kid', 'every key needs a key ID (kid) when there are several'],
    ['several keys, the first without kid', [EC, { ...OKP, kid: 'b' }], 'jwks.keys.0.kid', 'every key needs a key ID (kid) when there are several'],
    ['a good key, then a private one', [{ ...EC, kid: 'a' }, { ...PRIVATE_EC, kid: 'b' }], 'jwks.keys.1', "must be a public key: the private member 'd' must never be registered"],
  ])('refuses %s', (_name, keys, field, rule) => {
    expect(keysProblem(keys)).toEqual({ field, rule });
  });

  it('the key set as a wire field: one to MAX_CLIENT_KEYS keys of a known type, a kid of 1 to 200 characters, nothing else beside keys', () => {
    const many = (count: number) => Array.from({ length: count }, (_, index) => ({ ...EC, kid: `k${index}` }));
    expect(CLIENT_JWKS_SCHEMA.safeParse({ keys: many(MAX_CLIENT_KEYS) }).success).toBe(true);
    expect(MAX_CLIENT_KEYS).toBe(10);
    for (const refused of [{ keys: many(MAX_CLIENT_KEYS + 1) }, { keys: [] }, { keys: [{ ...EC, kty: 'oct' }] }, { keys: [{ ...EC, kid: '' }] }, { keys: [{ ...EC, kid: 'k'.repeat(201) }] }, { keys: [EC], extra: 1 }, { keys: [{ ...EC, alg: 7 }] }, { keys: [{ ...EC, use: 1 }] }]) {
      expect(CLIENT_JWKS_SCHEMA.safeParse(refused).success).toBe(false);
    }
    expect(CLIENT_JWKS_SCHEMA.safeParse({ keys: [] }).error?.issues[0]?.message).toBe('at least one key is required');
    expect(CLIENT_JWKS_SCHEMA.safeParse({ keys: [{ ...EC, kty: 'oct' }] }).error?.issues[0]?.message).toBe('kty must be RSA, EC or OKP');
    expect(CLIENT_JWKS_SCHEMA.safeParse({ keys: [{ ...EC, kid: 'k'.repeat(200) }] }).success).toBe(true);
    // A key's other members are kept as they are (the thumbprint reads them).
    expect(CLIENT_JWKS_SCHEMA.parse({ keys: [{ ...EC, x5c: ['x'] }] }).keys[0]).toMatchObject({ x5c: ['x'] });
    const { jwksUri, tokenEndpointAuthMethod } = CLIENT_AUTHENTICATION_FIELDS;
    expect(jwksUri.parse('  https://keys.example/jwks  ')).toBe('https://keys.example/jwks');
    expect(jwksUri.safeParse('   ').error?.issues[0]?.message).toBe('must not be empty');
    expect(jwksUri.safeParse(`https://keys.example/${'a'.repeat(1979)}`).success).toBe(true);
    expect(jwksUri.safeParse(`https://keys.example/${'a'.repeat(1980)}`).success).toBe(false);
    expect(tokenEndpointAuthMethod.options).toEqual(['client_secret_basic', 'private_key_jwt']);
  });

  it.each<[string, 'operator' | 'tenant', string | undefined]>([
    ['https://keys.example/jwks', 'tenant', undefined],
    ['https://keys.example/jwks?v=2', 'tenant', undefined],
    ['http://localhost:9000/jwks', 'operator', undefined],
    ['http://127.0.0.1/jwks', 'operator', undefined],
    ['https://10.0.0.5/jwks', 'operator', undefined],
    ['keys.example/jwks', 'operator', 'must be an absolute https URL'],
    ['ftp://keys.example/jwks', 'operator', 'must be an absolute https URL'],
    ['git+https://keys.example/jwks', 'operator', 'must be an absolute https URL'],
    ['https://user@keys.example/jwks', 'operator', 'must not hold credentials'],
    ['https://:pw@keys.example/jwks', 'operator', 'must not hold credentials'],
    ['https://keys.example/jwks#keys', 'operator', 'must have no fragment'],
    ['https://keys.example/jwks#', 'operator', 'must have no fragment'],
    ['http://keys.example/jwks', 'operator', 'must be https (plain http only on a loopback host: localhost, 127.0.0.1, [::1])'],
    ['http://localhost:9000/jwks', 'tenant', "must be an https URI: our server fetches the client's keys from it"],
    ['https://10.0.0.5/jwks', 'tenant', 'must name a host, not an IP address'],
    ['https://keys.example:8443/jwks', 'tenant', 'must use the https port 443 (no other port)'],
  ])('the key set URL %j named by the %s: %j', (uri, author, problem) => {
    expect(jwksUriProblem(uri, author)).toBe(problem);
  });

  it.each<[string, Parameters<typeof validateClientAuthentication>[0], 'operator' | 'tenant', unknown]>([
    ['nothing: a shared secret', {}, 'tenant', { tokenEndpointAuthMethod: 'client_secret_basic' }],
    ['a shared secret, said', { tokenEndpointAuthMethod: 'client_secret_basic' }, 'tenant', { tokenEndpointAuthMethod: 'client_secret_basic' }],
    ['a shared secret with keys', { jwks: { keys: [EC] } as never }, 'tenant', { field: 'jwks', rule: 'only a private_key_jwt client registers keys' }],
    ['a shared secret with a key set URL', { tokenEndpointAuthMethod: 'client_secret_basic', jwksUri: 'https://keys.example/jwks' }, 'tenant', { field: 'jwksUri', rule: 'only a private_key_jwt client registers keys' }],
    ['private_key_jwt with its keys', { tokenEndpointAuthMethod: 'private_key_jwt', jwks: { keys: [EC] } as never }, 'tenant', { tokenEndpointAuthMethod: 'private_key_jwt', jwks: { keys: [EC] } }],
    ['private_key_jwt with a key set URL', { tokenEndpointAuthMethod: 'private_key_jwt', jwksUri: 'https://keys.example/jwks' }, 'tenant', { tokenEndpointAuthMethod: 'private_key_jwt', jwksUri: 'https://keys.example/jwks' }],
    ['private_key_jwt with both', { tokenEndpointAuthMethod: 'private_key_jwt', jwks: { keys: [EC] } as never, jwksUri: 'https://keys.example/jwks' }, 'tenant', { field: 'jwksUri', rule: 'give either jwks or jwksUri, not both' }],
    ['private_key_jwt with neither', { tokenEndpointAuthMethod: 'private_key_jwt' }, 'tenant', { field: 'jwks', rule: 'a private_key_jwt client needs its public keys: jwks or jwksUri' }],
    ['private_key_jwt with a private key', { tokenEndpointAuthMethod: 'private_key_jwt', jwks: { keys: [PRIVATE_EC] } as never }, 'tenant', { field: 'jwks.keys.0', rule: "must be a public key: the private member 'd' must never be registered" }],
    ["a tenant's key set URL on loopback", { tokenEndpointAuthMethod: 'private_key_jwt', jwksUri: 'http://localhost:9000/jwks' }, 'tenant', { field: 'jwksUri', rule: "must be an https URI: our server fetches the client's keys from it" }],
    ["the operator's key set URL on loopback", { tokenEndpointAuthMethod: 'private_key_jwt', jwksUri: 'http://localhost:9000/jwks' }, 'operator', { tokenEndpointAuthMethod: 'private_key_jwt', jwksUri: 'http://localhost:9000/jwks' }],
  ])('client authentication: %s', (_name, input, author, expected) => {
    const outcome = problemOf(() => validateClientAuthentication(input, author));
    if (outcome === 'ok') expect(validateClientAuthentication(input, author)).toEqual(expected);
    else expect(outcome).toEqual(expected);
  });
});

describe('the largest key set read (a key set URL\'s answer, a --jwks-file)', () => {
  it('is 32 KiB', () => {
    expect(MAX_JWKS_BYTES).toBe(32_768);
  });
});
