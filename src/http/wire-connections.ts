import { z } from 'zod';
import { ValidationError } from '../../policies/errors.js';
import { CONNECTION_FIELDS, type Connection, type ConnectionInput, type ConnectionPatch as LibraryConnectionPatch } from '../federation/connections.js';
import { parseWire, WIRE_SCHEMAS } from './wire.js';

/*
 * THE CONNECTIONS ON THE WIRE (management API `{api}/connections`, the CLI's `--json`): a tenant's
 * identity providers in snake_case, with the limits of the records (src/federation/connections.ts)
 * stated once. The client secret is write-only: it goes in, and only `has_client_secret` comes out.
 * Registered in WIRE_SCHEMAS, so they are the OpenAPI document's schemas.
 */

function named<T extends z.ZodType>(id: string, schema: T, description?: string): T {
  const described = (description ? schema.meta({ description }) : schema) as T;
  WIRE_SCHEMAS.add(described, { id });
  return described;
}

const timestamp = z.iso.datetime().meta({ description: 'ISO 8601, UTC.' });

const connectionFields = {
  name: CONNECTION_FIELDS.name.meta({ description: 'Shown on the sign-in page: "Continue with <name>".' }),
  issuer: CONNECTION_FIELDS.issuer.meta({
    description: "The provider's issuer identifier, exactly as its discovery document names it (`{issuer}/.well-known/openid-configuration`): "
      + 'https on port 443 to a public host name; no IP address, no single-label, special-use or private name, no credentials, '
      + 'query or fragment. The addresses it resolves to are checked again at every request.',
  }),
  client_id: CONNECTION_FIELDS.clientId.meta({ description: 'Our client ID at the provider.' }),
  client_secret: CONNECTION_FIELDS.clientSecret.meta({
    description: 'Our client secret at the provider: stored sealed, never shown again (`has_client_secret` says there is one). '
      + 'Needed by `client_secret_basic` and `client_secret_post`, refused with `private_key_jwt`. In a patch: replaces it; `""` removes it.',
  }),
  token_endpoint_auth_method: CONNECTION_FIELDS.tokenEndpointAuthMethod.meta({
    description: 'How we authenticate at its token endpoint. Default `client_secret_basic` with a secret, `private_key_jwt` '
      + '(our signing key, published at our `jwks_uri`) without.',
  }),
  scopes: CONNECTION_FIELDS.scopes.meta({ description: 'The scopes asked of the provider; `openid` is always added first. Default `openid email profile`.' }),
  domains: CONNECTION_FIELDS.domains.meta({
    description: 'The email domains the connection owns (home-realm discovery; an identity it vouches for must have an address at one '
      + 'of them). Public domain names, each owned by one connection of one tenant; never a mailbox provider\'s shared domain '
      + '(gmail.com, outlook.com, ...). A domain another connection owns is 400 naming it (`domains.<i>`).',
  }),
  claim_mapping: CONNECTION_FIELDS.claimMapping.meta({
    description: "Our claim → the provider's claim that holds it, e.g. `{ \"email\": \"upn\" }`. Keys: `sub`, `email`, "
      + '`email_verified`, `name`, `given_name`, `family_name`, `preferred_username`, `locale`.',
  }),
  sign_out_upstream: CONNECTION_FIELDS.signOutUpstream.meta({
    description: 'Whether signing out of our server also signs the user out at the provider (when its discovery has an end-session endpoint). Default false.',
  }),
  mfa_acr_values: CONNECTION_FIELDS.mfaAcrValues.meta({
    description: "The provider's `acr` values that mean a multi-factor sign-in there (besides `amr` holding `mfa`). Default none.",
  }),
};

/** Wire field → library field. */
const FIELD_NAMES = {
  name: 'name',
  issuer: 'issuer',
  client_id: 'clientId',
  client_secret: 'clientSecret',
  token_endpoint_auth_method: 'tokenEndpointAuthMethod',
  scopes: 'scopes',
  domains: 'domains',
  claim_mapping: 'claimMapping',
  sign_out_upstream: 'signOutUpstream',
  mfa_acr_values: 'mfaAcrValues',
} as const satisfies Record<keyof typeof connectionFields, keyof ConnectionInput>;

const { client_secret: secretField, ...createFields } = connectionFields;

export const ConnectionCreate = named('ConnectionCreate', z.strictObject({
  ...createFields,
  client_secret: secretField.min(1, 'must not be empty').optional(),
  token_endpoint_auth_method: connectionFields.token_endpoint_auth_method.optional(),
  scopes: connectionFields.scopes.optional(),
  claim_mapping: connectionFields.claim_mapping.optional(),
  sign_out_upstream: connectionFields.sign_out_upstream.optional(),
  mfa_acr_values: connectionFields.mfa_acr_values.optional(),
}), "A connection to one of the caller's tenant's identity providers. The tenant is the caller's and cannot be chosen (`tenant` is an unknown field).");

