import { randomBytes } from 'node:crypto';
import { isDeepStrictEqual } from 'node:util';
import { z } from 'zod';
import type { Store } from '../../adapters/types.js';
import { ApiCatalog } from '../../policies/catalog.js';
import { appServesTenant } from '../../policies/consent.js';
import { CLIENT_JWKS_SCHEMA, JWKS_URI_SCHEMA, TOKEN_ENDPOINT_AUTH_METHODS, validateClientAuthentication } from '../../policies/client-keys.js';
import { Conflict, OAuthError, ValidationError } from '../../policies/errors.js';
import { SECURITY_PROFILE, tenantProfile as combineProfiles, type SecurityProfile } from '../../policies/high-security.js';
import { pkceAtRegistration } from '../../policies/pkce.js';
import { validateAuthorizationScopes } from '../../policies/scopes.js';
import { validateRedirectUris } from '../../policies/redirect-uris.js';
import { validateBackchannelLogoutUri } from '../../policies/backchannel-logout.js';
import { SECOND_FACTOR_RULES, SSO_RULES } from '../../policies/tenant-policy.js';
import { changed, consentChanged, type NewAuditEvent } from '../audit/events.js';
import { OPERATOR, type AuditContext, type AuditTrail } from '../audit/trail.js';
import { PORTAL_CLIENT_ID_SHAPE } from './portal-app-id.js';
import { APP_OF_TENANT, APP_REGISTRATION, APP_REGISTRATION_GROUP, checkAppProfile, type AppRegistration, type StoredAppRegistration } from './app-registrations.js';
import { checkClientProfile, CLIENT_CONFIGURATION, DPOP_RULE, RESOURCES_SCHEMA, validateResources, type ClientConfiguration, type StoredClientConfiguration } from './client-configurations.js';
import { CONSENT, CONSENT_OF_APP, type ConsentRecord } from './consents.js';
import { endGrant } from './end-grant.js';
import { nonConformingClients } from './security-profiles.js';
import { refuseSwitchWith, TENANT_SETTINGS, TENANT_SETTINGS_GROUP, type TenantSettingsRecord } from './tenant-settings.js';
import { displayDescription, displayName } from './validation.js';

/*
 * BACKUP AND RESTORE OF THE CONFIGURATION: client configurations, app registrations, tenant
 * settings and, when asked, consents, as one versioned JSON document (BACKUP_DOCUMENT: the one
 * schema that both validates a document and is its reference).
 *
 * - Records travel as they are stored: a secret as its digest (SHA-256), which authenticates
 *   after a restore and signs nobody in by itself. Nothing in the document is a secret in clear.
 * - Left out: the portal's own app (every instance writes it itself, from its own issuer and
 *   cookie key), connections to tenants' identity providers (their secret is sealed under the
 *   factor keys of one deployment, and a connection's verified domains and its users' links go
 *   with it: they are made again with `connections create`), and everything that is not
 *   configuration (tokens, codes, sessions, grants, factors, counters, the audit trail).
 * - An import checks the whole document (its shape, then each record by the rules its kind is
 *   written under, with the very functions create() and update() call: redirect URIs, keys, PKCE,
 *   the security profile of the record and of its tenant, a tenant's switch to high-security
 *   while a client of it does not conform, the API catalog when one is known) and reads what the
 *   store holds before it writes anything: a bad record anywhere, or a record of the store that
 *   the document would change without `overwrite`, and nothing is written. Not run: the engine's
 *   own check of an app (create() asks the running engine; a restore needs none running).
 * - A document of one tenant (`tenant`, from `export --tenant`) restores that tenant only: a
 *   record of another tenant or of the operator in it refuses the whole import, and so do the
 *   flags only the operator sets (`firstParty`, `openToAllTenants`, `resourceServer`). A tenant
 *   admin may hand such a document over: it must not reach further than her tenant.
 * - A client configuration's `jwksUriAuthor: 'operator'` (its `jwksUri` may reach the operator's
 *   private hosts) is taken from a document only where the stored record already has it; any
 *   other is restored as the tenant's (and its `jwksUri` checked as a tenant's).
 * - A consent is restored only for an app that exists (stored, or in the document), serves the
 *   consent's tenant, and may be asked for its scopes. Its `grantId` is never taken from the
 *   document (it could name another user's grant): a new consent names no grant, and the engine
 *   makes the grant again from the consent at the user's next authorization.
 * - The portal's own app is never imported, stored or not (its ID has a shape of its own).
 * - Idempotent: a record equal to the stored one is left alone (counted `unchanged`), so a second
 *   import of one document writes nothing and records nothing.
 * - Each record written is audited as its kind's own change (`client_configuration.created`,
 *   `.updated`, `app_registration.created`, `.updated`, `tenant_settings.updated`,
 *   `consent.granted`) with `details.imported: true`, before it is written (no unaudited change).
 */

