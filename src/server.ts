import type Koa from 'koa';
import type Provider from 'oidc-provider';
import type { Registry } from 'prom-client';
import { OPERATOR, type AuditEventPage, type AuditQuery } from './audit/trail.js';
import { operatorContext } from './audit/operator.js';
import { createServerApp } from './compose/app.js';
import { assembleServer } from './compose/parts.js';
import { startPortal } from './compose/portal.js';
import { connectMiddleware, type ConnectMiddleware } from './http/embedding.js';
import type { SignInUnlockRequest, SignInUnlockResult } from './limits/sign-in.js';
import { resolveOptions, type AuthServerOptions } from './options.js';
import { tenantPolicy } from '../policies/tenant-policy.js';
import type { AppRegistrations } from './records/app-registrations.js';
import type { ClientConfigurations } from './records/client-configurations.js';
import type { Consent, ConsentKey } from './records/consents.js';
import type { FactorListEntry, FactorOwner, TotpEnrolment } from './factors/index.js';
import type { Connection, ConnectionInput, ConnectionPatch } from './federation/connections.js';
import { UserSignOut, type UserSignOutRequest, type UserSignOutResult } from './records/user-sign-out.js';
import { Backups, type BackupDocument, type BackupExportOptions, type BackupImportOptions, type BackupImportResult } from './records/backup.js';

/** What a host may do with consents: list a user's, revoke one (same rules as the consent API). */
export interface ConsentsApi {
  list(key: ConsentKey): Promise<Consent[]>;
  revoke(key: ConsentKey & { clientId: string }): Promise<boolean>;
}

/** What the operator may do with sign-in throttling (docs/operations.md#sign-in-throttling). */
export interface SignInsApi {
  /**
   * Lifts a user's sign-in hold: clears the failed sign-ins counted for `username`, recorded as
   * `sign_in.unlocked` (actor `operator`, with `actor` as its id when given: who asked) before it
   * is done. With `tenant`, only a user of that
   * tenant is unlocked (the AccountStore's `findByUsername` tells whose she is; another tenant's or
   * an unknown username is answered `{ unlocked: false }` like one that is not held).
   * @throws ValidationError for an empty or overlong username or actor, NotSupported for a `tenant`
   *   when the AccountStore has no `findByUsername`, StoreUnavailable when the store cannot be reached.
   */
  unlock(request: SignInUnlockRequest & OperatorName): Promise<SignInUnlockResult>;
}

/**
 * Who acts, for the audit trail: the operator's name (a person's login, a job's name), recorded as
 * the id of the `operator` actor; absent, the operator without a name. A label the caller gives,
 * not a permission: 1 to 128 characters, no control or bidirectional characters.
 */
export interface OperatorName {
  actor?: string;
}

/** What the operator may do with a user's second factors (docs/operations.md#second-factors). */
export interface FactorsApi {
  /**
   * What the user (`sub`) of `tenant` holds, one entry per factor: `{ id, type: 'passkey' |
   * 'totp' | 'recovery_codes', createdAt, label? }` (a passkey's label is the name she gave it);
   * never a secret, hash or key. Nothing enrolled: `[]`.
   * @throws ValidationError for an empty or overlong tenant or sub, StoreUnavailable when the store
   *   cannot be reached.
   */
  list(owner: FactorOwner): Promise<FactorListEntry[]>;
  /**
   * Enrols an authenticator app for the user at once (the host's own enrolment, e.g. from its
   * account settings): answers `{ factorId, secret, otpauthUri }` once (base32 secret, SHA-1,
   * 6 digits, 30 s); only the sealed secret is kept. Replaces an app she had; `factor.added` by
   * the operator. `accountName` is what the app shows beside our name (default: `sub`).
   * @throws ValidationError for an empty or overlong tenant, sub or accountName.
   */
  enrollTotp(request: FactorOwner & { accountName?: string }): Promise<TotpEnrolment>;
  /**
   * Removes one factor of the user by the id `list` gives (`factor.removed` by the operator).
   * False when she holds none with that id.
   */
  remove(request: FactorOwner & { id: string }): Promise<boolean>;
  /**
   * Resets every factor of the user (a lost phone): authenticator app, recovery codes, passkeys,
   * recorded as `factor.reset` (actor `operator`, with `actor` as its id when given) before it is
   * done; her next sign-in asks for the password alone until she enrols again. False when she held
   * none. A factor the host keeps itself (`accounts.secondFactor`) is the host's to reset.
   * @throws ValidationError for an empty or overlong tenant, sub or actor, Conflict when her factors
   *   kept changing meanwhile, StoreUnavailable when the store cannot be reached.
   */
  reset(request: FactorOwner & OperatorName): Promise<boolean>;
}

/**
 * A tenant's connections to its identity providers (enterprise sign-in: docs/federation.md). The
 * operator's calls: an issuer may be https to any host or plain http on a loopback host (a provider
 * for development and tests); a tenant's admin (management API, portal) names https public hosts
 * only. Every change is audited in the tenant's trail (actor `operator`, with `actor` when given).
 */
