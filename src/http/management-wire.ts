import type { AppRegistration, AppRegistrationInput } from '../records/app-registrations.js';
import type { ClientConfiguration, ClientConfigurationInput } from '../records/client-configurations.js';
import { ValidationError } from '../../policies/errors.js';

/* The management API speaks snake_case; the library speaks camelCase. One table per record. */

type Wire = Record<string, unknown>;

const CLIENT_FIELDS = { name: 'name', category: 'category', description: 'description', resources: 'resources' } as const;
const APP_FIELDS = {
  name: 'name',
  description: 'description',
  redirect_uris: 'redirectUris',
  client_type: 'clientType',
  pkce_enabled: 'pkceEnabled',
  id_token_signed_response_alg: 'idTokenSigningAlg',
} as const;

function rename(body: Wire, fields: Record<string, string>, refused: Record<string, string> = {}): Wire {
  const result: Wire = {};
  for (const [wire, value] of Object.entries(body)) {
    // Own keys only: `constructor` or `__proto__` must not find Object's.
    if (Object.hasOwn(refused, wire)) throw new ValidationError(wire, refused[wire]!);
    const name = Object.hasOwn(fields, wire) ? fields[wire] : undefined;
    if (!name) throw new ValidationError(wire, 'unknown field');
    result[name] = value;
  }
  return result;
}

/** Field names in errors are the wire's: `redirectUris.1` becomes `redirect_uris.1`. */
export function wireField(field: string): string {
  const [head, ...rest] = field.split('.');
  const wire = Object.entries(APP_FIELDS).find(([, name]) => name === head)?.[0] ?? head;
  return [wire, ...rest].join('.');
}

export function clientInput(body: Wire, tenant: string): ClientConfigurationInput {
  return { ...rename(body, CLIENT_FIELDS), tenant } as unknown as ClientConfigurationInput;
}

export function clientPatch(body: Wire): Partial<ClientConfigurationInput> {
  return rename(body, CLIENT_FIELDS) as Partial<ClientConfigurationInput>;
}

const OPERATOR_ONLY = {
  first_party: 'only the platform operator can mark an app first-party',
  open_to_all_tenants: 'only the platform operator can open an app to all tenants',
};

export function appInput(body: Wire, tenant: string): AppRegistrationInput {
  return { ...rename(body, APP_FIELDS, OPERATOR_ONLY), tenant } as unknown as AppRegistrationInput;
}

export function appPatch(body: Wire): Partial<AppRegistrationInput> {
  return rename(body, APP_FIELDS, OPERATOR_ONLY) as Partial<AppRegistrationInput>;
}

export function clientWire(client: ClientConfiguration & { clientSecret?: string }): Wire {
  return {
    client_id: client.clientId,
    tenant: client.tenant,
    name: client.name,
    category: client.category,
    ...(client.description ? { description: client.description } : {}),
    resources: client.resources,
    created_at: client.createdAt,
    updated_at: client.updatedAt,
    ...(client.clientSecret ? { client_secret: client.clientSecret } : {}),
  };
}

export function appWire(app: AppRegistration & { clientSecret?: string }): Wire {
  return {
    client_id: app.clientId,
    name: app.name,
    ...(app.description ? { description: app.description } : {}),
    redirect_uris: app.redirectUris,
    client_type: app.clientType,
    pkce_enabled: app.pkceEnabled,
    id_token_signed_response_alg: app.idTokenSigningAlg,
    first_party: app.firstParty,
    ...(app.tenant ? { tenant: app.tenant } : {}),
    open_to_all_tenants: app.openToAllTenants,
    created_at: app.createdAt,
    updated_at: app.updatedAt,
    ...(app.clientSecret ? { client_secret: app.clientSecret } : {}),
  };
}
