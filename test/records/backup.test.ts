import { ValidationError } from '../../policies/errors.js';
import { BACKUP_FORMAT, BACKUP_VERSION, type BackupDocument } from '../../src/records/backup.js';
import type { AuthServer } from '../../src/index.js';
import { basic, postToken, startServer, type RunningServer } from '../support/server.js';
import { STORE_KINDS, useStore } from '../support/stores.js';
import { portalClientId } from '../../src/portal/own-app.js';
import { MAX_BACKUP_RECORDS } from '../../src/records/backup.js';

const SETTINGS = { tenant: 'acme', settings: { secondFactor: 'required' as const, sso: 'optional' as const, updatedAt: '2026-11-01T10:00:00.000Z' } };
const CONSENT = { tenant: 'acme', sub: 'ann', clientId: '', grantId: 'grant-1', scopes: ['openid', 'scim.read'], createdAt: '2026-11-01T10:00:00.000Z', updatedAt: '2026-11-01T10:00:00.000Z' };

/** A document that adds tenant settings and a consent (to `appId`) to what a store holds: the library has no call that writes them. */
function extras(appId: string): BackupDocument {
  return {
    format: BACKUP_FORMAT,
    version: BACKUP_VERSION,
    exportedAt: new Date().toISOString(),
    records: { clientConfigurations: [], appRegistrations: [], tenantSettings: [SETTINGS], consents: [{ ...CONSENT, clientId: appId }] },
  };
}

/** The events of a tenant's trail, newest first. */
async function events(auth: AuthServer, tenant: string | null) {
  return (await auth.audit.list({ tenant, limit: 200 })).events;
}

function rejection(promise: Promise<unknown>): Promise<ValidationError> {
  return promise.then(
    () => { throw new Error('expected a refusal'); },
    (error: unknown) => {
      expect(error).toBeInstanceOf(ValidationError);
      return error as ValidationError;
    },
  );
}