export interface ConnectionsApi {
  /**
   * Connects a tenant's OpenID Connect provider: `{ tenant, name, issuer, clientId, clientSecret?,
   * scopes?, domains, claimMapping? }` (and `tokenEndpointAuthMethod`, `signOutUpstream`,
   * `mfaAcrValues`). The secret is sealed and never returned (`hasClientSecret` says there is one).
   * @throws ValidationError naming the field (a domain another connection owns is `domains.<i>`;
   *   `tenant` when the tenant already has 20 connections).
   */
  create(input: ConnectionInput & OperatorName): Promise<Connection>;
  /** A tenant's connections, oldest first (`[]`: none). */
  list(tenant: string): Promise<Connection[]>;
  /** One connection, or undefined. */
  get(id: string): Promise<Connection | undefined>;
  /**
   * Changes a connection (absent fields stay; `clientSecret` replaces the secret, `''` removes it).
   * @throws NotFound, ValidationError naming the field.
   */
  update(id: string, patch: ConnectionPatch & OperatorName): Promise<Connection>;
  /** Deletes a connection (its domains are free again); false when there was none. */
  delete(id: string, by?: OperatorName): Promise<boolean>;
}

/** What the host may do with its users' sign-ins here (docs/federation.md#when-a-user-leaves). */
export interface UsersApi {
  /**
   * Signs a user (`sub`) of `tenant` out everywhere, at once: when she left the organisation.
   * Recorded as `user.signed_out` (actor `operator`, with `actor` as its id when given) before it
   * is done; then every browser session of hers begun until now no longer signs her in (her next
   * authorization asks her to sign in again; `prompt=none` gets `login_required`), every consent
   * of hers ends with its grant (refresh tokens, unused codes, the access tokens' liveness on our
   * APIs; each `consent.revoked` with the reason `user_signed_out`), and the provider she last
   * signed in through is forgotten. The same `sub` in another tenant is not touched. Her account
   * is the host's: this does not disable it (a password sign-in after it works when the
   * AccountStore still accepts her). Answers `{ grantsEnded }`.
   * @throws ValidationError for an empty or overlong tenant, sub or actor, StoreUnavailable when the
   *   store cannot be reached.
   */
  signOut(request: UserSignOutRequest & OperatorName): Promise<UserSignOutResult>;
}

/**
 * Backup and restore of the configuration (docs/operations.md#backup-and-restore): client
 * configurations, app registrations, tenant settings and, when asked, consents, as one versioned
 * JSON document. Secrets travel as their digests only; tokens, sessions, factors, connections and
 * the audit trail are not in it.
 */
export interface BackupApi {
  /**
   * The configuration as a document `{ format: 'talent-auth.backup', version: 1, exportedAt,
   * tenant?, records: { clientConfigurations, appRegistrations, tenantSettings, consents? } }`.
   * `tenant`: that tenant's records only (not the operator's apps); `consents: true` adds consents.
   * @throws ValidationError (`tenant`), StoreUnavailable.
   */
  export(options?: BackupExportOptions): Promise<BackupDocument>;
  /**
   * Restores a document (parsed JSON): checks all of it first (nothing is written when any record
   * is invalid), leaves records equal to the stored ones alone, refuses a record whose stored
   * content differs unless `overwrite`, and records each write in the audit trail (its kind's own
   * event, `details.imported: true`; actor `operator`, with `actor` as its id when given). Answers
   * the counts of records `created`, `updated` and `unchanged` per kind; `dryRun` writes nothing.
   * @throws ValidationError naming the record and field (`records.appRegistrations.2.redirectUris.0`),
   *   Conflict when a record changed while it was being written, StoreUnavailable.
   */
  import(document: unknown, options?: BackupImportOptions & OperatorName): Promise<BackupImportResult>;
}

/**
 * What `createAuthServer()` returns: the server to mount or listen with, and the services that
 * manage its records.
 */
export interface AuthServer {
  /** Koa application: mount it in a host app, or `auth.app.listen(port)`. */
  readonly app: Koa;
  /**
   * The same server as Express (Connect, plain `http`) middleware: requests for its paths are
   * served, every other request goes on to `next` (without `next`: 404). Mount it at the root:
   * `pathPrefix` adds the prefix.
   *
   * @example
   * ```ts
   * const host = express();
   * host.use(auth.middleware);   // before express.json() / express.urlencoded()
   * ```
   */
  readonly middleware: ConnectMiddleware;
  /** The oidc-provider instance, for advanced hooks. */
  readonly provider: Provider;
  readonly issuer: string;
  /** The `aud` of every access token: what resource servers verify. */
  readonly audience: string;
  readonly clientConfigurations: ClientConfigurations;
  readonly appRegistrations: AppRegistrations;
  readonly consents: ConsentsApi;
  /** The audit trail: one tenant's events (`tenant: null`: the platform's), newest first. */
  readonly audit: { list(query: AuditQuery): Promise<AuditEventPage> };
  /** Sign-in throttling: lift a user's hold (`signIns.unlock({ tenant?, username })`). */
  readonly signIns: SignInsApi;
  /** A user's second factors: list them, reset them (`factors.reset({ tenant, sub })`). */
  readonly factors: FactorsApi;
  /** The tenants' identity providers (enterprise sign-in): `connections.create({ tenant, name, issuer, ... })`. */
  readonly connections: ConnectionsApi;
  /** The host's users: sign one out everywhere when she left (`users.signOut({ tenant, sub })`). */
  readonly users: UsersApi;
  /** Export and import of the configuration: `backup.export({ tenant?, consents? })`, `backup.import(document, { dryRun?, overwrite? })`. */
  readonly backup: BackupApi;
  /**
   * The Prometheus registry when `observability.metrics` is on (also served at `{pathPrefix}/metrics`):
   * a host may serve it elsewhere, e.g. on an internal port.
   */
  readonly metrics: Registry | undefined;
  /** Closes the store connections. */
  close(): Promise<void>;
}