export const ConnectionPatch = named('ConnectionPatch', z.strictObject(connectionFields).partial(),
  'Changes the fields sent (a list is replaced whole); `client_secret` replaces the secret, `""` removes it. The tenant never changes.');

export const ConnectionBody = named('Connection', z.strictObject({
  id: z.uuid(),
  tenant: z.string(),
  name: z.string(),
  issuer: z.string(),
  client_id: z.string(),
  token_endpoint_auth_method: CONNECTION_FIELDS.tokenEndpointAuthMethod,
  has_client_secret: z.boolean().meta({ description: 'Whether a client secret is kept (sealed): the secret itself is never shown.' }),
  scopes: z.array(z.string()).meta({ description: '`openid` first.' }),
  domains: z.array(z.string()).meta({ description: 'Lower case, IDNs in their ASCII form, no trailing dot.' }),
  verified_domains: z.array(z.string()).meta({
    description: 'The domains of `domains` the platform operator verified. A domain a tenant names is unverified: it leads only '
      + "the users of the tenant's own apps to the provider (home-realm discovery), never users of the platform's apps, and the "
      + 'operator may give it to the organisation that proves it owns it. Ask the operator to verify a domain.',
  }),
  claim_mapping: z.record(z.string(), z.string()),
  sign_out_upstream: z.boolean(),
  mfa_acr_values: z.array(z.string()),
  redirect_uri: z.url().meta({
    description: "Our redirect URI for this connection, to register at the provider: `{baseUrl}{pathPrefix}/oauth2/federation/callback/{id}`. "
      + "Each connection has its own, known once it exists (create the connection, then register this URI at the provider): "
      + "a provider's answer is taken only at the callback of the connection its sign-in was sent to.",
  }),
  created_at: timestamp,
  updated_at: timestamp,
}), "One of the tenant's identity providers, never with its secret.");

export const ConnectionList = named('ConnectionList', z.strictObject({
  connections: z.array(ConnectionBody).meta({ description: "The caller's tenant's connections, oldest first." }),
}));

/** The library's fields of a wire body (its keys checked by the schema before). */
function libraryFields(wire: Record<string, unknown>): Record<string, unknown> {
  return Object.fromEntries(Object.entries(wire).map(([field, value]) => [FIELD_NAMES[field as keyof typeof FIELD_NAMES], value]));
}

/** A connection to create, from its wire form, in the caller's tenant. */
export function connectionInput(body: Record<string, unknown>, tenant: string): ConnectionInput {
  return { ...libraryFields(parseWire(ConnectionCreate, body, 'connection')), tenant } as ConnectionInput;
}

/** A connection change, from its wire form. */
export function connectionPatch(body: Record<string, unknown>): LibraryConnectionPatch {
  return libraryFields(parseWire(ConnectionPatch, body, 'patch')) as LibraryConnectionPatch;
}

/**
 * A connection on the wire: the management API's answer (never its secret). `redirect_uri` is there
 * whenever the server's URL is known (always in the management API; the CLI, working on the store
 * alone, knows it only when given `--base-url`).
 */
export function connectionWire(connection: Connection): Omit<z.output<typeof ConnectionBody>, 'redirect_uri'> & { redirect_uri?: string } {
  return {
    id: connection.id,
    tenant: connection.tenant,
    name: connection.name,
    issuer: connection.issuer,
    client_id: connection.clientId,
    token_endpoint_auth_method: connection.tokenEndpointAuthMethod,
    has_client_secret: connection.hasClientSecret,
    scopes: connection.scopes,
    domains: connection.domains,
    verified_domains: connection.verifiedDomains,
    claim_mapping: connection.claimMapping as Record<string, string>,
    sign_out_upstream: connection.signOutUpstream,
    mfa_acr_values: connection.mfaAcrValues,
    ...(connection.redirectUri !== undefined ? { redirect_uri: connection.redirectUri } : {}),
    created_at: connection.createdAt,
    updated_at: connection.updatedAt,
  };
}

/**
 * A library error about a connection with the wire's field name (`clientId` → `client_id`,
 * `claimMapping.email` → `claim_mapping.email`); other errors as they are.
 */
export function connectionWireError(error: unknown): unknown {
  if (!(error instanceof ValidationError)) return error;
  const [head, ...rest] = error.field.split('.');
  const wire = Object.entries(FIELD_NAMES).find(([, name]) => name === head)?.[0];
  if (wire === undefined || wire === head) return error;
  return new ValidationError([wire, ...rest].join('.'), error.description.slice(error.field.length + 2));
}
