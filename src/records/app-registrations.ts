import { randomUUID } from 'node:crypto';
import { z } from 'zod';
import type { RecordStore } from '../../adapters/types.js';
import { validateBackchannelLogoutUri } from '../../policies/backchannel-logout.js';
import { validateRedirectUris } from '../../policies/redirect-uris.js';
import { pkceAtRegistration } from '../../policies/pkce.js';
import { ValidationError } from '../../policies/errors.js';
import {
  CLIENT_AUTHENTICATION_FIELDS,
  validateClientAuthentication,
  type ClientAuthentication,
  type ClientJwks,
  type TokenEndpointAuthMethod,
} from '../../policies/client-keys.js';
import { checkProfile, SECURITY_PROFILE, type SecurityProfile } from '../../policies/high-security.js';
import { changeRecord, changedFields } from './change.js';
import { DPOP_RULE, type DpopRule } from './client-configurations.js';
import { digestSecret, generateSecret } from './secrets.js';
import { displayDescription, displayName, parseInput } from './validation.js';
import { OPERATOR, type AuditContext, type AuditEventType, type AuditTrail } from '../audit/trail.js';
import { changed } from '../audit/events.js';

export const APP_REGISTRATION = 'app';
/** App registrations are not tenant-bound: users of any tenant may authorize an app. */
const ALL_APPS = '';
/** The index of a tenant's apps (group: the tenant), by which they are listed in the store. */
export const APP_OF_TENANT = 'app-of-tenant';

/** Where the apps are listed in the store (one group: apps are not tenant-bound). */
export const APP_REGISTRATION_GROUP = ALL_APPS;
/** An app's client type: `public` (SPA, mobile: no secret, PKCE always) or `confidential` (a server: a secret, refresh tokens). */
export type ClientType = 'public' | 'confidential';
/** The algorithm an app's ID tokens are signed with. */
export type IdTokenAlgorithm = 'RS256' | 'PS256' | 'ES256' | 'EdDSA';

/** A named-user application as the library and the management API show it (never its secret). */
export interface AppRegistration {
  clientId: string;
  name: string;
  description?: string;
  redirectUris: string[];
  clientType: ClientType;
  pkceEnabled: boolean;
  /** ID-token signing algorithm; RS256 (OIDC's default) unless the app registered another. */
  idTokenSigningAlg: IdTokenAlgorithm;
  /**
   * A platform-owned app (e.g. the platform's own UI): its users' tokens may list and revoke all of
   * their consents. Any other app's token sees and revokes only its own consent.
   */
  firstParty: boolean;
  /**
   * The tenant that registered the app (the management API, the portal, or the library with
   * `tenant`): only that tenant's users may authorize it, unless `openToAllTenants`. Without a
   * tenant the app is the operator's, open to every tenant.
   */
  tenant?: string;
  /** Set by the operator only (library, CLI): a tenant's app that users of every tenant may authorize. */
  openToAllTenants: boolean;
  /**
   * Set by the operator only (library, CLI): an operator's confidential app that may introspect
   * access tokens of every tenant (a resource server of the platform). A tenant's app introspects
   * its tenant's tokens only, with or without it.
   */
  resourceServer: boolean;
  /** Where a sign-out the app starts may send the browser back (exact match); empty: nowhere. */
  postLogoutRedirectUris: string[];
  /**
   * The app must push its authorization requests (RFC 9126: `POST {issuer}/par`) and send the
   * browser to `/authorize` with the `request_uri` only; a plain authorization request of it is
   * refused (`invalid_request`). Default false.
   */
  requirePushedAuthorizationRequests: boolean;
  /** The app's back-channel logout endpoint: told by a signed logout token when its user signs out. */
  backchannelLogoutUri?: string;
  /**
   * A confidential app's way to authenticate at the token endpoint: its secret
   * (`client_secret_basic`) or an assertion signed by its own private key (`private_key_jwt`,
   * RFC 7523) checked with `jwks` or the keys at `jwksUri`. Absent for a public app (it has none).
   */
  tokenEndpointAuthMethod?: TokenEndpointAuthMethod;
  /** A private_key_jwt app's public keys, when registered as a key set. */
  jwks?: ClientJwks;
  /** Where our server fetches a private_key_jwt app's public keys, when registered as a URL. */
  jwksUri?: string;
  /**
   * Whether its access and refresh tokens must be bound to a key of its own (DPoP, RFC 9449):
   * `required` refuses a token request without a DPoP proof; `optional` (also when absent) binds
   * them when the request carries one.
   */
  dpop?: DpopRule;
  /**
   * `high-security`: the app is under the high-security profile (policies/high-security.ts): a
   * confidential app with private_key_jwt, `dpop: 'required'`, pushed authorization requests,
   * PKCE and https redirect URIs, whose codes live 60 s. `standard` (the default) leaves it to its
   * settings, unless its tenant selected the high-security profile. Always present in what
   * the library returns (optional in the type only for records built by hand).
   */
  profile?: SecurityProfile;
  createdAt: string;
  updatedAt: string;
}