/** The `format` of a backup document. */
export const BACKUP_FORMAT = 'talent-auth.backup';
/** The version of the document's format this release writes and reads. */
export const BACKUP_VERSION = 1;

/**
 * The most records of one kind a document may hold: far above any real deployment (a tenant has a
 * handful of clients and apps; 100,000 is a large platform's whole configuration), and a bound on
 * what one import checks and holds in memory.
 */
export const MAX_BACKUP_RECORDS = 100_000;
const many = `at most ${MAX_BACKUP_RECORDS} records of one kind`;

const timestamp = z.iso.datetime({ offset: true }).meta({ description: 'ISO 8601.' });
const recordId = z.string().min(1, 'must not be empty').max(200);
const tenantId = z.string().trim().min(1, 'must not be empty').max(100);
const secretDigest = z.string().regex(/^[A-Za-z0-9_-]{43}$/, 'must be a SHA-256 digest (43 base64url characters)')
  .meta({ description: 'The SHA-256 digest (base64url) of the client secret: never the secret itself.' });

/** What client configurations and apps both store: how they authenticate, DPoP, the profile, their dates. */
const SHARED_FIELDS = {
  tokenEndpointAuthMethod: z.enum(TOKEN_ENDPOINT_AUTH_METHODS).optional(),
  jwks: CLIENT_JWKS_SCHEMA.optional(),
  jwksUri: JWKS_URI_SCHEMA.optional(),
  dpop: DPOP_RULE.optional(),
  profile: SECURITY_PROFILE.optional(),
  secretDigest: secretDigest.optional(),
  createdAt: timestamp,
  updatedAt: timestamp,
};

const clientConfiguration = z.strictObject({
  clientId: recordId,
  tenant: tenantId,
  name: displayName(),
  category: displayName(),
  description: displayDescription().optional(),
  resources: RESOURCES_SCHEMA,
  jwksUriAuthor: z.enum(['operator', 'tenant']).optional(),
  ...SHARED_FIELDS,
}).meta({ description: 'A client configuration as stored (`auth.clientConfigurations`).' });

const appRegistration = z.strictObject({
  clientId: recordId,
  name: displayName(),
  description: displayDescription().optional(),
  redirectUris: z.array(z.string()).max(20),
  clientType: z.enum(['public', 'confidential']),
  pkceEnabled: z.boolean(),
  idTokenSigningAlg: z.enum(['RS256', 'PS256', 'ES256', 'EdDSA']),
  firstParty: z.boolean(),
  tenant: tenantId.optional(),
  openToAllTenants: z.boolean().optional(),
  resourceServer: z.boolean().optional(),
  postLogoutRedirectUris: z.array(z.string()).max(20).optional(),
  requirePushedAuthorizationRequests: z.boolean().optional(),
  backchannelLogoutUri: z.string().max(2000).optional(),
  ...SHARED_FIELDS,
}).meta({ description: 'An app registration as stored (`auth.appRegistrations`); never the portal\'s own.' });

const tenantSettings = z.strictObject({
  tenant: tenantId,
  settings: z.strictObject({
    secondFactor: z.enum(SECOND_FACTOR_RULES).optional(),
    passkeyOnlySignIn: z.boolean().optional(),
    sso: z.enum(SSO_RULES).optional(),
    profile: SECURITY_PROFILE.optional(),
    updatedAt: timestamp.optional(),
  }),
}).meta({ description: 'A tenant\'s own settings (the management API\'s `tenant-settings`).' });

const consent = z.strictObject({
  tenant: tenantId,
  sub: z.string().min(1, 'must not be empty').max(255),
  clientId: recordId,
  grantId: recordId.meta({ description: 'The engine\'s grant, as exported; an import never takes it (the grant is made again from the consent at the user\'s next authorization).' }),
  scopes: z.array(z.string().min(1).max(200)).max(200),
  createdAt: timestamp,
  updatedAt: timestamp,
}).meta({ description: 'A user\'s consent to an app, in her tenant.' });

/**
 * A backup document: the one schema that validates an import and describes the format. `version`
 * changes when a reader of the previous version would misread a document; a document of another
 * version is refused, never guessed at.
 */
