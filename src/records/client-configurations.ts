import { randomUUID } from 'node:crypto';
import { z } from 'zod';
import type { RecordStore } from '../../adapters/types.js';
import { checkConstraintsSize, validateConstraints, type Constraints, type DimensionFilters } from '../../policies/constraints.js';
import { validateAssignedScopes } from '../../policies/scopes.js';
import type { ApiCatalog } from '../../policies/catalog.js';
import { ValidationError } from '../../policies/errors.js';
import {
  CLIENT_AUTHENTICATION_FIELDS,
  validateClientAuthentication,
  type ClientAuthentication,
  type ClientJwks,
  type KeysAuthor,
  type TokenEndpointAuthMethod,
} from '../../policies/client-keys.js';
import { checkProfile, SECURITY_PROFILE, type SecurityProfile } from '../../policies/high-security.js';
import { changeRecord, changedFields } from './change.js';
import { digestSecret, generateSecret } from './secrets.js';
import { displayDescription, displayName, parseInput } from './validation.js';
import { OPERATOR, type AuditContext, type AuditEventType, type AuditTrail } from '../audit/trail.js';
import { changed } from '../audit/events.js';

export const CLIENT_CONFIGURATION = 'client';

/**
 * A client's DPoP rule (RFC 9449): `required`, every token request must carry a DPoP proof and
 * every token is bound to its key; `optional`, a token is bound when its request carries a proof.
 */
export type DpopRule = 'required' | 'optional';
/** The DPoP rule's values (the record schemas and the management API's wire schema). */
export const DPOP_RULE = z.enum(['required', 'optional']);

/** The APIs a client may call: per API id, the scopes assigned and optional data filters. */
export type Resources = Record<string, { scopes: string[]; constraints?: DimensionFilters }>;

/** A machine-to-machine client as the library and the management API show it (never its secret). */
export interface ClientConfiguration {
  clientId: string;
  tenant: string;
  name: string;
  category: string;
  description?: string;
  resources: Resources;
  /**
   * How it authenticates at the token endpoint: with its secret (`client_secret_basic`) or with an
   * assertion signed by its own private key (`private_key_jwt`, RFC 7523), checked with `jwks` or
   * the keys at `jwksUri`.
   */
  tokenEndpointAuthMethod: TokenEndpointAuthMethod;
  /** A private_key_jwt client's public keys, when registered as a key set. */
  jwks?: ClientJwks;
  /** Where our server fetches a private_key_jwt client's public keys, when registered as a URL. */
  jwksUri?: string;
  /**
   * Whether its access tokens must be bound to a key of its own (DPoP, RFC 9449): `required`
   * refuses a token request without a DPoP proof; `optional` (also when absent) binds the token
   * when the request carries one and issues a Bearer token otherwise.
   */
  dpop?: DpopRule;
  /**
   * `high-security`: the client is under the high-security profile (policies/high-security.ts):
   * private_key_jwt and `dpop: 'required'` are then the only settings it may have. `standard`
   * (the default) leaves it to its settings, unless its tenant selected the high-security
   * profile. Always present in what the library returns (optional in the type only for records
   * built by hand).
   */
  profile?: SecurityProfile;
  createdAt: string;
  updatedAt: string;
}

/**
 * As stored: the public record plus the digest of the current secret (a private_key_jwt client has
 * none). Records older than `tokenEndpointAuthMethod` lack it: they are Basic.
 */
export interface StoredClientConfiguration extends Omit<ClientConfiguration, 'tokenEndpointAuthMethod' | 'profile'> {
  tokenEndpointAuthMethod?: TokenEndpointAuthMethod;
  /** Stored only when `high-security` (a record without it is standard). */
  profile?: SecurityProfile;
  secretDigest?: string;
  /**
   * Who named `jwksUri`: the operator's may be reached on a host of `backchannelLogout.privateHosts`
   * (the keys are fetched under the operator's exceptions), a tenant's only on a public address.
   */
  jwksUriAuthor?: KeysAuthor;
}

/**
 * What `clientConfigurations.create()` takes: at least one API in `resources`, at least one scope
 * per API, only scopes and constraint dimensions the API defines.
 */
export interface ClientConfigurationInput {
  tenant: string;
  name: string;
  category: string;
  description?: string;
  resources: Resources;
  /** `client_secret_basic` (the default: a secret is generated) or `private_key_jwt` (no secret). */
  tokenEndpointAuthMethod?: TokenEndpointAuthMethod;
  /** A private_key_jwt client's public keys (`{ keys: [...] }`); or `jwksUri`, not both. */
  jwks?: ClientJwks;
  /** The https URL of a private_key_jwt client's public keys; or `jwks`, not both. */
  jwksUri?: string;
  /** DPoP: `required` or `optional` (the default); see ClientConfiguration.dpop. */
  dpop?: DpopRule;
  /** `standard` (the default) or `high-security`; see ClientConfiguration.profile. */
  profile?: SecurityProfile;
}

