import { jest } from '@jest/globals';
import { createMemoryStore } from '../../adapters/memory.js';
import type { EngineAdapter, Store } from '../../adapters/types.js';
import { InvalidToken } from '../../policies/errors.js';
import type { EngineClient } from '../../src/engine/client-cache.js';
import { liveOnly, LiveTokens, type VerifiedToken } from '../../src/engine/live-tokens.js';
import { grantBoundTokenId } from '../../src/engine/patches.js';
import { RevokedChains } from '../../src/engine/revoked-chains.js';
import type { AccessTokenContext, TokenVerifier } from '../../src/resource-server/verifier.js';

const REALM = 'https://auth.example.com/oauth2';
const now = (): number => Math.floor(Date.now() / 1000);

/**
 * A verifier that believes what each token says: the tokens here are JSON of their context, so the
 * test is about liveness (src/engine/live-tokens.ts), not about signatures (the verifier's own tests).
 */
function standInVerifier(): TokenVerifier & { calls: number } {
  const verifier = {
    realm: REALM,
    calls: 0,
    verify: async (token: string): Promise<AccessTokenContext> => {
      verifier.calls += 1;
      if (!token.startsWith('{')) throw new InvalidToken('the access token is not valid', REALM);
      const claims = JSON.parse(token) as Record<string, unknown>;
      const isNamedUser = claims['sub'] !== claims['client_id'];
      return { sub: claims['sub'] as string, clientId: claims['client_id'] as string, tenant: undefined, scopes: new Set(), constraints: {}, isNamedUser, amr: [], acr: undefined, authTime: undefined, claims };
    },
    verifyAuthorization: async (header: string | undefined): Promise<AccessTokenContext> => {
      if (!header?.startsWith('Bearer ')) throw new InvalidToken('a bearer access token is required', REALM);
      return verifier.verify(header.slice(7));
    },
    verifyRequest: async (request: { authorization: string | undefined }): Promise<AccessTokenContext> => verifier.verifyAuthorization(request.authorization),
  };
  return verifier;
}

function token(claims: Record<string, unknown>): string {
  return JSON.stringify({ iat: now(), exp: now() + 300, ...claims });
}