export const BACKUP_DOCUMENT = z.strictObject({
  format: z.literal(BACKUP_FORMAT),
  version: z.literal(BACKUP_VERSION),
  exportedAt: timestamp,
  tenant: tenantId.optional().meta({ description: 'Present when the export was of this tenant only.' }),
  records: z.strictObject({
    clientConfigurations: z.array(clientConfiguration).max(MAX_BACKUP_RECORDS, many),
    appRegistrations: z.array(appRegistration).max(MAX_BACKUP_RECORDS, many),
    tenantSettings: z.array(tenantSettings).max(MAX_BACKUP_RECORDS, many),
    consents: z.array(consent).max(MAX_BACKUP_RECORDS, many).optional().meta({ description: 'Present only when the export included consents.' }),
  }),
}).meta({ description: 'A talent-auth backup: configuration records, secrets as digests only.' });

/** A backup document (see BACKUP_DOCUMENT). */
export type BackupDocument = z.output<typeof BACKUP_DOCUMENT>;

/** A consent as a document holds it. */
type BackupConsent = NonNullable<BackupDocument['records']['consents']>[number];

/** The kinds of record a backup holds, as the document names them. */
export type BackupKind = keyof BackupDocument['records'];

/** What `export` takes. */
export interface BackupExportOptions {
  /** Only this tenant's client configurations, apps, settings and consents (not the operator's apps). */
  tenant?: string;
  /** Include consents (users' decisions: personal data; left out by default). */
  consents?: boolean;
}

/** What `import` takes. */
export interface BackupImportOptions {
  /** Check everything and count what would change, write nothing. */
  dryRun?: boolean;
  /**
   * Replace a stored record whose content differs from the document's (the default refuses the
   * whole import, naming the first such record).
   */
  overwrite?: boolean;
}

/** Per kind: records created, replaced (`updated`) and left alone as equal (`unchanged`). */
export type BackupImportCounts = Record<BackupKind, { created: number; updated: number; unchanged: number }>;

/** What an import checks records against besides the store (the deployment's rules). */
export interface BackupRules {
  /**
   * The profile the host's tenant policy puts `tenant` under (its `tenantPolicy`); none: only the
   * tenant's own settings count (the CLI, which has no host policy).
   */
  hostProfile?: (tenant: string) => Promise<SecurityProfile | undefined>;
}

/** What `import` answers. */
export interface BackupImportResult {
  dryRun: boolean;
  counts: BackupImportCounts;
}

/** One record's write, planned once everything is checked. */
interface PlannedWrite {
  kind: BackupKind;
  action: 'created' | 'updated';
  write(): Promise<void>;
}

const KINDS: readonly BackupKind[] = ['clientConfigurations', 'appRegistrations', 'tenantSettings', 'consents'];
const byText = (a: string, b: string) => (a < b ? -1 : a > b ? 1 : 0);
const part = (value: string) => encodeURIComponent(value);
/** The store's ID of a consent (as src/records/consents.ts keys it). */
const consentId = (record: { tenant: string; sub: string; clientId: string }) => `${part(record.tenant)}:${part(record.sub)}:${part(record.clientId)}`;
const consentGroup = (record: { tenant: string; sub: string }) => `${part(record.tenant)}:${part(record.sub)}`;

/**
 * Export and import of the configuration (`auth.backup`, `talent-auth export` and `import`):
 * see the comment at the top of this file for what a document holds and how an import behaves.
 */
export class Backups {
  constructor(
    private readonly store: Store,
    /** Where each record written is recorded before it is written. */
    private readonly audit: AuditTrail,
    /**
     * The APIs a client configuration's resources and a consent's scopes are checked against;
     * none: resources not checked, and a consent may hold OIDC scopes only.
     */
    private readonly catalog?: ApiCatalog,
    private readonly rules: BackupRules = {},
  ) {}

