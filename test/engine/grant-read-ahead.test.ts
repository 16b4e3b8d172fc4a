import { jest } from '@jest/globals';
import { createMemoryStore } from '../../adapters/memory.js';
import type { EngineAdapter } from '../../adapters/types.js';
import { readingGrantsAhead } from '../../src/engine/grant-read-ahead.js';
import { knowEngine, type EngineRequest } from '../../src/engine/request.js';

/** The engine's request context, as the engine's Provider class keeps it (read by src/engine/request.ts). */
class FakeEngine {
  static ctx: EngineRequest | undefined;
}
knowEngine(new FakeEngine());
const serving = (grantType: string | undefined): EngineRequest => ({ oidc: { params: { grant_type: grantType } }, state: {} });

describe('a code or refresh token read with its grant (src/engine/grant-read-ahead.ts)', () => {
  const store = createMemoryStore();
  let grantStore: EngineAdapter;
  let grants: EngineAdapter;
  let codes: EngineAdapter;
  let refreshTokens: EngineAdapter;
  beforeAll(async () => {
    grantStore = store.engine('Grant');
    grants = readingGrantsAhead('Grant', grantStore);
    codes = readingGrantsAhead('AuthorizationCode', store.engine('AuthorizationCode'));
    refreshTokens = readingGrantsAhead('RefreshToken', store.engine('RefreshToken'));
    await grantStore.upsert('g1', { jti: 'g1', accountId: 'ada' }, 600);
    await grantStore.upsert('g2', { jti: 'g2', accountId: 'bob' }, 600);
    await store.engine('AuthorizationCode').upsert('c1', { jti: 'c1', grantId: 'g1' }, 600);
    await store.engine('RefreshToken').upsert('r1', { jti: 'r1', grantId: 'g1' }, 600);
  });
  afterAll(() => store.close());
  afterEach(() => {
    FakeEngine.ctx = undefined;
    jest.restoreAllMocks();
  });

  it.each([
    ['AuthorizationCode', 'authorization_code', 'c1'],
    ['RefreshToken', 'refresh_token', 'r1'],
  ])('%s at a %s request: the grant it names is served from the read, once, to that request only', async (model, grantType, id) => {
    const adapter = model === 'AuthorizationCode' ? codes : refreshTokens;
    FakeEngine.ctx = serving(grantType);
    const findGrant = jest.spyOn(grantStore, 'find');
    expect(await adapter.find(id)).toMatchObject({ grantId: 'g1' });
    // Another grant's id is read from the store: what was read ahead is only for its own id.
    expect(await grants.find('g2')).toMatchObject({ accountId: 'bob' });
    expect(findGrant).toHaveBeenCalledTimes(1);
    // Another request (its own state) gets nothing read for this one.
    const mine = FakeEngine.ctx;
    FakeEngine.ctx = serving(grantType);
    expect(await grants.find('g1')).toMatchObject({ accountId: 'ada' });
    expect(findGrant).toHaveBeenCalledTimes(2);
    FakeEngine.ctx = mine;
    expect(await grants.find('g1')).toMatchObject({ accountId: 'ada' });
    expect(findGrant).toHaveBeenCalledTimes(2);
    // Once: the next read of it goes to the store.
    expect(await grants.find('g1')).toMatchObject({ accountId: 'ada' });
    expect(findGrant).toHaveBeenCalledTimes(3);
  });

  it('reads nothing ahead outside a token request of its grant type, nor for a consumed entry', async () => {
    const findWithGrant = jest.spyOn(store.engine('AuthorizationCode'), 'findWithGrant');
    for (const grantType of [undefined, 'refresh_token', 'client_credentials']) {
      FakeEngine.ctx = serving(grantType);
      expect(await codes.find('c1')).toMatchObject({ grantId: 'g1' });
    }
    expect(findWithGrant).not.toHaveBeenCalled();
    await store.engine('RefreshToken').upsert('r2', { jti: 'r2', grantId: 'g1' }, 600);
    await store.engine('RefreshToken').consume('r2');
    FakeEngine.ctx = serving('refresh_token');
    expect(await refreshTokens.find('r2')).toMatchObject({ consumed: expect.any(Number) });
    const findGrant = jest.spyOn(grantStore, 'find');
    await grants.find('g1');
    expect(findGrant).toHaveBeenCalledTimes(1);
  });
});