/** An app registration as stored: with its secret's digest; records older than a field may lack it. */
export interface StoredAppRegistration extends Omit<AppRegistration, 'postLogoutRedirectUris' | 'resourceServer' | 'requirePushedAuthorizationRequests' | 'profile'> {
  /** Stored only when `high-security` (a record without it is standard). */
  profile?: SecurityProfile;
  postLogoutRedirectUris?: string[];
  resourceServer?: boolean;
  /** Stored only when true (a record without it is as it was before the field). */
  requirePushedAuthorizationRequests?: boolean;
  /** Only confidential Basic apps have one (records older than `tokenEndpointAuthMethod` are Basic). */
  secretDigest?: string;
  /**
   * The server's own app (the portal's), which every instance writes itself: left out of a
   * backup (another deployment derives another ID and secret for it).
   */
  builtIn?: true;
}

/**
 * What `appRegistrations.create()` takes. `redirectUris` must pass the redirect-URI policy;
 * `pkceEnabled` may be false only for a confidential app whose redirect URIs are all https.
 */
export interface AppRegistrationInput {
  name: string;
  description?: string;
  redirectUris: string[];
  clientType: ClientType;
  pkceEnabled?: boolean;
  idTokenSigningAlg?: IdTokenAlgorithm;
  firstParty?: boolean;
  /** The tenant that owns the app; absent: the operator's app, open to all tenants. */
  tenant?: string;
  /** Operator only: lets users of every tenant authorize a tenant's app. */
  openToAllTenants?: boolean;
  /** Operator only: may introspect every tenant's access tokens (see AppRegistration.resourceServer). */
  resourceServer?: boolean;
  /** Where a sign-out may send the browser back; the redirect-URI policy applies. */
  postLogoutRedirectUris?: string[];
  /** Only pushed authorization requests (see AppRegistration.requirePushedAuthorizationRequests); default false. */
  requirePushedAuthorizationRequests?: boolean;
  /**
   * The endpoint for back-channel logout tokens; `''` in an update removes it. The operator's apps:
   * https, or http on a loopback host. A tenant's app: https on port 443 to a public host name
   * (policies/backchannel-logout.ts).
   */
  backchannelLogoutUri?: string;
  /**
   * Confidential apps: `client_secret_basic` (the default: a secret is generated) or
   * `private_key_jwt` (no secret; `jwks` or `jwksUri`, not both). In an update, a change to
   * `client_secret_basic` generates a secret (returned once) and a change to `private_key_jwt`
   * deletes it; a change of client type starts from the default.
   */
  tokenEndpointAuthMethod?: TokenEndpointAuthMethod;
  /** A private_key_jwt app's public keys (`{ keys: [...] }`). */
  jwks?: ClientJwks;
  /** The https URL of a private_key_jwt app's public keys: a tenant's app names a public host. */
  jwksUri?: string;
  /** DPoP: `required` or `optional` (the default); see AppRegistration.dpop. */
  dpop?: DpopRule;
  /** `standard` (the default) or `high-security`; see AppRegistration.profile. */
  profile?: SecurityProfile;
}

/** What `appRegistrations.update()` takes: any field but the tenant; absent fields stay as they are. */
export type AppRegistrationPatch = Partial<Omit<AppRegistrationInput, 'tenant'>>;

/** Checks engine-level compatibility of an app (oidc-provider's own client metadata rules). */
export type EngineCheck = (app: StoredAppRegistration) => Promise<void>;

