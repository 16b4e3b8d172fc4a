import { createHash } from 'node:crypto';
import type { EnginePayload, Store } from '../../adapters/types.js';
import { InvalidToken } from '../../policies/errors.js';
import type { AccessTokenContext, TokenVerifier } from '../resource-server/verifier.js';
import type { EngineClient } from './client-cache.js';
import { chainOfTokenId, grantIdOfTokenId } from './patches.js';
import type { RevokedChains } from './revoked-chains.js';

/*
 * LIVE ACCESS TOKENS: whether an access token of ours may still be honoured, for userinfo and
 * introspection. Our access tokens are JWTs the engine does not store, so a valid signature says
 * only that we issued it. A token is live when, besides:
 *
 * - it was not revoked (RFC 7009: its `jti` is kept as revoked until the token would expire);
 * - its client is still registered (a deleted client's tokens stop at once);
 * - for a named-user token, its grant still exists and is this user's with this app: the grant
 *   ends when the consent is revoked, a refresh token is reused or revoked, or its app is deleted
 *   or changes type. Its id is in the token's `jti` (src/engine/patches.ts);
 * - and its chain (the tokens issued from one code, in the `jti` too) was not revoked: a replayed
 *   code ends what it issued (src/engine/single-use.ts).
 *
 * Verified tokens are kept (by SHA-256 of the token, never the token itself) until they expire, so
 * a token asked about again costs no signature check; the live checks run every time.
 */

/** What a revoked access token leaves in the store until it would have expired. */
const REVOKED = 'RevokedAccessToken';

/** A verified access token of ours, with what the live checks read. */
export interface VerifiedToken extends AccessTokenContext {
  jti: string;
  exp: number;
  iat: number;
  /** The grant of a named-user token. */
  grantId: string | undefined;
}

/** A live token, with its grant (named-user tokens) as the store holds it. */
export interface LiveToken extends VerifiedToken {
  grant: EnginePayload | undefined;
}

const MAX_CACHED = 10_000;

export class LiveTokens {
  readonly #verified = new Map<string, VerifiedToken>();

  constructor(
    private readonly verifier: TokenVerifier,
    private readonly store: Store,
    private readonly findClient: (clientId: string) => Promise<EngineClient | undefined>,
    private readonly revokedChains: RevokedChains,
    /** How many verified tokens are kept (the oldest goes first). */
    private readonly maxCached = MAX_CACHED,
  ) {}

  /**
   * A token of ours, verified (signature, issuer, audience, type `at+jwt`, expiry).
   * @throws TokenError (invalid_token) for anything else: an ID token, a foreign or unsigned one.
   */
  async verify(token: string): Promise<VerifiedToken> {
    const key = createHash('sha256').update(token).digest('base64url');
    const cached = this.#verified.get(key);
    if (cached && cached.exp * 1000 > Date.now()) return cached;
    // Expired (or absent: then this deletes nothing): checked again below, and kept as the newest.
    this.#verified.delete(key);
    const context = await this.verifier.verify(token);
    const { jti, exp, iat } = context.claims;
    if (typeof jti !== 'string' || typeof exp !== 'number' || typeof iat !== 'number') {
      throw new InvalidToken('the access token is not valid', this.verifier.realm);
    }
    const verified: VerifiedToken = { ...context, jti, exp, iat, grantId: context.isNamedUser ? grantIdOfTokenId(jti) : undefined };
    if (this.#verified.size >= this.maxCached) this.#verified.delete(this.#verified.keys().next().value as string);
    this.#verified.set(key, verified);
    return verified;
  }

  /** The token, when it is still live (see above); undefined otherwise. */
  async live(token: VerifiedToken): Promise<LiveToken | undefined> {
    const chain = token.grantId ? chainOfTokenId(token.jti) : undefined;
    const [revoked, client, grant, chainRevoked] = await Promise.all([
      this.store.engine(REVOKED).find(token.jti),
      this.findClient(token.clientId),
      token.grantId ? this.store.engine('Grant').find(token.grantId) : undefined,
      chain ? this.revokedChains.isRevoked(chain) : false,
    ]);
    if (revoked || chainRevoked || !client) return undefined;
    if (token.isNamedUser && (!grant || grant.clientId !== token.clientId || grant.accountId !== token.sub)) return undefined;
    return { ...token, grant };
  }

  /** Revokes one access token: it is not live from now on, on every instance. */
  async revoke(token: VerifiedToken): Promise<void> {
    const left = Math.ceil(token.exp - Date.now() / 1000);
    if (left > 0) await this.store.engine(REVOKED).upsert(token.jti, { jti: token.jti }, left);
  }
}

/**
 * Our own APIs' verifier (consents, management): the token's checks, then its liveness, so that a
 * revoked token, an ended grant (a revoked consent, a deleted app) or a deleted client loses its
 * access at once rather than at its `exp` (401 invalid_token).
 */
export function liveOnly(verifier: TokenVerifier, live: LiveTokens): TokenVerifier {
  return {
    realm: verifier.realm,
    verify: async (token) => {
      const verified = await live.verify(token);
      if (!(await live.live(verified))) throw new InvalidToken('the access token is no longer valid', verifier.realm);
      return verified;
    },
    async verifyAuthorization(header) {
      // The header's shape is the verifier's to check (400/401 as RFC 6750 says); then the token.
      await verifier.verifyAuthorization(header);
      return this.verify(header!.trim().split(/ +/)[1]!);
    },
    async verifyRequest(request) {
      await verifier.verifyRequest(request);
      return this.verify(request.authorization!.trim().split(/ +/)[1]!);
    },
  };
}