  /**
   * The configuration as a backup document (records sorted by ID: two exports of the same store
   * differ only in `exportedAt`).
   * @throws ValidationError (`tenant`) for an empty or overlong tenant; StoreUnavailable.
   */
  async export(options: BackupExportOptions = {}): Promise<BackupDocument> {
    const tenant = options.tenant === undefined ? undefined : parseField(tenantId, options.tenant, 'tenant');
    const records = this.store.records;
    const tenants = tenant === undefined ? (await records.groups(CLIENT_CONFIGURATION)).sort(byText) : [tenant];
    const clients = (await Promise.all(tenants.map((each) => records.list<StoredClientConfiguration>(CLIENT_CONFIGURATION, each)))).flat();
    const allApps = await records.list<StoredAppRegistration>(APP_REGISTRATION, APP_REGISTRATION_GROUP);
    const apps = allApps.filter((app) => !app.builtIn && (tenant === undefined || app.tenant === tenant));
    const settingsIds = tenant === undefined ? await records.ids(TENANT_SETTINGS, TENANT_SETTINGS_GROUP) : [tenant];
    const settings = await Promise.all(settingsIds.map(async (id) => ({ tenant: id, settings: await records.get<TenantSettingsRecord>(TENANT_SETTINGS, id) })));
    const document: BackupDocument = {
      format: BACKUP_FORMAT,
      version: BACKUP_VERSION,
      exportedAt: new Date().toISOString(),
      ...(tenant !== undefined ? { tenant } : {}),
      records: {
        clientConfigurations: clients.sort((a, b) => byText(a.clientId, b.clientId)),
        appRegistrations: apps.sort((a, b) => byText(a.clientId, b.clientId)) as BackupDocument['records']['appRegistrations'],
        tenantSettings: settings
          .filter((entry): entry is { tenant: string; settings: TenantSettingsRecord } => entry.settings !== undefined)
          .sort((a, b) => byText(a.tenant, b.tenant)),
        ...(options.consents ? { consents: await this.consents(allApps, tenant) } : {}),
      },
    };
    return document;
  }

  /** Every consent (of `tenant`, when given), found through each app's index of its consents. */
  private async consents(apps: readonly StoredAppRegistration[], tenant: string | undefined): Promise<ConsentRecord[]> {
    const records = this.store.records;
    const perApp = await Promise.all(apps.map(async (app) => {
      const users = await records.list<{ tenant: string; sub: string }>(CONSENT_OF_APP, part(app.clientId));
      const found = await Promise.all(users
        .filter((user) => tenant === undefined || user.tenant === tenant)
        .map((user) => records.get<ConsentRecord>(CONSENT, consentId({ ...user, clientId: app.clientId }))));
      return found.filter((record): record is ConsentRecord => record !== undefined);
    }));
    return perApp.flat().sort((a, b) => byText(consentId(a), consentId(b)));
  }

  /**
   * Restores a backup document: checks all of it, then writes what differs from the store, one
   * audited write per record. Nothing is written when a record is invalid, or differs from the
   * stored one without `overwrite`. A record never moves to another tenant, and an ID never
   * changes kind (a client configuration's ID given to an app): both are refused.
   * @throws ValidationError naming the record and field (`records.appRegistrations.2.redirectUris.0`,
   *   with the record's ID in the message); StoreUnavailable; Conflict when a record changed while
   *   the import was writing (what was written before it stays: run the import again).
   */
  async import(input: unknown, options: BackupImportOptions = {}, by: AuditContext = OPERATOR): Promise<BackupImportResult> {
    const document = parseDocument(input);
    this.checkRecords(document);
    const counts = Object.fromEntries(KINDS.map((kind) => [kind, { created: 0, updated: 0, unchanged: 0 }])) as BackupImportCounts;
    const writes = await this.plan(document, options.overwrite === true, by, counts);
    for (const write of writes) counts[write.kind][write.action] += 1;
    if (options.dryRun) return { dryRun: true, counts };
    for (const write of writes) await write.write();
    return { dryRun: false, counts };
  }