const text = displayName();
/** The fields of an app registration and their limits (the management API's wire schema reuses them). */
export const APP_REGISTRATION_FIELDS = {
  name: text,
  description: displayDescription().optional(),
  redirectUris: z.array(z.string()).min(1, 'at least one redirect URI is required').max(20),
  clientType: z.enum(['public', 'confidential']),
  pkceEnabled: z.boolean().optional(),
  idTokenSigningAlg: z.enum(['RS256', 'PS256', 'ES256', 'EdDSA']).optional(),
  firstParty: z.boolean().optional(),
  openToAllTenants: z.boolean().optional(),
  resourceServer: z.boolean().optional(),
  postLogoutRedirectUris: z.array(z.string()).max(20),
  backchannelLogoutUri: z.string().trim().max(2000),
  dpop: DPOP_RULE,
  requirePushedAuthorizationRequests: z.boolean().optional(),
  profile: SECURITY_PROFILE.optional(),
};
const createSchema = z.object({
  ...APP_REGISTRATION_FIELDS,
  ...CLIENT_AUTHENTICATION_FIELDS,
  tokenEndpointAuthMethod: CLIENT_AUTHENTICATION_FIELDS.tokenEndpointAuthMethod.optional(),
  jwks: CLIENT_AUTHENTICATION_FIELDS.jwks.optional(),
  jwksUri: CLIENT_AUTHENTICATION_FIELDS.jwksUri.optional(),
  postLogoutRedirectUris: APP_REGISTRATION_FIELDS.postLogoutRedirectUris.optional(),
  backchannelLogoutUri: APP_REGISTRATION_FIELDS.backchannelLogoutUri.optional(),
  dpop: APP_REGISTRATION_FIELDS.dpop.optional(),
  tenant: text.optional(),
}).strict();
const patchSchema = z.object({ ...APP_REGISTRATION_FIELDS, ...CLIENT_AUTHENTICATION_FIELDS }).partial().strict();

/** The web origin of a redirect URI (https or loopback http), or undefined for a deep link. */
export function webOrigin(uri: string): string | undefined {
  const url = URL.parse(uri);
  return url && (url.protocol === 'https:' || url.protocol === 'http:') ? url.origin : undefined;
}

/**
 * Named-user applications (`auth.appRegistrations`): create, read, change (client type, PKCE,
 * redirect URIs), secrets, delete.
 */
export class AppRegistrations {
  /** The web origins of public apps' redirect URIs, until an app changes. */
  private origins: Promise<ReadonlySet<string>> | undefined;

  constructor(
    private readonly records: RecordStore,
    private readonly engineCheck: EngineCheck,
    /** Ends every grant and consent of an app (when it is deleted or changes client type). */
    private readonly endGrantsOf: (clientId: string, by: AuditContext, reason: string) => Promise<unknown> = async () => undefined,
    /** Where each change is recorded before it is made (src/audit/trail.ts). */
    private readonly audit?: AuditTrail,
    /** The security profile a tenant puts its apps under (the host's policy and the tenant's settings). */
    private readonly tenantProfile: (tenant: string) => Promise<SecurityProfile> = async () => 'standard',
  ) {
    records.watch((change) => {
      if (change.kind === undefined || change.kind === APP_REGISTRATION) this.origins = undefined;
    });
  }

  /**
   * The origins a browser may call the token endpoint from (CORS): those of the redirect URIs of
   * public apps, which exchange their codes from the browser. Kept until an app changes on any
   * instance (read again at every call while changes cannot be watched). The server's own (its
   * CORS); not part of the public API.
   * @internal
   */
  publicWebOrigins(): Promise<ReadonlySet<string>> {
    if (this.origins) return this.origins;
    const reading = this.list().then(
      (apps) => new Set(apps.filter((app) => app.clientType === 'public').flatMap((app) => app.redirectUris.map(webOrigin)).filter((origin): origin is string => origin !== undefined)),
    );
    if (this.records.watching) {
      this.origins = reading;
      reading.catch(() => {
        if (this.origins === reading) this.origins = undefined;
      });
    }
    return reading;
  }

