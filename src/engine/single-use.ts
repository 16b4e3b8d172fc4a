import { createHmac } from 'node:crypto';
import { AlreadyConsumed, type Store } from '../../adapters/types.js';
import { InvalidGrant, InvalidTarget } from '../../policies/errors.js';
import { grantNeedsExtending } from '../../policies/lifetimes.js';
import { endGrant } from './end-grant.js';
import { engineRequest } from './patches.js';

/**
 * SINGLE USE, AND RETRIES THAT ARE SAFE.
 *
 * A code or refresh token is used once (RFC 6749 §4.1.2: a code MUST NOT be used more than once;
 * RFC 9700 §4.14.2: a refresh token is rotated and a reuse revokes the grant). Our stores mark an
 * entry consumed atomically, so of two requests racing on one value only one consumes it.
 *
 * What a replay is, and what a retry is, once the value has been consumed:
 *
 * Refresh tokens: the successor of a refresh token P is not random: it is derived from P (an HMAC
 * of P's id under a key all instances share). So every request that rotates P issues the same
 * successor S, and there is only ever one chain. P presented again is
 *  - a retry, answered with the same S and a new access token, when S was never stored (the request
 *    that consumed P failed before it could answer: a 503, a reply lost in a Redis failure) or when
 *    S is stored, still unused, and P was consumed at most `reuseWindowSeconds` ago (the client
 *    lost the answer);
 *  - a reuse otherwise (S was used, or the window is over): the whole grant ends.
 *  Two requests racing on P both get S; whoever uses S second has made the reuse.
 *
 * Codes: a code exchange that completed is confirmed on the code (`confirm`, after its tokens were
 * issued). A consumed code presented again is
 *  - a replay when its exchange was confirmed, or when it was consumed under RACE_SECONDS ago (two
 *    requests at once): the grant ends;
 *  - otherwise the retry of an exchange that never answered (our 503 says Retry-After: 1): it is
 *    refused with invalid_grant without ending the grant, and the app signs the user in again.
 *
 * A request bound to fail (a foreign resource indicator) is refused before anything is consumed,
 * and a consume whose request then fails with 503 is undone (best effort) before the answer goes.
 * A grant is refreshed along with its tokens: each refresh gives it `grantIdleSeconds` again.
 */

/** A code consumed this recently and not confirmed is taken as raced, not as a retry. */
const RACE_SECONDS = 1;

/** A code or refresh token of the engine, as these rules read it. */
export interface Consumable {
  jti: string;
  clientId?: string;
  accountId?: string;
  grantId?: string;
  consumed?: unknown;
  /** The resource indicators the code or refresh token was granted for. */
  readonly resourceIndicators: Set<unknown>;
  consume(): Promise<void>;
}

const CONSUMED = Symbol('consumed in this request');
const TO_CONFIRM = Symbol('codes whose exchange completes with this request');
const ROTATING = Symbol('the refresh token this request rotates');
const REFRESHED = Symbol('this request rotates a refresh token');

type Undo = () => Promise<void>;

function stateOf(): Record<PropertyKey, unknown> | undefined {
  return engineRequest()?.state;
}

/**
 * A request that consumed a code or refresh token and then could not finish because the store
 * went away (503) gave the client nothing: the consume is undone, best effort, so that the retry
 * the 503 asks for is not taken for a replay that ends the grant. What the failed request may have
 * saved (a successor refresh token, derived as it is) is what the retry issues again.
 */
export async function undoConsumptions(state: Record<PropertyKey, unknown>): Promise<void> {
  const undos = state[CONSUMED] as Undo[] | undefined;
  if (!undos) return;
  delete state[CONSUMED];
  delete state[TO_CONFIRM];
  await Promise.all(undos.map((undo) => undo().catch(() => undefined)));
}

interface SavableGrant {
  exp?: number;
  save(): Promise<unknown>;
}

/**
 * After a token request answered with tokens:
 * - a code exchange is confirmed on its code, so that the code presented again is a replay. A
 *   confirmation that cannot be written leaves the code consumed but unconfirmed: a replay of it
 *   would then be refused without ending the grant (nothing is lost: the tokens went out);
 * - a refresh gives its grant `grantIdleSeconds` again (a grant in use does not expire; one nobody
 *   refreshed for that long does).
 */
export async function completeTokenRequest(
  ctx: { state: Record<PropertyKey, unknown>; oidc?: { entities?: { Grant?: SavableGrant } } },
  store: Store,
  grantIdleSeconds: number,
): Promise<void> {
  const { state } = ctx;
  const codes = state[TO_CONFIRM] as string[] | undefined;
  const refreshed = state[REFRESHED] === true;
  if (!codes && !refreshed) return;
  delete state[TO_CONFIRM];
  delete state[REFRESHED];
  const grant = ctx.oidc?.entities?.Grant;
  await Promise.all([
    ...(codes ?? []).map((jti) => store.engine('AuthorizationCode').confirm(jti).catch(() => undefined)),
    refreshed && grant ? extend(grant, grantIdleSeconds) : undefined,
  ]);
}

/**
 * Saves the grant with a whole lifetime from now (the engine keeps `exp` on a re-save), once its
 * lifetime has run down by a refresh token's lifetime, or when less than one is left: not at every
 * refresh, which would write the whole grant each time, yet always before a refresh token issued
 * now could outlive it.
 */
