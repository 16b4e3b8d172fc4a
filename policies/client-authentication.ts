import { InvalidClient, InvalidRequest } from './errors.js';

/**
 * CLIENT AUTHENTICATION at the token endpoint.
 *
 * - A client that has a secret (a client configuration, a confidential app) authenticates only
 *   with HTTP Basic: `Authorization: Basic base64(client_id:client_secret)`, each part
 *   form-urlencoded first (RFC 6749 §2.3.1). Credentials in the body are refused (invalid_client):
 *   a body is logged and cached by more things than a header.
 * - A private_key_jwt client (no secret) sends a signed assertion in the body instead:
 *   `client_assertion_type=urn:ietf:params:oauth:client-assertion-type:jwt-bearer` and
 *   `client_assertion` (RFC 7523 §2.2), both, and no Authorization header: two ways of
 *   authenticating at once are refused (RFC 6749 §2.3: a client must not use more than one;
 *   invalid_request). An assertion that is not a JWT is invalid_client (RFC 7523 §3.2); a
 *   `client_id` in the body must be its subject (invalid_request otherwise, before anything is
 *   checked or stored). The engine then checks the assertion (signature, issuer, audience,
 *   expiry, single use).
 * - A public app (no secret) sends only its `client_id` in the body, and no Authorization header.
 * - A `client_id` in the body beside Basic must be the same client (invalid_request otherwise).
 * - A malformed Basic header is a failed authentication (401 invalid_client), not a bad request.
 * - Secrets are compared with their stored digest in constant time (src/records/secrets.ts).
 */

/** Client IDs and secrets are VSCHARs (RFC 6749 Appendix A.1/A.2: %x20-7E). */
const VSCHARS = /^[\x20-\x7e]+$/;
/** Our client IDs are UUIDs: only these get a failed-authentication counter of their own. */
const UUID = /^[0-9a-f]{8}-[0-9a-f]{4}-[0-9a-f]{4}-[0-9a-f]{4}-[0-9a-f]{12}$/i;

/** Credentials read from a Basic header. */
export interface BasicCredentials {
  clientId: string;
  clientSecret: string;
}

/**
 * The credentials of a Basic header (RFC 6749 §2.3.1: form-encoded, then Base64).
 * @throws InvalidClient for a header that is not Basic, not `id:secret`, badly encoded, or not VSCHARs.
 */
export function parseBasicAuthorization(header: string): BasicCredentials {
  const match = /^Basic ([A-Za-z0-9+/]+={0,2})$/i.exec(header);
  if (!match?.[1]) throw new InvalidClient('the Authorization header is not valid HTTP Basic');
  const decoded = Buffer.from(match[1], 'base64').toString('utf8');
  const colon = decoded.indexOf(':');
  if (colon <= 0 || colon === decoded.length - 1) {
    throw new InvalidClient('the Authorization header must carry client_id:client_secret');
  }
  let credentials: BasicCredentials;
  try {
    credentials = {
      clientId: decodeURIComponent(decoded.slice(0, colon).replace(/\+/g, ' ')),
      clientSecret: decodeURIComponent(decoded.slice(colon + 1).replace(/\+/g, ' ')),
    };
  } catch {
    throw new InvalidClient('the Authorization header credentials are not correctly encoded');
  }
  if (!VSCHARS.test(credentials.clientId) || !VSCHARS.test(credentials.clientSecret)) {
    throw new InvalidClient('the Authorization header credentials hold characters a client ID or secret cannot have');
  }
  return credentials;
}

/** The client ID a request's credentials claim, lower-cased, when it is shaped like ours (a UUID). */
export function claimedClientId(credentials: BasicCredentials | undefined): string | undefined {
  return credentials ? clientIdShapedLikeOurs(credentials.clientId) : undefined;
}

/** A client ID lower-cased, when it is shaped like ours (a UUID); undefined otherwise. */
export function clientIdShapedLikeOurs(clientId: string): string | undefined {
  return UUID.test(clientId) ? clientId.toLowerCase() : undefined;
}