  /**
   * Registers an app; a confidential app's secret is returned here only.
   * @throws ValidationError naming the field; a refused redirect URI is `redirectUris.<index>` with
   *   the URI and the rule it broke; a setting the high-security profile (the app's own or its
   *   tenant's) does not allow.
   */
  async create(input: AppRegistrationInput, by: AuditContext = OPERATOR): Promise<AppRegistration & { clientSecret?: string }> {
    const parsed = parseInput(createSchema, input, 'appRegistration');
    const redirectUris = validateRedirectUris(parsed.redirectUris);
    const now = new Date().toISOString();
    const authentication = appAuthentication(parsed.clientType, parsed, parsed.tenant);
    const clientSecret = authentication?.tokenEndpointAuthMethod === 'client_secret_basic' ? generateSecret() : undefined;
    const stored = { ...newRecord(randomUUID(), parsed, redirectUris, now, now, clientSecret ? digestSecret(clientSecret) : undefined), ...authentication };
    checkAppProfile(stored, stored.tenant === undefined ? undefined : await this.tenantProfile(stored.tenant));
    await this.engineCheck(stored);
    await this.audited('app_registration.created', by, stored, { name: stored.name, client_type: stored.clientType, redirect_uris: stored.redirectUris, ...(authentication ? { token_endpoint_auth_method: authentication.tokenEndpointAuthMethod } : {}), ...(stored.dpop ? { dpop: stored.dpop } : {}), ...(stored.profile ? { profile: stored.profile } : {}) });
    await this.records.put(APP_REGISTRATION, stored.clientId, ALL_APPS, stored);
    if (stored.tenant !== undefined) await this.records.put(APP_OF_TENANT, stored.clientId, stored.tenant, { clientId: stored.clientId });
    return { ...toPublic(stored), ...(clientSecret ? { clientSecret } : {}) };
  }

  /**
   * The server's own app (the portal), under a fixed client ID and secret that every instance
   * derives alike: created when missing, brought up to date when its registration or secret
   * differ, left alone otherwise (so a restart writes nothing). Not part of the public API.
   * @internal
   */
  async ensureBuiltIn(clientId: string, input: AppRegistrationInput, clientSecret: string): Promise<void> {
    const parsed = parseInput(createSchema, input, 'appRegistration');
    const now = new Date().toISOString();
    const existing = await this.records.get<StoredAppRegistration>(APP_REGISTRATION, clientId);
    const stored: StoredAppRegistration = { ...newRecord(clientId, parsed, validateRedirectUris(parsed.redirectUris), existing?.createdAt ?? now, now, digestSecret(clientSecret)), builtIn: true };
    // Left alone when it is as it should be (a restart, another instance): nothing written or recorded.
    if (existing && JSON.stringify({ ...existing, createdAt: '', updatedAt: '' }) === JSON.stringify({ ...stored, createdAt: '', updatedAt: '' })) return;
    await this.engineCheck(stored);
    await this.audited(existing ? 'app_registration.updated' : 'app_registration.created', OPERATOR, stored, { name: stored.name, built_in: true });
    await this.records.put(APP_REGISTRATION, clientId, ALL_APPS, stored);
  }

  /** The app registration, or undefined. */
  async get(clientId: string): Promise<AppRegistration | undefined> {
    const stored = await this.records.get<StoredAppRegistration>(APP_REGISTRATION, clientId);
    return stored && toPublic(stored);
  }

  /** Every app registration, oldest first. */
  async list(): Promise<AppRegistration[]> {
    const all = await this.records.list<StoredAppRegistration>(APP_REGISTRATION, ALL_APPS);
    return all.map(toPublic).sort((a, b) => a.createdAt.localeCompare(b.createdAt));
  }

  /**
   * The apps of one tenant, oldest first, listed by the tenant in the store (an index of a tenant's
   * apps, kept with each app: a tenant's listing never reads another's). Apps registered before
   * the index was kept are indexed at this process's first listing.
   */
  async listByTenant(tenant: string): Promise<AppRegistration[]> {
    this.indexed ??= this.indexEarlierApps().catch((error: unknown) => {
      this.indexed = undefined;
      throw error;
    });
    await this.indexed;
    const ids = await this.records.list<{ clientId: string }>(APP_OF_TENANT, tenant);
    const apps = await Promise.all(ids.map(({ clientId }) => this.records.get<StoredAppRegistration>(APP_REGISTRATION, clientId)));
    return apps
      .filter((app): app is StoredAppRegistration => app !== undefined && app.tenant === tenant)
      .map(toPublic)
      .sort((a, b) => a.createdAt.localeCompare(b.createdAt));
  }