async function extend(grant: SavableGrant, grantIdleSeconds: number): Promise<void> {
  const left = (grant.exp ?? 0) - Date.now() / 1000;
  if (!grantNeedsExtending(left, grantIdleSeconds)) return;
  grant.exp = undefined;
  await grant.save().catch(() => undefined);
}

function refuseForeignResource(token: Consumable): void {
  const requested = engineRequest()?.oidc?.params?.resource;
  if (requested === undefined) return;
  // RFC 8707 §2.2: a resource the grant does not cover is invalid_target.
  if (typeof requested !== 'string' || !token.resourceIndicators.has(requested)) throw new InvalidTarget('resource indicator is missing, or unknown');
}

function remember(state: Record<PropertyKey, unknown> | undefined, key: symbol, value: unknown): void {
  if (state) ((state[key] ??= []) as unknown[]).push(value);
}

export interface SingleUseOptions {
  /** How long after its rotation a refresh token may be presented again for the same successor. */
  reuseWindowSeconds: number;
  /** A secret all instances share: successors are derived with it. */
  successorKey: Buffer;
  /** Told of a refresh token presented again past what a retry may be: its grant ends (the audit trail). */
  onReuse?: (token: { clientId?: string; accountId?: string; grantId?: string }) => void;
}

/**
 * Single use, retries and derived successors for the engine's codes and refresh tokens. Its
 * methods are what the engine's models call (installed by src/engine/patches.ts).
 */
export class SingleUse {
  readonly #store: Store;
  readonly #options: SingleUseOptions;

  constructor(store: Store, options: SingleUseOptions) {
    this.#store = store;
    this.#options = options;
  }

  /** The successor of refresh token `jti`: the same for every request that rotates it. */
  successorOf(jti: string): string {
    return createHmac('sha256', this.#options.successorKey).update(`refresh-token-successor:${jti}`).digest('base64url');
  }

  /** Whether refresh token `jti`, consumed, may be presented again for its successor (see above). */
  async #rotationRetry(jti: string): Promise<boolean> {
    const refreshTokens = this.#store.engine('RefreshToken');
    const [successor, consumption] = await Promise.all([refreshTokens.find(this.successorOf(jti)), refreshTokens.consumption(jti)]);
    if (!successor) return true;
    if (successor.consumed) return false;
    return consumption !== undefined && Date.now() - consumption.consumedAt <= this.#options.reuseWindowSeconds * 1000;
  }

  /** Whether a consumed code presented again is a replay (else: the retry of an exchange that never answered). */
  async #codeReplay(jti: string): Promise<boolean> {
    const consumption = await this.#store.engine('AuthorizationCode').consumption(jti);
    return consumption === undefined || consumption.confirmed || Date.now() - consumption.consumedAt < RACE_SECONDS * 1000;
  }

  /**
   * A refresh token the engine found: a consumed one presented at the token endpoint is shown to
   * the engine as unused when it may be retried (the engine would otherwise end the grant at once).
   */
  async refreshTokenFound(token: Consumable | undefined): Promise<void> {
    if (!token?.consumed || grantTypeNow() !== 'refresh_token') return;
    if (await this.#rotationRetry(token.jti)) token.consumed = undefined;
    // Left consumed: the engine ends the grant and refuses it, a reuse.
    else this.#options.onReuse?.(token);
  }

  /** A refresh token's use: consumed once; a race lost is a retry if its successor allows, else the grant ends. */
  async consumeRefreshToken(token: Consumable, consume: () => Promise<void>): Promise<void> {
    refuseForeignResource(token);
    const state = stateOf();
    try {
      await consume();
      remember(state, CONSUMED, () => this.#store.engine('RefreshToken').unconsume(token.jti));
    } catch (error) {
      if (!(error instanceof AlreadyConsumed)) throw error;
      if (!(await this.#rotationRetry(token.jti))) {
        this.#options.onReuse?.(token);
        if (token.grantId) await endGrant(this.#store, token.grantId);
        throw new InvalidGrant('refresh token already used');
      }
    }
    if (state) {
      state[ROTATING] = token.jti;
      state[REFRESHED] = true;
    }
  }

  /** The id of a new refresh token: the derived successor when this request rotates one, else `generate()`. */
  refreshTokenId(generate: () => string): string {
    const state = stateOf();
    const parent = state?.[ROTATING];
    if (typeof parent !== 'string') return generate();
    delete state![ROTATING];
    return this.successorOf(parent);
  }

  /** A code the engine found: a consumed one that is not a replay is refused as it is, before the engine ends the grant. */
  async codeFound(code: Consumable | undefined): Promise<void> {
    if (code?.consumed && grantTypeNow() === 'authorization_code' && !(await this.#codeReplay(code.jti))) {
      throw new InvalidGrant('authorization code already used');
    }
  }

  /** A code's use: consumed once; a replay ends its grant. */
  async consumeCode(code: Consumable, consume: () => Promise<void>): Promise<void> {
    refuseForeignResource(code);
    const state = stateOf();
    try {
      await consume();
    } catch (error) {
      if (!(error instanceof AlreadyConsumed)) throw error;
      if ((await this.#codeReplay(code.jti)) && code.grantId) await endGrant(this.#store, code.grantId);
      throw new InvalidGrant('authorization code already used');
    }
    remember(state, CONSUMED, () => this.#store.engine('AuthorizationCode').unconsume(code.jti));
    remember(state, TO_CONFIRM, code.jti);
  }
}

function grantTypeNow(): unknown {
  return engineRequest()?.oidc?.params?.grant_type;
}