/**
 * The secret `create()` returns: always for a Basic client (the default), never for a
 * private_key_jwt client, maybe when the input's type leaves the method open.
 */
export type CreatedSecret<I extends ClientConfigurationInput> =
  I extends { tokenEndpointAuthMethod: 'private_key_jwt' } ? { clientSecret?: undefined }
    // (`tenant` keeps the check from being one against a type of optional members only.)
    : I extends { tenant: string; tokenEndpointAuthMethod?: 'client_secret_basic' | undefined } ? { clientSecret: string }
      : { clientSecret?: string };

/**
 * What `clientConfigurations.update()` takes: any field but the tenant; `description: ''` removes it.
 * A change to `private_key_jwt` deletes the secret; a change to `client_secret_basic` generates one
 * (returned by the update, once) and drops the keys; new `jwks` or `jwksUri` replace the keys.
 */
export type ClientConfigurationPatch = Partial<Omit<ClientConfigurationInput, 'tenant'>>;

const text = displayName();
/** Tenant IDs travel in every token: bounded like the other claims (docs/configuration.md, "Limits"). */
const tenantId = z.string().trim().min(1, 'must not be empty').max(100);
/** The APIs of a client configuration: per API id, its scopes and optional data filters. */
export const RESOURCES_SCHEMA = z.record(
  z.string(),
  z.object({
    scopes: z.array(z.string()),
    constraints: z.record(z.string(), z.array(z.string())).optional(),
  }).strict(),
);
/** The fields of a client configuration and their limits (the management API's wire schema reuses them). */
export const CLIENT_CONFIGURATION_FIELDS = {
  name: text,
  category: text,
  description: displayDescription().optional(),
  resources: RESOURCES_SCHEMA,
  dpop: DPOP_RULE.optional(),
  profile: SECURITY_PROFILE.optional(),
};
const createSchema = z.object({ tenant: tenantId, ...CLIENT_CONFIGURATION_FIELDS, ...CLIENT_AUTHENTICATION_FIELDS }).partial({ tokenEndpointAuthMethod: true, jwks: true, jwksUri: true }).strict();
const patchSchema = z.object({ ...CLIENT_CONFIGURATION_FIELDS, ...CLIENT_AUTHENTICATION_FIELDS }).partial().strict();

/**
 * Machine-to-machine clients (`auth.clientConfigurations`): create, read, change, rotate the secret,
 * delete. Every change reaches every instance at once: this one before the call returns, the others
 * through the change feed (milliseconds).
 */
export class ClientConfigurations {
  constructor(
    private readonly records: RecordStore,
    private readonly catalog: ApiCatalog,
    /** Where each change is recorded before it is made (src/audit/trail.ts). */
    private readonly audit?: AuditTrail,
    /** The security profile a tenant puts its clients under (the host's policy and the tenant's settings). */
    private readonly tenantProfile: (tenant: string) => Promise<SecurityProfile> = async () => 'standard',
  ) {}

  /** Records a change of a client configuration (before it is made: see the audit trail). */
  private async audited(type: AuditEventType, by: AuditContext, client: { clientId: string; tenant: string }, details?: Record<string, unknown>): Promise<void> {
    await this.audit?.record(changed(type, by, { type: 'client_configuration', id: client.clientId }, client.tenant, details));
  }

  /**
   * Creates a client configuration with a new client ID (UUID) and, unless it is a private_key_jwt
   * client, a secret, returned here only.
   * @param author Who names a `jwksUri`: the operator (the library) may name a loopback host.
   * @throws ValidationError naming the field (`resources.scim.scopes`, `jwks.keys.0`, ...), also a
   *   setting the high-security profile (its own or its tenant's) does not allow.
   */
  async create<I extends ClientConfigurationInput>(input: I, by: AuditContext = OPERATOR, author: KeysAuthor = 'operator'): Promise<ClientConfiguration & CreatedSecret<I>> {
    const parsed = parseInput(createSchema, input, 'clientConfiguration');
    const authentication = validateClientAuthentication(parsed, author);
    checkClientProfile({ tokenEndpointAuthMethod: authentication.tokenEndpointAuthMethod, dpop: parsed.dpop, profile: parsed.profile }, await this.tenantProfile(parsed.tenant));
    const clientSecret = authentication.tokenEndpointAuthMethod === 'client_secret_basic' ? generateSecret() : undefined;
    const now = new Date().toISOString();
    const stored: StoredClientConfiguration = {
      clientId: randomUUID(),
      tenant: parsed.tenant,
      name: parsed.name,
      category: parsed.category,
      ...(parsed.description ? { description: parsed.description } : {}),
      resources: this.validateResources(parsed.resources),
      ...authentication,
      ...(authentication.jwksUri ? { jwksUriAuthor: author } : {}),
      ...(parsed.dpop ? { dpop: parsed.dpop } : {}),
      ...(parsed.profile === 'high-security' ? { profile: parsed.profile } : {}),
      createdAt: now,
      updatedAt: now,
      ...(clientSecret ? { secretDigest: digestSecret(clientSecret) } : {}),
    };
    await this.audited('client_configuration.created', by, stored, {
      name: stored.name,
      category: stored.category,
      apis: Object.keys(stored.resources),
      token_endpoint_auth_method: authentication.tokenEndpointAuthMethod,
      ...(stored.dpop ? { dpop: stored.dpop } : {}),
      ...(stored.profile ? { profile: stored.profile } : {}),
    });
    await this.records.put(CLIENT_CONFIGURATION, stored.clientId, stored.tenant, stored);
    return { ...toPublic(stored), ...(clientSecret ? { clientSecret } : {}) } as ClientConfiguration & CreatedSecret<I>;
  }