/** A library call's input without its `actor` (the audit's name, not a field); not an object: as it is, for the validation to refuse. */
function withoutActor<T extends object>(input: (T & OperatorName) | undefined): T {
  if (typeof input !== 'object' || input === null) return input as unknown as T;
  const { actor: _actor, ...rest } = input;
  return rest as T;
}

/**
 * Creates the authorization server: validates the options (once, here), opens the store, loads or
 * generates the signing keys and wires the engine, the sign-in pages and the APIs.
 *
 * @throws TypeError naming the option when an option is invalid
 *   (`createAuthServer: invalid options: pathPrefix: ...`).
 * @throws Error when a key set has no private key for a needed algorithm (`accessTokenAlgorithm`, each of
 *   `idTokenAlgorithms`; the message names it), or a key is not private.
 * @throws StoreStartError when Redis cannot be reached, refuses the credentials or the database;
 *   its message names the host and port (never the password).
 * @throws StoreFormatError (a StoreStartError) when the Redis store holds a store format this
 *   release cannot read: written by a newer release, or no format at all (docs/versioning.md).
 *
 * @example
 * ```ts
 * const auth = await createAuthServer({
 *   baseUrl: 'https://platform.example.com',
 *   pathPrefix: '/auth2',
 *   store: { type: 'redis', url: process.env.REDIS_URL! },
 *   apis: [{ id: 'scim', name: 'User provisioning', scopes: { 'scim.read': 'Read users' } }],
 *   accounts,
 * });
 * host.use(mount(auth.app));
 * ```
 */
export async function createAuthServer(input: AuthServerOptions): Promise<AuthServer> {
  // The composition root: options (validated once, here), then the parts (store, keys, audit
  // trail, records, engine: src/compose/parts.ts), the portal, and the app that serves them.
  const options = resolveOptions(input);
  const server = await assembleServer(options);
  const portal = options.portal.enabled ? await startPortal(server) : undefined;
  const { app, ours } = createServerApp(server, portal);
  const { parts, engine, ownRecords, signing } = server;
  // A restore holds a tenant's clients to the profile the host's policy puts it under, as create() does.
  const backups = new Backups(parts.store, parts.audit, parts.catalog, { hostProfile: async (tenant) => (await tenantPolicy(options.tenantPolicy, tenant)).profile });
  const userSignOut = new UserSignOut({ audit: parts.audit, consents: parts.consents, signedOutUsers: parts.signedOutUsers, signedInThrough: parts.signedInThrough });
  return {
    app,
    middleware: connectMiddleware(app, options.baseUrl, ours),
    provider: engine.provider,
    issuer: options.issuer,
    audience: options.audience,
    clientConfigurations: parts.clients,
    appRegistrations: parts.apps,
    consents: {
      list: (key) => parts.consents.list(key),
      revoke: (key) => parts.consents.revoke(key),
    },
    audit: { list: (query) => parts.audit.list(query) },
    signIns: {
      unlock: async (request) => parts.holds.unlock(request, operatorContext(request?.actor)),
    },
    factors: {
      list: (owner) => parts.factors.list(owner),
      enrollTotp: ({ accountName, ...owner }) => parts.factors.enrollTotp(owner, accountName ?? owner?.sub, OPERATOR),
      remove: ({ id, ...owner }) => parts.factors.remove(owner, id, OPERATOR),
      reset: async (request) => parts.factors.reset(request, operatorContext(request?.actor)),
    },
    connections: {
      create: async (input) => parts.connections.create(withoutActor(input) as ConnectionInput, operatorContext(input?.actor)),
      list: (tenant) => parts.connections.list(tenant),
      get: (id) => parts.connections.get(id),
      update: async (id, patch) => parts.connections.update(id, withoutActor(patch), operatorContext(patch?.actor)),
      delete: (id, by) => parts.connections.delete(id, operatorContext(by?.actor)),
    },
    users: {
      signOut: async (request) => userSignOut.signOut(withoutActor(request), operatorContext(request?.actor)),
    },
    backup: {
      export: (exportOptions) => backups.export(exportOptions),
      import: async (document, importOptions) => backups.import(document, withoutActor(importOptions), operatorContext(importOptions?.actor)),
    },
    metrics: parts.metrics?.registry,
    close: () => {
      ownRecords.close();
      signing.close();
      return parts.store.close();
    },
  };
}
