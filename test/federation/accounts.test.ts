import { afterAll, beforeAll, describe, expect, it } from '@jest/globals';
import type { Account, AccountStore, FederationRequest } from '../../src/index.js';
import { redisContents, type RedisServer } from '../support/redis.js';
import { authorize, federate, startFederationRig, throughUpstream, tokensOf, UPSTREAM_CLIENT, type FederationRig } from '../support/federation.js';
import { passUpstreamSignIn } from '../support/upstream-provider.js';
import { useStore } from '../support/stores.js';
import { createMemoryStore } from '../../adapters/memory.js';
import { FederatedAccounts } from '../../src/federation/federated-accounts.js';

/*
 * Whose account a federated identity signs in as (src/federation/federated-accounts.ts): the
 * host's `accounts.federate` hook (just in time, the connection's tenant only), else a remembered
 * link, else findByUsername(email). And what a federated sign-in leaves in the store and the
 * logs: no upstream secret, code or token in clear (Redis, dumped).
 */

async function everythingIn(redis: RedisServer): Promise<string> {
  // The inspection client is disconnected by redis.stop().
  return redisContents(redis.client());
}

/** A sign-in through the rig's provider as `username`, by the connection's button: the page our callback answered. */
async function signIn(rig: FederationRig, username: string) {
  const started = await authorize(rig);
  const back = await throughUpstream(started.agent, await federate(started.agent, started.step, { connection: rig.connection.id }), username);
  return { started, back };
}

describe('the federate hook', () => {
  const asked: FederationRequest[] = [];
  const created = new Map<string, Account>();
  let answer: (request: FederationRequest) => Account | undefined;
  let rig: FederationRig;

  beforeAll(async () => {
    const store: AccountStore = {
      authenticate: async () => undefined,
      findAccount: async (sub) => created.get(sub),
      federate: async (request) => {
        asked.push(request);
        const account = answer(request);
        if (account) created.set(account.sub, account);
        return account;
      },
    };
    rig = await startFederationRig({
      accountStore: store,
      users: [{ sub: 'up-jit', email: 'jit@acme.example', email_verified: true, name: 'Jit Upstream', preferred_username: 'jit.work@acme.example' }],
      connection: { claimMapping: { email: 'preferred_username' } },
    });
  });
  afterAll(async () => rig.stop());

  it('creates the account just in time; it is asked with the tenant, the connection and the mapped claims', async () => {
    answer = (request) => ({ sub: `jit-${request.claims.sub}`, tenant: request.tenant, claims: { email: request.claims.email } });
    const { started, back } = await signIn(rig, 'up-jit');
    const claims = (await tokensOf(rig, started, back)).claims()!;
    expect(claims.sub).toBe('jit-up-jit');
    expect(asked.at(-1)).toEqual({
      tenant: 'acme',
      connection: { id: rig.connection.id, name: 'Acme Login', issuer: rig.upstream.issuer },
      // email ← the provider's preferred_username (the connection's claimMapping).
      claims: expect.objectContaining({ sub: 'up-jit', email: 'jit.work@acme.example', email_verified: true, name: 'Jit Upstream' }),
    });
  });

  it('an account of another tenant is refused (403, wrong_tenant), whatever the hook says', async () => {
    answer = () => ({ sub: 'intruder', tenant: 'globex' });
    const { back } = await signIn(rig, 'up-jit');
    expect(back.status).toBe(403);
    expect(back.html).toContain('cannot be used for this application');
  });

  it('undefined: no account (403)', async () => {
    answer = () => undefined;
    const { back } = await signIn(rig, 'up-jit');
    expect(back.status).toBe(403);
    expect(back.html).toContain('There is no account here');
  });
});

