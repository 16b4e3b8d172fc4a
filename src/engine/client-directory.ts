import type { EngineAdapter, EnginePayload, RecordStore } from '../../adapters/types.js';
import { ValidationError } from '../../policies/errors.js';
import type { ClientJwks, TokenEndpointAuthMethod } from '../../policies/client-keys.js';
import { effectiveProfile, PROFILE_METADATA, type SecurityProfile } from '../../policies/high-security.js';
import { APP_REGISTRATION, type StoredAppRegistration } from '../records/app-registrations.js';
import {
  CLIENT_CONFIGURATION,
  constraintsOf,
  type StoredClientConfiguration,
} from '../records/client-configurations.js';

const UUID = /^[0-9a-f]{8}-[0-9a-f]{4}-[0-9a-f]{4}-[0-9a-f]{4}-[0-9a-f]{12}$/i;

/** Client metadata properties we add to the engine's (RFC 7591 names plus these). */
export const EXTRA_CLIENT_METADATA = ['tenant', 'constraints', 'pkce_enabled', 'first_party', 'open_to_all_tenants', 'resource_server', 'jwks_uri_by_operator', PROFILE_METADATA] as const;

/**
 * A client's effective profile as engine metadata: present only under the high-security profile
 * (policies/high-security.ts), where the engine hooks read it (code lifetime, refusals).
 */
function profileMetadata(highSecurity: boolean): EnginePayload {
  return highSecurity ? { [PROFILE_METADATA]: 'high-security' } : {};
}

/**
 * How a client authenticates, as engine metadata: Basic with its secret's digest, or
 * private_key_jwt with its keys (inline or by URL) and no secret at all.
 */
function authenticationMetadata(
  record: { tokenEndpointAuthMethod?: TokenEndpointAuthMethod | undefined; jwks?: ClientJwks | undefined; jwksUri?: string | undefined; secretDigest?: string | undefined },
  jwksUriByOperator: boolean,
): EnginePayload {
  if (record.tokenEndpointAuthMethod === 'private_key_jwt') {
    return {
      token_endpoint_auth_method: 'private_key_jwt',
      ...(record.jwks ? { jwks: record.jwks } : {}),
      // Fetched under the operator's exceptions only when the operator named it (patches.ts).
      ...(record.jwksUri ? { jwks_uri: record.jwksUri, jwks_uri_by_operator: jwksUriByOperator } : {}),
    };
  }
  return { token_endpoint_auth_method: 'client_secret_basic', ...(record.secretDigest ? { client_secret: record.secretDigest } : {}) };
}

/**
 * A client configuration as oidc-provider client metadata. The secret stays a digest.
 * @param tenantProfile the profile its tenant selected: high-security makes DPoP required.
 */
export function clientConfigurationMetadata(record: StoredClientConfiguration, tenantProfile?: SecurityProfile): EnginePayload {
  const highSecurity = effectiveProfile(record.profile, tenantProfile) === 'high-security';
  return {
    client_id: record.clientId,
    client_name: record.name,
    grant_types: ['client_credentials'],
    response_types: [],
    redirect_uris: [],
    ...authenticationMetadata(record, record.jwksUriAuthor === 'operator'),
    // RFC 9449 §5.2: a client that must use DPoP; the engine refuses its requests without a proof.
    dpop_bound_access_tokens: record.dpop === 'required' || highSecurity,
    ...profileMetadata(highSecurity),
    scope: Object.values(record.resources).flatMap((resource) => resource.scopes).join(' '),
    tenant: record.tenant,
    constraints: constraintsOf(record.resources),
  };
}

/**
 * Whose exceptions a client's key-set fetch (its `jwks_uri`) gets: the operator's when the
 * operator named the URL, none otherwise (a tenant's, a public address only).
 */
export function engineKeysOwner(client: object): { tenant?: string } {
  const { jwks_uri_by_operator: byOperator } = client as { jwks_uri_by_operator?: unknown };
  return byOperator === true ? {} : { tenant: 'a tenant' };
}

/** Who owns an app, from its engine client metadata (see appServesTenant). */
export function engineAppOwner(client: object): { tenant?: string; openToAllTenants: boolean } {
  const { tenant, open_to_all_tenants: open } = client as { tenant?: unknown; open_to_all_tenants?: unknown };
  return { ...(typeof tenant === 'string' ? { tenant } : {}), openToAllTenants: open === true };
}

/**
 * An app registration as oidc-provider client metadata.
 * @param tenantProfile the profile its tenant selected: high-security makes DPoP, PAR and PKCE required.
 */
