import { createHash } from 'node:crypto';
import type Provider from 'oidc-provider';
import { AlreadyConsumed, type Store } from '../../adapters/types.js';

/** The engine's model of single-use identifiers (DPoP proofs' and client assertions' `jti`). */
const REPLAY_DETECTION = 'ReplayDetection';

/** The engine's ReplayDetection class, as far as we replace it. */
interface ReplayDetectionModel {
  unique(issuer: string, jti: string, expiresAt: number): Promise<boolean>;
}

/**
 * Makes the engine's replay detection atomic across instances. The engine's own `unique` reads
 * the identifier, then writes it: two instances handed the same proof at the same moment would
 * both find nothing and both accept it. Here the identifier is written, then consumed: the
 * store's consume is atomic (adapters/types.ts), so exactly one request wins, on any instance
 * (RFC 9449 §11.1: a proof's `jti` is accepted once). Only a digest of the client and `jti` is stored.
 */
export function atomicReplayDetection(provider: Provider, store: Store): void {
  const unique = usedOnce(store);
  const model = (provider as unknown as { ReplayDetection: ReplayDetectionModel }).ReplayDetection;
  model.unique = (issuer: string, jti: string, expiresAt: number) => unique(createHash('sha256').update(`${issuer}${jti}`).digest('base64url'), expiresAt);
}

/**
 * Single use of identifiers in the shared store (see above): true the first time an `id` is
 * presented, on any instance, until `expiresAt` (seconds since the epoch). `id` is a digest.
 */
export function usedOnce(store: Store): (id: string, expiresAt: number) => Promise<boolean> {
  const adapter = store.engine(REPLAY_DETECTION);
  return async (id, expiresAt) => {
    // Kept until the identifier could no longer be accepted anyway (its proof's window ends); at least a second.
    const expiresIn = Math.max(1, expiresAt - Math.floor(Date.now() / 1000));
    await adapter.upsert(id, { jti: id, kind: REPLAY_DETECTION }, expiresIn);
    try {
      await adapter.consume(id);
      return true;
    } catch (error) {
      if (error instanceof AlreadyConsumed) return false;
      throw error;
    }
  };
}