  /** Whether apps registered before the tenant index have their entries (once per process). */
  private indexed: Promise<void> | undefined;

  private async indexEarlierApps(): Promise<void> {
    const all = await this.records.list<StoredAppRegistration>(APP_REGISTRATION, ALL_APPS);
    await Promise.all(all.filter((app) => app.tenant !== undefined).map(async (app) => {
      if (!(await this.records.get(APP_OF_TENANT, app.clientId))) await this.records.put(APP_OF_TENANT, app.clientId, app.tenant!, { clientId: app.clientId });
    }));
  }

  /**
   * Changes an app. Public → confidential generates a secret (returned here, once);
   * confidential → public deletes the secret. A change of client type ends every grant and consent
   * of the app (its users allow it again at their next sign-in); a secret rotation ends none.
   * @throws ValidationError naming the field, also a setting the high-security profile (the
   *   app's own or its tenant's) does not allow.
   */
  async update(clientId: string, patch: AppRegistrationPatch, by: AuditContext = OPERATOR): Promise<AppRegistration & { clientSecret?: string }> {
    const parsed = parseInput(patchSchema, patch, 'patch');
    const newUris = parsed.redirectUris ? validateRedirectUris(parsed.redirectUris) : undefined;
    const logoutUris = parsed.postLogoutRedirectUris ? validateRedirectUris(parsed.postLogoutRedirectUris, 'postLogoutRedirectUris', true) : undefined;
    let clientSecret: string | undefined;
    let typeChanged = false;
    let audited = false;
    let tenantProfile: SecurityProfile | undefined;
    const next = await changeRecord<StoredAppRegistration>(this.records, APP_REGISTRATION, clientId, 'app registration', async (stored) => {
      if (stored.tenant !== undefined) tenantProfile ??= await this.tenantProfile(stored.tenant);
      const clientType = parsed.clientType ?? stored.clientType;
      const redirectUris = newUris ?? stored.redirectUris;
      const becomesConfidential = clientType === 'confidential' && stored.clientType === 'public';
      typeChanged = clientType !== stored.clientType;
      // A type change starts from the type's default: public apps always use PKCE.
      const pkce = parsed.pkceEnabled ?? (clientType !== stored.clientType ? true : stored.pkceEnabled);
      // A change of client type starts from the default method; new keys replace the old ones.
      const before = stored.clientType === 'confidential' ? stored.tokenEndpointAuthMethod ?? 'client_secret_basic' : undefined;
      const method = parsed.tokenEndpointAuthMethod ?? (typeChanged ? undefined : before);
      const changesKeys = parsed.jwks !== undefined || parsed.jwksUri !== undefined;
      const authentication = appAuthentication(
        clientType,
        changesKeys || method !== 'private_key_jwt'
          ? { tokenEndpointAuthMethod: method, jwks: parsed.jwks, jwksUri: parsed.jwksUri }
          : { tokenEndpointAuthMethod: method, jwks: stored.jwks, jwksUri: stored.jwksUri },
        stored.tenant,
      );
      const basic = authentication?.tokenEndpointAuthMethod === 'client_secret_basic';
      clientSecret = basic && (becomesConfidential || before !== 'client_secret_basic') ? generateSecret() : undefined;
      const { secretDigest: _previous, tokenEndpointAuthMethod: _method, jwks: _jwks, jwksUri: _jwksUri, ...rest } = stored;
      const changed: StoredAppRegistration = {
        ...rest,
        ...(parsed.name !== undefined ? { name: parsed.name } : {}),
        ...(parsed.idTokenSigningAlg !== undefined ? { idTokenSigningAlg: parsed.idTokenSigningAlg } : {}),
        ...(parsed.firstParty !== undefined ? { firstParty: parsed.firstParty } : {}),
        ...(parsed.openToAllTenants !== undefined ? { openToAllTenants: parsed.openToAllTenants } : {}),
        ...(parsed.resourceServer !== undefined ? { resourceServer: parsed.resourceServer } : {}),
        ...(logoutUris ? { postLogoutRedirectUris: logoutUris } : {}),
        ...(parsed.dpop !== undefined ? { dpop: parsed.dpop } : {}),
        redirectUris,
        clientType,
        pkceEnabled: pkceAtRegistration(clientType, pkce, redirectUris),
        updatedAt: new Date().toISOString(),
        ...authentication,
        ...(basic ? { secretDigest: clientSecret ? digestSecret(clientSecret) : stored.secretDigest } : {}),
      };
      if (parsed.description !== undefined) {
        if (parsed.description) changed.description = parsed.description;
        else delete changed.description;
      }
      if (parsed.requirePushedAuthorizationRequests !== undefined) {
        if (parsed.requirePushedAuthorizationRequests) changed.requirePushedAuthorizationRequests = true;
        else delete changed.requirePushedAuthorizationRequests;
      }
      if (parsed.backchannelLogoutUri !== undefined) {
        // The rule depends on the app's owner: a tenant's app only reaches public hosts.
        if (parsed.backchannelLogoutUri) changed.backchannelLogoutUri = validateBackchannelLogoutUri(parsed.backchannelLogoutUri, stored.tenant);
        else delete changed.backchannelLogoutUri;
      }
      if (parsed.profile !== undefined) {
        if (parsed.profile === 'high-security') changed.profile = parsed.profile;
        else delete changed.profile;
      }
      checkAppProfile(changed, tenantProfile);
      await this.engineCheck(changed);
      // The fields it changes, not every field sent (a form sends them all).
      if (!audited) {
        // A change of method is a change of how the app proves itself: said with both ends.
        const methodChange = before !== changed.tokenEndpointAuthMethod
          ? { token_endpoint_auth_method: { from: before ?? 'none', to: changed.tokenEndpointAuthMethod ?? 'none' } }
          : {};
        const beforeFields = before ? { ...stored, tokenEndpointAuthMethod: before } : stored;
        await this.audited('app_registration.updated', by, stored, { fields: changedFields(Object.keys(parsed), beforeFields, changed), ...methodChange });
      }
      audited = true;
      return changed;
    });
    // A grant made for one client type must not outlive it: a public app's tokens never get a
    // secret's protection afterwards, and a confidential → public → confidential round trip must
    // not bring old refresh tokens back.
    if (typeChanged) await this.endGrantsOf(clientId, by, 'app_client_type_changed');
    return { ...toPublic(next), ...(clientSecret ? { clientSecret } : {}) };
  }

