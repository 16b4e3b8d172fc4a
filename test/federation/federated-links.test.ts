import { afterEach, beforeEach, describe, expect, it } from '@jest/globals';
import type { RecordStore, Store } from '../../adapters/types.js';
import type { Account, AccountStore } from '../../src/accounts.js';
import { Connections, type ConnectionInput } from '../../src/federation/connections.js';
import { FederatedAccounts } from '../../src/federation/federated-accounts.js';
import { FederatedLinks } from '../../src/federation/federated-links.js';
import { Sealer } from '../../src/records/sealed.js';
import { useAdapterStore } from '../support/adapter-stores.js';
import { STORE_KINDS } from '../support/stores.js';

/*
 * The remembered links of federated identities (src/federation/federated-links.ts) and their
 * connection, on both stores: written by a sign-in that found the user by her address
 * (FederatedAccounts), found again by the provider's sub, deleted with their connection (only
 * its own: another connection's stay, and the delete reads no other connection's links), and a
 * link written for a connection that is gone is not kept.
 */

const KEY = 'factor-key-one-0123456789abcdefghijklmnop';
const LINK = 'federated-link';
const input = (name: string, domain: string): ConnectionInput => ({
  tenant: 'acme', name, issuer: `https://${name}.idp.example`, clientId: 'our-client', clientSecret: 'upstream-secret-0123456789', domains: [domain],
});
const account = (sub: string): Account => ({ sub, tenant: 'acme', claims: { email: `${sub}@acme.example` } });

describe.each(STORE_KINDS)('federated links and their connection (%s store)', (kind) => {
  const handle = useAdapterStore(kind);
  let store: Store;
  /** The (kind, group) of every listing of the record store. */
  let listed: Array<[string, string]>;
  let records: RecordStore;
  let connections: Connections;
  let accounts: FederatedAccounts;
  const byUsername = new Map<string, Account>();

  beforeEach(async () => {
    store = await handle.create();
    listed = [];
    // The store itself, its listings noted (to see which links a delete reads).
    records = Object.create(store.records, {
      list: { value: <T>(kind: string, group: string) => { listed.push([kind, group]); return store.records.list<T>(kind, group); } },
    }) as RecordStore;
    connections = new Connections(records, new Sealer([KEY], 'connection-secrets'));
    const host: AccountStore = {
      authenticate: async () => undefined,
      findAccount: async (sub) => [...byUsername.values()].find((found) => found.sub === sub),
      findByUsername: async (username) => byUsername.get(username),
    };
    accounts = new FederatedAccounts(records, host, (domain) => connections.byDomain(domain));
    for (const sub of ['ada', 'ben', 'cleo']) byUsername.set(`${sub}@acme.example`, account(sub));
  });
  afterEach(async () => {
    await new Promise((resolve) => setTimeout(resolve, 30));
    await store.close();
  });

  /** A sign-in's identity through `connection` as the provider's `upstreamSub` with her address. */
  const signIn = (connection: Awaited<ReturnType<Connections['get']>>, upstreamSub: string, email: string) =>
    accounts.accountOf(connection!, { sub: upstreamSub, email, email_verified: true });

  it('a sign-in by address leaves a link; the link finds her after her address changed at the host', async () => {
    const entra = await connections.get((await connections.create(input('entra', 'acme.example'))).id);
    await expect(signIn(entra, 'up-ada', 'ada@acme.example')).resolves.toMatchObject({ found: true, account: { sub: 'ada' } });
    byUsername.set('ada.new@acme.example', byUsername.get('ada@acme.example')!);
    byUsername.delete('ada@acme.example');
    await expect(signIn(entra, 'up-ada', 'ada@acme.example')).resolves.toMatchObject({ found: true, account: { sub: 'ada' } });
    expect(await store.records.list(LINK, entra!.id)).toEqual([expect.objectContaining({ connection: entra!.id, sub: 'ada', tenant: 'acme' })]);
  });

  it("deleting a connection deletes its links, only its own, reading no other connection's", async () => {
    const entra = await connections.get((await connections.create(input('entra', 'acme.example'))).id);
    const okta = await connections.get((await connections.create(input('okta', 'acme-corp.example'))).id);
    await signIn(entra, 'up-ada', 'ada@acme.example');
    await signIn(entra, 'up-ben', 'ben@acme.example');
    byUsername.set('cleo@acme-corp.example', account('cleo'));
    await signIn(okta, 'okta-cleo', 'cleo@acme-corp.example');
    const links = new FederatedLinks(store.records, async () => true);
    expect(await store.records.list(LINK, entra!.id)).toHaveLength(2);
    expect(await links.of(entra!, 'up-ada')).toMatchObject({ sub: 'ada' });

    listed = [];
    await expect(connections.delete(entra!.id)).resolves.toBe(true);
    expect(await store.records.list(LINK, entra!.id)).toEqual([]);
    expect(await links.of(entra!, 'up-ada')).toBeUndefined();
    expect(await links.of(entra!, 'up-ben')).toBeUndefined();
    // The other connection's link stays, and was not read.
    expect(await links.of(okta!, 'okta-cleo')).toMatchObject({ sub: 'cleo', connection: okta!.id });
    expect(listed.filter(([listedKind]) => listedKind === LINK)).toEqual([[LINK, entra!.id]]);
    // Deleted again: nothing left, nothing to do.
    await expect(connections.delete(entra!.id)).resolves.toBe(false);
  });

  it("a link is of the connection's issuer: moved to another provider, the old provider's subjects find nobody", async () => {
    const entra = await connections.get((await connections.create(input('entra', 'acme.example'))).id);
    await signIn(entra, 'up-ada', 'ada@acme.example');
    const links = new FederatedLinks(store.records, async () => true);
    expect(await links.of(entra!, 'up-ada')).toMatchObject({ sub: 'ada' });
    const moved = await connections.update(entra!.id, { issuer: 'https://login.other-idp.example' });
    expect(await links.of(moved, 'up-ada')).toBeUndefined();
  });

  it('a link written for a connection deleted meanwhile is not kept', async () => {
    const entra = await connections.get((await connections.create(input('entra', 'acme.example'))).id);
    let gone = false;
    // The sign-in read its connection before the delete, and writes its link after it.
    const late = new FederatedLinks(store.records, async () => !gone);
    await connections.delete(entra!.id);
    gone = true;
    await late.remember(entra!, 'up-ada', account('ada'));
    expect(await store.records.list(LINK, entra!.id)).toEqual([]);
    expect(await late.of(entra!, 'up-ada')).toBeUndefined();
    // Through FederatedAccounts (which reads the connection's record): the same.
    await expect(signIn(entra, 'up-ben', 'ben@acme.example')).resolves.toMatchObject({ found: true, account: { sub: 'ben' } });
    expect(await store.records.list(LINK, entra!.id)).toEqual([]);
  });
});