describe('without the hook (Redis store): findByUsername, then the remembered link', () => {
  const store = useStore('redis');
  const byUsername = new Map<string, Account>();
  const bySub = new Map<string, Account>();
  let rig: FederationRig;

  beforeAll(async () => {
    const ada: Account = { sub: 'acc-ada', tenant: 'acme', claims: { email: 'ada@acme.example' } };
    bySub.set(ada.sub, ada);
    byUsername.set('ada@acme.example', ada);
    byUsername.set('eve@acme.example', { sub: 'acc-eve', tenant: 'globex' });
    rig = await startFederationRig({
      accountStore: {
        authenticate: async () => undefined,
        findAccount: async (sub) => bySub.get(sub),
        findByUsername: async (username) => byUsername.get(username),
      },
      users: [{ sub: 'up-ada', email: 'ada@acme.example', email_verified: true }, { sub: 'up-eve', email: 'eve@acme.example', email_verified: true }],
      server: { store: store.option() },
    });
  });
  afterAll(async () => rig.stop());

  it('the first sign-in finds her by her address; after her username changed at the host, the link still finds her', async () => {
    const first = await signIn(rig, 'up-ada');
    expect((await tokensOf(rig, first.started, first.back)).claims()!.sub).toBe('acc-ada');
    byUsername.delete('ada@acme.example');
    const again = await signIn(rig, 'up-ada');
    expect((await tokensOf(rig, again.started, again.back)).claims()!.sub).toBe('acc-ada');
  });

  it('findByUsername naming another tenant\'s account: refused, and no link is remembered', async () => {
    const { back } = await signIn(rig, 'up-eve');
    expect(back.status).toBe(403);
    expect(await everythingIn(store.redis!)).not.toContain('acc-eve');
  });

  it('no upstream secret, code or token in any stored record or log line', async () => {
    const secrets: string[] = [UPSTREAM_CLIENT.secret];
    const started = await authorize(rig);
    const toProvider = await federate(started.agent, started.step, { connection: rig.connection.id });
    const { callbackUrl } = await passUpstreamSignIn(toProvider.location!, 'up-ada');
    secrets.push(new URL(callbackUrl).searchParams.get('code')!);
    const back = await started.agent.request(callbackUrl);
    const tokens = await tokensOf(rig, started, back);
    secrets.push(tokens.access_token, tokens.id_token!);
    const { idToken, accessToken } = rig.upstream.issued.at(-1)!;
    secrets.push(accessToken!);
    expect(idToken).toBeDefined();
    secrets.push(idToken!);
    const stored = await everythingIn(store.redis!);
    const logs = rig.server.logLines.join('\n');
    for (const secret of secrets) {
      expect(stored).not.toContain(secret);
      expect(logs).not.toContain(secret);
    }
    // The provider's ID token is kept for its sign-out, sealed: its payload is not readable either.
    expect(stored).not.toContain(idToken!.split('.')[1]);
  });
});

describe('a connection that lists no domain (FederatedAccounts, memory store)', () => {
  const connection = {
    id: 'c-globex', tenant: 'globex', name: 'Globex IdP', issuer: 'https://idp.globex.example', clientId: 'x', tokenEndpointAuthMethod: 'client_secret_basic' as const,
    hasClientSecret: true, scopes: ['openid'], domains: [], verifiedDomains: [], claimMapping: {}, signOutUpstream: false, mfaAcrValues: [],
    createdAt: '2026-01-01T00:00:00Z', updatedAt: '2026-01-01T00:00:00Z',
  };
  const gus = { sub: 'gus', tenant: 'globex', claims: { email: 'gus@shared.example' } };
  const accounts = { authenticate: async () => undefined, findAccount: async () => undefined, findByUsername: async (username: string) => (username === 'gus@shared.example' ? gus : undefined) };

  it.each<[string, { id: string; verifiedDomains: string[] } | undefined, boolean]>([
    ['nobody owns the domain', undefined, true],
    ['another tenant named it, unverified', { id: 'c-mallory', verifiedDomains: [] }, true],
    ['another connection owns it, verified by the operator', { id: 'c-acme', verifiedDomains: ['shared.example'] }, false],
  ])('an address at a domain %s: signed in %s', async (_case, owner, signedIn) => {
    const federated = new FederatedAccounts(createMemoryStore().records, accounts, async () => owner as never);
    const outcome = await federated.accountOf(connection, { sub: 'up-gus', email: 'gus@shared.example', email_verified: true });
    expect(outcome.found).toBe(signedIn);
    if (!outcome.found) expect(outcome.reason).toBe('domain_not_owned');
  });
});
