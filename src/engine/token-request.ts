import type { EnginePayload } from '../../adapters/types.js';
import { engineRequest } from './request.js';

/** A consume undone (best effort) when its request fails before answering. */
export type Undo = () => Promise<void>;

/**
 * What one token request carries from one of the engine's hooks to the next, and to what runs
 * after the engine answered: one typed record per request (in the request's `ctx.state`), read and
 * written only through this module.
 */
export interface TokenRequestState {
  /** Consumes of this request, undone when it fails before answering (src/engine/single-use.ts). */
  undo: Undo[];
  /** Codes whose exchange this request makes (the last one names the chain of its refresh tokens). */
  codes: string[];
  /**
   * The code this request exchanges, until it is consumed: with the exchange's first refresh token
   * (`completesWith`), when the request answers without one, or when it fails (src/engine/single-use.ts).
   */
  pendingCode?: PendingCode | undefined;
  /** The refresh token this request rotates, until it is consumed with its successor's save (src/engine/single-use.ts). */
  pendingRotation?: PendingRotation | undefined;
  /** The id of the refresh token whose save consumes `pendingCode` or `pendingRotation` in the same step. */
  completesWith?: string | undefined;
  /** The refresh token this request rotates: its successor's id is derived from it. */
  rotating?: string;
  /** Whether this request rotates a refresh token (its grant is extended once it answered). */
  refreshed: boolean;
  /** The refresh token this request was allowed to retry (asked once per request). */
  retrying?: string;
  /** The chain of the code or refresh token this request uses (carried into token ids). */
  chain?: string;
  /** The `scope` of the named-user access token this request issued (the answer's `scope`). */
  scope?: string;
  /** The grant read with this request's code or refresh token, until the engine asks for it (src/engine/grant-read-ahead.ts). */
  grantRead?: { id: string; payload: EnginePayload } | undefined;
}

/** A code as its deferred consumption needs it (single-use.ts's Consumable). */
export interface PendingCode {
  jti: string;
}

/** A refresh token as its deferred consumption needs it: a reuse is told who, and ends its grant. */
export interface PendingRotation extends PendingCode {
  clientId?: string;
  accountId?: string;
  grantId?: string;
  resourceIndicators: Set<unknown>;
  consume(): Promise<void>;
}

const STATE = Symbol('talent-auth token request');

/** The token request state of a request's `ctx.state`, made on first use. */
export function tokenRequestState(state: Record<PropertyKey, unknown>): TokenRequestState {
  return ((state[STATE] as TokenRequestState | undefined) ??= { undo: [], codes: [], refreshed: false });
}

/** The token request state of the request the engine is serving now, if it serves one. */
export function currentTokenRequest(): TokenRequestState | undefined {
  const state = engineRequest()?.state;
  return state ? tokenRequestState(state) : undefined;
}

/** The token request state of `state` if the request made one (nothing is made by asking). */
export function existingTokenRequest(state: Record<PropertyKey, unknown>): TokenRequestState | undefined {
  return state[STATE] as TokenRequestState | undefined;
}
