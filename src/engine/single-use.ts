import { createHmac } from 'node:crypto';
import { AlreadyConsumed, type EngineAdapter, type EnginePayload, type NextEntry, type Store } from '../../adapters/types.js';
import { InvalidGrant, InvalidTarget } from '../../policies/errors.js';
import { grantNeedsExtending, MAX_ACCESS_TOKEN_SECONDS } from '../../policies/lifetimes.js';
import { endGrant } from '../records/end-grant.js';
import type { RevokedChains } from './revoked-chains.js';
import { engineErrors } from './errors.js';
import { engineRequest } from './request.js';
import { currentTokenRequest, existingTokenRequest, type PendingCode, type TokenRequestState } from './token-request.js';

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
 *    that consumed P failed before it could answer: a 503, a reply lost in a Redis failure: nothing
 *    went out), or ONCE when S is stored, still unused, and P was consumed at most
 *    `reuseWindowSeconds` ago (the client lost the answer). Each such retry is told (the audit
 *    trail), and counted in the store, so that instances agree on which one was the first;
 *  - a reuse otherwise (S was used, the window is over, or P was retried already): the whole grant
 *    ends. A thief who presents P after the client's retry, or twice, ends the grant instead of
 *    being served.
 *  Two requests racing on P: the one that consumes it, and one retry, get S; a third is a reuse.
 *
 * Codes: a code's exchange consumes the code, confirms it (the exchange completed) and saves its
 * first refresh token in one store step (`consumeCompleting`), once the engine has checked the
 * request and built the tokens; without a refresh token, in one step when the request answers; a
 * request refused after the engine's checks consumes it all the same (the code is used up, as the
 * engine would have it). No request therefore sees a code consumed by an exchange still under way
 * (except on Redis Cluster, where the token is in another slot and the three go one after the
 * other). A consumed code presented again is
 *  - a replay when its exchange was confirmed, or when it was consumed under RACE_SECONDS ago (two
 *    requests at once): what that code issued ends (RFC 6749 §4.1.2: the tokens issued from it
 *    should be revoked), not the grant: a grant is the user's consent to the app, shared by her
 *    browsers and devices, and a replay in one (a double-submitted callback, a leaked code) must
 *    not sign the others out. The first refresh token of a code exchange is derived from the code
 *    (like a successor from its parent), so the code's chain is found without an index: each of
 *    its refresh tokens is destroyed. Every token of a chain carries the chain's id (refresh
 *    tokens at the start of their id, access tokens in their `jti`: src/engine/patches.ts), and the
 *    chain is marked revoked for as long as an access token lives (src/engine/revoked-chains.ts),
 *    so that userinfo, introspection and our APIs refuse its access tokens at once
 *    (src/engine/live-tokens.ts);
 *  - otherwise the retry of an exchange that never answered (our 503 says Retry-After: 1): it is
 *    refused with invalid_grant, and the app signs the user in again.
 * Either way the engine never sees a consumed code: it would end the whole grant.
 *
 * A request bound to fail (a foreign resource indicator) is refused before anything is consumed,
 * and a consume whose request then fails with 503 is undone (best effort) before the answer goes.
 * A grant is refreshed along with its tokens: each refresh gives it `grantIdleSeconds` again.
 */

/** A code consumed this recently and not confirmed is taken as raced, not as a retry. */
const RACE_SECONDS = 1;
/** How many times a rotated refresh token may be presented again within the window (see above). */
const RETRIES_PER_ROTATION = 1;
/** The longest chain a code replay walks (a code lives minutes: its chain is a few tokens long). */
const MAX_CHAIN = 1000;
/** The length of a chain's id (the start of its refresh tokens' ids, a part of its access tokens' `jti`). */
const CHAIN_ID_LENGTH = 16;


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

/**
 * A request that consumed a code or refresh token and then could not finish because the store
 * went away (503) gave the client nothing: the consume is undone, best effort, so that the retry
 * the 503 asks for is not taken for a replay that ends the grant. What the failed request may have
 * saved (a successor refresh token, derived as it is) is what the retry issues again.
 */
export async function undoConsumptions(state: Record<PropertyKey, unknown>): Promise<void> {
  const request = existingTokenRequest(state);
  if (!request?.undo.length) return;
  const undos = request.undo.splice(0);
  request.codes = [];
  await Promise.all(undos.map((undo) => undo().catch(() => undefined)));
}

/** The engine's grant, as extending it reads it. */
export interface SavableGrant {
  exp?: number;
  save(): Promise<unknown>;
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
  // (A value not a string, several resources, is in no grant's set either.)
  if (!token.resourceIndicators.has(requested)) throw new InvalidTarget('resource indicator is missing, or unknown');
}