  /** The client configuration, or undefined. */
  async get(clientId: string): Promise<ClientConfiguration | undefined> {
    const stored = await this.records.get<StoredClientConfiguration>(CLIENT_CONFIGURATION, clientId);
    return stored && toPublic(stored);
  }

  /** A tenant's client configurations, oldest first. */
  async list(tenant: string): Promise<ClientConfiguration[]> {
    const all = await this.records.list<StoredClientConfiguration>(CLIENT_CONFIGURATION, tenant);
    return all.map(toPublic).sort((a, b) => a.createdAt.localeCompare(b.createdAt));
  }

  /**
   * Changes name, category, description, resources, the DPoP rule, the profile or the authentication
   * method and keys (never the tenant). A change to `client_secret_basic` returns the new secret, once.
   * @param author Who names a `jwksUri`: the operator (the library) may name a loopback host.
   * @throws ValidationError naming the field (also a setting the high-security profile, its own or
   *   its tenant's, does not allow); NotFound for an unknown ID; OAuthError 409 when it
   *   keeps losing a race with other changes.
   */
  async update(clientId: string, patch: ClientConfigurationPatch, by: AuditContext = OPERATOR, author: KeysAuthor = 'operator'): Promise<ClientConfiguration & { clientSecret?: string }> {
    const parsed = parseInput(patchSchema, patch, 'patch');
    const resources = parsed.resources !== undefined ? this.validateResources(parsed.resources) : undefined;
    const changesKeys = parsed.jwks !== undefined || parsed.jwksUri !== undefined;
    let clientSecret: string | undefined;
    let audited = false;
    let tenantProfile: SecurityProfile | undefined;
    const next = await changeRecord<StoredClientConfiguration>(this.records, CLIENT_CONFIGURATION, clientId, 'client configuration', async (stored) => {
      const before = normalized(stored);
      tenantProfile ??= await this.tenantProfile(stored.tenant);
      const method = parsed.tokenEndpointAuthMethod ?? before.tokenEndpointAuthMethod;
      // New keys replace both kinds; otherwise a private_key_jwt client keeps the keys it has.
      const authentication = validateClientAuthentication(
        changesKeys || method === 'client_secret_basic'
          ? { tokenEndpointAuthMethod: method, jwks: parsed.jwks, jwksUri: parsed.jwksUri }
          : { tokenEndpointAuthMethod: method, jwks: before.jwks, jwksUri: before.jwksUri },
        author,
      );
      // Basic again: a new secret (the one it had before private_key_jwt is long gone).
      clientSecret = method === 'client_secret_basic' && before.tokenEndpointAuthMethod !== method ? generateSecret() : undefined;
      const { secretDigest, jwks: _jwks, jwksUri: _jwksUri, jwksUriAuthor, ...rest } = before;
      const changed: StoredClientConfiguration = {
        ...rest,
        ...authentication,
        ...(authentication.jwksUri ? { jwksUriAuthor: changesKeys ? author : jwksUriAuthor ?? 'tenant' } : {}),
        ...(method === 'client_secret_basic' ? { secretDigest: clientSecret ? digestSecret(clientSecret) : secretDigest } : {}),
        ...(parsed.name !== undefined ? { name: parsed.name } : {}),
        ...(parsed.category !== undefined ? { category: parsed.category } : {}),
        ...(resources ? { resources } : {}),
        ...(parsed.dpop !== undefined ? { dpop: parsed.dpop } : {}),
        updatedAt: new Date().toISOString(),
      };
      if (parsed.description !== undefined) {
        if (parsed.description) changed.description = parsed.description;
        else delete changed.description;
      }
      if (parsed.profile !== undefined) {
        if (parsed.profile === 'high-security') changed.profile = parsed.profile;
        else delete changed.profile;
      }
      checkClientProfile(changed, tenantProfile);
      // The fields it changes, not every field sent (a form sends them all).
      if (!audited) {
        const fields = changedFields(Object.keys(parsed), before, changed);
        // A change of method is a change of how the client proves itself: said with both ends.
        const method = before.tokenEndpointAuthMethod !== changed.tokenEndpointAuthMethod
          ? { token_endpoint_auth_method: { from: before.tokenEndpointAuthMethod, to: changed.tokenEndpointAuthMethod } }
          : {};
        await this.audited('client_configuration.updated', by, stored, { fields, ...method });
      }
      audited = true;
      return changed;
    });
    return { ...toPublic(next), ...(clientSecret ? { clientSecret } : {}) };
  }