  /** A new secret for a confidential app; the previous one stops working at once. */
  async rotateSecret(clientId: string, by: AuditContext = OPERATOR): Promise<{ clientSecret: string }> {
    const clientSecret = generateSecret();
    let audited = false;
    await changeRecord<StoredAppRegistration>(this.records, APP_REGISTRATION, clientId, 'app registration', async (stored) => {
      if (stored.clientType !== 'confidential') {
        throw new ValidationError('clientType', 'public apps have no secret; change the client type to confidential first');
      }
      if (stored.tokenEndpointAuthMethod === 'private_key_jwt') {
        throw new ValidationError('tokenEndpointAuthMethod', 'a private_key_jwt app has no secret to rotate: register new public keys instead');
      }
      if (!audited) await this.audited('app_registration.secret_rotated', by, stored);
      audited = true;
      return { ...stored, secretDigest: digestSecret(clientSecret), updatedAt: new Date().toISOString() };
    });
    return { clientSecret };
  }

  /**
   * Deletes the app, and ends every grant and consent of it at once (its refresh tokens stop, its
   * access tokens are no longer live); false when there was none.
   */
  async delete(clientId: string, by: AuditContext = OPERATOR): Promise<boolean> {
    const stored = await this.records.get<StoredAppRegistration>(APP_REGISTRATION, clientId);
    if (stored) await this.audited('app_registration.deleted', by, stored, { name: stored.name });
    const deleted = await this.records.delete(APP_REGISTRATION, clientId);
    await this.records.delete(APP_OF_TENANT, clientId);
    await this.endGrantsOf(clientId, by, 'app_deleted');
    return deleted;
  }

  /** Records a change of an app (before it is made: see the audit trail). */
  private async audited(type: AuditEventType, by: AuditContext, app: { clientId: string; tenant?: string | undefined }, details?: Record<string, unknown>): Promise<void> {
    await this.audit?.record(changed(type, by, { type: 'app_registration', id: app.clientId }, app.tenant, details));
  }
}

