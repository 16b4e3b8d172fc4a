import type { RecordStore, Store } from '../../adapters/types.js';
import { NotFound, ValidationError } from '../../policies/errors.js';
import { AuditTrail, DEFAULT_AUDIT_SETTINGS, type AuditEvent } from '../../src/audit/trail.js';
import { Connections, MAX_CONNECTIONS_PER_TENANT, type ConnectionInput } from '../../src/federation/connections.js';
import { Sealer } from '../../src/records/sealed.js';
import { useAdapterStore } from '../support/adapter-stores.js';
import { capturingLogger } from '../support/fixtures.js';
import { STORE_KINDS } from '../support/stores.js';
import { redisContents } from '../support/redis.js';

const sleep = (ms: number) => new Promise((resolve) => setTimeout(resolve, ms));
const SECRET = 'upstream-client-secret-7f3a9c1e5b2d4a6f';
const OTHER_SECRET = 'replacement-secret-0c8e2a4b6d1f3e5a';
const KEY = 'factor-key-one-0123456789abcdefghijklmnop';
const ADMIN = { actor: { type: 'user' as const, id: 'ada' } };

const acme: ConnectionInput = {
  tenant: 'acme',
  name: 'Acme Entra ID',
  issuer: 'https://login.acme-idp.example/tenant/v2.0',
  clientId: 'acme-client',
  clientSecret: SECRET,
  domains: ['acme.example', 'Acme-Corp.Example.'],
};

/** Everything a secret could hide in: every Redis key and value, or every entry of the memory store (records and audit). */
async function everythingStored(handle: ReturnType<typeof useAdapterStore>, store: Store): Promise<string> {
  if (handle.kind === 'memory') {
    // The memory store's own maps, read as they are (a test's look inside, nothing else reads them).
    const inside = store as unknown as { records: { data: { map: Map<string, unknown> } }; audit: { logs: Map<string, unknown> } };
    const plain = (value: unknown): unknown => (value instanceof Set ? [...value] : value instanceof Map ? [...value.entries()] : value);
    const entries = [...inside.records.data.map.entries()].map(([key, value]) => [key, JSON.stringify(value, (_k, v: unknown) => plain(v))]);
    expect(entries.length).toBeGreaterThan(0);
    return JSON.stringify([entries, [...inside.audit.logs.entries()]]);
  }
  const parts: string[] = [];
  for (const client of handle.nodeClients()) {
    const contents = await redisContents(client, `${handle.prefix}*`);
    if (contents) parts.push(contents);
  }
  expect(parts.length).toBeGreaterThan(0);
  return parts.join('\n');
}

/**
 * THE CONNECTIONS' STORE CONTRACT (src/federation/connections.ts), on both stores: a tenant's
 * identity providers created, read, listed, changed and deleted; a domain belongs to one connection
 * of one tenant (also when two claim it at once) and is free again once let go; the client secret
 * sealed in the store and never returned; every change audited without the secret; every input
 * rule of policies/upstream-issuer.ts and policies/email-domains.ts, for the operator and for a tenant.
 */