export interface SingleUseOptions {
  /** How long after its rotation a refresh token may be presented again for the same successor. */
  reuseWindowSeconds: number;
  /** A secret all instances share: successors are derived with it. */
  successorKey: Buffer;
  /** Told of a refresh token presented again past what a retry may be: its grant ends (the audit trail). */
  onReuse?: (token: RefreshTokenUse) => void;
  /** Told of a rotated refresh token presented again and served as a retry (the audit trail). */
  onRetry?: (token: RefreshTokenUse) => void;
  /** Where the chain of a replayed code is revoked (its access tokens: src/engine/live-tokens.ts). */
  revokedChains?: RevokedChains;
}

/** What the audit trail is told of a refresh token presented again. */
export interface RefreshTokenUse {
  clientId?: string;
  accountId?: string;
  grantId?: string;
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

  #derive(what: string, size = 43): string {
    return createHmac('sha256', this.#options.successorKey).update(what).digest('base64url').slice(0, size);
  }

  /** The chain of code `jti`: the id every token issued from it (and from its refreshes) carries. */
  chainOfCode(jti: string): string {
    return this.#derive(`refresh-token-chain-of-code:${jti}`, CHAIN_ID_LENGTH);
  }

  /** The chain a refresh token belongs to: the start of its id (a token issued before chains: its own). */
  chainOf(jti: string): string {
    const dot = jti.indexOf('.');
    return dot === CHAIN_ID_LENGTH ? jti.slice(0, dot) : this.#derive(`refresh-token-chain-of:${jti}`, CHAIN_ID_LENGTH);
  }

  /** The successor of refresh token `jti`: the same for every request that rotates it, in its chain. */
  successorOf(jti: string): string {
    return `${this.chainOf(jti)}.${this.#derive(`refresh-token-successor:${jti}`)}`;
  }

  /** The first refresh token of the exchange of code `jti`: the head of the code's chain. */
  firstOfCode(jti: string): string {
    return `${this.chainOfCode(jti)}.${this.#derive(`refresh-token-of-code:${jti}`)}`;
  }

  /** The chain of the code or refresh token the engine's request now uses, if any (for access token ids). */
  chainNow(): string | undefined {
    return currentTokenRequest()?.chain;
  }

