import type { Provider } from 'oidc-provider';
import { GRANT_BOUND_MODELS, GRANT_SLOT_LENGTH } from '../../adapters/types.js';

interface TokenPrototype {
  grantId?: string;
  generateTokenId(): string;
}

/**
 * Grant-bound token ids start with the first characters of their grant id, so that the Redis store
 * can hash-tag a token and its grant index into one Cluster slot (see adapters/redis.ts).
 */
export function prefixTokenIdsWithGrantSlot(provider: Provider): void {
  for (const model of GRANT_BOUND_MODELS) {
    const Model = (provider as unknown as Record<string, { prototype: TokenPrototype } | undefined>)[model];
    if (!Model) continue;
    const generate = Model.prototype.generateTokenId;
    Model.prototype.generateTokenId = function generateTokenId(this: TokenPrototype): string {
      const id = generate.call(this);
      return this.grantId ? this.grantId.slice(0, GRANT_SLOT_LENGTH) + id : id;
    };
  }
}
