import { createHash, createHmac, randomBytes } from 'node:crypto';
import { calculateJwkThumbprint, EmbeddedJWK, jwtVerify, type JWK, type JWTPayload } from 'jose';
import { constantTimeEqual } from '../../policies/constant-time.js';
import { InvalidDpopProof, UseDpopNonce } from '../../policies/errors.js';

/**
 * The algorithms a DPoP proof may be signed with, at the authorization server and in the kit.
 * `Ed25519` is the fully specified name of EdDSA on that curve, which current clients (oauth4webapi,
 * openid-client) put in their proofs and assertions; `EdDSA` stays for older ones.
 */
export const DPOP_ALGORITHMS = ['ES256', 'EdDSA', 'Ed25519', 'RS256', 'PS256'] as const;

/** How far a proof's `iat` may be from now, in seconds (the authorization server's window too). */
export const DPOP_PROOF_WINDOW_SECONDS = 300;

/** The request a DPoP proof must be for. */
export interface DpopRequest {
  /** The proof: the request's `DPoP` header. */
  proof: string | undefined;
  /** The request's method, e.g. `GET`. */
  method: string;
  /** The request's absolute URL as the client called it (query and fragment are ignored). */
  url: string;
}

/** The resource-server kit's server nonces (its option `dpop.nonce`). */
export interface DpopNonceOptions {
  /**
   * The secret the nonces are derived from, at least 32 characters: the instances of an API that
   * share it accept each other's nonces, with no state shared. Default: a random one per verifier
   * (one instance; each instance of several would refuse the others' nonces once).
   */
  secret?: string;
  /** How long one nonce is handed out, in seconds, 10..3600; default 300. */
  windowSeconds?: number;
}

const MIN_NONCE_SECRET_LENGTH = 32;

/**
 * Stateless server nonces (RFC 9449 §9): the nonce of a time window is an HMAC of the window's
 * number under the secret (and the realm, so two APIs sharing a secret do not share nonces). A
 * nonce is accepted in its window and the windows on either side (so a nonce handed out at the
 * end of a window still works, and instances whose clocks differ a little agree); after that,
 * the client is answered use_dpop_nonce with the current one.
 */
export class DpopNonces {
  readonly #secret: Buffer;
  readonly #windowMs: number;

  /** @throws TypeError for a secret shorter than 32 characters or a window outside 10..3600 s. */
  constructor(private readonly realm: string, options: DpopNonceOptions = {}) {
    const { secret, windowSeconds = 300 } = options;
    if (secret !== undefined && (typeof secret !== 'string' || secret.length < MIN_NONCE_SECRET_LENGTH)) {
      throw new TypeError(`dpop.nonce.secret must be a string of at least ${MIN_NONCE_SECRET_LENGTH} characters`);
    }
    // Number.isInteger takes no text for a number ('300' is not an integer here).
    if (!Number.isInteger(windowSeconds) || windowSeconds < 10 || windowSeconds > 3600) {
      throw new TypeError(`dpop.nonce.windowSeconds must be an integer from 10 to 3600, not ${String(windowSeconds)}`);
    }
    this.#secret = secret === undefined ? randomBytes(32) : Buffer.from(secret, 'utf8');
    this.#windowMs = windowSeconds * 1000;
  }

  /** The nonce to hand out now (`DPoP-Nonce`); `now` in milliseconds. */
  current(now = Date.now()): string {
    return this.#of(Math.floor(now / this.#windowMs));
  }