describe.each(STORE_KINDS)('backup and restore (auth.backup) on %s', (kind) => {
  const stores = useStore(kind);
  const servers: RunningServer[] = [];
  const start = async () => {
    // With the portal: its own app is in the store, and never in a backup.
    const server = await startServer({ store: stores.option(), portal: { enabled: true } });
    servers.push(server);
    return server;
  };
  afterEach(async () => {
    await Promise.all(servers.splice(0).map((server) => server.stop()));
  });

  /** A source store with two tenants' clients, a tenant's app, an operator's app, settings and a consent. */
  async function populated() {
    const source = await start();
    const { auth } = source;
    const payroll = await auth.clientConfigurations.create({ tenant: 'acme', name: 'Payroll', category: 'sync', description: 'Nightly', resources: { scim: { scopes: ['scim.read'], constraints: { group: ['engineering'] } } } });
    const billing = await auth.clientConfigurations.create({ tenant: 'globex', name: 'Billing', category: 'sync', resources: { subscriptions: { scopes: ['manage.subscriptions'] } }, dpop: 'optional' });
    const acmeApp = await auth.appRegistrations.create({ tenant: 'acme', name: 'Acme web', redirectUris: ['https://acme.example/cb'], clientType: 'confidential' });
    const platformApp = await auth.appRegistrations.create({ name: 'Platform SPA', redirectUris: ['https://platform.example/cb'], clientType: 'public', firstParty: true });
    await auth.backup.import(extras(acmeApp.clientId));
    return { source, payroll, billing, acmeApp, platformApp };
  }

  it('round trip: export, import into an empty store, export again: the same records; a restored secret still authenticates', async () => {
    const { source, payroll, billing, acmeApp, platformApp } = await populated();
    const document = await source.auth.backup.export({ consents: true });
    const text = JSON.stringify(document);
    // Secrets as digests only: the secrets create() answered are nowhere in the document.
    for (const secret of [payroll.clientSecret, billing.clientSecret, acmeApp.clientSecret!]) expect(text).not.toContain(secret);
    expect(document.records.clientConfigurations.map((client) => client.clientId)).toEqual([payroll.clientId, billing.clientId].sort());
    expect(document.records.appRegistrations.map((app) => app.clientId).sort()).toEqual([acmeApp.clientId, platformApp.clientId].sort());
    expect(document.records.tenantSettings).toEqual([SETTINGS]);
    // The consent imported into the source named a new grant, not the document's `grant-1`.
    expect(document.records.consents).toEqual([{ ...CONSENT, clientId: acmeApp.clientId, grantId: expect.not.stringMatching(/^grant-1$/) }]);

    const target = await start();
    const result = await target.auth.backup.import(JSON.parse(text));
    expect(result).toEqual({
      dryRun: false,
      counts: {
        clientConfigurations: { created: 2, updated: 0, unchanged: 0 },
        appRegistrations: { created: 2, updated: 0, unchanged: 0 },
        tenantSettings: { created: 1, updated: 0, unchanged: 0 },
        consents: { created: 1, updated: 0, unchanged: 0 },
      },
    });
    const again = await target.auth.backup.export({ consents: true });
    // The same records, but a consent's grant: never the document's (the engine makes it again).
    const withoutGrants = (records: BackupDocument['records']) => ({ ...records, consents: records.consents?.map(({ grantId: _grant, ...rest }) => rest) });
    expect(withoutGrants(again.records)).toEqual(withoutGrants(document.records));
    expect(again.records.consents![0]!.grantId).not.toBe(document.records.consents![0]!.grantId);
    expect(await target.auth.clientConfigurations.get(payroll.clientId)).toEqual(await source.auth.clientConfigurations.get(payroll.clientId));
    expect((await target.auth.appRegistrations.listByTenant('acme')).map((app) => app.clientId)).toEqual([acmeApp.clientId]);

    // The secret given at creation on the source authenticates on the restored store.
    const token = await postToken(target.oauthUrl, { grant_type: 'client_credentials', scope: 'scim.read' }, { authorization: basic(payroll.clientId, payroll.clientSecret) });
    expect(token.status).toBe(200);
    expect(token.body.access_token).toEqual(expect.any(String));
    const wrong = await postToken(target.oauthUrl, { grant_type: 'client_credentials', scope: 'scim.read' }, { authorization: basic(payroll.clientId, `${payroll.clientSecret.slice(1)}x`) });
    expect(wrong.status).toBe(401);

    // One event per record written, in the record's tenant, each saying it was imported.
    const acme = await events(target.auth, 'acme');
    expect(acme.map((event) => event.type).sort()).toEqual(['app_registration.created', 'client_configuration.created', 'consent.granted', 'tenant_settings.updated']);
    expect(acme.every((event) => event.details?.imported === true && event.actor.type === 'operator')).toBe(true);
    expect((await events(target.auth, 'globex')).map((event) => event.type)).toEqual(['client_configuration.created']);
    expect((await events(target.auth, null)).filter((event) => event.details?.imported).map((event) => event.target)).toEqual([{ type: 'app_registration', id: platformApp.clientId }]);
  });

  it('is idempotent: the same document again changes nothing, says so, and records nothing', async () => {
    const { source } = await populated();
    const document = await source.auth.backup.export({ consents: true });
    const before = await events(source.auth, 'acme');
    const result = await source.auth.backup.import(document);
    expect(result.counts).toEqual({
      clientConfigurations: { created: 0, updated: 0, unchanged: 2 },
      appRegistrations: { created: 0, updated: 0, unchanged: 2 },
      tenantSettings: { created: 0, updated: 0, unchanged: 1 },
      consents: { created: 0, updated: 0, unchanged: 1 },
    });
    expect(await events(source.auth, 'acme')).toEqual(before);
  });

  it('leaves out the portal\'s own app, and consents unless asked; --tenant keeps to that tenant', async () => {
    const { source, payroll, acmeApp } = await populated();
    const all = await source.auth.backup.export();
    expect(all.records).not.toHaveProperty('consents');
    // The store holds three apps: the portal's own is the third.
    expect(await source.auth.appRegistrations.list()).toHaveLength(3);
    expect(all.records.appRegistrations).toHaveLength(2);
    expect(JSON.stringify(all)).not.toContain('builtIn');
    const acme = await source.auth.backup.export({ tenant: 'acme', consents: true });
    expect(acme.tenant).toBe('acme');
    expect(acme.records.clientConfigurations.map((client) => client.clientId)).toEqual([payroll.clientId]);
    expect(acme.records.appRegistrations.map((app) => app.clientId)).toEqual([acmeApp.clientId]);
    expect(acme.records.tenantSettings).toEqual([SETTINGS]);
    expect(acme.records.consents).toHaveLength(1);
    const initech = await source.auth.backup.export({ tenant: 'initech', consents: true });
    expect(initech.records).toEqual({ clientConfigurations: [], appRegistrations: [], tenantSettings: [], consents: [] });
    await expect(rejection(source.auth.backup.export({ tenant: '' }))).resolves.toMatchObject({ field: 'tenant' });
  });

  it('checks the whole document first: one bad record anywhere and nothing is written', async () => {
    const { source } = await populated();
    const document = await source.auth.backup.export({ consents: true });
    const target = await start();
    const emptied = JSON.stringify(await target.auth.backup.export({ consents: true }).then((empty) => empty.records));
    const bad = (change: (doc: BackupDocument) => void) => {
      const copy = structuredClone(document) as BackupDocument;
      change(copy);
      return copy;
    };
    const cases: Array<[BackupDocument | unknown, string, RegExp]> = [
      [bad((doc) => { doc.records.appRegistrations[1]!.redirectUris = ['http://evil.example/cb']; }), 'records.appRegistrations.1.redirectUris.0', /evil\.example/],
      [bad((doc) => { doc.records.clientConfigurations[1]!.secretDigest = 'the-clear-secret'; }), 'records.clientConfigurations.1.secretDigest', /digest/],
      [bad((doc) => { delete doc.records.clientConfigurations[0]!.secretDigest; }), 'records.clientConfigurations.0.secretDigest', /digest/],
      [bad((doc) => { (doc.records.clientConfigurations[0] as unknown as Record<string, unknown>).clientSecret = 'x'; }), 'records.clientConfigurations.0', /clientSecret/],
      [bad((doc) => {
        // A private key is never taken, even as a client's registered key.
        const client = doc.records.clientConfigurations[0]!;
        delete client.secretDigest;
        Object.assign(client, { tokenEndpointAuthMethod: 'private_key_jwt', jwks: { keys: [{ kty: 'EC', crv: 'P-256', x: 'x', y: 'y', d: 'private' }] } });
      }), 'records.clientConfigurations.0.jwks.keys.0', /private/],
      [bad((doc) => { doc.records.clientConfigurations[0]!.resources = { scim: { scopes: ['no.such.scope'] } }; }), 'records.clientConfigurations.0.resources.scim.scopes', /no\.such\.scope/],
      [bad((doc) => { doc.records.appRegistrations.push(structuredClone(doc.records.appRegistrations[0]!)); }), 'records.appRegistrations.2.clientId', /also/],
      [bad((doc) => { doc.records.tenantSettings[0]!.settings.secondFactor = 'sometimes' as never; }), 'records.tenantSettings.0.settings.secondFactor', /.+/],
      [bad((doc) => { doc.records.consents![0]!.sub = ''; }), 'records.consents.0.sub', /empty/],
      [{ ...document, version: 2 }, 'version', /.+/],
      [{ ...document, format: 'something else' }, 'format', /.+/],
      ['not a document', 'document', /.+/],
    ];
    for (const [input, field, message] of cases) {
      const error = await rejection(target.auth.backup.import(input));
      expect({ field: error.field, matches: message.test(error.message) }).toEqual({ field, matches: true });
    }
    // The record is named by its ID as well as its place.
    const named = await rejection(target.auth.backup.import(cases[0]![0]));
    expect(named.message).toContain(document.records.appRegistrations[1]!.clientId);
    expect(JSON.stringify((await target.auth.backup.export({ consents: true })).records)).toBe(emptied);
    expect(await events(target.auth, 'acme')).toEqual([]);
  });

  it('refuses a record changed since the export unless overwrite, writing nothing; a dry run writes nothing either', async () => {
    const { source, payroll } = await populated();
    const document = await source.auth.backup.export();
    await source.auth.clientConfigurations.update(payroll.clientId, { name: 'Payroll v2' });
    await source.auth.clientConfigurations.create({ tenant: 'acme', name: 'Later', category: 'sync', resources: { scim: { scopes: ['scim.read'] } } });
    const eventsBefore = await events(source.auth, 'acme');

    const refused = await rejection(source.auth.backup.import(document));
    expect(refused.field).toBe('records.clientConfigurations.' + document.records.clientConfigurations.findIndex((client) => client.clientId === payroll.clientId));
    expect(refused.message).toMatch(/exists with other content \(name\).*overwrite/);
    expect((await source.auth.clientConfigurations.get(payroll.clientId))?.name).toBe('Payroll v2');

    const dry = await source.auth.backup.import(document, { dryRun: true, overwrite: true });
    expect(dry.dryRun).toBe(true);
    expect(dry.counts.clientConfigurations).toEqual({ created: 0, updated: 1, unchanged: 1 });
    expect((await source.auth.clientConfigurations.get(payroll.clientId))?.name).toBe('Payroll v2');
    expect(await events(source.auth, 'acme')).toEqual(eventsBefore);

    const overwritten = await source.auth.backup.import(document, { overwrite: true, actor: 'restore-job' });
    expect(overwritten.counts.clientConfigurations).toEqual({ created: 0, updated: 1, unchanged: 1 });
    expect((await source.auth.clientConfigurations.get(payroll.clientId))?.name).toBe('Payroll');
    // A record made after the export stays: an import adds and replaces, it never deletes.
    expect((await source.auth.clientConfigurations.list('acme')).map((client) => client.name)).toEqual(['Payroll', 'Later']);
    const [latest] = await events(source.auth, 'acme');
    expect(latest).toMatchObject({ type: 'client_configuration.updated', actor: { type: 'operator', id: 'restore-job' }, details: { imported: true, fields: ['name'] } });
  });

  it('never moves a record to another tenant, nor gives an app a client configuration\'s ID', async () => {
    const { source, payroll } = await populated();
    const document = await source.auth.backup.export();
    const moved = structuredClone(document);
    const index = moved.records.clientConfigurations.findIndex((client) => client.clientId === payroll.clientId);
    moved.records.clientConfigurations[index]!.tenant = 'initech';
    await expect(rejection(source.auth.backup.import(moved, { overwrite: true }))).resolves.toMatchObject({ field: `records.clientConfigurations.${index}.tenant` });
    const confused = structuredClone(document);
    confused.records.clientConfigurations = [];
    confused.records.appRegistrations[0]!.clientId = payroll.clientId;
    await expect(rejection(source.auth.backup.import(confused, { overwrite: true }))).resolves.toMatchObject({ field: 'records.appRegistrations.0.clientId' });
    expect((await source.auth.clientConfigurations.get(payroll.clientId))?.tenant).toBe('acme');
    // Nor over the portal's own app (its ID given to a record of the document).
    const exported = new Set(document.records.appRegistrations.map((app) => app.clientId));
    const portalApp = (await source.auth.appRegistrations.list()).find((app) => !exported.has(app.clientId))!;
    const takeover = structuredClone(document);
    takeover.records.appRegistrations[0]!.clientId = portalApp.clientId;
    const refused = await rejection(source.auth.backup.import(takeover, { overwrite: true }));
    expect({ field: refused.field, message: refused.message }).toEqual({ field: 'records.appRegistrations.0.clientId', message: expect.stringContaining('the portal\'s own app') });
    expect(await source.auth.appRegistrations.get(portalApp.clientId)).toEqual(portalApp);
    // Nor a portal's app that this store does not hold (another issuer's, into a store without it).
    const elsewhere = structuredClone(document);
    elsewhere.records.appRegistrations[0]!.clientId = portalClientId('https://auth.other.example/oauth2');
    elsewhere.records.consents = [];
    const target = await start();
    await expect(rejection(target.auth.backup.import(elsewhere))).resolves.toMatchObject({ field: 'records.appRegistrations.0.clientId', message: expect.stringContaining('the portal\'s own app') });
    expect(await target.auth.appRegistrations.get(elsewhere.records.appRegistrations[0]!.clientId)).toBeUndefined();
  });

  it('holds apps and clients to the rules create() holds them to: PKCE, their own profile, their tenant\'s, a tenant\'s switch to high-security', async () => {
    const { source, payroll, acmeApp, platformApp } = await populated();
    const document = await source.auth.backup.export();
    const appIndex = (id: string) => document.records.appRegistrations.findIndex((app) => app.clientId === id);
    const clientIndex = document.records.clientConfigurations.findIndex((client) => client.clientId === payroll.clientId);
    const target = await start();
    const bad = (change: (doc: BackupDocument) => void) => {
      const copy = structuredClone(document);
      change(copy);
      return copy;
    };
    const cases: Array<[BackupDocument, string, RegExp]> = [
      [bad((doc) => { doc.records.appRegistrations[appIndex(platformApp.clientId)]!.pkceEnabled = false; }), `records.appRegistrations.${appIndex(platformApp.clientId)}.pkceEnabled`, /always on for public apps/],
      [bad((doc) => { doc.records.appRegistrations[appIndex(acmeApp.clientId)]!.profile = 'high-security'; }), `records.appRegistrations.${appIndex(acmeApp.clientId)}.tokenEndpointAuthMethod`, /private_key_jwt/],
      [bad((doc) => { doc.records.clientConfigurations[clientIndex]!.profile = 'high-security'; }), `records.clientConfigurations.${clientIndex}.tokenEndpointAuthMethod`, /private_key_jwt/],
      // The document's own settings put acme under high-security: its Basic client is refused.
      [bad((doc) => { doc.records.tenantSettings = [{ tenant: 'acme', settings: { profile: 'high-security' } }]; }), `records.clientConfigurations.${clientIndex}.tokenEndpointAuthMethod`, /tenant selected it/],
    ];
    for (const [input, field, message] of cases) {
      const error = await rejection(target.auth.backup.import(input));
      expect({ field: error.field, matches: message.test(error.message) }).toEqual({ field, matches: true });
    }
    // The switch alone, on the store that holds acme's Basic clients: refused, naming them.
    const before = await source.auth.backup.export();
    const switched = await rejection(source.auth.backup.import({ ...before, records: { clientConfigurations: [], appRegistrations: [], tenantSettings: [{ tenant: 'acme', settings: { profile: 'high-security' } }] } }, { overwrite: true }));
    expect(switched.field).toBe('records.tenantSettings.0.profile');
    expect(switched.message).toContain(payroll.clientId);
    expect(switched.message).toContain(acmeApp.clientId);
    expect((await source.auth.backup.export()).records).toEqual(before.records);
    expect(JSON.stringify((await target.auth.backup.export()).records)).toBe(JSON.stringify({ clientConfigurations: [], appRegistrations: [], tenantSettings: [] }));
  });

  it('holds a tenant\'s clients to the profile the host\'s tenantPolicy puts it under', async () => {
    const { source } = await populated();
    const document = await source.auth.backup.export();
    const strict = await startServer({ store: stores.option(), tenantPolicy: (tenant: string) => (tenant === 'globex' ? { profile: 'high-security' as const } : {}) });
    servers.push(strict);
    const index = document.records.clientConfigurations.findIndex((client) => client.tenant === 'globex');
    const error = await rejection(strict.auth.backup.import(document));
    expect({ field: error.field, message: error.message }).toEqual({ field: `records.clientConfigurations.${index}.tokenEndpointAuthMethod`, message: expect.stringContaining('tenant selected it') });
  });

  it('holds a tenant\'s document to its tenant: no other tenant\'s or operator\'s record, no operator flag, no operator-named jwks_uri', async () => {
    const { source, platformApp } = await populated();
    const operatorKeys = await source.auth.clientConfigurations.create({ tenant: 'acme', name: 'Keys', category: 'sync', resources: { scim: { scopes: ['scim.read'] } }, tokenEndpointAuthMethod: 'private_key_jwt', jwksUri: 'http://127.0.0.1:8999/jwks.json' });
    const all = await source.auth.backup.export({ consents: true });
    const acme = await source.auth.backup.export({ tenant: 'acme', consents: true });
    const target = await start();
    const bad = (change: (doc: BackupDocument) => void) => {
      const copy = structuredClone(acme);
      change(copy);
      return copy;
    };
    const globexClient = all.records.clientConfigurations.find((client) => client.tenant === 'globex')!;
    const platform = all.records.appRegistrations.find((app) => app.clientId === platformApp.clientId)!;
    const keysIndex = acme.records.clientConfigurations.findIndex((client) => client.clientId === operatorKeys.clientId);
    const cases: Array<[BackupDocument, string, RegExp]> = [
      [bad((doc) => { doc.records.clientConfigurations.push(globexClient); }), `records.clientConfigurations.${acme.records.clientConfigurations.length}.tenant`, /tenant globex: a backup of tenant acme/],
      [bad((doc) => { doc.records.appRegistrations.push(platform); }), 'records.appRegistrations.1.tenant', /the operator/],
      [bad((doc) => { doc.records.tenantSettings.push({ tenant: 'globex', settings: { secondFactor: 'required' } }); }), 'records.tenantSettings.1.tenant', /globex/],
      [bad((doc) => { doc.records.consents![0]!.tenant = 'globex'; }), 'records.consents.0.tenant', /globex/],
      [bad((doc) => { doc.records.appRegistrations[0]!.firstParty = true; }), 'records.appRegistrations.0.firstParty', /only the operator/],
      [bad((doc) => { doc.records.appRegistrations[0]!.openToAllTenants = true; }), 'records.appRegistrations.0.openToAllTenants', /only the operator/],
      [bad((doc) => { doc.records.appRegistrations[0]!.resourceServer = true; }), 'records.appRegistrations.0.resourceServer', /only the operator/],
      // The operator named a loopback jwks_uri on the source: into a store that does not hold it so, the URI is the tenant's, refused.
      [acme, `records.clientConfigurations.${keysIndex}.jwksUri`, /.+/],
    ];
    for (const [input, field, message] of cases) {
      const error = await rejection(target.auth.backup.import(input));
      expect({ field: error.field, matches: message.test(error.message) }).toEqual({ field, matches: true });
    }
    expect((await target.auth.backup.export()).records).toEqual({ clientConfigurations: [], appRegistrations: [], tenantSettings: [] });
    // Where the stored record has it, it stays: the same document is unchanged on the source.
    expect((await source.auth.backup.import(acme)).counts.clientConfigurations).toEqual({ created: 0, updated: 0, unchanged: acme.records.clientConfigurations.length });
    // An https jwks_uri said to be the operator's is restored as the tenant's.
    const https = structuredClone(acme);
    const claimed = { ...https.records.clientConfigurations[keysIndex]!, jwksUri: 'https://keys.acme.example/jwks.json', jwksUriAuthor: 'operator' as const };
    https.records.clientConfigurations = [claimed];
    https.records.consents = [];
    await target.auth.backup.import(https);
    expect((await target.auth.backup.export()).records.clientConfigurations).toEqual([{ ...claimed, jwksUriAuthor: 'tenant' }]);
  });

  it('restores a consent only to an existing app that serves its tenant, for scopes the app may ask; never the document\'s grant', async () => {
    const { source, acmeApp } = await populated();
    const document = await source.auth.backup.export({ tenant: 'acme', consents: true });
    const target = await start();
    const bad = (change: (consent: NonNullable<BackupDocument['records']['consents']>[number]) => void) => {
      const copy = structuredClone(document);
      // Not held to acme (as a whole deployment's document): the consent's own rules decide.
      delete copy.tenant;
      change(copy.records.consents![0]!);
      return copy;
    };
    const cases: Array<[BackupDocument, string, RegExp]> = [
      [bad((consent) => { consent.clientId = 'no-such-app'; }), 'records.consents.0.clientId', /no app/],
      [bad((consent) => { consent.tenant = 'globex'; }), 'records.consents.0.tenant', /does not serve tenant globex/],
      [bad((consent) => { consent.scopes = ['openid', 'no.such.scope']; }), 'records.consents.0.scopes', /no\.such\.scope/],
      [bad((consent) => { consent.scopes = ['openid', 'manage.integrations']; }), 'records.consents.0.scopes', /platform's own apps/],
    ];
    for (const [input, field, message] of cases) {
      const error = await rejection(target.auth.backup.import(input));
      expect({ field: error.field, matches: message.test(error.message) }).toEqual({ field, matches: true });
    }
    // A grant of the target's (any user's) is never what a restored consent points at.
    await target.auth.backup.import(document);
    const [restored] = (await target.auth.backup.export({ consents: true })).records.consents!;
    expect(restored).toEqual({ ...document.records.consents![0]!, grantId: expect.any(String) });
    expect(restored!.grantId).not.toBe(document.records.consents![0]!.grantId);
    expect(restored!.clientId).toBe(acmeApp.clientId);
    // Again: unchanged, the grant it has kept.
    expect((await target.auth.backup.import(document)).counts.consents).toEqual({ created: 0, updated: 0, unchanged: 1 });
    expect((await target.auth.backup.export({ consents: true })).records.consents).toEqual([restored]);
  });

  it('bounds the document: at most MAX_BACKUP_RECORDS records of one kind', async () => {
    const { source } = await populated();
    const document = await source.auth.backup.export();
    const huge = { ...document, records: { ...document.records, tenantSettings: Array.from({ length: MAX_BACKUP_RECORDS + 1 }, (_, index) => ({ tenant: `t${index}`, settings: {} })) } };
    const error = await rejection(source.auth.backup.import(huge));
    expect({ field: error.field, message: error.message }).toEqual({ field: 'records.tenantSettings', message: expect.stringContaining(`at most ${MAX_BACKUP_RECORDS}`) });
  });
});
