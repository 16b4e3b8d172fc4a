import { createPublicKey } from 'node:crypto';
import { z } from 'zod';
import { publicHttpsProblem } from './backchannel-logout.js';
import { ValidationError } from './errors.js';
import { isLoopbackHost } from './upstream-issuer.js';

/**
 * CLIENT AUTHENTICATION METHODS: how a client configuration or a confidential app proves who it is
 * at the token endpoint.
 *
 * - `client_secret_basic` (the default): a secret we generate, sent in the Authorization header.
 * - `private_key_jwt` (RFC 7523 §2.2, OpenID Connect Core §9): the client signs a short-lived
 *   assertion with its own private key; we hold only its public keys, given at registration as a
 *   key set (`jwks`) or as the https URL our server fetches them from (`jwksUri`), exactly one of
 *   the two. Such a client has no secret at all (none generated, none returned, none to rotate).
 *
 * Registered keys: public keys only (a private member such as `d` is refused: we must never hold a
 * client's private key), of type RSA (at least 2048 bits), EC on P-256 or OKP Ed25519, for the
 * signing algorithms RS256, PS256, ES256 and EdDSA or its fully specified name Ed25519 (HS256 and other secret-based algorithms are
 * never accepted: they would need a shared secret), at most 10 keys, key IDs unique (each key needs
 * one when there are several: the assertion names the key it was signed with).
 *
 * A `jwksUri` is a request forgery risk like a back-channel logout URI
 * (policies/backchannel-logout.ts): named by the operator (the library, the CLI), https to any host
 * or plain http on a loopback host; named by a tenant (the management API, the portal), https on
 * port 443 to a public host name. Whatever the name resolves to is checked again at each fetch.
 */

/** How a client authenticates at the token endpoint (see policies/client-keys.ts). */
export type TokenEndpointAuthMethod = 'client_secret_basic' | 'private_key_jwt';

/** The methods a client configuration or a confidential app may register. */
export const TOKEN_ENDPOINT_AUTH_METHODS = ['client_secret_basic', 'private_key_jwt'] as const;

/** The algorithms a client may sign its assertions with (no secret-based algorithm). */
export const CLIENT_ASSERTION_ALGS = ['RS256', 'PS256', 'ES256', 'EdDSA', 'Ed25519'] as const;

/** The longest an assertion may live (its `exp` from now): what its single-use record is kept for. */
export const MAX_ASSERTION_SECONDS = 300;

/** The largest key set our server reads from a client's `jwksUri` (10 RSA-4096 keys fit easily). */
export const MAX_JWKS_BYTES = 32 * 1024;

/**
 * How long the keys read from a client's `jwksUri` are used before they are read again (the next
 * assertion after that waits for a fresh read): a key the client removed from its key set works at
 * most this long more, whatever the key server's Cache-Control or Expires say. The engine's own
 * minimum, so a new key is seen within it too.
 */
export const JWKS_URI_KEYS_SECONDS = 60;

/**
 * After a client's `jwksUri` could not be read, how long its assertions fail without another read:
 * whoever sends assertions naming that client (anyone can: its ID is public) would otherwise make
 * our server send one request to the key server per assertion while it is down.
 */
export const JWKS_URI_RETRY_SECONDS = 5;

/** At most this many keys in a client's key set (two during a rotation, with room to spare). */
export const MAX_CLIENT_KEYS = 10;

/** One public key of a client (RFC 7517 members; private members are refused). */
export interface ClientJwk {
  kty: 'RSA' | 'EC' | 'OKP';
  kid?: string;
  alg?: (typeof CLIENT_ASSERTION_ALGS)[number];
  use?: 'sig';
  [member: string]: unknown;
}

/** A client's public key set, as registered: `{ keys: [...] }`. */
export interface ClientJwks {
  keys: ClientJwk[];
}

/** Who names a `jwksUri`: the operator (library, CLI) or a tenant's admin (management API, portal). */
export type KeysAuthor = 'operator' | 'tenant';

/** Members of a private or symmetric key (RFC 7518 §6.2.2, §6.3.2, §6.4.1): never registered. */
const PRIVATE_MEMBERS = ['d', 'p', 'q', 'dp', 'dq', 'qi', 'oth', 'k', 'priv'] as const;

/** Per key type, the algorithms it may sign with and the curve it must be on. */
const KEY_TYPES: Record<ClientJwk['kty'], { algs: readonly string[]; crv?: string }> = {
  RSA: { algs: ['RS256', 'PS256'] },
  EC: { algs: ['ES256'], crv: 'P-256' },
  OKP: { algs: ['EdDSA', 'Ed25519'], crv: 'Ed25519' },
};

const jwk = z.looseObject({
  kty: z.enum(['RSA', 'EC', 'OKP'], { message: 'kty must be RSA, EC or OKP' }),
  kid: z.string().min(1).max(200).optional(),
  alg: z.string().optional(),
  use: z.string().optional(),
});

/** The `jwks` field: a key set of public signing keys (each key checked by clientJwksProblem). */
export const CLIENT_JWKS_SCHEMA = z.object({ keys: z.array(jwk).min(1, 'at least one key is required').max(MAX_CLIENT_KEYS) }).strict();