/** Whether an access token of ours may still be honoured: revocation, its client, its grant, its chain. */
describe('live access tokens (src/engine/live-tokens.ts)', () => {
  let store: Store;
  let verifier: ReturnType<typeof standInVerifier>;
  let clients: Set<string>;
  let chains: RevokedChains;
  let live: LiveTokens;

  beforeEach(async () => {
    store = createMemoryStore();
    verifier = standInVerifier();
    clients = new Set(['app', 'machine']);
    chains = new RevokedChains(store.records);
    live = new LiveTokens(verifier, store, async (id) => (clients.has(id) ? ({ clientId: id } as unknown as EngineClient) : undefined), chains);
    await store.engine('Grant').upsert('grant-1', { jti: 'grant-1', clientId: 'app', accountId: 'alice' }, 3600);
  });
  afterEach(() => store.close());

  const machine = (): string => token({ sub: 'machine', client_id: 'machine', jti: 'machine-token-1' });
  const named = (jti = grantBoundTokenId('grant-1', 'id-1', 'chain-1'), sub = 'alice', clientId = 'app'): string => token({ sub, client_id: clientId, jti });

  async function isLive(raw: string): Promise<boolean> {
    return (await live.live(await live.verify(raw))) !== undefined;
  }

  it.each<[string, boolean, () => string, (() => Promise<void>) | undefined]>([
    ['a machine token of a registered client', true, machine, undefined],
    ['a machine token whose client was deleted', false, machine, async () => void clients.delete('machine')],
    ['a named-user token of a live grant', true, () => named(), undefined],
    ['a named-user token whose grant ended', false, () => named(), async () => store.engine('Grant').destroy('grant-1')],
    ['a named-user token whose grant is of another app', false, () => named(undefined, 'alice', 'other'), async () => void clients.add('other')],
    ['a named-user token whose grant is of another user', false, () => named(undefined, 'bob'), undefined],
    ['a named-user token whose jti names no grant', false, () => named('no-grant-here'), undefined],
    ['a named-user token whose chain was revoked (a replayed code)', false, () => named(), () => chains.revoke('chain-1', Date.now() + 60_000)],
    ['a named-user token whose chain revocation is over', true, () => named(), () => chains.revoke('chain-1', Date.now() - 1000)],
    ['a named-user token of another chain than the revoked one', true, () => named(), () => chains.revoke('chain-2', Date.now() + 60_000)],
  ])('%s: live %s', async (_, expected, make, before) => {
    await before?.();
    await expect(isLive(make())).resolves.toBe(expected);
  });

  it('a revoked token is not live, on every instance (the revocation is in the store), until it would expire', async () => {
    const raw = named();
    const verified = await live.verify(raw);
    await live.revoke(verified);
    await expect(isLive(raw)).resolves.toBe(false);
    const otherInstance = new LiveTokens(standInVerifier(), store, async () => ({}) as EngineClient, chains);
    await expect(otherInstance.live(await otherInstance.verify(raw))).resolves.toBeUndefined();
    // Another token of the same grant stays live: revocation is of one token.
    await expect(isLive(named(grantBoundTokenId('grant-1', 'id-2', 'chain-1')))).resolves.toBe(true);
  });

  it('revoking a token that already expired keeps nothing', async () => {
    const verified: VerifiedToken = { ...(await live.verify(machine())), exp: now() - 1 };
    await live.revoke(verified);
    await expect(store.engine('RevokedAccessToken').find('machine-token-1')).resolves.toBeUndefined();
  });

  it('a revocation keeps the token\'s id alone (never the token), for exactly as long as the token has left; nothing once it has expired, or expires this very second', async () => {
    const revokedAdapter = store.engine('RevokedAccessToken');
    const writes: Array<[string, unknown, number | undefined]> = [];
    const counting: Store = {
      ...store,
      engine: (model: string) => (model === 'RevokedAccessToken'
        ? Object.assign(Object.create(revokedAdapter) as EngineAdapter, { upsert: async (id: string, payload: Record<string, unknown>, ttl?: number) => { writes.push([id, payload, ttl]); await revokedAdapter.upsert(id, payload, ttl); } })
        : store.engine(model)),
    };
    const revoking = new LiveTokens(verifier, counting, async () => ({}) as EngineClient, chains);
    const verified = await revoking.verify(machine());
    const spy = jest.spyOn(Date, 'now');
    try {
      spy.mockReturnValue(verified.exp * 1000);
      await revoking.revoke(verified);
      spy.mockReturnValue(verified.exp * 1000 - 100_500);
      await revoking.revoke(verified);
    } finally {
      spy.mockRestore();
    }
    expect(writes).toEqual([['machine-token-1', { jti: 'machine-token-1' }, 101]]);
  });

  it('a remembered token is not served from memory at its expiry second: it is checked again', async () => {
    const raw = machine();
    const { exp } = await live.verify(raw);
    const spy = jest.spyOn(Date, 'now');
    try {
      spy.mockReturnValue(exp * 1000 - 1);
      await live.verify(raw);
      expect(verifier.calls).toBe(1);
      spy.mockReturnValue(exp * 1000);
      await live.verify(raw);
      expect(verifier.calls).toBe(2);
    } finally {
      spy.mockRestore();
    }
  });

  it('remembers a bounded number of tokens: the oldest goes first', async () => {
    const bounded = new LiveTokens(verifier, store, async () => ({}) as EngineClient, chains, 2);
    const [one, two, three] = ['t-1', 't-2', 't-3'].map((jti) => token({ sub: 'machine', client_id: 'machine', jti }));
    await bounded.verify(one!);
    await bounded.verify(two!);
    await bounded.verify(one!);
    expect(verifier.calls).toBe(2);
    await bounded.verify(three!);
    await bounded.verify(two!);
    expect(verifier.calls).toBe(3);
    await bounded.verify(one!);
    expect(verifier.calls).toBe(4);
  });

  it('a verified token is remembered until it expires: asked again, no second signature check; the live checks run every time', async () => {
    const raw = machine();
    await isLive(raw);
    await isLive(raw);
    expect(verifier.calls).toBe(1);
    clients.delete('machine');
    await expect(isLive(raw)).resolves.toBe(false);
  });

  it('an expired remembered token is checked again (and the verifier decides)', async () => {
    const raw = token({ sub: 'machine', client_id: 'machine', jti: 'short', exp: now() - 1 });
    await live.verify(raw);
    await live.verify(raw);
    expect(verifier.calls).toBe(2);
  });

  it.each([
    ['without jti', { sub: 'machine', client_id: 'machine', jti: undefined }],
    ['with a jti that is not a string', { sub: 'machine', client_id: 'machine', jti: 7 }],
    ['without exp', { sub: 'machine', client_id: 'machine', jti: 'x', exp: undefined }],
    ['without iat', { sub: 'machine', client_id: 'machine', jti: 'x', iat: undefined }],
  ])('a token %s is refused (invalid_token), not believed', async (_, claims) => {
    await expect(live.verify(token(claims))).rejects.toMatchObject({ status: 401, error: 'invalid_token', description: 'the access token is not valid' });
  });

  describe('liveOnly: our own APIs refuse a token that is not live (401 invalid_token)', () => {
    it('lets a live token through, and refuses one whose grant ended', async () => {
      const ownApis = liveOnly(verifier, live);
      const raw = named();
      await expect(ownApis.verifyAuthorization(`Bearer ${raw}`)).resolves.toMatchObject({ sub: 'alice', clientId: 'app' });
      await store.engine('Grant').destroy('grant-1');
      const refused = ownApis.verifyAuthorization(`Bearer ${raw}`);
      await expect(refused).rejects.toBeInstanceOf(InvalidToken);
      await expect(refused).rejects.toMatchObject({ status: 401, error: 'invalid_token', description: 'the access token is no longer valid' });
    });

    it.each([
      ['Bearer', (raw: string) => `Bearer ${raw}`],
      ['DPoP', (raw: string) => `DPoP ${raw}`],
      ['with several spaces', (raw: string) => `Bearer   ${raw}`],
      ['with spaces around', (raw: string) => `  Bearer ${raw}  `],
    ])('a whole request (%s): its token is the one checked for liveness', async (_, header) => {
      // The shape of the header is the wrapped verifier's to judge; this one takes any.
      const ownApis = liveOnly({ ...verifier, verifyRequest: async () => verifier.verify(named()) }, live);
      const request = { authorization: header(named()), dpop: undefined, method: 'GET', url: 'https://auth.example.com/api' };
      await expect(ownApis.verifyRequest(request)).resolves.toMatchObject({ sub: 'alice', clientId: 'app' });
      await store.engine('Grant').destroy('grant-1');
      await expect(ownApis.verifyRequest(request)).rejects.toMatchObject({ status: 401, error: 'invalid_token' });
    });

    it.each([
      ['with several spaces', (raw: string) => `Bearer   ${raw}`],
      ['with spaces around', (raw: string) => `  Bearer ${raw}  `],
    ])('an Authorization header %s: its token is the one checked for liveness', async (_, header) => {
      const ownApis = liveOnly({ ...verifier, verifyAuthorization: async () => verifier.verify(named()) }, live);
      await expect(ownApis.verifyAuthorization(header(named()))).resolves.toMatchObject({ sub: 'alice', clientId: 'app' });
      await store.engine('Grant').destroy('grant-1');
      await expect(ownApis.verifyAuthorization(header(named()))).rejects.toMatchObject({ status: 401, error: 'invalid_token', description: 'the access token is no longer valid' });
    });

    it('leaves the header to the verifier (a header that is not Bearer is its refusal)', async () => {
      await expect(liveOnly(verifier, live).verifyAuthorization('Basic abc')).rejects.toThrow('a bearer access token is required');
    });
  });
});