  /** Each record by the rules its kind is written under (those that need no store); IDs once per document. */
  private checkRecords(document: BackupDocument): void {
    const { clientConfigurations, appRegistrations, consents = [] } = document.records;
    const seen = new Map<string, string>();
    const once = (id: string, where: string) => {
      const first = seen.get(id);
      if (first !== undefined) throw new ValidationError(`${where}.clientId`, `${id} is also ${first}: a client ID names one record`);
      if (PORTAL_CLIENT_ID_SHAPE.test(id)) throw new ValidationError(`${where}.clientId`, `${id} is the portal's own app: it is never imported`);
      seen.set(id, where);
    };
    checkScope(document);
    clientConfigurations.forEach((client, index) => {
      const where = `records.clientConfigurations.${index}`;
      once(client.clientId, where);
      inRecord(where, client.clientId, () => {
        if (this.catalog) validateResources(this.catalog, client.resources);
        if ((client.tokenEndpointAuthMethod ?? 'client_secret_basic') === 'client_secret_basic' && client.secretDigest === undefined) {
          throw new ValidationError('secretDigest', 'a client_secret_basic client needs its secret\'s digest');
        }
      });
    });
    appRegistrations.forEach((app, index) => {
      const where = `records.appRegistrations.${index}`;
      once(app.clientId, where);
      inRecord(where, app.clientId, () => {
        validateRedirectUris(app.redirectUris);
        pkceAtRegistration(app.clientType, app.pkceEnabled, app.redirectUris);
        validateRedirectUris(app.postLogoutRedirectUris ?? [], 'postLogoutRedirectUris', true);
        if (app.backchannelLogoutUri !== undefined) validateBackchannelLogoutUri(app.backchannelLogoutUri, app.tenant);
        if (app.clientType === 'public') {
          for (const field of ['tokenEndpointAuthMethod', 'jwks', 'jwksUri', 'secretDigest'] as const) {
            if (app[field] !== undefined) throw new ValidationError(field, 'a public app has no secret, method or keys');
          }
          return;
        }
        validateClientAuthentication(app, app.tenant === undefined ? 'operator' : 'tenant');
        if ((app.tokenEndpointAuthMethod ?? 'client_secret_basic') === 'client_secret_basic' && app.secretDigest === undefined) {
          throw new ValidationError('secretDigest', 'a confidential client_secret_basic app needs its secret\'s digest');
        }
      });
    });
    const tenants = new Set<string>();
    document.records.tenantSettings.forEach((entry, index) => {
      if (tenants.has(entry.tenant)) throw new ValidationError(`records.tenantSettings.${index}.tenant`, `${entry.tenant} is given twice`);
      tenants.add(entry.tenant);
    });
    const consentIds = new Set<string>();
    consents.forEach((record, index) => {
      const id = consentId(record);
      if (consentIds.has(id)) throw new ValidationError(`records.consents.${index}`, `the consent of ${record.sub} in ${record.tenant} to ${record.clientId} is given twice`);
      consentIds.add(id);
    });
  }

  /** What each record needs, read from the store: nothing written yet. */
  private async plan(document: BackupDocument, overwrite: boolean, by: AuditContext, counts: BackupImportCounts): Promise<PlannedWrite[]> {
    const records = this.store.records;
    const planned: Array<PlannedWrite | undefined> = [];
    const moved = (where: string, what: string, owner: string | undefined) =>
      new ValidationError(`${where}.tenant`, `${what} belongs to ${owner === undefined ? 'the operator' : `tenant ${owner}`} in the store: a record never moves to another tenant`);
    // The records as stored: checkRecords has held each key to the algorithms a stored key may have.
    const documentClients = document.records.clientConfigurations as unknown as StoredClientConfiguration[];
    const apps = document.records.appRegistrations as unknown as StoredAppRegistration[];
    const profileOf = this.profiles(document);
    const clients: StoredClientConfiguration[] = [];
    for (const [index, given] of documentClients.entries()) {
      const where = `records.clientConfigurations.${index}`;
      const what = `client configuration ${given.clientId}`;
      await notOtherKind(this.store, APP_REGISTRATION, given.clientId, where);
      const stored = await records.get<StoredClientConfiguration>(CLIENT_CONFIGURATION, given.clientId);
      const client = withAuthor(given, stored);
      clients.push(client);
      const tenantProfile = await profileOf(client.tenant);
      inRecord(where, client.clientId, () => {
        validateClientAuthentication(client, client.jwksUriAuthor ?? 'tenant');
        checkClientProfile(client, tenantProfile);
      });
      const target = { type: 'client_configuration', id: client.clientId } as const;
      planned.push(await this.planOne({
        kind: 'clientConfigurations', storeKind: CLIENT_CONFIGURATION, id: client.clientId, group: client.tenant, value: client, where, what, overwrite, counts,
        check: (current: StoredClientConfiguration) => {
          if (current.tenant !== client.tenant) throw moved(where, what, current.tenant);
        },
        event: (current, fields) => current
          ? changed('client_configuration.updated', by, target, client.tenant, { imported: true, fields })
          : changed('client_configuration.created', by, target, client.tenant, { imported: true, name: client.name }),
      }));
    }
    for (const [index, app] of apps.entries()) {
      const where = `records.appRegistrations.${index}`;
      const what = `app registration ${app.clientId}`;
      await notOtherKind(this.store, CLIENT_CONFIGURATION, app.clientId, where);
      const tenantProfile = app.tenant === undefined ? undefined : await profileOf(app.tenant);
      inRecord(where, app.clientId, () => checkAppProfile(app, tenantProfile));
      const target = { type: 'app_registration', id: app.clientId } as const;
      planned.push(await this.planOne({
        kind: 'appRegistrations', storeKind: APP_REGISTRATION, id: app.clientId, group: APP_REGISTRATION_GROUP, value: app, where, what, overwrite, counts,
        check: (current: StoredAppRegistration) => {
          if (current.builtIn) throw new ValidationError(`${where}.clientId`, `${what} is the server's own app in the store: it is never imported`);
          if (current.tenant !== app.tenant) throw moved(where, what, current.tenant);
        },
        event: (current, fields) => current
          ? changed('app_registration.updated', by, target, app.tenant, { imported: true, fields })
          : changed('app_registration.created', by, target, app.tenant, { imported: true, name: app.name, client_type: app.clientType }),
        after: async () => {
          if (app.tenant !== undefined) await records.put(APP_OF_TENANT, app.clientId, app.tenant, { clientId: app.clientId });
        },
      }));
    }
    for (const [index, entry] of document.records.tenantSettings.entries()) {
      const settings: TenantSettingsRecord = entry.settings;
      const where = `records.tenantSettings.${index}`;
      await this.checkSwitch(entry.tenant, settings, clients, apps, where);
      planned.push(await this.planOne({
        kind: 'tenantSettings', storeKind: TENANT_SETTINGS, id: entry.tenant, group: TENANT_SETTINGS_GROUP, value: settings,
        where, what: `the settings of tenant ${entry.tenant}`, overwrite, counts,
        event: (_current, fields) => changed('tenant_settings.updated', by, { type: 'tenant', id: entry.tenant }, entry.tenant, {
          imported: true,
          fields,
          ...Object.fromEntries(fields.map((field) => [field, (settings as Record<string, unknown>)[field] ?? null])),
        }),
      }));
    }
    for (const [index, given] of (document.records.consents ?? []).entries()) {
      const id = consentId(given);
      const where = `records.consents.${index}`;
      await this.checkConsent(given, apps, where);
      const record = withOwnGrant(given, await records.get<ConsentRecord>(CONSENT, id));
      planned.push(await this.planOne({
        kind: 'consents', storeKind: CONSENT, id, group: consentGroup(record), value: record,
        where, what: `the consent of ${record.sub} in tenant ${record.tenant} to ${record.clientId}`, overwrite, counts,
        event: () => consentChanged('consent.granted', by, record, { imported: true, scopes: record.scopes }),
        after: async (current) => {
          await records.put(CONSENT_OF_APP, id, part(record.clientId), { tenant: record.tenant, sub: record.sub });
          // One grant per consent: the grant the replaced consent pointed at ends with it.
          if (current && current.grantId !== record.grantId) await endGrant(this.store, current.grantId);
        },
      }));
    }
    return planned.filter((write): write is PlannedWrite => write !== undefined);
  }

