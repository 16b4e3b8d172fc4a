import { decodeJwt, decodeProtectedHeader, jwtVerify, type JWTPayload } from 'jose';
import type Provider from 'oidc-provider';
import { CLIENT_ASSERTION_ALGS, MAX_ASSERTION_SECONDS } from '../../../policies/client-keys.js';
import { assertionAudienceAllowed } from '../../../policies/high-security.js';
import { InvalidClient } from '../../../policies/errors.js';
import type { EngineClient } from '../../engine/client-cache.js';

/** The engine's clock tolerance for assertions (its default: what the token endpoint allows). */
const CLOCK_TOLERANCE_SECONDS = 15;

/**
 * Checks a private_key_jwt client's assertion at introspection and revocation, by the token
 * endpoint's rules (the engine's there): signed by one of the client's keys (inline, or fetched
 * from its jwks_uri through the engine's key set: the checked fetch, its caching) with an allowed
 * algorithm; `iss` and `sub` the client; `aud` the issuer, the token endpoint or this endpoint;
 * for a client under the high-security profile, the issuer alone (a string); `exp` present and at
 * most MAX_ASSERTION_SECONDS ahead; its `jti` used once, in the store all
 * instances share (the engine's ReplayDetection, kept until `exp`).
 * @returns the client. @throws InvalidClient for anything else.
 */
export type ClientAssertionCheck = (assertion: string, endpointUrl: string, findClient: (clientId: string) => Promise<EngineClient | undefined>) => Promise<EngineClient>;

interface EngineKeySet {
  refresh(): Promise<void>;
  selectForVerify(options: { alg: string; kid?: string }): Iterable<object>;
  getKeyObject(jwk: object, getPublic?: boolean): CryptoKeyLike;
}
type CryptoKeyLike = Parameters<typeof jwtVerify>[1] & object;

/** The check for one engine (its issuer and its single-use store). */
export function clientAssertionCheck(provider: Provider): ClientAssertionCheck {
  const replay = provider.ReplayDetection as unknown as { unique(iss: string, jti: string, exp: number): Promise<boolean> };
  return async (assertion, endpointUrl, findClient) => {
    let subject: unknown;
    let alg: unknown;
    let kid: unknown;
    try {
      subject = decodeJwt(assertion).sub;
      ({ alg, kid } = decodeProtectedHeader(assertion));
    } catch {
      throw new InvalidClient('the client assertion is not a JWT');
    }
    if (typeof subject !== 'string' || typeof alg !== 'string' || !(CLIENT_ASSERTION_ALGS as readonly string[]).includes(alg)) throw new InvalidClient();
    const client = await findClient(subject);
    if (!client || client.clientAuthMethod !== 'private_key_jwt') throw new InvalidClient();
    const keys = (client as unknown as { asymmetricKeyStore: EngineKeySet }).asymmetricKeyStore;
    const audience = [provider.issuer, `${provider.issuer}/token`, endpointUrl];
    // A key set that cannot be read (its jwks_uri down, a key unusable) verifies nothing: refused below.
    const payload = await keys.refresh()
      .then(() => firstVerified(assertion, keys, { alg, kid, clientId: client.clientId, audience }))
      .catch(() => undefined);
    // The engine's rule at the token endpoint: an assertion has an expiry and a one-time jti (RFC 7523 section 3).
    if (!payload || typeof payload.jti !== 'string' || payload.exp === undefined) throw new InvalidClient();
    // The high-security profile narrows the audience to the issuer alone, here as at the token endpoint.
    if (!assertionAudienceAllowed(client, payload.aud, provider.issuer)) throw new InvalidClient('the client assertion audience must be the issuer identifier');
    if (payload.exp > Math.floor(Date.now() / 1000) + MAX_ASSERTION_SECONDS) throw new InvalidClient(`the client assertion must expire within ${MAX_ASSERTION_SECONDS} seconds`);
    if (!(await replay.unique(client.clientId, payload.jti, payload.exp + CLOCK_TOLERANCE_SECONDS))) throw new InvalidClient('client assertion tokens must only be used once');
    return client;
  };
}

/**
 * The payload of `assertion` verified by the first of the client's keys of its algorithm (and
 * `kid`, when it names one) that verifies it, with `iss` and `sub` the client and `aud` one of
 * `audience`; undefined when none does.
 */
async function firstVerified(assertion: string, keys: EngineKeySet, expected: { alg: string; kid: unknown; clientId: string; audience: string[] }): Promise<JWTPayload | undefined> {
  const { alg, kid, clientId, audience } = expected;
  for (const jwk of keys.selectForVerify({ alg, ...(typeof kid === 'string' ? { kid } : {}) })) {
    const payload = await jwtVerify(assertion, keys.getKeyObject(jwk, true), {
      issuer: clientId, subject: clientId, audience, algorithms: [alg], clockTolerance: CLOCK_TOLERANCE_SECONDS,
    }).then((verified) => verified.payload, () => undefined);
    if (payload) return payload;
  }
  return undefined;
}