/** The `jwksUri` field as written (its rule is applied by checkJwksUri). */
export const JWKS_URI_SCHEMA = z.string().trim().min(1, 'must not be empty').max(2000);

/** The fields of client authentication on a record's create and update input. */
export const CLIENT_AUTHENTICATION_FIELDS = {
  tokenEndpointAuthMethod: z.enum(TOKEN_ENDPOINT_AUTH_METHODS),
  jwks: CLIENT_JWKS_SCHEMA,
  jwksUri: JWKS_URI_SCHEMA,
};

/** What is wrong with a key set (the field under `jwks` and the rule), or undefined. */
function clientJwksProblem(jwks: z.output<typeof CLIENT_JWKS_SCHEMA>): { field: string; rule: string } | undefined {
  const kids = new Set<string>();
  for (const [index, key] of jwks.keys.entries()) {
    const field = `jwks.keys.${index}`;
    const priv = PRIVATE_MEMBERS.find((member) => member in key);
    if (priv) return { field, rule: `must be a public key: the private member "${priv}" must never be registered` };
    const type = KEY_TYPES[key.kty];
    if (key.alg !== undefined && !type.algs.includes(key.alg)) {
      return { field, rule: `alg ${key.alg} is not allowed for a ${key.kty} key (allowed: ${type.algs.join(', ')})` };
    }
    if (key.use !== undefined && key.use !== 'sig') return { field, rule: 'use must be "sig" (a signing key)' };
    if (type.crv !== undefined && key['crv'] !== type.crv) return { field, rule: `a ${key.kty} key must be on the curve ${type.crv}` };
    let bits: number | undefined;
    try {
      bits = createPublicKey({ key: key as never, format: 'jwk' }).asymmetricKeyDetails?.modulusLength;
    } catch {
      return { field, rule: `is not a valid ${key.kty} public key` };
    }
    if (key.kty === 'RSA' && (bits ?? 0) < 2048) return { field, rule: 'an RSA key must have at least 2048 bits' };
    if (key.kid !== undefined) {
      if (kids.has(key.kid)) return { field: `${field}.kid`, rule: `the key ID ${key.kid} is used twice` };
      kids.add(key.kid);
    } else if (jwks.keys.length > 1) {
      return { field: `${field}.kid`, rule: 'every key needs a key ID (kid) when there are several' };
    }
  }
  return undefined;
}

/** Registration time: the key set, or a ValidationError naming the key and the rule it broke. */
export function validateClientJwks(jwks: z.output<typeof CLIENT_JWKS_SCHEMA>): ClientJwks {
  const problem = clientJwksProblem(jwks);
  if (problem) throw new ValidationError(problem.field, problem.rule);
  return jwks as ClientJwks;
}

/** What is wrong with `uri` as a client's `jwksUri` named by `author`, or undefined. */
export function jwksUriProblem(uri: string, author: KeysAuthor): string | undefined {
  const url = URL.parse(uri);
  if (!url || !/^https?:$/.test(url.protocol)) return 'must be an absolute https URL';
  if (url.username || url.password) return 'must not hold credentials';
  // As written: the parser leaves `hash` empty for a bare `#`.
  if (uri.includes('#')) return 'must have no fragment';
  if (author === 'tenant') return publicHttpsProblem(uri, "our server fetches the client's keys from it");
  if (url.protocol === 'http:' && !isLoopbackHost(url.hostname)) return 'must be https (plain http only on a loopback host: localhost, 127.0.0.1, [::1])';
  return undefined;
}

/** A client's authentication as stored on its record. */
export interface ClientAuthentication {
  tokenEndpointAuthMethod: TokenEndpointAuthMethod;
  jwks?: ClientJwks;
  jwksUri?: string;
}

/**
 * Registration time: the authentication a record gets from its input, or a ValidationError naming
 * the field. `private_key_jwt` needs exactly one of `jwks` and `jwksUri`; `client_secret_basic`
 * takes neither.
 */
export function validateClientAuthentication(
  input: { tokenEndpointAuthMethod?: TokenEndpointAuthMethod | undefined; jwks?: z.output<typeof CLIENT_JWKS_SCHEMA> | undefined; jwksUri?: string | undefined },
  author: KeysAuthor,
): ClientAuthentication {
  const method = input.tokenEndpointAuthMethod ?? 'client_secret_basic';
  if (method === 'client_secret_basic') {
    if (input.jwks !== undefined) throw new ValidationError('jwks', 'only a private_key_jwt client registers keys');
    if (input.jwksUri !== undefined) throw new ValidationError('jwksUri', 'only a private_key_jwt client registers keys');
    return { tokenEndpointAuthMethod: method };
  }
  if (input.jwks !== undefined && input.jwksUri !== undefined) throw new ValidationError('jwksUri', 'give either jwks or jwksUri, not both');
  if (input.jwks !== undefined) return { tokenEndpointAuthMethod: method, jwks: validateClientJwks(input.jwks) };
  if (input.jwksUri !== undefined) {
    const problem = jwksUriProblem(input.jwksUri, author);
    if (problem) throw new ValidationError('jwksUri', problem);
    return { tokenEndpointAuthMethod: method, jwksUri: input.jwksUri };
  }
  throw new ValidationError('jwks', 'a private_key_jwt client needs its public keys: jwks or jwksUri');
}
