import { createHmac, randomBytes } from 'node:crypto';
import { jest } from '@jest/globals';
import { createMemoryStore } from '../../adapters/memory.js';
import { StoreUnavailable, type EngineAdapter, type NextEntry, type Store } from '../../adapters/types.js';
import { InvalidGrant, InvalidTarget } from '../../policies/errors.js';
import { MAX_ACCESS_TOKEN_SECONDS } from '../../policies/lifetimes.js';
import { knowEngine, type EngineRequest } from '../../src/engine/request.js';
import { RevokedChains } from '../../src/engine/revoked-chains.js';
import { savingThroughSingleUse, SingleUse, undoConsumptions, type Consumable, type RefreshTokenUse } from '../../src/engine/single-use.js';
import { existingTokenRequest } from '../../src/engine/token-request.js';

/** Stands for the engine's Provider class: `ctx` is the request it serves (src/engine/request.ts). */
class FakeEngine {
  static ctx: EngineRequest | undefined;
}
knowEngine(new FakeEngine());

/** Serves `fn` as the engine would serve a token request of `grantType` (its own state). */
async function asRequest<T>(grantType: string, fn: () => Promise<T>, params: Record<string, unknown> = {}): Promise<{ value: T; state: Record<PropertyKey, unknown> }> {
  const state: Record<PropertyKey, unknown> = {};
  FakeEngine.ctx = { oidc: { params: { grant_type: grantType, ...params } }, state };
  try {
    return { value: await fn(), state };
  } finally {
    FakeEngine.ctx = undefined;
  }
}

/**
 * Single use, retries and derived successors (src/engine/single-use.ts) on their own, over a real
 * memory store: what a replay is and what a retry is, for refresh tokens and for codes.
 */
