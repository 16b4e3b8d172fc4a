import type { EngineAdapter, EnginePayload, RecordStore } from '../../adapters/types.js';
import type { ApiCatalog } from '../catalog.js';
import {
  CLIENT_CONFIGURATION,
  constraintsOf,
  type StoredClientConfiguration,
} from '../records/client-configurations.js';

/** Client metadata properties we add to the engine's (RFC 7591 names plus these). */
export const EXTRA_CLIENT_METADATA = ['tenant', 'constraints'] as const;

/** A client configuration as oidc-provider client metadata. The secret stays a digest. */
export function clientConfigurationMetadata(record: StoredClientConfiguration): EnginePayload {
  return {
    client_id: record.clientId,
    client_name: record.name,
    client_secret: record.secretDigest,
    grant_types: ['client_credentials'],
    response_types: [],
    redirect_uris: [],
    token_endpoint_auth_method: 'client_secret_basic',
    scope: Object.values(record.resources).flatMap((resource) => resource.scopes).join(' '),
    tenant: record.tenant,
    constraints: constraintsOf(record.resources),
  };
}

/**
 * The engine's `Client` model adapter: clients are our records, read on every request so that a
 * rotated secret or a deleted client stops working at once on every instance.
 */
export class ClientDirectory implements EngineAdapter {
  constructor(
    private readonly records: RecordStore,
    readonly catalog: ApiCatalog,
  ) {}

  async find(id: string): Promise<EnginePayload | undefined> {
    const record = await this.records.get<StoredClientConfiguration>(CLIENT_CONFIGURATION, id);
    return record && clientConfigurationMetadata(record);
  }

  async upsert(): Promise<void> {
    throw new Error('clients are managed through clientConfigurations and appRegistrations');
  }

  async findByUid(): Promise<undefined> {
    return undefined;
  }

  async findByUserCode(): Promise<undefined> {
    return undefined;
  }

  async consume(): Promise<void> {}

  async destroy(): Promise<void> {}

  async revokeByGrantId(): Promise<void> {}
}
