import type { EngineAdapter, EnginePayload } from '../../adapters/types.js';
import { engineRequest } from './request.js';
import { currentTokenRequest } from './token-request.js';

/** The grant types whose token request reads a code or refresh token, then at once its grant. */
const READS_GRANT_AFTER: Record<string, string> = { AuthorizationCode: 'authorization_code', RefreshToken: 'refresh_token' };

/**
 * ONE STORE STEP FOR A CODE OR REFRESH TOKEN AND ITS GRANT. At the token endpoint the engine reads
 * the code (or refresh token), and right after it the grant its payload names; on Redis those are
 * two commands, one after the other, each about 20 µs of our CPU. Here the code's read also reads
 * its grant, in one step where the store can (EngineAdapter.findWithGrant), and the grant is kept
 * in the request's state until the engine asks for it, once: the same grant the engine would have
 * read a moment later (read in the same step as the code, not earlier), and never served to any
 * other request or a second time.
 */
export function readingGrantsAhead(model: string, adapter: EngineAdapter): EngineAdapter {
  if (model === 'Grant') {
    return Object.create(adapter, {
      find: {
        value: (id: string): Promise<EnginePayload | undefined> => {
          const request = currentTokenRequest();
          const ahead = request?.grantRead;
          if (ahead === undefined || ahead.id !== id) return adapter.find(id);
          request!.grantRead = undefined;
          return Promise.resolve(ahead.payload);
        },
      },
    }) as EngineAdapter;
  }
  const grantType = READS_GRANT_AFTER[model];
  if (grantType === undefined || !adapter.readsWithGrant) return adapter;
  return Object.create(adapter, {
    find: {
      value: async (id: string): Promise<EnginePayload | undefined> => {
        // Only where the engine reads the grant next: a token request of this grant type.
        if (engineRequest()?.oidc?.params?.grant_type !== grantType) return adapter.find(id);
        const { entry, grant } = await adapter.findWithGrant(id);
        const request = currentTokenRequest();
        // Not for a consumed one: single use then asks the store more (is it a retry?) before the
        // engine reads the grant, and the grant must be read after those, as the engine would.
        if (request && entry && grant && entry.consumed === undefined && typeof entry.grantId === 'string') request.grantRead = { id: entry.grantId, payload: grant };
        return entry;
      },
    },
  }) as EngineAdapter;
}