describe('single use (src/engine/single-use.ts)', () => {
  let store: Store;
  let singleUse: SingleUse;
  let reused: RefreshTokenUse[];
  let retried: RefreshTokenUse[];
  let revokedChains: RevokedChains;

  beforeEach(() => {
    store = createMemoryStore();
    reused = [];
    retried = [];
    revokedChains = new RevokedChains(store.records);
    singleUse = new SingleUse(store, {
      reuseWindowSeconds: 5,
      successorKey: randomBytes(32),
      revokedChains,
      onReuse: (token) => reused.push(token),
      onRetry: (token) => retried.push(token),
    });
  });
  afterEach(() => store.close());

  /** A code or refresh token of the engine, stored, as the rules read it. */
  async function stored(model: 'RefreshToken' | 'AuthorizationCode', jti: string, grantId = 'grant-1'): Promise<Consumable> {
    await store.engine(model).upsert(jti, { jti, grantId, clientId: 'app', accountId: 'alice' }, 3600);
    return {
      jti,
      grantId,
      clientId: 'app',
      accountId: 'alice',
      resourceIndicators: new Set(['https://api.example']),
      consume: () => store.engine(model).consume(jti),
    };
  }
  /** `store`, with some methods of one engine model's adapter replaced (a store failing, a cluster's steps). */
  function storeWith(model: string, replaced: Partial<EngineAdapter>): Store {
    const adapter = store.engine(model);
    return { ...store, engine: (name: string) => (name === model ? Object.assign(Object.create(adapter) as EngineAdapter, replaced) : store.engine(name)) };
  }
  /** Runs `fn` with Date.now() at `at` (ms), as the store's consumption stamps read it too. */
  async function at<T>(now: number, fn: () => Promise<T>): Promise<T> {
    const spy = jest.spyOn(Date, 'now').mockImplementation(() => now);
    try {
      return await fn();
    } finally {
      spy.mockRestore();
    }
  }
  const consumeRefresh = (token: Consumable) => singleUse.consumeRefreshToken(token, token.consume);
  const consumeCode = (code: Consumable) => singleUse.consumeCode(code, code.consume);
  const grantExists = async () => (await store.engine('Grant').find('grant-1')) !== undefined;
  beforeEach(async () => {
    await store.engine('Grant').upsert('grant-1', { jti: 'grant-1' }, 3600);
  });

  describe('derived ids', () => {
    it('a successor is the same for every request that rotates a token, in the chain of its parent', () => {
      const first = singleUse.firstOfCode('code-1');
      const second = singleUse.successorOf(first);
      expect(singleUse.successorOf(first)).toBe(second);
      expect(singleUse.chainOf(second)).toBe(singleUse.chainOf(first));
      expect(singleUse.chainOf(first)).toBe(singleUse.chainOfCode('code-1'));
      expect(singleUse.chainOfCode('code-2')).not.toBe(singleUse.chainOfCode('code-1'));
      // A token issued before chains (a random id) is a chain of its own.
      expect(singleUse.chainOf('legacy-token-id')).toHaveLength(16);
      expect(singleUse.chainOf(singleUse.successorOf('legacy-token-id'))).toBe(singleUse.chainOf('legacy-token-id'));
    });

    it('the derivations are a stored format: known answers under a fixed key (tokens issued before an upgrade keep their chain and successor)', () => {
      const key = Buffer.alloc(32, 7);
      const rules = new SingleUse(store, { reuseWindowSeconds: 5, successorKey: key });
      const hmac = (what: string, size = 43) => createHmac('sha256', key).update(what).digest('base64url').slice(0, size);
      expect(rules.chainOfCode('code-1')).toBe(hmac('refresh-token-chain-of-code:code-1', 16));
      expect(rules.chainOf('legacy-token-id')).toBe(hmac('refresh-token-chain-of:legacy-token-id', 16));
      expect(rules.successorOf('legacy-token-id')).toBe(`${hmac('refresh-token-chain-of:legacy-token-id', 16)}.${hmac('refresh-token-successor:legacy-token-id')}`);
      expect(rules.firstOfCode('code-1')).toBe(`${hmac('refresh-token-chain-of-code:code-1', 16)}.${hmac('refresh-token-of-code:code-1')}`);
      // A token of a chain keeps the chain: the start of its id.
      const first = rules.firstOfCode('code-1');
      expect(rules.successorOf(first)).toBe(`${rules.chainOfCode('code-1')}.${hmac(`refresh-token-successor:${first}`)}`);
    });

    it('the id of a new refresh token: the successor when rotating, the code\'s head when exchanging a code, else the engine\'s', async () => {
      const parent = await stored('RefreshToken', 'rt-parent');
      const { value: rotated } = await asRequest('refresh_token', async () => {
        await consumeRefresh(parent);
        return singleUse.refreshTokenId(() => 'random');
      });
      expect(rotated).toBe(singleUse.successorOf('rt-parent'));
      const code = await stored('AuthorizationCode', 'code-1');
      const { value: first, state } = await asRequest('authorization_code', async () => {
        await consumeCode(code);
        return singleUse.refreshTokenId(() => 'random');
      });
      expect(first).toBe(singleUse.firstOfCode('code-1'));
      expect(existingTokenRequest(state)).toMatchObject({ codes: ['code-1'], chain: singleUse.chainOfCode('code-1') });
      expect((await asRequest('client_credentials', async () => singleUse.refreshTokenId(() => 'random'))).value).toBe('random');
    });
  });

  describe('refresh tokens', () => {
    it('a resource the token does not cover is invalid_target, before anything is consumed', async () => {
      const token = await stored('RefreshToken', 'rt-1');
      await expect(asRequest('refresh_token', () => consumeRefresh(token), { resource: 'https://elsewhere.example' })).rejects.toBeInstanceOf(InvalidTarget);
      expect(await store.engine('RefreshToken').consumption('rt-1')).toBeUndefined();
    });

    it('the resource rule (RFC 8707): a resource the token covers goes on; one not a string is invalid_target, with its words', async () => {
      const token = await stored('RefreshToken', 'rt-1');
      const { state } = await asRequest('refresh_token', () => consumeRefresh(token), { resource: 'https://api.example' });
      expect(existingTokenRequest(state)?.pendingRotation).toBe(token);
      await expect(asRequest('refresh_token', () => consumeRefresh(token), { resource: ['https://api.example'] }))
        .rejects.toMatchObject({ error: 'invalid_target', description: 'resource indicator is missing, or unknown' });
      await expect(asRequest('refresh_token', () => consumeRefresh(token), { resource: 'https://elsewhere.example' }))
        .rejects.toMatchObject({ error: 'invalid_target', description: 'resource indicator is missing, or unknown' });
    });

    /** A rotation as the engine makes it: the token used, then its successor saved (one request). */
    async function rotate(token: Consumable, rules = singleUse): Promise<{ state: Record<PropertyKey, unknown>; successor: string }> {
      let successor = '';
      const { state } = await asRequest('refresh_token', async () => {
        await rules.consumeRefreshToken(token, token.consume);
        successor = rules.refreshTokenId(() => 'random');
        await rules.saveRefreshToken(successor, { jti: successor, grantId: token.grantId }, 3600, () => store.engine('RefreshToken').upsert(successor, { jti: successor, grantId: token.grantId }, 3600));
      });
      return { state, successor };
    }

    it('outside a token request (no rotation to join): consumed at once; a second use is judged as a race lost (a retry, then a reuse); a store error is passed on', async () => {
      const token = await stored('RefreshToken', 'rt-alone');
      await consumeRefresh(token);
      expect(await store.engine('RefreshToken').consumption('rt-alone')).toEqual({ consumedAt: expect.any(Number), confirmed: expect.any(Boolean) });
      // Its successor stored: used again within the window, a retry (told); once more, a reuse that ends the grant.
      const successor = singleUse.successorOf('rt-alone');
      await store.engine('RefreshToken').upsert(successor, { jti: successor, grantId: 'grant-1' }, 3600);
      await consumeRefresh(token);
      expect(retried).toEqual([token]);
      expect(reused).toEqual([]);
      await expect(consumeRefresh(token)).rejects.toBeInstanceOf(InvalidGrant);
      expect(reused).toEqual([token]);
      expect(await grantExists()).toBe(false);
      const broken = new Error('the store is down');
      await expect(singleUse.consumeRefreshToken(await stored('RefreshToken', 'rt-other', 'grant-2'), () => Promise.reject(broken))).rejects.toBe(broken);
    });

    it('a rotation consumes the token and saves its successor in one step; nothing before', async () => {
      const token = await stored('RefreshToken', 'rt-1');
      const { state } = await asRequest('refresh_token', () => consumeRefresh(token));
      expect(await store.engine('RefreshToken').consumption('rt-1')).toBeUndefined();
      expect(existingTokenRequest(state)?.pendingRotation).toBe(token);
      const { successor } = await rotate(token);
      expect(successor).toBe(singleUse.successorOf('rt-1'));
      expect(await store.engine('RefreshToken').consumption('rt-1')).toEqual({ consumedAt: expect.any(Number), confirmed: false });
      expect(await store.engine('RefreshToken').find(successor)).toEqual({ jti: successor, grantId: 'grant-1' });
      expect(retried).toEqual([]);
    });

    it('a race lost while the successor is not stored (a rotation stopped between its steps) is a retry, not counted (nothing went out)', async () => {
      const token = await stored('RefreshToken', 'rt-1');
      await token.consume();
      const { successor } = await rotate(token);
      expect(await store.engine('RefreshToken').find(successor)).toEqual({ jti: successor, grantId: 'grant-1' });
      expect(retried).toEqual([]);
      expect(reused).toEqual([]);
      expect(await grantExists()).toBe(true);
    });

    it('once the successor is stored: one retry within the window (told), the second a reuse that ends the grant', async () => {
      const token = await stored('RefreshToken', 'rt-1');
      await rotate(token);
      await rotate(token);
      expect(retried.map((use) => use.accountId)).toEqual(['alice']);
      await expect(rotate(token)).rejects.toMatchObject({ error: 'invalid_grant', description: 'refresh token already used' });
      // The reuse is told as a reuse, not as a second retry.
      expect(retried).toHaveLength(1);
      expect(reused).toHaveLength(1);
      expect(await grantExists()).toBe(false);
    });

    it('the retry count is each token\'s own: two tokens rotated, each presented again once, are two retries', async () => {
      await store.engine('Grant').upsert('grant-2', { jti: 'grant-2' }, 3600);
      const one = await stored('RefreshToken', 'rt-1');
      const two = await stored('RefreshToken', 'rt-2', 'grant-2');
      await rotate(one);
      await rotate(two);
      await rotate(one);
      await rotate(two);
      expect(retried.map((use) => use.grantId)).toEqual(['grant-1', 'grant-2']);
      expect(reused).toEqual([]);
    });

    it('the window\'s end is its last millisecond: presented again exactly reuseWindowSeconds after the rotation, a retry; a millisecond later, a reuse', async () => {
      const start = Date.now();
      const edge = await stored('RefreshToken', 'rt-edge');
      await at(start, () => rotate(edge));
      await at(start + 5000, () => rotate(edge));
      expect(retried).toHaveLength(1);
      const late = await stored('RefreshToken', 'rt-late');
      await at(start, () => rotate(late));
      await expect(at(start + 5001, () => rotate(late))).rejects.toBeInstanceOf(InvalidGrant);
      expect(reused).toHaveLength(1);
    });

    it('a consumed token found outside a refresh (introspection, revocation) stays consumed, and nothing is told', async () => {
      const token = await stored('RefreshToken', 'rt-1');
      await rotate(token);
      const found = { ...token, consumed: Date.now() };
      await asRequest('authorization_code', () => singleUse.refreshTokenFound(found));
      await singleUse.refreshTokenFound(found);
      expect(found.consumed).toBeDefined();
      expect(retried).toEqual([]);
      expect(reused).toEqual([]);
    });

    it('a store that fails while a rotation completes: its error goes on (a 503), and nothing is judged a reuse', async () => {
      const token = await stored('RefreshToken', 'rt-1');
      const down = new StoreUnavailable('connection');
      const failing = new SingleUse(storeWith('RefreshToken', { consumeCompleting: () => Promise.reject(down) }), { reuseWindowSeconds: 5, successorKey: randomBytes(32), onReuse: (use) => reused.push(use) });
      await expect(rotate(token, failing)).rejects.toBe(down);
      expect(reused).toEqual([]);
      expect(await grantExists()).toBe(true);
    });

    it('the engine\'s find of a consumed token within the window shows it unused, once per request', async () => {
      const token = await stored('RefreshToken', 'rt-1');
      await rotate(token);
      const found = { ...token, consumed: Date.now() };
      await asRequest('refresh_token', async () => {
        await singleUse.refreshTokenFound(found);
        expect(found.consumed).toBeUndefined();
        // The engine then consumes it and saves the successor: the same request's retry, not a second one.
        await consumeRefresh(token);
        const successor = singleUse.refreshTokenId(() => 'random');
        await singleUse.saveRefreshToken(successor, { jti: successor }, 3600, () => store.engine('RefreshToken').upsert(successor, { jti: successor, again: true }, 3600));
        // Written as the retry's own answer (the same id).
        expect(await store.engine('RefreshToken').find(successor)).toEqual({ jti: successor, again: true });
      });
      expect(retried).toHaveLength(1);
      expect(reused).toEqual([]);
    });

    it('after the window, or once the successor was used: a reuse', async () => {
      const token = await stored('RefreshToken', 'rt-1');
      await rotate(token);
      const realNow = Date.now.bind(Date);
      const spy = jest.spyOn(Date, 'now').mockImplementation(() => realNow() + 6000);
      try {
        await expect(rotate(token)).rejects.toBeInstanceOf(InvalidGrant);
      } finally {
        spy.mockRestore();
      }
      expect(reused).toHaveLength(1);

      const other = await stored('RefreshToken', 'rt-2', 'grant-1');
      await store.engine('Grant').upsert('grant-1', { jti: 'grant-1' }, 3600);
      const { successor } = await rotate(other);
      await store.engine('RefreshToken').consume(successor);
      await expect(rotate(other)).rejects.toBeInstanceOf(InvalidGrant);
      expect(reused).toHaveLength(2);
    });

    it('with the window at 0, only a rotation that never answered may be retried', async () => {
      const strict = new SingleUse(store, { reuseWindowSeconds: 0, successorKey: randomBytes(32), onReuse: (token) => reused.push(token) });
      const token = await stored('RefreshToken', 'rt-1');
      // Consumed, its successor never saved (a rotation stopped between its steps): a retry.
      await token.consume();
      await rotate(token, strict);
      // Its successor stored now: a reuse, the window being 0.
      await expect(rotate(token, strict)).rejects.toBeInstanceOf(InvalidGrant);
      expect(reused).toHaveLength(1);
    });

    it('a refreshed grant is extended once its lifetime ran down, once per request; a request that failed undoes its consume', async () => {
      const token = await stored('RefreshToken', 'rt-1');
      const grant = { exp: Math.floor(Date.now() / 1000) + 60, save: jest.fn(async () => undefined) };
      const { state } = await rotate(token);
      await singleUse.extendRefreshedGrant({ state, oidc: { entities: { Grant: grant } } }, 90_000);
      expect(grant.save).toHaveBeenCalledTimes(1);
      expect(grant.exp).toBeUndefined();
      grant.exp = Math.floor(Date.now() / 1000) + 60;
      await singleUse.extendRefreshedGrant({ state, oidc: { entities: { Grant: grant } } }, 90_000);
      expect(grant.save).toHaveBeenCalledTimes(1);
      await undoConsumptions(state);
      expect(await store.engine('RefreshToken').consumption('rt-1')).toBeUndefined();
      expect(existingTokenRequest(state)).toMatchObject({ undo: [], codes: [] });
    });

    it('a refreshed grant with most of its lifetime left is not written again', async () => {
      const token = await stored('RefreshToken', 'rt-1');
      const exp = Math.floor(Date.now() / 1000) + 90_000;
      const grant = { exp, save: jest.fn(async () => undefined) };
      const { state } = await rotate(token);
      await singleUse.extendRefreshedGrant({ state, oidc: { entities: { Grant: grant } } }, 90_000);
      expect(grant.save).not.toHaveBeenCalled();
      expect(grant.exp).toBe(exp);
    });
  });

  describe('codes', () => {
    /** A code's exchange as the engine makes it: the code used, then (with one) its first refresh token saved. */
    async function exchange(code: Consumable, { refreshToken = true } = {}): Promise<{ state: Record<PropertyKey, unknown>; first: string | undefined }> {
      let first: string | undefined;
      const { state } = await asRequest('authorization_code', async () => {
        await consumeCode(code);
        if (!refreshToken) return;
        first = singleUse.refreshTokenId(() => 'random');
        await singleUse.saveRefreshToken(first, { jti: first, grantId: 'grant-1' }, 3600, () => store.engine('RefreshToken').upsert(first!, { jti: first! }, 3600));
      });
      // The engine answered with tokens: a code without a refresh token is consumed now.
      await singleUse.confirmCodes(state);
      return { state, first };
    }
    const withClock = async <T>(aheadMs: number, fn: () => Promise<T>): Promise<T> => {
      const realNow = Date.now.bind(Date);
      const spy = jest.spyOn(Date, 'now').mockImplementation(() => realNow() + aheadMs);
      try {
        return await fn();
      } finally {
        spy.mockRestore();
      }
    };

    it('an exchange consumes its code, confirms it and saves its first refresh token in one step; nothing before', async () => {
      const code = await stored('AuthorizationCode', 'code-1');
      const { state } = await asRequest('authorization_code', () => consumeCode(code));
      // The engine has checked the code and goes on building tokens: nothing is written yet.
      expect(await store.engine('AuthorizationCode').consumption('code-1')).toBeUndefined();
      expect(existingTokenRequest(state)?.pendingCode).toEqual({ jti: 'code-1' });
      const { first } = await exchange(await stored('AuthorizationCode', 'code-2'));
      expect(first).toBe(singleUse.firstOfCode('code-2'));
      expect(await store.engine('AuthorizationCode').consumption('code-2')).toEqual({ consumedAt: expect.any(Number), confirmed: true });
      expect(await store.engine('RefreshToken').find(first!)).toEqual({ jti: first, grantId: 'grant-1' });
    });

    it('the resource rule (RFC 8707) at a code\'s exchange: a foreign resource is invalid_target before anything is consumed; a covered one goes on', async () => {
      const code = await stored('AuthorizationCode', 'code-1');
      await expect(asRequest('authorization_code', () => consumeCode(code), { resource: 'https://elsewhere.example' })).rejects.toBeInstanceOf(InvalidTarget);
      expect(await store.engine('AuthorizationCode').consumption('code-1')).toBeUndefined();
      const { state } = await asRequest('authorization_code', () => consumeCode(code), { resource: 'https://api.example' });
      expect(existingTokenRequest(state)?.pendingCode).toEqual({ jti: 'code-1' });
    });

    it('a code presented again exactly a second after an unconfirmed consume is a retry (refused, nothing ends); just under a second, a race: a replay', async () => {
      const start = Date.now();
      const retry = await stored('AuthorizationCode', 'code-1');
      const { state } = await at(start, () => asRequest('authorization_code', () => consumeCode(retry)));
      await at(start, () => singleUse.refusedExchange(state));
      await expect(at(start + 1000, () => exchange(retry))).rejects.toMatchObject({ error: 'invalid_grant', description: 'authorization code already used' });
      expect(await revokedChains.isRevoked(singleUse.chainOfCode('code-1'))).toBe(false);
      const raced = await stored('AuthorizationCode', 'code-2');
      const second = await at(start, () => asRequest('authorization_code', () => consumeCode(raced)));
      await at(start, () => singleUse.refusedExchange(second.state));
      await expect(at(start + 999, () => exchange(raced))).rejects.toBeInstanceOf(InvalidGrant);
      expect(await revokedChains.isRevoked(singleUse.chainOfCode('code-2'))).toBe(true);
    });

    it('a replay marks the code replayed (it stays used up: an undo cannot free it) and revokes its chain for as long as an access token lives', async () => {
      const code = await stored('AuthorizationCode', 'code-1');
      await exchange(code);
      const revoke = jest.spyOn(revokedChains, 'revoke');
      const before = Date.now();
      await expect(withClock(1500, () => exchange(code))).rejects.toBeInstanceOf(InvalidGrant);
      expect(revoke).toHaveBeenCalledWith(singleUse.chainOfCode('code-1'), expect.any(Number));
      const until = revoke.mock.calls[0]![1];
      expect(until).toBeGreaterThanOrEqual(before + 1500 + MAX_ACCESS_TOKEN_SECONDS * 1000);
      expect(until).toBeLessThanOrEqual(Date.now() + 1500 + MAX_ACCESS_TOKEN_SECONDS * 1000);
      await store.engine('AuthorizationCode').unconsume('code-1');
      expect(await store.engine('AuthorizationCode').consumption('code-1')).toBeDefined();
    });

    it('a replay walks the code\'s chain to its end, and no further', async () => {
      const code = await stored('AuthorizationCode', 'code-1');
      let finds = 0;
      const tokens = store.engine('RefreshToken');
      const counting = new SingleUse(storeWith('RefreshToken', { find: async (id: string) => { finds += 1; return tokens.find(id); } }), { reuseWindowSeconds: 5, successorKey: randomBytes(32), revokedChains });
      const { state } = await asRequest('authorization_code', async () => {
        await counting.consumeCode(code, code.consume);
        const first = counting.refreshTokenId(() => 'random');
        await counting.saveRefreshToken(first, { jti: first }, 3600, () => tokens.upsert(first, { jti: first }, 3600));
      });
      expect(existingTokenRequest(state)?.pendingCode).toBeUndefined();
      const second = counting.successorOf(counting.firstOfCode('code-1'));
      await tokens.upsert(second, { jti: second }, 3600);
      await expect(withClock(1500, () => asRequest('authorization_code', () => counting.consumeCode(code, code.consume)).then(({ state: again }) => counting.confirmCodes(again)))).rejects.toBeInstanceOf(InvalidGrant);
      expect(await tokens.find(second)).toBeUndefined();
      // Two tokens found and destroyed, then the third link not found: the walk stops there.
      expect(finds).toBe(3);
    });

    it('a replay walks at most 1,000 refresh tokens of the code\'s chain', async () => {
      const code = await stored('AuthorizationCode', 'code-1');
      const { first } = await exchange(code);
      const chain = [first!];
      for (let link = 1; link <= 1000; link += 1) chain.push(singleUse.successorOf(chain.at(-1)!));
      for (const id of chain.slice(1)) await store.engine('RefreshToken').upsert(id, { jti: id }, 3600);
      await expect(withClock(1500, () => exchange(code))).rejects.toBeInstanceOf(InvalidGrant);
      expect(await store.engine('RefreshToken').find(chain[999]!)).toBeUndefined();
      expect(await store.engine('RefreshToken').find(chain[1000]!)).toEqual({ jti: chain[1000] });
    });

    it('a store that fails while an exchange completes, or while a code is consumed outside a request: its error goes on, and nothing is judged a replay', async () => {
      const code = await stored('AuthorizationCode', 'code-1');
      const down = new StoreUnavailable('connection');
      const failing = new SingleUse(storeWith('AuthorizationCode', { consumeCompleting: () => Promise.reject(down) }), { reuseWindowSeconds: 5, successorKey: randomBytes(32), revokedChains });
      await expect(asRequest('authorization_code', async () => {
        await failing.consumeCode(code, code.consume);
        await failing.noRefreshToken();
      })).rejects.toBe(down);
      await expect(singleUse.consumeCode(code, () => Promise.reject(down))).rejects.toBe(down);
      // An exchange refused while the store fails: not taken for a replay either.
      const refusing = new SingleUse(storeWith('AuthorizationCode', { consume: () => Promise.reject(down) }), { reuseWindowSeconds: 5, successorKey: randomBytes(32), revokedChains });
      const { state } = await asRequest('authorization_code', () => refusing.consumeCode(code, code.consume));
      await refusing.refusedExchange(state);
      expect(await revokedChains.isRevoked(refusing.chainOfCode('code-1'))).toBe(false);
      expect(await revokedChains.isRevoked(failing.chainOfCode('code-1'))).toBe(false);
      expect(await store.engine('AuthorizationCode').consumption('code-1')).toBeUndefined();
    });

    it('a refresh token of a code completed already (nothing pending) is written as it is', async () => {
      const code = await stored('AuthorizationCode', 'code-1');
      await asRequest('authorization_code', async () => {
        await consumeCode(code);
        await singleUse.noRefreshToken();
        const first = singleUse.refreshTokenId(() => 'random');
        expect(first).toBe(singleUse.firstOfCode('code-1'));
        await singleUse.saveRefreshToken(first, { jti: first }, 3600, () => store.engine('RefreshToken').upsert(first, { jti: first, asItIs: true }, 3600));
        expect(await store.engine('RefreshToken').find(first)).toEqual({ jti: first, asItIs: true });
      });
    });

    it('an exchange without a refresh token consumes and confirms its code as it answers', async () => {
      const code = await stored('AuthorizationCode', 'code-1');
      await exchange(code, { refreshToken: false });
      expect(await store.engine('AuthorizationCode').consumption('code-1')).toEqual({ consumedAt: expect.any(Number), confirmed: true });
      // Presented again: a replay, refused as the answer would go, its chain revoked.
      await expect(exchange(code, { refreshToken: false })).rejects.toBeInstanceOf(InvalidGrant);
      expect(await revokedChains.isRevoked(singleUse.chainOfCode('code-1'))).toBe(true);
      expect(await grantExists()).toBe(true);
    });

    it('an exchange refused after the engine checked the code uses the code up, unconfirmed; over a second later it is refused, and nothing ends', async () => {
      const code = await stored('AuthorizationCode', 'code-1');
      const { state } = await asRequest('authorization_code', () => consumeCode(code));
      await singleUse.refusedExchange(state);
      expect(await store.engine('AuthorizationCode').consumption('code-1')).toEqual({ consumedAt: expect.any(Number), confirmed: false });
      expect(existingTokenRequest(state)?.pendingCode).toBeUndefined();
      await expect(withClock(1500, () => exchange(code))).rejects.toBeInstanceOf(InvalidGrant);
      expect(await grantExists()).toBe(true);
      expect(await revokedChains.isRevoked(singleUse.chainOfCode('code-1'))).toBe(false);
      // A refusal with nothing pending (the code was never reached) consumes nothing.
      const other = await stored('AuthorizationCode', 'code-2');
      await singleUse.refusedExchange({});
      expect(await store.engine('AuthorizationCode').consumption(other.jti)).toBeUndefined();
    });

    it('a confirmed code presented again is a replay: its chain ends (refresh tokens destroyed, chain revoked), not the grant', async () => {
      const code = await stored('AuthorizationCode', 'code-1');
      const { first } = await exchange(code);
      await stored('RefreshToken', singleUse.successorOf(first!));
      await expect(withClock(1500, () => exchange(code))).rejects.toBeInstanceOf(InvalidGrant);
      expect(await store.engine('RefreshToken').find(first!)).toBeUndefined();
      expect(await store.engine('RefreshToken').find(singleUse.successorOf(first!))).toBeUndefined();
      expect(await revokedChains.isRevoked(singleUse.chainOfCode('code-1'))).toBe(true);
      expect(await grantExists()).toBe(true);
    });

    it('two exchanges of one code at once: one saves its refresh token, the other is a replay that ends it', async () => {
      const code = await stored('AuthorizationCode', 'code-1');
      // Both past the engine's checks before either saves.
      const started: Array<() => Promise<void>> = [];
      for (let i = 0; i < 2; i += 1) {
        const { state } = await asRequest('authorization_code', () => consumeCode(code));
        started.push(async () => {
          FakeEngine.ctx = { oidc: { params: { grant_type: 'authorization_code' } }, state };
          try {
            const first = singleUse.refreshTokenId(() => 'random');
            await singleUse.saveRefreshToken(first, { jti: first }, 3600, () => store.engine('RefreshToken').upsert(first, { jti: first }, 3600));
          } finally {
            FakeEngine.ctx = undefined;
          }
        });
      }
      await started[0]!();
      expect(await store.engine('RefreshToken').find(singleUse.firstOfCode('code-1'))).toBeDefined();
      await expect(started[1]!()).rejects.toBeInstanceOf(InvalidGrant);
      expect(await store.engine('RefreshToken').find(singleUse.firstOfCode('code-1'))).toBeUndefined();
      expect(await revokedChains.isRevoked(singleUse.chainOfCode('code-1'))).toBe(true);
      expect(await grantExists()).toBe(true);
    });

    it('a code presented again and refused after the engine checked it (a wrong DPoP key) is still judged a replay: its chain ends', async () => {
      const code = await stored('AuthorizationCode', 'code-1');
      const { first } = await exchange(code);
      const { state } = await asRequest('authorization_code', () => consumeCode(code));
      await withClock(1500, () => singleUse.refusedExchange(state));
      expect(await store.engine('RefreshToken').find(first!)).toBeUndefined();
      expect(await revokedChains.isRevoked(singleUse.chainOfCode('code-1'))).toBe(true);
      expect(await grantExists()).toBe(true);
    });

    it('the engine deciding on no refresh token consumes and confirms the pending code at once; a lost race is invalid_grant there', async () => {
      const code = await stored('AuthorizationCode', 'code-1');
      await asRequest('authorization_code', async () => {
        await consumeCode(code);
        await singleUse.noRefreshToken();
        expect(await store.engine('AuthorizationCode').consumption('code-1')).toEqual({ consumedAt: expect.any(Number), confirmed: true });
      });
      await expect(asRequest('authorization_code', async () => {
        await consumeCode(code);
        await singleUse.noRefreshToken();
      })).rejects.toBeInstanceOf(InvalidGrant);
      // Asked outside a code exchange: nothing to do.
      await asRequest('refresh_token', () => singleUse.noRefreshToken());
    });

    it('where consume, save and confirm go one after the other (Redis Cluster), a replay marked in between ends the chain at the confirmation', async () => {
      const code = await stored('AuthorizationCode', 'code-1');
      const codes = store.engine('AuthorizationCode');
      // As the cluster's three steps answer when a replay marked the code between them.
      const stepwise = storeWith('AuthorizationCode', { consumeCompleting: async (id: string, next?: NextEntry) => { await codes.consumeCompleting(id, next); return true; } });
      const rules = new SingleUse(stepwise, { reuseWindowSeconds: 5, successorKey: randomBytes(32), revokedChains });
      const { state } = await asRequest('authorization_code', async () => {
        await rules.consumeCode(code, code.consume);
        const first = rules.refreshTokenId(() => 'random');
        await rules.saveRefreshToken(first, { jti: first }, 3600, () => store.engine('RefreshToken').upsert(first, { jti: first }, 3600));
      });
      expect(existingTokenRequest(state)?.pendingCode).toBeUndefined();
      expect(await store.engine('RefreshToken').find(rules.firstOfCode('code-1'))).toBeUndefined();
      expect(await revokedChains.isRevoked(rules.chainOfCode('code-1'))).toBe(true);
    });

    it('another refresh token of the request is saved as it is; outside a request a code is consumed at once', async () => {
      const code = await stored('AuthorizationCode', 'code-1');
      const { state } = await asRequest('authorization_code', async () => {
        await consumeCode(code);
        await singleUse.saveRefreshToken('not-the-first', { jti: 'not-the-first' }, 3600, () => store.engine('RefreshToken').upsert('not-the-first', { jti: 'not-the-first' }, 3600));
      });
      expect(await store.engine('RefreshToken').find('not-the-first')).toEqual({ jti: 'not-the-first' });
      expect(existingTokenRequest(state)?.pendingCode).toEqual({ jti: 'code-1' });
      expect(await store.engine('AuthorizationCode').consumption('code-1')).toBeUndefined();
      const other = await stored('AuthorizationCode', 'code-2');
      await consumeCode(other);
      expect(await store.engine('AuthorizationCode').consumption('code-2')).toEqual({ consumedAt: expect.any(Number), confirmed: false });
      await expect(consumeCode(other)).rejects.toBeInstanceOf(InvalidGrant);
    });

    it('only the refresh tokens\' adapter saves through single use; every other model\'s is the store\'s own', () => {
      for (const model of ['AuthorizationCode', 'Grant', 'Session', 'AccessToken']) expect(savingThroughSingleUse(model, store.engine(model), singleUse)).toBe(store.engine(model));
      const refreshTokens = store.engine('RefreshToken');
      expect(savingThroughSingleUse('RefreshToken', refreshTokens, singleUse)).not.toBe(refreshTokens);
    });

    it('the engine is shown a consumed code as unused, so that its own checks run before ours', async () => {
      const code = { ...(await stored('AuthorizationCode', 'code-1')), consumed: Date.now() };
      await asRequest('authorization_code', () => singleUse.codeFound(code));
      expect(code.consumed).toBeUndefined();
      const other = { ...(await stored('AuthorizationCode', 'code-2')), consumed: Date.now() };
      await asRequest('refresh_token', () => singleUse.codeFound(other));
      expect(other.consumed).toBeDefined();
    });
  });
});
