import { createMemoryStore } from '../../adapters/memory.js';
import type { Store } from '../../adapters/types.js';
import { ValidationError } from '../../policies/errors.js';
import { AppRegistrations, webOrigin, type AppRegistrationInput } from '../../src/records/app-registrations.js';
import { secretMatches } from '../../src/records/secrets.js';
import { AuditTrail, DEFAULT_AUDIT_SETTINGS } from '../../src/audit/trail.js';

const WEB = 'https://app.example.com/cb';
const LOOPBACK = 'http://127.0.0.1:3000/cb';

describe('app registrations (src/records/app-registrations.ts)', () => {
  let store: Store;
  let apps: AppRegistrations;
  let checked: number;
  beforeEach(() => {
    store = createMemoryStore();
    checked = 0;
    apps = new AppRegistrations(store.records, async () => {
      checked += 1;
    });
  });
  afterEach(() => store.close());

  const valid: AppRegistrationInput = { name: 'App', redirectUris: [WEB], clientType: 'confidential' };

  it('records the fields an update changes, not those sent unchanged (a form sends them all)', async () => {
    const audit = new AuditTrail(store, DEFAULT_AUDIT_SETTINGS, { info() {}, warn() {}, error() {} }, undefined);
    const audited = new AppRegistrations(store.records, async () => {}, async () => 0, audit);
    const created = await audited.create({ ...valid, tenant: 'acme' });
    await audited.update(created.clientId, { name: 'App', redirectUris: [WEB, LOOPBACK], clientType: 'confidential', pkceEnabled: true, description: '', backchannelLogoutUri: '' });
    const [update] = (await audit.list({ tenant: 'acme', type: 'app_registration.updated' })).events;
    expect(update!.details).toEqual({ fields: ['redirectUris'] });
  });

  it('requirePushedAuthorizationRequests: false by default, set and cleared by an update (audited), stored only when true', async () => {
    const audit = new AuditTrail(store, DEFAULT_AUDIT_SETTINGS, { info() {}, warn() {}, error() {} }, undefined);
    const audited = new AppRegistrations(store.records, async () => {}, async () => 0, audit);
    const created = await audited.create({ ...valid, tenant: 'acme' });
    expect(created.requirePushedAuthorizationRequests).toBe(false);
    const required = await audited.update(created.clientId, { requirePushedAuthorizationRequests: true });
    expect(required.requirePushedAuthorizationRequests).toBe(true);
    expect((await audited.get(created.clientId))!.requirePushedAuthorizationRequests).toBe(true);
    const [update] = (await audit.list({ tenant: 'acme', type: 'app_registration.updated' })).events;
    expect(update!.details).toEqual({ fields: ['requirePushedAuthorizationRequests'] });
    const cleared = await audited.update(created.clientId, { requirePushedAuthorizationRequests: false });
    expect(cleared.requirePushedAuthorizationRequests).toBe(false);
    expect(await store.records.get('app', created.clientId)).not.toHaveProperty('requirePushedAuthorizationRequests');
    const atCreation = await audited.create({ ...valid, requirePushedAuthorizationRequests: true });
    expect((await audited.get(atCreation.clientId))!.requirePushedAuthorizationRequests).toBe(true);
  });

  it.each([
    ['an empty name', { name: ' ' }, 'name'],
    ['a name over 200 characters', { name: 'x'.repeat(201) }, 'name'],
    ['no redirect URI', { redirectUris: [] }, 'redirectUris'],
    ['21 redirect URIs', { redirectUris: Array.from({ length: 21 }, (_, i) => `https://app.example.com/${i}`) }, 'redirectUris'],
    ['a redirect URI with a fragment', { redirectUris: ['https://app.example.com/cb#x'] }, 'redirectUris.0'],
    ['an unknown client type', { clientType: 'trusted' }, 'clientType'],
    ['a public app without PKCE', { clientType: 'public', pkceEnabled: false }, 'pkceEnabled'],
    ['PKCE off with an http redirect URI', { redirectUris: [LOOPBACK], pkceEnabled: false }, 'pkceEnabled'],
    ['an unknown field', { secret: 'x' }, 'appRegistration'],
    ['requirePushedAuthorizationRequests that is not a boolean', { requirePushedAuthorizationRequests: 'yes' }, 'requirePushedAuthorizationRequests'],
    ['a post-logout redirect URI with a fragment', { postLogoutRedirectUris: ['https://app.example.com/out#x'] }, 'postLogoutRedirectUris.0'],
    ['a post-logout redirect URI over plain http', { postLogoutRedirectUris: ['http://app.example.com/out'] }, 'postLogoutRedirectUris.0'],
    ['21 post-logout redirect URIs', { postLogoutRedirectUris: Array.from({ length: 21 }, (_, i) => `https://app.example.com/${i}`) }, 'postLogoutRedirectUris'],
    ['a back-channel logout URI that is a deep link', { backchannelLogoutUri: 'myapp://logout' }, 'backchannelLogoutUri'],
    ['a back-channel logout URI with a fragment', { backchannelLogoutUri: 'https://app.example.com/bc#x' }, 'backchannelLogoutUri'],
    // A tenant's app: https on 443 to a public name (policies/backchannel-logout.ts has the table).
    ["a tenant's back-channel logout URI on loopback http", { tenant: 'acme', backchannelLogoutUri: 'http://127.0.0.1:4000/bc' }, 'backchannelLogoutUri'],
    ["a tenant's back-channel logout URI on a .internal name", { tenant: 'acme', backchannelLogoutUri: 'https://metadata.google.internal/' }, 'backchannelLogoutUri'],
    ["a tenant's back-channel logout URI on port 6379", { tenant: 'acme', backchannelLogoutUri: 'https://x.example:6379/' }, 'backchannelLogoutUri'],
  ])('refuses %s, naming the field', async (_name, change, field) => {
    const error = await apps.create({ ...valid, ...change } as AppRegistrationInput).catch((thrown: unknown) => thrown);
    expect(error).toBeInstanceOf(ValidationError);
    expect((error as ValidationError).field).toMatch(new RegExp(`^${field.replace('.', '\\.')}`));
    expect(await apps.list()).toEqual([]);
    expect(checked).toBe(0);
  });

  it.each([
    ['a confidential app: a secret, PKCE on, RS256', valid, { clientType: 'confidential', pkceEnabled: true, idTokenSigningAlg: 'RS256', firstParty: false, openToAllTenants: false }, true],
    ['a public app: no secret, PKCE on', { ...valid, clientType: 'public' as const }, { clientType: 'public', pkceEnabled: true }, false],
    ['a legacy confidential app: PKCE off over https', { ...valid, pkceEnabled: false }, { pkceEnabled: false }, true],
    ["a tenant's app", { ...valid, tenant: 'acme' }, { tenant: 'acme', openToAllTenants: false }, true],
    ['an app with sign-out URIs', { ...valid, postLogoutRedirectUris: ['https://app.example.com/out'], backchannelLogoutUri: 'http://127.0.0.1:4000/bc' },
      { postLogoutRedirectUris: ['https://app.example.com/out'], backchannelLogoutUri: 'http://127.0.0.1:4000/bc' }, true],
  ])('creates %s; the secret is shown once and stored as a digest', async (_name, input, expected, hasSecret) => {
    const created = await apps.create(input);
    expect(created).toEqual(expect.objectContaining(expected));
    expect(typeof created.clientSecret === 'string').toBe(hasSecret);
    const read = await apps.get(created.clientId);
    expect(read).not.toHaveProperty('clientSecret');
    expect(read).not.toHaveProperty('secretDigest');
    const stored = JSON.stringify(await store.records.get('app', created.clientId));
    if (created.clientSecret) {
      expect(stored).not.toContain(created.clientSecret);
      const { secretDigest } = (await store.records.get<{ secretDigest: string }>('app', created.clientId))!;
      expect(secretMatches(created.clientSecret, secretDigest)).toBe(true);
    }
    expect(checked).toBe(1);
  });

  it("update: a tenant's app is held to the tenant's back-channel rule, the operator's app to its own", async () => {
    const tenants = await apps.create({ ...valid, tenant: 'acme' });
    for (const uri of ['https://foo.localhost/bc', 'https://10.0.0.5/bc', 'https://intranet.corp/bc', 'http://localhost:4000/bc']) {
      await expect(apps.update(tenants.clientId, { backchannelLogoutUri: uri })).rejects.toMatchObject({ field: 'backchannelLogoutUri' });
    }
    expect(await apps.get(tenants.clientId)).not.toHaveProperty('backchannelLogoutUri');
    expect((await apps.update(tenants.clientId, { backchannelLogoutUri: 'https://hr.acme.example/bc' })).backchannelLogoutUri).toBe('https://hr.acme.example/bc');
    const own = await apps.create(valid);
    expect((await apps.update(own.clientId, { backchannelLogoutUri: 'http://localhost:4000/bc' })).backchannelLogoutUri).toBe('http://localhost:4000/bc');
  });

  it.each([
    ['public → confidential: a new secret, shown once', 'public', { clientType: 'confidential' as const }, true],
    ['confidential → public: the secret goes, PKCE back on', 'confidential', { clientType: 'public' as const }, false],
    ['a rename keeps the type and has no secret to show', 'confidential', { name: 'Renamed' }, false],
  ] as const)('update: %s', async (_name, clientType, patch, newSecret) => {
    const created = await apps.create({ ...valid, clientType, ...(clientType === 'confidential' ? { pkceEnabled: false } : {}) });
    const updated = await apps.update(created.clientId, patch);
    expect(typeof updated.clientSecret === 'string').toBe(newSecret);
    const stored = await store.records.get<{ secretDigest?: string; pkceEnabled: boolean }>('app', created.clientId);
    expect(stored?.secretDigest !== undefined).toBe(updated.clientType === 'confidential');
    if ('clientType' in patch) expect(stored?.pkceEnabled).toBe(true);
  });

  it('lists a tenant\'s apps by the tenant in the store; apps registered before its index are found too', async () => {
    const mine = await apps.create({ ...valid, name: 'Mine', tenant: 'acme' });
    await apps.create({ ...valid, name: 'Theirs', tenant: 'globex' });
    await apps.create({ ...valid, name: 'Operator' });
    // An app of acme registered before the index was kept: its record only.
    const earlier = { ...(await apps.get(mine.clientId))!, clientId: '00000000-0000-4000-8000-00000000000e', name: 'Earlier', createdAt: '2020-01-01T00:00:00.000Z' };
    await store.records.put('app', earlier.clientId, '', earlier);
    const fresh = new AppRegistrations(store.records, async () => {});
    expect((await fresh.listByTenant('acme')).map((app) => app.name)).toEqual(['Earlier', 'Mine']);
    expect((await fresh.listByTenant('globex')).map((app) => app.name)).toEqual(['Theirs']);
    expect(await fresh.listByTenant('nobody')).toEqual([]);
    // A deleted app leaves its tenant's list.
    await fresh.delete(mine.clientId);
    expect((await fresh.listByTenant('acme')).map((app) => app.name)).toEqual(['Earlier']);
    expect(await store.records.list('app-of-tenant', 'acme')).toEqual([{ clientId: earlier.clientId }]);
  });

  it('rotates a confidential secret (the old one stops matching) and refuses to give a public app one', async () => {
    const created = await apps.create(valid);
    const { clientSecret } = await apps.rotateSecret(created.clientId);
    const { secretDigest } = (await store.records.get<{ secretDigest: string }>('app', created.clientId))!;
    expect(secretMatches(clientSecret, secretDigest)).toBe(true);
    expect(secretMatches(created.clientSecret!, secretDigest)).toBe(false);
    const publicApp = await apps.create({ ...valid, clientType: 'public' });
    await expect(apps.rotateSecret(publicApp.clientId)).rejects.toThrow(ValidationError);
  });

  it('knows the web origins of public apps only, and forgets them when an app changes', async () => {
    await apps.create(valid);
    const spa = await apps.create({ ...valid, clientType: 'public', redirectUris: ['https://spa.example.com/cb', 'com.example.app://cb'] });
    expect([...(await apps.publicWebOrigins())]).toEqual(['https://spa.example.com']);
    await apps.delete(spa.clientId);
    expect([...(await apps.publicWebOrigins())]).toEqual([]);
  });

  it.each([
    [WEB, 'https://app.example.com'],
    [LOOPBACK, 'http://127.0.0.1:3000'],
    ['com.example.app://cb', undefined],
  ])('the web origin of %s is %s', (uri, origin) => {
    expect(webOrigin(uri)).toBe(origin);
  });
});