export function appRegistrationMetadata(app: StoredAppRegistration, tenantProfile?: SecurityProfile): EnginePayload {
  const confidential = app.clientType === 'confidential';
  const highSecurity = effectiveProfile(app.profile, tenantProfile) === 'high-security';
  return {
    client_id: app.clientId,
    client_name: app.name,
    ...(confidential ? authenticationMetadata(app, app.tenant === undefined) : { token_endpoint_auth_method: 'none' }),
    grant_types: confidential ? ['authorization_code', 'refresh_token'] : ['authorization_code'],
    response_types: ['code'],
    redirect_uris: app.redirectUris,
    post_logout_redirect_uris: app.postLogoutRedirectUris ?? [],
    ...(app.backchannelLogoutUri ? { backchannel_logout_uri: app.backchannelLogoutUri } : {}),
    // Logout tokens name the session (`sid`), as discovery says; ID tokens do too (engine/patches.ts).
    backchannel_logout_session_required: true,
    // RFC 9449 §5.2: an app that must use DPoP; the engine refuses its token requests without a proof.
    dpop_bound_access_tokens: app.dpop === 'required' || highSecurity,
    ...profileMetadata(highSecurity),
    // The engine refuses custom schemes for web clients; our policy has already vetted each URI.
    application_type: app.redirectUris.every((uri) => /^https?:/i.test(uri)) ? 'web' : 'native',
    id_token_signed_response_alg: app.idTokenSigningAlg,
    pkce_enabled: app.pkceEnabled || highSecurity,
    first_party: app.firstParty,
    ...(app.tenant ? { tenant: app.tenant } : {}),
    open_to_all_tenants: app.openToAllTenants === true,
    resource_server: app.resourceServer === true,
    // RFC 9126 §6: the engine then refuses an authorization request that was not pushed.
    require_pushed_authorization_requests: app.requirePushedAuthorizationRequests === true || highSecurity,
  };
}

/**
 * The engine's `Client` model adapter: clients are our records, read on every request so that a
 * rotated secret or a deleted client stops working at once on every instance.
 */
export class ClientDirectory implements EngineAdapter {
  constructor(
    private readonly records: RecordStore,
    /**
     * The security profile a tenant puts its clients under, read with each client (a tenant's
     * switch applies at its clients' next request, on every instance).
     */
    private readonly tenantProfile?: (tenant: string) => Promise<SecurityProfile>,
  ) {}

  /** Clients name no grant. */
  readonly readsWithGrant = false;

  async findWithGrant(id: string): Promise<{ entry: EnginePayload | undefined; grant: EnginePayload | undefined }> {
    return { entry: await this.find(id), grant: undefined };
  }

  async find(id: string): Promise<EnginePayload | undefined> {
    // Client IDs are UUIDs: anything else is unknown without a store round trip.
    if (!UUID.test(id)) return undefined;
    // Both reads at once (one pipelined round trip): an ID is one kind or the other.
    const [record, app] = await Promise.all([
      this.records.get<StoredClientConfiguration>(CLIENT_CONFIGURATION, id),
      this.records.get<StoredAppRegistration>(APP_REGISTRATION, id),
    ]);
    if (record) return clientConfigurationMetadata(record, await this.tenantProfile?.(record.tenant));
    if (!app) return undefined;
    return appRegistrationMetadata(app, app.tenant === undefined ? undefined : await this.tenantProfile?.(app.tenant));
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

  async consumeCompleting(): Promise<boolean> {
    return false;
  }

  async unconsume(): Promise<void> {}

  async confirm(): Promise<boolean> {
    return false;
  }

  async markReplayed(): Promise<void> {}

  async consumption(): Promise<undefined> {
    return undefined;
  }


  async destroy(): Promise<void> {}

  async revokeByGrantId(): Promise<void> {}
}

/**
 * The engine's own rules for an app's metadata (its URIs, its ID-token algorithm), checked when the
 * app is registered or changed: an engine refusal becomes our ValidationError at the field.
 * `idTokenAlgorithms`: the algorithms the server has a key for, named when an app asks for another.
 */
export function engineAppCheck(
  provider: { Client: { validate(metadata: never): Promise<unknown> } },
  idTokenAlgorithms: readonly string[],
): (app: StoredAppRegistration) => Promise<void> {
  return async (app) => {
    try {
      await provider.Client.validate(appRegistrationMetadata(app) as never);
    } catch (error) {
      const description = (error as { error_description?: string }).error_description ?? 'invalid app registration';
      const fields: Array<[string, string]> = [
        ['redirect_uris', 'redirectUris'],
        ['post_logout_redirect_uris', 'postLogoutRedirectUris'],
        ['backchannel_logout_uri', 'backchannelLogoutUri'],
        ['id_token_signed_response_alg', 'idTokenSigningAlg'],
        ['jwks_uri', 'jwksUri'],
        ['jwks', 'jwks'],
      ];
      const field = fields.find(([engine]) => description.startsWith(engine))?.[1] ?? 'appRegistration';
      if (field === 'idTokenSigningAlg') {
        // The engine says only what it takes; the host's idTokenAlgorithms option is what widens it.
        throw new ValidationError(field, `the server has no key for ${app.idTokenSigningAlg}: it signs ID tokens with `
          + `${idTokenAlgorithms.join(', ')} (the host lists more in its idTokenAlgorithms option)`);
      }
      throw new ValidationError(field, description);
    }
  };
}