  /**
   * The profile each tenant puts its clients under once the document is restored: the host's, and
   * the tenant's own settings as the document gives them (else as stored). Read once per tenant.
   */
  private profiles(document: BackupDocument): (tenant: string) => Promise<SecurityProfile> {
    const given = new Map(document.records.tenantSettings.map((entry) => [entry.tenant, entry.settings]));
    const known = new Map<string, Promise<SecurityProfile>>();
    return (tenant) => {
      let profile = known.get(tenant);
      if (!profile) {
        profile = (async () => {
          const own = given.get(tenant) ?? (await this.store.records.get<TenantSettingsRecord>(TENANT_SETTINGS, tenant)) ?? {};
          return combineProfiles({ profile: await this.rules.hostProfile?.(tenant) }, own);
        })();
        known.set(tenant, profile);
      }
      return profile;
    };
  }

  /**
   * A tenant's switch to the high-security profile, as the settings' own update refuses it: while
   * a client of the tenant (as the store will hold them, the document's replacing the stored) does
   * not conform. The document's own clients were checked against the new profile already.
   */
  private async checkSwitch(tenant: string, settings: TenantSettingsRecord, clients: readonly StoredClientConfiguration[], apps: readonly StoredAppRegistration[], where: string): Promise<void> {
    const records = this.store.records;
    const before = await records.get<TenantSettingsRecord>(TENANT_SETTINGS, tenant);
    if (settings.profile !== 'high-security' || before?.profile === 'high-security') return;
    const merged = <T extends { clientId: string; tenant?: string | undefined }>(stored: readonly T[], given: readonly T[]) => {
      const replaced = new Set(given.map((record) => record.clientId));
      return [...stored.filter((record) => record.tenant === tenant && !replaced.has(record.clientId)), ...given.filter((record) => record.tenant === tenant)];
    };
    const storedApps = await records.list<StoredAppRegistration>(APP_REGISTRATION, APP_REGISTRATION_GROUP);
    const ids = await nonConformingClients(
      tenant,
      { list: async () => merged(await records.list<StoredClientConfiguration>(CLIENT_CONFIGURATION, tenant), clients) as unknown as ClientConfiguration[] },
      { listByTenant: async () => merged(storedApps, apps) as unknown as AppRegistration[] },
    );
    inRecord(where, tenant, () => refuseSwitchWith(ids));
  }