  /**
   * A new secret; the previous one stops working at once (every request reads the stored digest).
   * @throws ValidationError (`tokenEndpointAuthMethod`) for a private_key_jwt client: it has no secret.
   */
  async rotateSecret(clientId: string, by: AuditContext = OPERATOR): Promise<{ clientSecret: string }> {
    const clientSecret = generateSecret();
    let audited = false;
    await changeRecord<StoredClientConfiguration>(this.records, CLIENT_CONFIGURATION, clientId, 'client configuration', async (stored) => {
      if (stored.tokenEndpointAuthMethod === 'private_key_jwt') {
        throw new ValidationError('tokenEndpointAuthMethod', 'a private_key_jwt client has no secret to rotate: register new public keys instead');
      }
      if (!audited) await this.audited('client_configuration.secret_rotated', by, stored);
      audited = true;
      return { ...stored, secretDigest: digestSecret(clientSecret), updatedAt: new Date().toISOString() };
    });
    return { clientSecret };
  }

  /** Deletes it (its secret stops working at once); false when there was none. */
  async delete(clientId: string, by: AuditContext = OPERATOR): Promise<boolean> {
    const stored = await this.records.get<StoredClientConfiguration>(CLIENT_CONFIGURATION, clientId);
    if (!stored) return false;
    await this.audited('client_configuration.deleted', by, stored, { name: stored.name });
    return this.records.delete(CLIENT_CONFIGURATION, clientId);
  }

  private validateResources(resources: Resources): Resources {
    return validateResources(this.catalog, resources);
  }
}

/**
 * The APIs of a client configuration checked against the catalog: at least one API, only scopes
 * and constraint dimensions each API defines, within the size of a token's constraints claim.
 * @throws ValidationError naming the field (`resources.scim.scopes`, ...).
 */
export function validateResources(catalog: ApiCatalog, resources: Resources): Resources {
  const entries = Object.entries(resources);
  if (entries.length === 0) throw new ValidationError('resources', 'at least one API is required');
  const result: Resources = {};
  for (const [apiId, { scopes, constraints }] of entries) {
    const field = `resources.${apiId}`;
    const validated: Resources[string] = {
      scopes: validateAssignedScopes(catalog, apiId, scopes, `${field}.scopes`),
    };
    if (constraints && Object.keys(constraints).length) {
      validated.constraints = validateConstraints(catalog, apiId, constraints, `${field}.constraints`);
    }
    result[apiId] = validated;
  }
  checkConstraintsSize(constraintsOf(result), 'resources');
  return result;
}

/** A stored record with the fields it may lack filled in (records older than them are Basic). */
function normalized(stored: StoredClientConfiguration): StoredClientConfiguration & ClientAuthentication {
  return { ...stored, tokenEndpointAuthMethod: stored.tokenEndpointAuthMethod ?? 'client_secret_basic' };
}

function toPublic(stored: StoredClientConfiguration): ClientConfiguration {
  const { secretDigest: _digest, jwksUriAuthor: _author, ...record } = normalized(stored);
  return { ...record, profile: record.profile ?? 'standard' };
}

/** Constraints per API of a client configuration, for the token's `constraints` claim. */
export function constraintsOf(resources: Resources): Constraints {
  const result: Constraints = {};
  for (const [apiId, { constraints }] of Object.entries(resources)) {
    if (constraints) result[apiId] = constraints;
  }
  return result;
}

/**
 * The high-security rule for a client configuration, where one is written (create, update, a
 * restore): its own profile or its tenant's. A record without a method authenticates with Basic.
 * @throws ValidationError naming the setting the profile does not allow.
 */
export function checkClientProfile(
  client: { tokenEndpointAuthMethod?: TokenEndpointAuthMethod | undefined; dpop?: DpopRule | undefined; profile?: SecurityProfile | undefined },
  tenantProfile: SecurityProfile | undefined,
): void {
  checkProfile({ kind: 'client', tokenEndpointAuthMethod: client.tokenEndpointAuthMethod ?? 'client_secret_basic', dpop: client.dpop }, client.profile, tenantProfile);
}