  /** Whether `nonce` is one of ours of this window or one next to it (compared in constant time). */
  accepts(nonce: unknown, now = Date.now()): boolean {
    if (typeof nonce !== 'string' || nonce.length > 64) return false;
    const window = Math.floor(now / this.#windowMs);
    let accepted = false;
    // Every candidate is compared, so that the time says nothing of which window matched.
    for (const candidate of [window - 1, window, window + 1]) accepted = constantTimeEqual(nonce, this.#of(candidate)) || accepted;
    return accepted;
  }

  #of(window: number): string {
    return createHmac('sha256', this.#secret).update(`talent-auth dpop nonce\n${this.realm}\n${window}`).digest('base64url');
  }
}

/** What the kit's DPoP checks keep: at most `maxProofs` proofs' identifiers, each until its proof is too old anyway. */
export interface DpopCheckOptions {
  maxProofs: number;
  clockToleranceSeconds: number;
  /** Server nonces every proof must carry (RFC 9449 §9); none without. */
  nonces?: DpopNonces;
  /**
   * Where used proofs are kept instead of this process: true when `id` was not used before (it is
   * then kept until `expiresAt`, seconds since the epoch). The authorization server's own
   * endpoints use the store every instance shares.
   */
  useOnce?: (id: string, expiresAt: number) => Promise<boolean>;
}

/**
 * The proofs of DPoP-bound tokens at a resource server (RFC 9449 §4.3, §7.1): each is checked
 * against its request and its token, and used once. Used identifiers are kept in this process only
 * (by SHA-256 of key and `jti`), at most `maxProofs`, oldest first out: each instance of an API
 * refuses a proof it saw before; a proof replayed on another instance within its five minutes is
 * not caught (the authorization server's own checks use the shared store). With `nonces`, every
 * proof must carry a current nonce of this server (UseDpopNonce otherwise, with the nonce to use).
 */
export class DpopProofs {
  readonly #seen = new Map<string, number>();

  constructor(private readonly realm: string, private readonly options: DpopCheckOptions) {}

  /**
   * Checks the proof of `request` for `token`, whose `cnf.jkt` names the key.
   * @throws InvalidDpopProof for any proof that is not the right one (see the class).
   */
  async check(request: DpopRequest, token: string, claims: JWTPayload): Promise<void> {
    const refuse = (description: string) => new InvalidDpopProof(description, this.realm, DPOP_ALGORITHMS);
    const jkt = (claims.cnf as { jkt?: unknown } | undefined)?.jkt;
    if (typeof jkt !== 'string') throw refuse('the access token is not bound to a DPoP key');
    // RFC 9449 §4.3: exactly one proof, a JWT.
    if (!request.proof || request.proof.includes(',')) throw refuse('a DPoP proof is required with a DPoP-bound token');
    let payload: JWTPayload;
    let jwk: JWK;
    try {
      // EmbeddedJWK takes the key from the proof's own header, and refuses a proof without one.
      const verified = await jwtVerify(request.proof, EmbeddedJWK, { typ: 'dpop+jwt', algorithms: [...DPOP_ALGORITHMS] });
      payload = verified.payload;
      jwk = verified.protectedHeader.jwk!;
    } catch {
      throw refuse('the DPoP proof is not a JWT signed by the key it carries');
    }
    // RFC 9449 §4.3 (the checks a receiver MUST make), in order.
    if (typeof payload.jti !== 'string' || payload.jti === '' || payload.jti.length > 256) throw refuse('the DPoP proof has no valid jti');
    if (payload.htm !== request.method) throw refuse('the DPoP proof is for another HTTP method (htm)');
    if (typeof payload.htu !== 'string' || withoutQuery(payload.htu) !== withoutQuery(request.url)) {
      throw refuse('the DPoP proof is for another URL (htu)');
    }
    // RFC 9449 §4.3 step 10: the nonce this server handed out, when it hands them out (§9).
    const { nonces } = this.options;
    if (nonces && !nonces.accepts(payload.nonce)) {
      throw new UseDpopNonce(
        payload.nonce === undefined ? 'a DPoP nonce is required: put the one of the DPoP-Nonce header in the proof' : 'the DPoP nonce is not current: use the one of the DPoP-Nonce header',
        this.realm, DPOP_ALGORITHMS, nonces.current(),
      );
    }
    const now = Math.floor(Date.now() / 1000);
    const window = DPOP_PROOF_WINDOW_SECONDS + this.options.clockToleranceSeconds;
    if (typeof payload.iat !== 'number' || Math.abs(now - payload.iat) > window) throw refuse('the DPoP proof is too old or from the future (iat)');
    // RFC 9449 §4.3 step 11 (ath) and §7.1 (the proof's key is the token's).
    if (payload.ath !== createHash('sha256').update(token).digest('base64url')) throw refuse('the DPoP proof is for another access token (ath)');
    if (!constantTimeEqual(await calculateJwkThumbprint(jwk), jkt)) throw refuse('the DPoP proof is signed by another key than the access token is bound to');
    const id = createHash('sha256').update(`${jkt} ${payload.jti}`).digest('base64url');
    if (this.options.useOnce) {
      if (!(await this.options.useOnce(id, payload.iat + window))) throw refuse('the DPoP proof was used before');
    } else {
      this.useOnce(id, payload.iat + window, now, refuse);
    }
  }

  /**
   * RFC 9449 §11.1: a proof is accepted once; its identifier is kept until its `iat` is out of the
   * window. When `maxProofs` identifiers are still in their window, a new proof is refused rather
   * than an unexpired identifier forgotten: forgetting one would let that proof be replayed, and
   * whoever holds any bound token for the API could push the others out on purpose.
   */
  private useOnce(key: string, until: number, now: number, refuse: (description: string) => InvalidDpopProof): void {
    const seen = this.#seen.get(key);
    if (seen !== undefined && seen >= now) throw refuse('the DPoP proof was used before');
    if (this.#seen.size >= this.options.maxProofs) {
      // Oldest first; the first still in its window ends the sweep (later ones were kept later).
      for (const [oldest, expiry] of this.#seen) {
        if (expiry >= now) break;
        this.#seen.delete(oldest);
      }
      if (this.#seen.size >= this.options.maxProofs) throw refuse('too many DPoP proofs within the replay window to remember this one: try again later');
    }
    this.#seen.set(key, until);
  }
}

function withoutQuery(url: string): string | undefined {
  const parsed = URL.parse(url);
  if (!parsed) return undefined;
  parsed.search = '';
  parsed.hash = '';
  return parsed.href;
}