  /**
   * A consent restores only what the consent page could have given: to an app that exists (stored,
   * or in the document), that serves the consent's tenant, for scopes the app may ask for.
   */
  private async checkConsent(record: BackupConsent, apps: readonly StoredAppRegistration[], where: string): Promise<void> {
    const app = apps.find((each) => each.clientId === record.clientId)
      ?? await this.store.records.get<StoredAppRegistration>(APP_REGISTRATION, record.clientId);
    const id = `${record.sub} in ${record.tenant}`;
    if (!app) throw new ValidationError(`${where}.clientId`, `(${id}) ${record.clientId} is no app, in the store or the document`);
    if (!appServesTenant(app, record.tenant)) throw new ValidationError(`${where}.tenant`, `(${id}) app ${record.clientId} does not serve tenant ${record.tenant}`);
    if (record.scopes.length === 0) return;
    try {
      validateAuthorizationScopes(this.catalog ?? new ApiCatalog([]), record.scopes.join(' '), app.firstParty);
    } catch (error) {
      if (error instanceof OAuthError) throw new ValidationError(`${where}.scopes`, `(${id}) ${error.message}`);
      throw error;
    }
  }

  /**
   * One record against the store: equal, counted unchanged (no write); otherwise its write (its
   * event first, then a create or a compare-and-set at the revision read), refused when it would
   * replace a record that differs and `overwrite` is not given.
   */
  private async planOne<T extends object>(record: RecordToImport<T>): Promise<PlannedWrite | undefined> {
    const { kind, storeKind, id, value, where, what } = record;
    const records = this.store.records;
    const current = await records.getVersioned<T>(storeKind, id);
    if (current) record.check?.(current.value);
    if (current && isDeepStrictEqual(current.value, value)) {
      record.counts[kind].unchanged += 1;
      return undefined;
    }
    const fields = fieldsOf(current?.value ?? {}, value);
    if (current && !record.overwrite) {
      throw new ValidationError(where, `${what} exists with other content (${fields.join(', ')}): nothing was written; import with overwrite to replace it`);
    }
    const event = record.event(current?.value, fields);
    return {
      kind,
      action: current ? 'updated' : 'created',
      write: async () => {
        await this.audit.record(event);
        const done = current ? records.replace(storeKind, id, value, current.revision) : records.create(storeKind, id, record.group, value);
        if (!(await done)) throw new Conflict(what);
        await record.after?.(current?.value);
      },
    };
  }
}

/** A record of the document on its way to the store (Backups.planOne). */
interface RecordToImport<T> {
  kind: BackupKind;
  /** Its kind and group in the store. */
  storeKind: string;
  id: string;
  group: string;
  value: T;
  /** Where it is in the document, and how an error names it. */
  where: string;
  what: string;
  overwrite: boolean;
  counts: BackupImportCounts;
  /** Refuses what no import may do to the stored record, `overwrite` or not. */
  check?: (current: T) => void;
  /** Its audit event: a creation (`current` undefined) or a replacement, with the fields that differ. */
  event(current: T | undefined, fields: string[]): NewAuditEvent;
  /** What goes with the record once written (its index entries). */
  after?: (current: T | undefined) => Promise<void>;
}

/** The document parsed whole: the first problem, with its path from the document's root. */
function parseDocument(input: unknown): BackupDocument {
  const result = BACKUP_DOCUMENT.safeParse(input);
  if (result.success) return result.data;
  const issue = result.error.issues[0];
  const path = issue?.path.length ? issue.path.join('.') : 'document';
  const id = recordIdAt(input, issue?.path ?? []);
  throw new ValidationError(path, `${id ? `(${id}) ` : ''}${issue?.message ?? 'invalid document'}`);
}

/** The client ID or tenant of the record a path points into, to name it in an error. */
function recordIdAt(input: unknown, path: readonly PropertyKey[]): string | undefined {
  if (path[0] !== 'records' || path.length < 3) return undefined;
  const records = (input as { records?: Record<string, unknown> }).records;
  const list = records?.[String(path[1])];
  const record = Array.isArray(list) ? (list[Number(path[2])] as Record<string, unknown> | undefined) : undefined;
  const id = record?.clientId ?? record?.tenant;
  return typeof id === 'string' ? id.slice(0, 200) : undefined;
}

