import { randomUUID } from 'node:crypto';
import { z } from 'zod';
import type { RecordStore } from '../../adapters/types.js';
import { checkConstraintsSize, validateConstraints, type Constraints, type DimensionFilters } from '../../policies/constraints.js';
import { validateAssignedScopes } from '../../policies/scopes.js';
import type { ApiCatalog } from '../../policies/catalog.js';
import { ValidationError } from '../../policies/errors.js';
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
   * Whether its access tokens must be bound to a key of its own (DPoP, RFC 9449): `required`
   * refuses a token request without a DPoP proof; `optional` (also when absent) binds the token
   * when the request carries one and issues a Bearer token otherwise.
   */
  dpop?: DpopRule;
  createdAt: string;
  updatedAt: string;
}

/** As stored: the public record plus the digest of the current secret. */
export interface StoredClientConfiguration extends ClientConfiguration {
  secretDigest: string;
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
  /** DPoP: `required` or `optional` (the default); see ClientConfiguration.dpop. */
  dpop?: DpopRule;
}

/** What `clientConfigurations.update()` takes: any field but the tenant; `description: ''` removes it. */
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
};
const createSchema = z.object({ tenant: tenantId, ...CLIENT_CONFIGURATION_FIELDS }).strict();
const patchSchema = z.object(CLIENT_CONFIGURATION_FIELDS).partial().strict();

/**
 * Machine-to-machine clients (`auth.clientConfigurations`): create, read, change, rotate the secret,
 * delete. Every change reaches every instance at once.
 */
export class ClientConfigurations {
  constructor(
    private readonly records: RecordStore,
    private readonly catalog: ApiCatalog,
    /** Where each change is recorded before it is made (src/audit/trail.ts). */
    private readonly audit?: AuditTrail,
  ) {}

  /** Records a change of a client configuration (before it is made: see the audit trail). */
  private async audited(type: AuditEventType, by: AuditContext, client: { clientId: string; tenant: string }, details?: Record<string, unknown>): Promise<void> {
    await this.audit?.record(changed(type, by, { type: 'client_configuration', id: client.clientId }, client.tenant, details));
  }

  /**
   * Creates a client configuration with a new client ID (UUID) and secret; the secret is returned
   * here only. @throws ValidationError naming the field (`resources.scim.scopes`, ...).
   */
  async create(input: ClientConfigurationInput, by: AuditContext = OPERATOR): Promise<ClientConfiguration & { clientSecret: string }> {
    const parsed = parseInput(createSchema, input, 'clientConfiguration');
    const clientSecret = generateSecret();
    const now = new Date().toISOString();
    const stored: StoredClientConfiguration = {
      clientId: randomUUID(),
      tenant: parsed.tenant,
      name: parsed.name,
      category: parsed.category,
      ...(parsed.description ? { description: parsed.description } : {}),
      resources: this.validateResources(parsed.resources),
      ...(parsed.dpop ? { dpop: parsed.dpop } : {}),
      createdAt: now,
      updatedAt: now,
      secretDigest: digestSecret(clientSecret),
    };
    await this.audited('client_configuration.created', by, stored, { name: stored.name, category: stored.category, apis: Object.keys(stored.resources), ...(stored.dpop ? { dpop: stored.dpop } : {}) });
    await this.records.put(CLIENT_CONFIGURATION, stored.clientId, stored.tenant, stored);
    return { ...toPublic(stored), clientSecret };
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
   * Changes name, category, description, resources or the DPoP rule (never the tenant).
   * @throws ValidationError naming the field; NotFound for an unknown ID; OAuthError 409 when it
   *   keeps losing a race with other changes.
   */
  async update(clientId: string, patch: ClientConfigurationPatch, by: AuditContext = OPERATOR): Promise<ClientConfiguration> {
    const parsed = parseInput(patchSchema, patch, 'patch');
    const resources = parsed.resources !== undefined ? this.validateResources(parsed.resources) : undefined;
    let audited = false;
    const next = await changeRecord<StoredClientConfiguration>(this.records, CLIENT_CONFIGURATION, clientId, 'client configuration', async (stored) => {
      const changed: StoredClientConfiguration = {
        ...stored,
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
      // The fields it changes, not every field sent (a form sends them all).
      if (!audited) await this.audited('client_configuration.updated', by, stored, { fields: changedFields(Object.keys(parsed), stored, changed) });
      audited = true;
      return changed;
    });
    return toPublic(next);
  }

  /** A new secret; the previous one stops working at once (every request reads the stored digest). */
  async rotateSecret(clientId: string, by: AuditContext = OPERATOR): Promise<{ clientSecret: string }> {
    const clientSecret = generateSecret();
    let audited = false;
    await changeRecord<StoredClientConfiguration>(this.records, CLIENT_CONFIGURATION, clientId, 'client configuration', async (stored) => {
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
    const entries = Object.entries(resources);
    if (entries.length === 0) throw new ValidationError('resources', 'at least one API is required');
    const result: Resources = {};
    for (const [apiId, { scopes, constraints }] of entries) {
      const field = `resources.${apiId}`;
      const validated: Resources[string] = {
        scopes: validateAssignedScopes(this.catalog, apiId, scopes, `${field}.scopes`),
      };
      if (constraints && Object.keys(constraints).length) {
        validated.constraints = validateConstraints(this.catalog, apiId, constraints, `${field}.constraints`);
      }
      result[apiId] = validated;
    }
    checkConstraintsSize(constraintsOf(result), 'resources');
    return result;
  }
}

function toPublic({ secretDigest: _digest, ...record }: StoredClientConfiguration): ClientConfiguration {
  return record;
}

/** Constraints per API of a client configuration, for the token's `constraints` claim. */
export function constraintsOf(resources: Resources): Constraints {
  const result: Constraints = {};
  for (const [apiId, { constraints }] of Object.entries(resources)) {
    if (constraints) result[apiId] = constraints;
  }
  return result;
}