/** A new record of an app from its validated input (`createdAt` kept by a re-registration). */
function newRecord(clientId: string, parsed: z.output<typeof createSchema>, redirectUris: string[], createdAt: string, now: string, secretDigest: string | undefined): StoredAppRegistration {
  return {
    clientId,
    name: parsed.name,
    ...(parsed.description ? { description: parsed.description } : {}),
    redirectUris,
    clientType: parsed.clientType,
    pkceEnabled: pkceAtRegistration(parsed.clientType, parsed.pkceEnabled, redirectUris),
    idTokenSigningAlg: parsed.idTokenSigningAlg ?? 'RS256',
    firstParty: parsed.firstParty ?? false,
    ...(parsed.tenant ? { tenant: parsed.tenant } : {}),
    openToAllTenants: parsed.openToAllTenants ?? false,
    resourceServer: parsed.resourceServer ?? false,
    postLogoutRedirectUris: validateRedirectUris(parsed.postLogoutRedirectUris ?? [], 'postLogoutRedirectUris', true),
    ...(parsed.backchannelLogoutUri ? { backchannelLogoutUri: validateBackchannelLogoutUri(parsed.backchannelLogoutUri, parsed.tenant) } : {}),
    ...(parsed.dpop ? { dpop: parsed.dpop } : {}),
    ...(parsed.requirePushedAuthorizationRequests ? { requirePushedAuthorizationRequests: true } : {}),
    ...(parsed.profile === 'high-security' ? { profile: parsed.profile } : {}),
    createdAt,
    updatedAt: now,
    ...(parsed.clientType === 'confidential' && secretDigest ? { secretDigest } : {}),
  };
}

/**
 * The authentication of an app of `clientType` from its input: a public app has none (and takes no
 * keys), a confidential app Basic unless it asks for private_key_jwt. A tenant's app names a
 * public host as its `jwksUri`; the operator's may name a loopback one.
 */
function appAuthentication(
  clientType: ClientType,
  input: Parameters<typeof validateClientAuthentication>[0],
  tenant: string | undefined,
): ClientAuthentication | undefined {
  if (clientType === 'public') {
    for (const field of ['tokenEndpointAuthMethod', 'jwks', 'jwksUri'] as const) {
      if (input[field] !== undefined) throw new ValidationError(field, 'a public app does not authenticate at the token endpoint: only a confidential app has a method and keys');
    }
    return undefined;
  }
  return validateClientAuthentication(input, tenant === undefined ? 'operator' : 'tenant');
}

/**
 * The high-security rule for an app, where one is written (create, update, a restore): its own
 * profile or its tenant's (none for the operator's apps).
 * @throws ValidationError naming the setting the profile does not allow.
 */
export function checkAppProfile(app: StoredAppRegistration, tenantProfile: SecurityProfile | undefined): void {
  checkProfile(profiled(app), app.profile, tenantProfile);
}

/** What the high-security rule reads of an app. */
function profiled(app: StoredAppRegistration): Parameters<typeof checkProfile>[0] {
  return {
    kind: 'app',
    clientType: app.clientType,
    tokenEndpointAuthMethod: app.tokenEndpointAuthMethod,
    dpop: app.dpop,
    requirePushedAuthorizationRequests: app.requirePushedAuthorizationRequests,
    pkceEnabled: app.pkceEnabled,
    redirectUris: app.redirectUris,
  };
}

function toPublic({ secretDigest: _digest, builtIn: _builtIn, ...record }: StoredAppRegistration): AppRegistration {
  // Records stored before the fields existed: not open to all tenants, no post-logout URIs, Basic.
  return {
    ...record,
    ...(record.clientType === 'confidential' ? { tokenEndpointAuthMethod: record.tokenEndpointAuthMethod ?? 'client_secret_basic' } : {}),
    openToAllTenants: record.openToAllTenants === true,
    resourceServer: record.resourceServer === true,
    postLogoutRedirectUris: record.postLogoutRedirectUris ?? [],
    requirePushedAuthorizationRequests: record.requirePushedAuthorizationRequests === true,
    profile: record.profile ?? 'standard',
  };
}
