import { randomBytes } from 'node:crypto';
import { jest } from '@jest/globals';
import { createMemoryStore } from '../../adapters/memory.js';
import { createRedisStore } from '../../adapters/redis/index.js';
import type { Store } from '../../adapters/types.js';
import { InvalidGrant } from '../../policies/errors.js';
import { knowEngine, type EngineRequest } from '../../src/engine/request.js';
import { RevokedChains } from '../../src/engine/revoked-chains.js';
import { SingleUse, type Consumable } from '../../src/engine/single-use.js';
import { STORE_KINDS, useStore } from '../support/stores.js';

/** Stands for the engine's Provider class: `ctx` is the request it serves (src/engine/request.ts). */
class FakeEngine {
  static ctx: EngineRequest | undefined;
}
knowEngine(new FakeEngine());

/**
 * A consumed code presented again past the race margin (one second), on both stores, with a fake
 * clock moved forward instead of a real wait: a completed exchange replayed is a replay that ends
 * what the code issued; an exchange that never completed is a retry, refused and nothing ends;
 * within the margin, either is a race that ends the chain.
 */
describe.each(STORE_KINDS)('a code replayed after the race margin (%s store)', (kind) => {
  const handle = useStore(kind);
  let store: Store;
  let singleUse: SingleUse;
  let revokedChains: RevokedChains;
  /** How far the fake clock is ahead of the real one. */
  let aheadMs = 0;

  beforeEach(async () => {
    const option = handle.option();
    store = option.type === 'memory' ? createMemoryStore() : await createRedisStore({ url: option.url, keyPrefix: option.keyPrefix });
    revokedChains = new RevokedChains(store.records);
    singleUse = new SingleUse(store, { reuseWindowSeconds: 5, successorKey: randomBytes(32), revokedChains });
    await store.engine('Grant').upsert('grant-1', { jti: 'grant-1' }, 3600);
    aheadMs = 0;
    const realNow = Date.now.bind(Date);
    jest.spyOn(Date, 'now').mockImplementation(() => realNow() + aheadMs);
  });
  afterEach(async () => {
    jest.restoreAllMocks();
    await store.close();
  });

  async function storedCode(jti: string): Promise<Consumable> {
    await store.engine('AuthorizationCode').upsert(jti, { jti, grantId: 'grant-1', clientId: 'app', accountId: 'alice' }, 3600);
    return { jti, grantId: 'grant-1', clientId: 'app', accountId: 'alice', resourceIndicators: new Set(), consume: () => store.engine('AuthorizationCode').consume(jti) };
  }

  /** Serves `fn` as the engine serves a code exchange, in a state of its own. */
  async function asExchange(fn: (state: Record<PropertyKey, unknown>) => Promise<void>): Promise<Record<PropertyKey, unknown>> {
    const state: Record<PropertyKey, unknown> = {};
    FakeEngine.ctx = { oidc: { params: { grant_type: 'authorization_code' } }, state };
    try {
      await fn(state);
    } finally {
      FakeEngine.ctx = undefined;
    }
    return state;
  }

  /** A code's exchange that completes: the code used, its first refresh token saved, the answer sent. */
  async function exchange(code: Consumable): Promise<string> {
    let first = '';
    const state = await asExchange(async () => {
      await singleUse.consumeCode(code, code.consume);
      first = singleUse.refreshTokenId(() => 'random');
      await singleUse.saveRefreshToken(first, { jti: first, grantId: 'grant-1' }, 3600, () => store.engine('RefreshToken').upsert(first, { jti: first }, 3600));
    });
    await singleUse.confirmCodes(state);
    return first;
  }

  /** A code's exchange the engine refused after its checks: the code used up, never confirmed. */
  async function refusedExchange(code: Consumable): Promise<void> {
    const state = await asExchange(() => singleUse.consumeCode(code, code.consume));
    await singleUse.refusedExchange(state);
  }

  /** The code presented again in a whole exchange: refused with invalid_grant either way. */
  const replay = (code: Consumable) => expect(exchange(code)).rejects.toBeInstanceOf(InvalidGrant);
  const chainRevoked = (jti: string) => revokedChains.isRevoked(singleUse.chainOfCode(jti));

  it('a completed exchange replayed 1.5 s later ends what the code issued (its refresh token, its chain), not the grant', async () => {
    const code = await storedCode('code-1');
    const first = await exchange(code);
    expect(await store.engine('RefreshToken').find(first)).toBeDefined();
    aheadMs = 1500;
    await replay(code);
    expect(await store.engine('RefreshToken').find(first)).toBeUndefined();
    expect(await chainRevoked('code-1')).toBe(true);
    expect(await store.engine('Grant').find('grant-1')).toBeDefined();
  });

  it('an exchange that never completed, presented 1.5 s later, is a retry: refused, nothing ends', async () => {
    const code = await storedCode('code-1');
    await refusedExchange(code);
    aheadMs = 1500;
    await replay(code);
    expect(await chainRevoked('code-1')).toBe(false);
    expect(await store.engine('Grant').find('grant-1')).toBeDefined();
  });

  it('an exchange that never completed, presented again within the margin, is a race: its chain ends', async () => {
    const code = await storedCode('code-1');
    await refusedExchange(code);
    aheadMs = 500;
    await replay(code);
    expect(await chainRevoked('code-1')).toBe(true);
  });
});