function parseField<T>(schema: z.ZodType<T>, value: unknown, field: string): T {
  const result = schema.safeParse(value);
  if (!result.success) throw new ValidationError(field, result.error.issues[0]?.message ?? 'invalid');
  return result.data;
}

/** Runs a record's checks, naming the record in what they throw. */
function inRecord(where: string, id: string, check: () => void): void {
  try {
    check();
  } catch (error) {
    if (error instanceof ValidationError) {
      const message = error.message.slice(error.field.length + 2);
      throw new ValidationError(`${where}.${error.field}`, `(${id}) ${message}`);
    }
    throw error;
  }
}

/**
 * A document of one tenant holds that tenant's records only, and none of the flags only the
 * operator sets: the whole import is refused, naming the record.
 */
function checkScope(document: BackupDocument): void {
  const scope = document.tenant;
  if (scope === undefined) return;
  const owner = (tenant: string | undefined) => (tenant === undefined ? 'the operator' : `tenant ${tenant}`);
  const outside = (where: string, id: string, tenant: string | undefined) => {
    if (tenant !== scope) throw new ValidationError(`${where}.tenant`, `(${id}) belongs to ${owner(tenant)}: a backup of tenant ${scope} holds that tenant's records only`);
  };
  const { clientConfigurations, appRegistrations, tenantSettings, consents = [] } = document.records;
  clientConfigurations.forEach((client, index) => outside(`records.clientConfigurations.${index}`, client.clientId, client.tenant));
  appRegistrations.forEach((app, index) => {
    const where = `records.appRegistrations.${index}`;
    outside(where, app.clientId, app.tenant);
    for (const flag of ['firstParty', 'openToAllTenants', 'resourceServer'] as const) {
      if (app[flag] === true) throw new ValidationError(`${where}.${flag}`, `(${app.clientId}) only the operator sets ${flag}: a backup of tenant ${scope} cannot`);
    }
  });
  tenantSettings.forEach((entry, index) => outside(`records.tenantSettings.${index}`, entry.tenant, entry.tenant));
  consents.forEach((record, index) => outside(`records.consents.${index}`, `${record.sub} to ${record.clientId}`, record.tenant));
}

/**
 * A client configuration as restored: `jwksUriAuthor: 'operator'` kept only where the stored
 * record has it already (the operator named that jwks_uri); otherwise its keys' URI is the
 * tenant's. No author without a `jwksUri`, as create() stores it.
 */
function withAuthor(client: StoredClientConfiguration, stored: StoredClientConfiguration | undefined): StoredClientConfiguration {
  const { jwksUriAuthor, ...rest } = client;
  if (rest.jwksUri === undefined) return rest;
  const operator = jwksUriAuthor === 'operator' && stored?.jwksUriAuthor === 'operator';
  return { ...rest, jwksUriAuthor: operator ? 'operator' : 'tenant' };
}

/**
 * A consent as restored: never the document's `grantId` (it could name any grant, another user's
 * among them). An equal consent keeps the stored one's grant; a new or changed consent names a new
 * ID that no grant has, so the engine makes the grant again from the consent at the user's next
 * authorization (and a replaced consent's old grant ends with it).
 */
function withOwnGrant(record: ConsentRecord, stored: ConsentRecord | undefined): ConsentRecord {
  if (stored && isDeepStrictEqual({ ...record, grantId: stored.grantId }, stored)) return stored;
  return { ...record, grantId: randomBytes(32).toString('base64url') };
}

/** An ID of one kind is never imported as another (clients and apps share the engine's client IDs). */
async function notOtherKind(store: Store, otherKind: string, id: string, where: string): Promise<void> {
  if (await store.records.get(otherKind, id)) {
    throw new ValidationError(`${where}.clientId`, `${id} is ${otherKind === APP_REGISTRATION ? 'an app registration' : 'a client configuration'} in the store`);
  }
}

/** Every field either record has, for the audit event's list of changed fields. */
function fieldsOf(before: object, after: object): string[] {
  const fields = [...new Set([...Object.keys(before), ...Object.keys(after)])];
  // `updatedAt` is named only when nothing else differs (a record saved again unchanged).
  const others = fields.filter((field) => field !== 'updatedAt' && !isDeepStrictEqual((before as Record<string, unknown>)[field], (after as Record<string, unknown>)[field]));
  return others.length ? others : fields;
}