  /**
   * Ends what a replayed code issued (see above): its chain marked revoked while an access token
   * of it may live, then every refresh token of the chain destroyed.
   */
  async #endCodeChain(jti: string): Promise<void> {
    await this.#options.revokedChains?.revoke(this.chainOfCode(jti), Date.now() + MAX_ACCESS_TOKEN_SECONDS * 1000);
    const refreshTokens = this.#store.engine('RefreshToken');
    let id = this.firstOfCode(jti);
    for (let link = 0; link < MAX_CHAIN; link += 1) {
      if (!(await refreshTokens.find(id))) return;
      await refreshTokens.destroy(id);
      id = this.successorOf(id);
    }
  }

  /**
   * Whether refresh token `token`, consumed, may be presented again for its successor (see above).
   * Asked at most once per request: the answer is kept in the request's state.
   */
  async #rotationRetry(token: Consumable): Promise<boolean> {
    const request = currentTokenRequest();
    if (request?.retrying === token.jti) return true;
    const refreshTokens = this.#store.engine('RefreshToken');
    const [successor, consumption] = await Promise.all([refreshTokens.find(this.successorOf(token.jti)), refreshTokens.consumption(token.jti)]);
    let retry: boolean;
    if (!successor) retry = true;
    else if (successor.consumed || consumption === undefined) retry = false;
    else if (this.#options.reuseWindowSeconds === 0 || Date.now() - consumption.consumedAt > this.#options.reuseWindowSeconds * 1000) retry = false;
    else {
      // RFC 9700 §4.14.2: a rotated token presented again is a reuse; once, within the window, it
      // is taken for a client that lost the answer. The count is the store's, shared by instances.
      const [retries] = await this.#store.counters.increment([`refresh-retry:${token.jti}`], this.#options.reuseWindowSeconds);
      retry = retries!.count <= RETRIES_PER_ROTATION;
      if (retry) this.#options.onRetry?.(token);
    }
    if (retry && request) request.retrying = token.jti;
    return retry;
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
    if (await this.#rotationRetry(token)) token.consumed = undefined;
    // Left consumed: the engine ends the grant and refuses it, a reuse.
    else this.#options.onReuse?.(token);
  }

  /** A refresh token's use: consumed once; a race lost is a retry if its successor allows, else the grant ends. */
  async consumeRefreshToken(token: Consumable, consume: () => Promise<void>): Promise<void> {
    refuseForeignResource(token);
    const request = currentTokenRequest();
    if (request) {
      // The engine saves the successor right after this (nothing between can fail): the token is
      // consumed in that same store step (saveRefreshToken).
      request.pendingRotation = token;
    } else {
      try {
        await consume();
      } catch (error) {
        if (!(error instanceof AlreadyConsumed)) throw error;
        await this.#rotationLost(token);
      }
      return;
    }
    request.rotating = token.jti;
    request.refreshed = true;
    request.chain = this.chainOf(token.jti);
  }

  /** A consume of refresh token `token` lost to another request: a retry goes on, else a reuse ends the grant. */
  async #rotationLost(token: Consumable): Promise<void> {
    if (await this.#rotationRetry(token)) return;
    this.#options.onReuse?.(token);
    if (token.grantId) await endGrant(this.#store, token.grantId);
    throw new InvalidGrant('refresh token already used');
  }

  /**
   * The pending rotation of `request`: its token consumed with `next` (the successor) written in
   * the same step. Lost to another request: a retry writes the successor as it is (the same id,
   * derived), a reuse ends the grant. A step whose outcome is unknown is not undone (see
   * #completeCode); the retry the 503 asks for finds the successor stored, or the token unused.
   */
  async #completeRotation(request: TokenRequestState, next: NextEntry, write: () => Promise<void>): Promise<void> {
    const token = request.pendingRotation!;
    request.pendingRotation = undefined;
    request.completesWith = undefined;
    const tokens = this.#store.engine('RefreshToken');
    try {
      await tokens.consumeCompleting(token.jti, next);
    } catch (error) {
      if (!(error instanceof AlreadyConsumed)) throw error;
      await this.#rotationLost(token);
      return write();
    }
    request.undo.push(() => tokens.unconsume(token.jti));
  }

  /**
   * The id of a new refresh token: the derived successor when this request rotates one, the head
   * of the code's chain when it exchanges a code, else `generate()`.
   */
  refreshTokenId(generate: () => string): string {
    const request = currentTokenRequest();
    const parent = request?.rotating;
    if (parent !== undefined) {
      request!.rotating = undefined;
      const successor = this.successorOf(parent);
      // Its save consumes the parent in the same step (saveRefreshToken): `rotating` is set only
      // along with `pendingRotation` (consumeRefreshToken), and cleared here.
      request!.completesWith = successor;
      return successor;
    }
    const code = request?.codes.at(-1);
    if (code === undefined) return generate();
    const first = this.firstOfCode(code);
    // Its save consumes the code in the same step (saveRefreshToken), while the code is pending; a
    // code completed already (nothing pending) has its first refresh token written as it is.
    request!.completesWith = first;
    return first;
  }

  /**
   * A refresh token's save: the first one of a code's exchange is written in the same store step
   * as the code's consumption and confirmation, a successor in the same step as its parent's
   * consumption (see above); any other is written as it is.
   */
  async saveRefreshToken(id: string, payload: EnginePayload, expiresIn: number | undefined, write: () => Promise<void>): Promise<void> {
    const request = currentTokenRequest();
    if (request === undefined || request.completesWith !== id) return write();
    const next = { model: 'RefreshToken', id, payload, expiresIn };
    if (request.pendingCode !== undefined) await this.#completeCode(request, next);
    else if (request.pendingRotation !== undefined) await this.#completeRotation(request, next, write);
    else return write();
  }

  /**
   * The pending code of `request` consumed and confirmed, with `next` written in the same step. Lost
   * to another request: a replay (see #codeUsed). A step whose outcome is unknown (the store did
   * not answer) is not undone: another request may have consumed the code meanwhile, and the
   * retry our 503 asks for is then told by what the store holds.
   */
  async #completeCode(request: TokenRequestState, next?: NextEntry): Promise<void> {
    const code = request.pendingCode!;
    request.pendingCode = undefined;
    request.completesWith = undefined;
    const codes = this.#store.engine('AuthorizationCode');
    let replayed: boolean;
    try {
      replayed = await codes.consumeCompleting(code.jti, next);
    } catch (error) {
      if (!(error instanceof AlreadyConsumed)) throw error;
      return this.#codeUsed(code);
    }
    request.undo.push(() => codes.unconsume(code.jti));
    // Only where the three went one after the other (Redis Cluster): a replay in between marked it.
    if (replayed) await this.#endCodeChain(code.jti).catch(() => undefined);
  }

  /**
   * A consumed code presented again: a replay ends what it issued; either way it is refused here,
   * before the engine ends the grant. A replay is marked first: an exchange of the code still under
   * way (two requests at once) sees the mark once its refresh token is saved (`complete`) and ends
   * its chain then, so that whichever order the two go in, the chain ends.
   */
  async #codeUsed(code: PendingCode): Promise<never> {
    if (await this.#codeReplay(code.jti)) {
      // On the code's own entry, which lives as long as the code: the exchange that consumed it
      // reads the mark in the same step as its confirmation (one command, not two).
      await this.#store.engine('AuthorizationCode').markReplayed(code.jti);
      await this.#endCodeChain(code.jti);
    }
    throw new InvalidGrant('authorization code already used');
  }

  /**
   * The engine decided that this request issues no refresh token (the engine's
   * `issueRefreshToken`, asked before the ID token is signed): a code it exchanges is consumed and
   * confirmed now, in one step; lost to another request, the engine answers invalid_grant (a
   * replay, see #codeUsed).
   */
  async noRefreshToken(): Promise<void> {
    const request = currentTokenRequest();
    if (request?.pendingCode !== undefined) await this.#completeCode(request);
  }

  /**
   * A code exchange answered with tokens: a code still pending (the engine never asked about a
   * refresh token; not on our engine's paths today) is consumed and confirmed before the answer
   * goes; lost to another request, the answer becomes invalid_grant.
   */
  async confirmCodes(state: Record<PropertyKey, unknown>): Promise<void> {
    const request = existingTokenRequest(state);
    if (request?.pendingCode !== undefined) await this.#completeCode(request);
  }

  /**
   * A code exchange refused after the engine's checks of the code (a wrong DPoP key, a user gone):
   * the code is used up all the same, as the engine would have consumed it before building tokens;
   * and a code consumed before is judged as any code presented again (#codeUsed: a replay ends
   * what it issued). Best effort: not for a 503 (the store failed: the client is told to retry).
   */
  async refusedExchange(state: Record<PropertyKey, unknown>): Promise<void> {
    const request = existingTokenRequest(state);
    const code = request?.pendingCode;
    if (code === undefined) return;
    request!.pendingCode = undefined;
    request!.completesWith = undefined;
    try {
      await this.#store.engine('AuthorizationCode').consume(code.jti);
    } catch (error) {
      // The request is refused already: what #codeUsed throws is not its answer.
      if (error instanceof AlreadyConsumed) await this.#codeUsed(code).catch(() => undefined);
    }
  }

  /**
   * After a refresh answered with tokens: its grant gets `grantIdleSeconds` again (a grant in use
   * does not expire; one nobody refreshed for that long does).
   */
  async extendRefreshedGrant(ctx: { state: Record<PropertyKey, unknown>; oidc?: { entities?: { Grant?: SavableGrant } } }, grantIdleSeconds: number): Promise<void> {
    const request = existingTokenRequest(ctx.state);
    if (!request?.refreshed) return;
    request.refreshed = false;
    const grant = ctx.oidc?.entities?.Grant;
    if (grant) await extend(grant, grantIdleSeconds);
  }

  /**
   * A code the engine found: a consumed one is shown to the engine as unused, so that the engine's
   * checks (the client, PKCE, the redirect URI) run first (only the holder of the verifier can make
   * a replay) and its consume then meets ours (consumeCode), instead of the engine ending the grant.
   */
  async codeFound(code: Consumable | undefined): Promise<void> {
    if (code?.consumed && grantTypeNow() === 'authorization_code') code.consumed = undefined;
  }

  /**
   * A code's use: consumed once; a race lost is a replay (see #codeUsed). At the token endpoint
   * the consumption waits for the exchange's first refresh token or its answer (see above).
   */
  async consumeCode(code: Consumable, consume: () => Promise<void>): Promise<void> {
    refuseForeignResource(code);
    const request = currentTokenRequest();
    if (request) {
      request.pendingCode = { jti: code.jti };
      request.codes.push(code.jti);
      request.chain = this.chainOfCode(code.jti);
      return;
    }
    // Outside a request (no state to carry it in): consumed now.
    try {
      await consume();
    } catch (error) {
      if (!(error instanceof AlreadyConsumed)) throw error;
      await this.#codeUsed(code);
    }
  }
}

function grantTypeNow(): unknown {
  return engineRequest()?.oidc?.params?.grant_type;
}

/**
 * The engine's adapter of `model`, its refresh tokens saved through single use (saveRefreshToken:
 * the first of a code's exchange in the same step as the code's consumption); others as they are.
 */
export function savingThroughSingleUse(model: string, adapter: EngineAdapter, singleUse: SingleUse): EngineAdapter {
  if (model !== 'RefreshToken') return adapter;
  return Object.create(adapter, {
    upsert: {
      // Inside the engine's issuance: a replay found here is the engine's invalid_grant.
      value: engineErrors((id: string, payload: EnginePayload, expiresIn?: number): Promise<void> =>
        singleUse.saveRefreshToken(id, payload, expiresIn, () => adapter.upsert(id, payload, expiresIn))),
    },
  }) as EngineAdapter;
}