describe.each(STORE_KINDS)('connections (%s store)', (kind) => {
  const handle = useAdapterStore(kind);
  let store: Store;
  let connections: Connections;
  let events: AuditEvent[];

  beforeEach(async () => {
    store = await handle.create();
    events = [];
    connections = on(store);
  });
  afterEach(async () => {
    await new Promise((resolve) => setTimeout(resolve, 30));
    await store.close();
  });

  /** Connections over `other` (a second instance on the same store when it is Redis). */
  function on(other: Store): Connections {
    const audit = new AuditTrail(other, DEFAULT_AUDIT_SETTINGS, capturingLogger().logger, (event) => void events.push(event));
    return new Connections(other.records, new Sealer([KEY], 'connection-secrets'), audit);
  }

  const refusal = async (promise: Promise<unknown>) => promise.then(() => undefined, (error: unknown) => error);

  it('creates, gets, lists, updates and deletes; the secret is never returned', async () => {
    const created = await connections.create(acme, ADMIN);
    expect(created).toEqual({
      id: expect.stringMatching(/^[0-9a-f-]{36}$/),
      tenant: 'acme',
      name: 'Acme Entra ID',
      issuer: 'https://login.acme-idp.example/tenant/v2.0',
      clientId: 'acme-client',
      tokenEndpointAuthMethod: 'client_secret_basic',
      hasClientSecret: true,
      scopes: ['openid', 'email', 'profile'],
      domains: ['acme.example', 'acme-corp.example'],
      // Named by the operator (the library's default author): verified.
      verifiedDomains: ['acme.example', 'acme-corp.example'],
      claimMapping: {},
      signOutUpstream: false,
      mfaAcrValues: [],
      createdAt: expect.any(String),
      updatedAt: expect.any(String),
    });
    expect(JSON.stringify(created)).not.toContain(SECRET);
    expect(await connections.get(created.id)).toEqual(created);
    expect(await connections.list('acme')).toEqual([created]);
    expect(await connections.list('globex')).toEqual([]);
    expect(await connections.get('nobody')).toBeUndefined();

    const changed = await connections.update(created.id, { name: 'Acme SSO', scopes: ['email', 'groups'], claimMapping: { email: 'upn' }, signOutUpstream: true }, ADMIN);
    expect(changed).toMatchObject({ name: 'Acme SSO', scopes: ['openid', 'email', 'groups'], claimMapping: { email: 'upn' }, signOutUpstream: true, hasClientSecret: true });
    expect(JSON.stringify(changed)).not.toContain(SECRET);
    expect(await connections.get(created.id)).toEqual(changed);

    expect(await connections.delete(created.id, ADMIN)).toBe(true);
    expect(await connections.get(created.id)).toBeUndefined();
    expect(await connections.list('acme')).toEqual([]);
    expect(await connections.delete(created.id, ADMIN)).toBe(false);
    await expect(connections.update(created.id, { name: 'x' })).rejects.toBeInstanceOf(NotFound);
  });

  it('lists a tenant\'s connections oldest first, and only its own', async () => {
    const first = await connections.create({ ...acme, domains: ['one.example'] });
    const second = await connections.create({ ...acme, name: 'Second', domains: ['two.example'] });
    const globex = await connections.create({ ...acme, tenant: 'globex', domains: ['globex.example'] });
    expect((await connections.list('acme')).map((each) => each.id)).toEqual([first.id, second.id]);
    expect((await connections.list('globex')).map((each) => each.id)).toEqual([globex.id]);
  });

  it('finds the connection of an email domain, normalized; none for a domain nobody owns', async () => {
    const created = await connections.create(acme);
    expect((await connections.byDomain('ACME.example'))?.id).toBe(created.id);
    expect((await connections.byDomain('acme-corp.example.'))?.id).toBe(created.id);
    expect(await connections.byDomain('globex.example')).toBeUndefined();
    expect(await connections.byDomain('not a domain')).toBeUndefined();
    expect(await connections.byDomain('')).toBeUndefined();
  });

  it('a domain belongs to one connection of one tenant: another tenant, or another connection of the same, is refused naming the domain', async () => {
    const owner = await connections.create(acme);
    for (const input of [{ ...acme, tenant: 'globex' }, { ...acme, name: 'Again' }]) {
      const error = await refusal(connections.create({ ...input, domains: ['free.example', 'ACME.example'] }));
      expect(error).toBeInstanceOf(ValidationError);
      expect((error as ValidationError).field).toBe('domains.1');
      expect((error as ValidationError).message).toMatch(/already belongs/);
    }
    // Nothing of the refused ones is kept: not listed, no domain held, no audit event.
    expect(await connections.list('globex')).toEqual([]);
    expect((await connections.list('acme')).map((each) => each.id)).toEqual([owner.id]);
    expect(await connections.byDomain('free.example')).toBeUndefined();
    expect(events.filter((event) => event.type === 'connection.created')).toHaveLength(1);
    const other = await connections.create({ ...acme, tenant: 'globex', domains: ['free.example'] });
    expect((await connections.byDomain('free.example'))?.id).toBe(other.id);
    // An update claiming it is refused alike, and changes nothing.
    const error = await refusal(connections.update(other.id, { domains: ['free.example', 'acme.example'] }));
    expect((error as ValidationError).field).toBe('domains.1');
    expect((await connections.get(other.id))?.domains).toEqual(['free.example']);
    expect((await connections.byDomain('acme.example'))?.id).toBe(owner.id);
  });

  it("a tenant's admin names unverified domains, the operator verified ones; the operator's claim takes a domain a tenant holds unverified, not one verified", async () => {
    const squatter = await connections.create({ ...acme, tenant: 'mallory', domains: ['victim.example', 'mallory.example'] }, ADMIN, 'tenant');
    expect(squatter.verifiedDomains).toEqual([]);
    expect((await connections.byDomain('victim.example'))?.id).toBe(squatter.id);
    // Another tenant's admin is refused (first come), as before.
    const refused = await refusal(connections.create({ ...acme, tenant: 'victim', domains: ['victim.example'] }, ADMIN, 'tenant'));
    expect((refused as ValidationError).field).toBe('domains.0');
    // The operator vouches for the victim's claim: it takes the domain, the squatter lets it go (audited in its trail).
    events.length = 0;
    const owner = await connections.create({ ...acme, tenant: 'victim', domains: ['victim.example'] });
    expect(owner.verifiedDomains).toEqual(['victim.example']);
    expect((await connections.byDomain('victim.example'))?.id).toBe(owner.id);
    expect((await connections.get(squatter.id))?.domains).toEqual(['mallory.example']);
    expect(events.find((event) => event.type === 'connection.updated')).toMatchObject({ tenant: 'mallory', target: { type: 'connection', id: squatter.id }, details: { domain_taken: 'victim.example' } });
    // A verified domain is not taken, by the operator either; a tenant's admin keeps it verified
    // when her form sends it back, and a domain she adds is unverified.
    const again = await refusal(connections.create({ ...acme, tenant: 'mallory', domains: ['victim.example'] }));
    expect((again as ValidationError).field).toBe('domains.0');
    const kept = await connections.update(owner.id, { domains: ['victim.example', 'victim-corp.example'] }, ADMIN, 'tenant');
    expect(kept.domains).toEqual(['victim.example', 'victim-corp.example']);
    expect(kept.verifiedDomains).toEqual(['victim.example']);
    // The operator's update verifies what it names.
    expect((await connections.update(owner.id, { domains: ['victim.example', 'victim-corp.example'] })).verifiedDomains).toEqual(['victim.example', 'victim-corp.example']);
  });

  it('two creates at once claiming the same domain: one wins, the other is refused and leaves nothing', async () => {
    const otherStore = kind === 'memory' ? undefined : await handle.another();
    const second = otherStore ? on(otherStore) : connections;
    try {
      const outcomes = await Promise.allSettled([
        connections.create({ ...acme, domains: ['raced.example'] }),
        second.create({ ...acme, tenant: 'globex', domains: ['raced.example'] }),
        connections.create({ ...acme, tenant: 'initech', domains: ['raced.example'] }),
      ]);
      const won = outcomes.filter((outcome) => outcome.status === 'fulfilled');
      expect(won).toHaveLength(1);
      for (const outcome of outcomes.filter((each) => each.status === 'rejected')) {
        expect((outcome as PromiseRejectedResult).reason).toBeInstanceOf(ValidationError);
      }
      const winner = (won[0] as PromiseFulfilledResult<{ id: string; tenant: string }>).value;
      expect((await connections.byDomain('raced.example'))?.id).toBe(winner.id);
      const listed = (await Promise.all(['acme', 'globex', 'initech'].map((tenant) => connections.list(tenant)))).flat();
      expect(listed.map((each) => each.id)).toEqual([winner.id]);
    } finally {
      await otherStore?.close();
    }
  });

  it('an update and a create claiming the same domain at once: one holds it, the other is refused and does not list it', async () => {
    const existing = await connections.create({ ...acme, tenant: 'globex', domains: ['globex.example'] });
    // The update held just before it writes its record (as a slow instance would be), while the create runs whole.
    let release!: () => void;
    const gate = new Promise<void>((resolve) => (release = resolve));
    const held = new Proxy(store.records, {
      get(target, name) {
        if (name === 'replace') {
          return async (...args: Parameters<RecordStore['replace']>) => {
            if (args[0] === 'connection') await gate;
            return target.replace(...args);
          };
        }
        const value: unknown = Reflect.get(target, name);
        return typeof value === 'function' ? (value as (...args: unknown[]) => unknown).bind(target) : value;
      },
    });
    const slow = new Connections(held, new Sealer([KEY], 'connection-secrets'));
    const updating = slow.update(existing.id, { name: 'Renamed', domains: ['globex.example', 'contested.example'] }).then(() => 'updated', (error: unknown) => error);
    for (let waited = 0; waited < 50 && !(await store.records.get('connection-domain', 'contested.example')); waited += 1) await sleep(2);
    const created = await connections.create({ ...acme, domains: ['contested.example'] }).then(() => 'created', (error: unknown) => error);
    release();
    const outcomes = [await updating, created];
    expect(outcomes.filter((outcome) => typeof outcome === 'string')).toHaveLength(1);
    for (const outcome of outcomes) if (typeof outcome !== 'string') expect(outcome).toBeInstanceOf(ValidationError);
    const owner = await connections.byDomain('contested.example');
    const listing = [...await connections.list('acme'), ...await connections.list('globex')].filter((each) => each.domains.includes('contested.example'));
    expect(listing.map((each) => each.id)).toEqual([owner!.id]);
    // A refused update leaves nothing of itself: the record is as it was.
    if (await updating !== 'updated') expect(await connections.get(existing.id)).toEqual(existing);
  });

  it('frees domains: those an update drops, and all of a deleted connection\'s, for another tenant to claim', async () => {
    const created = await connections.create(acme);
    await connections.update(created.id, { domains: ['acme.example', 'new.example'] });
    expect(await connections.byDomain('acme-corp.example')).toBeUndefined();
    expect((await connections.byDomain('new.example'))?.id).toBe(created.id);
    const taker = await connections.create({ ...acme, tenant: 'globex', domains: ['acme-corp.example'] });
    expect((await connections.byDomain('acme-corp.example'))?.id).toBe(taker.id);
    await connections.delete(created.id);
    expect(await connections.byDomain('acme.example')).toBeUndefined();
    expect(await connections.byDomain('new.example')).toBeUndefined();
    const later = await connections.create({ ...acme, tenant: 'initech', domains: ['acme.example', 'new.example'] });
    expect((await connections.byDomain('acme.example'))?.id).toBe(later.id);
  });

  it('keeps the secret sealed: no key or value of the store holds it, created or replaced, and it opens only for the sign-in', async () => {
    const created = await connections.create(acme, ADMIN);
    await connections.update(created.id, { clientSecret: OTHER_SECRET }, ADMIN);
    const stored = await everythingStored(handle, store);
    expect(stored).toContain(created.id);
    expect(stored).not.toContain(SECRET);
    expect(stored).not.toContain(OTHER_SECRET);
    expect((await connections.forSignIn(created.id))?.clientSecret).toBe(OTHER_SECRET);
    // Under other keys it does not open.
    const elsewhere = new Connections(store.records, new Sealer(['another-key-0123456789abcdefghijklmnopq'], 'connection-secrets'));
    expect((await elsewhere.forSignIn(created.id))?.clientSecret).toBeUndefined();
    expect(JSON.stringify(events)).not.toContain(SECRET);
    expect(JSON.stringify(events)).not.toContain(OTHER_SECRET);
  });

  it('removes the secret with "" when the method no longer needs one; refuses a method and secret that do not go together', async () => {
    const created = await connections.create(acme);
    const noSecret = await refusal(connections.update(created.id, { clientSecret: '' }));
    expect((noSecret as ValidationError).field).toBe('clientSecret');
    const keyWithSecret = await refusal(connections.update(created.id, { tokenEndpointAuthMethod: 'private_key_jwt' }));
    expect((keyWithSecret as ValidationError).field).toBe('clientSecret');
    expect((await connections.get(created.id))?.tokenEndpointAuthMethod).toBe('client_secret_basic');
    const changed = await connections.update(created.id, { tokenEndpointAuthMethod: 'private_key_jwt', clientSecret: '' });
    expect(changed).toMatchObject({ tokenEndpointAuthMethod: 'private_key_jwt', hasClientSecret: false });
    expect((await connections.forSignIn(created.id))?.clientSecret).toBeUndefined();
  });

  it('audits every change in the tenant\'s trail with who did it, never with the secret', async () => {
    const created = await connections.create(acme, ADMIN);
    await connections.update(created.id, { name: 'Renamed', clientSecret: OTHER_SECRET }, ADMIN);
    await connections.delete(created.id, ADMIN);
    const seen = events.map(({ type, tenant, actor, target, details }) => ({ type, tenant, actor, target, details }));
    const target = { type: 'connection', id: created.id };
    expect(seen).toEqual([
      { type: 'connection.created', tenant: 'acme', actor: ADMIN.actor, target, details: { name: 'Acme Entra ID', issuer: acme.issuer, domains: ['acme.example', 'acme-corp.example'], verified_domains: ['acme.example', 'acme-corp.example'], client_secret: true } },
      { type: 'connection.updated', tenant: 'acme', actor: ADMIN.actor, target, details: { fields: ['name', 'clientSecret'] } },
      { type: 'connection.deleted', tenant: 'acme', actor: ADMIN.actor, target, details: { name: 'Renamed' } },
    ]);
    const listed = (await new AuditTrail(store, DEFAULT_AUDIT_SETTINGS, capturingLogger().logger, undefined).list({ tenant: 'acme' })).events;
    expect(listed.map((event) => event.type).sort()).toEqual(['connection.created', 'connection.deleted', 'connection.updated']);
    expect(JSON.stringify(listed)).not.toContain(SECRET);
    expect(JSON.stringify(listed)).not.toContain(OTHER_SECRET);
  });

  it(`holds at most ${MAX_CONNECTIONS_PER_TENANT} connections per tenant`, async () => {
    for (let index = 0; index < MAX_CONNECTIONS_PER_TENANT; index += 1) {
      await connections.create({ ...acme, name: `IdP ${index}`, domains: [] });
    }
    const error = await refusal(connections.create({ ...acme, domains: [] }));
    expect(error).toBeInstanceOf(ValidationError);
    expect(error).toMatchObject({ field: 'tenant', description: expect.stringMatching(/has 20 connections, the most a tenant may have/) });
    expect(await connections.list('acme')).toHaveLength(MAX_CONNECTIONS_PER_TENANT);
    // Another tenant is not counted with it.
    await expect(connections.create({ ...acme, tenant: 'globex', domains: [] })).resolves.toMatchObject({ tenant: 'globex' });
  });

  it('scopes: openid always, first and once; defaults when none are named', async () => {
    expect((await connections.create({ ...acme, domains: [], scopes: ['email'] })).scopes).toEqual(['openid', 'email']);
    expect((await connections.create({ ...acme, domains: [], scopes: ['profile', 'openid', 'profile'] })).scopes).toEqual(['openid', 'profile']);
    expect((await connections.create({ ...acme, domains: [], scopes: [] })).scopes).toEqual(['openid']);
  });

  it('the operator may name a loopback provider over http, and the sign-in trusts its host; a tenant may not', async () => {
    const local = await connections.create({ ...acme, issuer: 'http://127.0.0.1:4455', domains: [] });
    expect((await connections.forSignIn(local.id))?.trustedHost).toBe('127.0.0.1');
    const error = await refusal(connections.create({ ...acme, issuer: 'http://127.0.0.1:4455', domains: [] }, ADMIN, 'tenant'));
    expect((error as ValidationError).field).toBe('issuer');
    // A tenant may keep the operator's issuer while changing other fields, not name one: then it is no longer trusted.
    await connections.update(local.id, { name: 'Kept' }, ADMIN, 'tenant');
    expect((await connections.forSignIn(local.id))?.trustedHost).toBe('127.0.0.1');
    const renamed = await refusal(connections.update(local.id, { issuer: 'http://localhost:4455' }, ADMIN, 'tenant'));
    expect((renamed as ValidationError).field).toBe('issuer');
    // Sent back unchanged (a tenant's form sends every field), the operator's issuer and domains are kept, not refused.
    const local2 = await connections.create({ ...acme, issuer: 'http://localhost:4456', domains: ['acme.local'] });
    const kept = await connections.update(local2.id, { name: 'Form', issuer: 'http://localhost:4456', domains: ['acme.local', 'acme.example'] }, ADMIN, 'tenant');
    expect(kept).toMatchObject({ name: 'Form', issuer: 'http://localhost:4456', domains: ['acme.local', 'acme.example'] });
    expect((await connections.forSignIn(local2.id))?.trustedHost).toBe('localhost');
    const added = await refusal(connections.update(local2.id, { domains: ['acme.local', 'other.local'] }, ADMIN, 'tenant'));
    expect((added as ValidationError).field).toBe('domains.1');
    const publicOne = await connections.create({ ...acme, domains: [] }, ADMIN, 'tenant');
    expect((await connections.forSignIn(publicOne.id))?.trustedHost).toBeUndefined();
  });

  describe.each(['operator', 'tenant'] as const)('input rules named by the %s', (author) => {
    const both = { operator: true, tenant: true };
    const tenantOnly = { operator: false, tenant: true };
    it.each<[string, Record<string, unknown>, string, { operator: boolean; tenant: boolean }]>([
      ['an empty name', { name: ' ' }, 'name', both],
      ['a name over 100 characters', { name: 'x'.repeat(101) }, 'name', both],
      ['a name on two lines', { name: 'Acme\nIdP' }, 'name', both],
      ['no tenant', { tenant: '' }, 'tenant', both],
      ['an issuer that is no URL', { issuer: 'login.acme.example' }, 'issuer', both],
      ['an ftp issuer', { issuer: 'ftp://login.acme.example' }, 'issuer', both],
      ['an issuer with credentials', { issuer: 'https://user:pw@login.acme.example' }, 'issuer', both],
      ['an issuer with a query', { issuer: 'https://login.acme.example/?tenant=1' }, 'issuer', both],
      ['an issuer with a fragment', { issuer: 'https://login.acme.example/#x' }, 'issuer', both],
      ['a plain http issuer on a public host', { issuer: 'http://login.acme.example' }, 'issuer', both],
      ['a loopback http issuer', { issuer: 'http://127.0.0.1:4455' }, 'issuer', tenantOnly],
      ['an https issuer on localhost', { issuer: 'https://localhost' }, 'issuer', tenantOnly],
      ['an issuer on another port', { issuer: 'https://login.acme.example:8443' }, 'issuer', tenantOnly],
      ['an issuer at an IP address', { issuer: 'https://10.0.0.5' }, 'issuer', tenantOnly],
      ['an issuer on a .internal name', { issuer: 'https://metadata.google.internal' }, 'issuer', tenantOnly],
      ['an issuer on a single-label host', { issuer: 'https://intranet' }, 'issuer', tenantOnly],
      ['an empty client ID', { clientId: '' }, 'clientId', both],
      ['a client ID with a space', { clientId: 'a b' }, 'clientId', both],
      ['a domain that is no domain', { domains: ['acme.example', 'not a domain'] }, 'domains.1', both],
      ['a domain with an @', { domains: ['alice@acme.example'] }, 'domains.0', both],
      ['a domain that is an IP address', { domains: ['192.168.1.10'] }, 'domains.0', both],
      ['a single-label domain', { domains: ['acme'] }, 'domains.0', both],
      ['a domain listed twice', { domains: ['acme.example', 'ACME.example.'] }, 'domains.1', both],
      ['a domain with an underscore', { domains: ['ac_me.example'] }, 'domains.0', both],
      ['51 domains', { domains: Array.from({ length: 51 }, (_, i) => `d${i}.example`) }, 'domains', both],
      ['a private-suffix domain', { domains: ['corp.local'] }, 'domains.0', tenantOnly],
      ['an .internal domain', { domains: ['acme.internal'] }, 'domains.0', tenantOnly],
      ["a mailbox provider's shared domain", { domains: ['gmail.com'] }, 'domains.0', tenantOnly],
      ["another mailbox provider's shared domain, in capitals", { domains: ['Outlook.COM'] }, 'domains.0', tenantOnly],
      ['a secret method without a secret', { clientSecret: undefined, tokenEndpointAuthMethod: 'client_secret_post' }, 'clientSecret', both],
      ['private_key_jwt with a secret', { tokenEndpointAuthMethod: 'private_key_jwt' }, 'clientSecret', both],
      ['an empty secret', { clientSecret: '' }, 'clientSecret', both],
      ['a secret with a line break', { clientSecret: 'a\nb' }, 'clientSecret', both],
      ['an unknown method', { tokenEndpointAuthMethod: 'none' }, 'tokenEndpointAuthMethod', both],
      ['a scope with a space', { scopes: ['openid email'] }, 'scopes.0', both],
      ['21 scopes', { scopes: Array.from({ length: 21 }, (_, i) => `s${i}`) }, 'scopes', both],
      ['a claim mapping of a claim we do not map', { claimMapping: { groups: 'roles' } }, 'claimMapping', both],
      ['a claim mapping to a name that is no claim', { claimMapping: { email: 'e mail' } }, 'claimMapping.email', both],
      ['a claim mapping to a number', { claimMapping: { email: 5 } }, 'claimMapping.email', both],
      ['an unknown field', { clientSecretHash: 'x' }, 'connection', both],
      ['signOutUpstream not a boolean', { signOutUpstream: 'yes' }, 'signOutUpstream', both],
    ])('%s', async (_name, change, field, refused) => {
      const input = { ...acme, ...change } as ConnectionInput;
      if (Object.hasOwn(change, 'clientSecret') && change.clientSecret === undefined) delete input.clientSecret;
      const error = await refusal(connections.create(input, ADMIN, author));
      if (!refused[author]) {
        expect(error).toBeUndefined();
        return;
      }
      expect(error).toBeInstanceOf(ValidationError);
      expect((error as ValidationError).field).toBe(field);
      expect(await connections.list(input.tenant || 'acme')).toEqual([]);
      expect(events).toEqual([]);
    });

    it('an update is ruled alike, and a refused one changes nothing', async () => {
      const created = await connections.create({ ...acme, domains: ['acme.example'] }, ADMIN, author);
      for (const [patch, field] of [
        [{ issuer: 'https://login.acme.example/?x=1' }, 'issuer'],
        [{ domains: ['acme.example', 'acme.example'] }, 'domains.1'],
        [{ domains: ['10.0.0.1'] }, 'domains.0'],
        [{ tenant: 'globex' }, 'patch'],
        [{ scopes: [''] }, 'scopes.0'],
      ] as const) {
        const error = await refusal(connections.update(created.id, patch as never, ADMIN, author));
        expect(error).toBeInstanceOf(ValidationError);
        expect((error as ValidationError).field).toBe(field);
      }
      if (author === 'tenant') {
        expect(((await refusal(connections.update(created.id, { domains: ['gmail.com'] }, ADMIN, author))) as ValidationError).field).toBe('domains.0');
        expect(((await refusal(connections.update(created.id, { issuer: 'https://login.acme.example:444' }, ADMIN, author))) as ValidationError).field).toBe('issuer');
      }
      expect(await connections.get(created.id)).toEqual(created);
      expect(events.map((event) => event.type)).toEqual(['connection.created']);
    });
  });
});