/** The assertion type of a private_key_jwt authentication (RFC 7523 §2.2). */
export const JWT_BEARER_ASSERTION = 'urn:ietf:params:oauth:client-assertion-type:jwt-bearer';

/** A private_key_jwt authentication: the assertion, checked by the engine (or calling-client.ts). */
export interface ClientAssertion {
  clientAssertion: string;
}

/**
 * The `sub` of a JWT in compact form (undefined when it has none), read without verifying anything:
 * null when the value is not three dot-separated parts whose first two are JSON objects.
 */
function jwtSubject(value: string): string | undefined | null {
  const parts = value.split('.');
  if (parts.length !== 3) return null;
  try {
    const [header, payload] = parts.slice(0, 2).map((part) => JSON.parse(Buffer.from(part, 'base64url').toString('utf8')) as unknown);
    if (typeof header !== 'object' || header === null || typeof payload !== 'object' || payload === null) return null;
    const { sub } = payload as { sub?: unknown };
    return typeof sub === 'string' ? sub : undefined;
  } catch {
    return null;
  }
}

/** How a grant's client must authenticate: Basic only, or Basic (confidential) or none (public). */
export type ClientAuthentication = 'basic' | 'basic-or-none';

/**
 * The client authentication of a token request, checked before the engine sees it (which then
 * checks the secret or the assertion itself). `basicCredentials` reads the Authorization header,
 * if any. A Basic-only rule (`basic`) also takes an assertion: both are a confidential client's.
 * @returns the Basic credentials, the assertion, or undefined for a public client.
 * @throws InvalidClient for a secret in the body, or no Basic nor assertion where the grant needs
 *   one, or neither Basic nor a client_id, or an assertion that is not a JWT; InvalidRequest for a
 *   body client_id other than the Basic one or the assertion's subject, an assertion without its
 *   type (or of another type), or Basic and an assertion at once.
 */
export function checkClientAuthentication(
  rule: ClientAuthentication,
  basicCredentials: () => BasicCredentials | undefined,
  params: ReadonlyMap<string, string>,
): BasicCredentials | ClientAssertion | undefined {
  if (params.has('client_secret')) throw new InvalidClient('client credentials must not be sent in the request body');
  const assertion = params.get('client_assertion');
  const assertionType = params.get('client_assertion_type');
  if (assertion !== undefined || assertionType !== undefined) {
    // RFC 7523 §2.2: the type names how the assertion authenticates; only a JWT is ours.
    if (assertion === undefined) throw new InvalidRequest('client_assertion_type was sent without client_assertion');
    if (assertionType !== JWT_BEARER_ASSERTION) throw new InvalidRequest(`client_assertion_type must be ${JWT_BEARER_ASSERTION}`);
    // RFC 6749 §2.3: one authentication method per request.
    if (basicCredentials()) throw new InvalidRequest('a client assertion and HTTP Basic must not be sent together');
    // RFC 7523 §3.2: an assertion that is no JWT is an invalid client JWT, invalid_client, at every
    // endpoint (the engine would call it a bad request where no client_id is sent).
    const subject = jwtSubject(assertion);
    if (subject === null) throw new InvalidClient('the client assertion is not a JWT');
    // As beside Basic: refused before the assertion is checked, so that its jti is not used up
    // (an assertion without a subject is the engine's to refuse: invalid_client).
    const bodyClientId = params.get('client_id');
    if (bodyClientId !== undefined && subject !== undefined && bodyClientId !== subject) throw new InvalidRequest('client_id in the body differs from the client assertion\'s subject');
    return { clientAssertion: assertion };
  }
  const credentials = basicCredentials();
  if (credentials) {
    const bodyClientId = params.get('client_id');
    if (bodyClientId !== undefined && bodyClientId !== credentials.clientId) {
      throw new InvalidRequest('client_id in the body differs from the authenticated client');
    }
  } else if (rule === 'basic') {
    throw new InvalidClient('client authentication with HTTP Basic or a client assertion is required');
  } else if (!params.has('client_id')) {
    throw new InvalidClient('client_id is required when no Authorization header is sent');
  }
  return credentials;
}
