import { z } from 'zod';
import { ValidationError } from '../../policies/errors.js';
import { CLIENT_CREDENTIALS_ACCESS_TOKEN_SECONDS, NAMED_USER_ACCESS_TOKEN } from '../../policies/lifetimes.js';
import { MANAGEMENT_SCOPE } from '../../policies/management.js';
import type { SecondFactorRuling, TenantSecondFactorSettings } from '../../policies/second-factor-rule.js';
import { SECOND_FACTOR_RULES, SSO_RULES } from '../../policies/tenant-policy.js';
import { SECURITY_PROFILE, type SecurityProfile } from '../../policies/high-security.js';
import { AUDIT_EVENT_TYPES, type AuditEvent } from '../audit/trail.js';
import { GRANTS } from '../grants/index.js';
import type { AppRegistration, AppRegistrationInput } from '../records/app-registrations.js';
import { APP_REGISTRATION_FIELDS } from '../records/app-registrations.js';
import type { ClientConfiguration, ClientConfigurationInput } from '../records/client-configurations.js';
import { CLIENT_CONFIGURATION_FIELDS, DPOP_RULE, RESOURCES_SCHEMA } from '../records/client-configurations.js';
import { CLIENT_ASSERTION_ALGS, CLIENT_AUTHENTICATION_FIELDS, MAX_CLIENT_KEYS } from '../../policies/client-keys.js';
import type { Consent } from '../records/consents.js';
import type { FactorListEntry } from '../factors/index.js';

/*
 * THE WIRE: the JSON shapes of the management and consent APIs (snake_case), of our error bodies,
 * and of the token endpoint's requests and answers, as zod schemas. The same schemas validate what
 * comes in (parseWire), type what goes out (the *Wire converters), and are the schemas of the
 * OpenAPI document (src/http/openapi.ts renders WIRE_SCHEMAS as JSON Schema). Field limits are
 * the records' own (src/records), so a limit is stated once.
 */

/** Every named schema of the wire, by its name in the OpenAPI document. */
export const WIRE_SCHEMAS = z.registry<{ id: string }>();

function named<T extends z.ZodType>(id: string, schema: T, description?: string): T {
  // The description is metadata of the schema itself (the JSON Schema output reads it there).
  const described = (description ? schema.meta({ description }) : schema) as T;
  WIRE_SCHEMAS.add(described, { id });
  return described;
}

const timestamp = z.iso.datetime().meta({ description: 'ISO 8601, UTC.' });
const clientId = z.uuid();

export const OAuthErrorBody = named('OAuthError', z.object({
  error: z.string(),
  error_description: z.string(),
}), 'RFC 6749 §5.2 error body. `error_description` is for humans and may change: match on `error`.');

export const ManagementErrorBody = named('ManagementError', OAuthErrorBody.extend({
  field: z.string().optional().meta({ description: 'Dotted wire path of the invalid field, e.g. `resources.scim.scopes` or `redirect_uris.1`.' }),
}), 'An error of the management API; a validation failure names the offending wire field.');

export const ClientSecret = named('ClientSecret', z.string().regex(/^[A-Za-z0-9_-]{43}$/),
  '256 random bits, base64url. Stored only as a digest: it can never be read back.');

export const NewSecret = named('NewSecret', z.strictObject({ client_id: clientId, client_secret: ClientSecret }),
  'The new secret; the previous one stops working at once, on every instance.');

/** The wire description of a record's `profile` field, with what the high-security profile requires of that kind. */
function profileDescription(requires: string): string {
  return 'The security profile (docs/high-security.md): `high-security` puts the client under what the FAPI 2.0 Security Profile '
    + `asks of an authorization server: ${requires}, and codes that live 60 s; a setting it does not allow is refused (400 with `
    + '`field`). `standard` (the default) leaves it to the other fields, unless the tenant selected the high-security profile.';
}

// --- Client authentication (both record kinds) ------------------------------------------------

export const TokenEndpointAuthMethod = named('TokenEndpointAuthMethod', CLIENT_AUTHENTICATION_FIELDS.tokenEndpointAuthMethod,
  'How the client authenticates at the token endpoint: `client_secret_basic` (the default), with the secret we generate, '
    + 'in HTTP Basic; `private_key_jwt` (RFC 7523), with an assertion signed by its own private key, checked with the public '
    + 'keys it registered (`jwks` or `jwks_uri`, exactly one). A private_key_jwt client has no secret.');

export const ClientJwks = named('ClientJwks', CLIENT_AUTHENTICATION_FIELDS.jwks.meta({
  examples: [{ keys: [{ kty: 'EC', crv: 'P-256', kid: 'k1', alg: 'ES256', use: 'sig', x: 'f83OJ3D2xF1Bg8vub9tLe1gHMzV76e8Tus9uPHvRVEU', y: 'x_FEzRu9m36HLN_tue659LNpXW6pCyStikYjKIWI5a0' }] }],
}),
`A private_key_jwt client's public keys (RFC 7517 JWK Set): 1 to ${MAX_CLIENT_KEYS} keys, RSA (at least 2048 bits; RS256, PS256), `
  + 'EC P-256 (ES256) or OKP Ed25519 (EdDSA), for signing; a `kid` on each when there are several (unique). Public keys '
  + 'only: a private member (`d`, `p`, `q`, `dp`, `dq`, `qi`, `oth`, `k`) is refused (400 naming `jwks.keys.<index>`). '
  + 'Keys are replaced whole: to rotate without downtime, send the old and the new key, then, once the client signs with '
  + 'the new one, the new key alone.');

export const ClientJwksUri = named('ClientJwksUri', CLIENT_AUTHENTICATION_FIELDS.jwksUri,
  "Where our server fetches a private_key_jwt client's public keys: https on port 443 to a public host name (no IP "
    + 'address, no single-label, special-use or private name); fetched with a timeout and a size limit, and the addresses '
    + 'it resolves to are checked again at each fetch.');

const authenticationFields = {
  token_endpoint_auth_method: TokenEndpointAuthMethod.optional(),
  jwks: ClientJwks.optional(),
  jwks_uri: ClientJwksUri.optional(),
};

/** Wire field → library field, for the authentication fields of both record kinds. */
const AUTHENTICATION_FIELD_NAMES = {
  token_endpoint_auth_method: 'tokenEndpointAuthMethod',
  jwks: 'jwks',
  jwks_uri: 'jwksUri',
} as const;

/** The authentication of a record on the wire: the method, and the public keys or their URL; nothing for a public app. */
function authenticationWire(record: { tokenEndpointAuthMethod?: 'client_secret_basic' | 'private_key_jwt' | undefined; jwks?: Wire<typeof ClientJwks> | undefined; jwksUri?: string | undefined }): {
  token_endpoint_auth_method?: Wire<typeof TokenEndpointAuthMethod>; jwks?: Wire<typeof ClientJwks>; jwks_uri?: string;
} {
  return {
    ...(record.tokenEndpointAuthMethod ? { token_endpoint_auth_method: record.tokenEndpointAuthMethod } : {}),
    ...(record.jwks ? { jwks: record.jwks } : {}),
    ...(record.jwksUri ? { jwks_uri: record.jwksUri } : {}),
  };
}

// --- Client configurations -------------------------------------------------------------------

export const Resources = named('Resources', RESOURCES_SCHEMA.meta({
  examples: [{ scim: { scopes: ['scim.read'], constraints: { group: ['engineering'] } } }],
}),
'The APIs the client may call, by API id of the catalog: the scopes assigned (at least one, only scopes that API '
  + 'defines) and optional data filters (`constraints`: per dimension the API declares, a non-empty list of allowed '
  + 'values). At least one API.');

const clientFields = {
  name: CLIENT_CONFIGURATION_FIELDS.name.meta({ description: 'Shown to administrators.' }),
  category: CLIENT_CONFIGURATION_FIELDS.category.meta({ description: 'Free-form grouping, e.g. `payroll`.' }),
  description: CLIENT_CONFIGURATION_FIELDS.description,
  resources: Resources,
  ...authenticationFields,
  dpop: CLIENT_CONFIGURATION_FIELDS.dpop.meta({ description: 'DPoP (RFC 9449): `required`, every token request must carry a DPoP proof and every access token is bound to its key; `optional` (the default), a token is bound when its request carries a proof.' }),
  profile: CLIENT_CONFIGURATION_FIELDS.profile.meta({ description: profileDescription('private_key_jwt and `dpop: required`') }),
};

export const ClientConfigurationCreate = named('ClientConfigurationCreate', z.strictObject(clientFields),
  "The tenant is the caller's and cannot be chosen (`tenant` is an unknown field). `client_secret_basic` (the default) "
    + 'answers a new `client_secret`; `private_key_jwt` needs `jwks` or `jwks_uri` and answers no secret.');

export const ClientConfigurationPatch = named('ClientConfigurationPatch', z.strictObject(clientFields).partial(),
  'Changes the fields sent; `description: ""` removes the description. The tenant never changes. `jwks` or `jwks_uri` '
    + 'replace the keys. `token_endpoint_auth_method: "private_key_jwt"` (with keys) deletes the secret; '
    + '`"client_secret_basic"` drops the keys and answers a new `client_secret`, the only time it is shown.');

export const ClientConfigurationBody = named('ClientConfiguration', z.strictObject({
  client_id: clientId,
  tenant: z.string(),
  name: z.string(),
  category: z.string(),
  description: z.string().optional().meta({ description: 'Absent when empty.' }),
  resources: Resources,
  token_endpoint_auth_method: TokenEndpointAuthMethod,
  jwks: ClientJwks.optional().meta({ description: 'A private_key_jwt client\'s public keys, when registered by value.' }),
  jwks_uri: z.string().optional().meta({ description: 'Where a private_key_jwt client\'s public keys are fetched, when registered by URL.' }),
  dpop: DPOP_RULE.optional().meta({ description: 'Absent: optional.' }),
  profile: SECURITY_PROFILE.optional().meta({ description: 'The client\'s own profile; absent: standard.' }),
  created_at: timestamp,
  updated_at: timestamp,
  client_secret: ClientSecret.optional().meta({
    description: 'Only in the answer that creates a client_secret_basic client or turns a private_key_jwt one back to '
      + '`client_secret_basic`: the only time it is shown.',
  }),
}));

export const ClientConfigurationCreated = named('ClientConfigurationCreated', ClientConfigurationBody.extend({}),
  'The new record and, for a client_secret_basic client, its secret: the only time the secret is shown.');

export const ClientConfigurationList = named('ClientConfigurationList', z.strictObject({
  client_configurations: z.array(ClientConfigurationBody).meta({ description: 'Oldest first.' }),
}));

// --- App registrations -----------------------------------------------------------------------

const appFields = {
  name: APP_REGISTRATION_FIELDS.name.meta({ description: 'Shown to users on the consent page.' }),
  description: APP_REGISTRATION_FIELDS.description,
  redirect_uris: APP_REGISTRATION_FIELDS.redirectUris.meta({
    description:
      'Exact redirect URIs: no fragment, wildcard, whitespace, backslash, `.`/`..` segment; https, or http only for '
      + 'loopback hosts; never `javascript:`, `data:`, `file:`, `blob:`, `vbscript:`. At use a URI must equal one '
      + 'of these strings exactly.',
  }),
  client_type: APP_REGISTRATION_FIELDS.clientType,
  pkce_enabled: APP_REGISTRATION_FIELDS.pkceEnabled.meta({
    description: 'Always true for public apps. A confidential app may turn PKCE off only when every redirect URI is https. Default true.',
  }),
  id_token_signed_response_alg: APP_REGISTRATION_FIELDS.idTokenSigningAlg.meta({
    description: 'Default RS256. One the server has a key for: its discovery document lists them in '
      + '`id_token_signing_alg_values_supported` (the host widens the list with its `idTokenAlgorithms` option); another is refused.',
  }),
  post_logout_redirect_uris: APP_REGISTRATION_FIELDS.postLogoutRedirectUris.optional().meta({
    description: 'Where a sign-out the app starts may send the browser back (RP-Initiated Logout): the redirect-URI rules, '
      + 'matched exactly. Default none.',
  }),
  backchannel_logout_uri: APP_REGISTRATION_FIELDS.backchannelLogoutUri.optional().meta({
    description: 'The app\'s back-channel logout endpoint: it receives a signed logout token (with the session\'s `sid`) '
      + 'when its user signs out. https on port 443 to a public host name: no IP address, no single-label, special-use '
      + 'or private name (localhost, .local, .internal, .arpa, .test, .corp, .lan, ...); the addresses it resolves to '
      + 'are checked again at each delivery. `""` in a patch removes it.',
  }),
  ...authenticationFields,
  dpop: APP_REGISTRATION_FIELDS.dpop.optional().meta({ description: 'DPoP (RFC 9449): `required`, every token request must carry a DPoP proof and every access token is bound to its key; `optional` (the default), a token is bound when its request carries a proof.' }),
  require_pushed_authorization_requests: APP_REGISTRATION_FIELDS.requirePushedAuthorizationRequests.meta({
    description: 'The app must push its authorization requests (RFC 9126, `POST /oauth2/par`); a plain authorization '
      + 'request of it is refused with `invalid_request`. Default false.',
  }),
  profile: APP_REGISTRATION_FIELDS.profile.meta({
    description: profileDescription('a confidential app with private_key_jwt, `dpop: required`, `require_pushed_authorization_requests: true`, PKCE and https redirect URIs'),
  }),
};

/** Wire field → library field, for the fields the API takes. */
const APP_FIELD_NAMES = {
  name: 'name',
  description: 'description',
  redirect_uris: 'redirectUris',
  client_type: 'clientType',
  pkce_enabled: 'pkceEnabled',
  id_token_signed_response_alg: 'idTokenSigningAlg',
  post_logout_redirect_uris: 'postLogoutRedirectUris',
  backchannel_logout_uri: 'backchannelLogoutUri',
  dpop: 'dpop',
  require_pushed_authorization_requests: 'requirePushedAuthorizationRequests',
  profile: 'profile',
  ...AUTHENTICATION_FIELD_NAMES,
} as const satisfies Record<keyof typeof appFields, keyof AppRegistrationInput>;

/** Fields of an app that only the operator sets (through the library or the CLI), never a tenant. */
const OPERATOR_ONLY: Readonly<Record<string, string>> = {
  first_party: 'only the platform operator can mark an app first-party',
  open_to_all_tenants: 'only the platform operator can open an app to all tenants',
  resource_server: 'only the platform operator can let an app introspect every tenant\'s tokens',
};

export const AppRegistrationCreate = named('AppRegistrationCreate', z.strictObject(appFields),
  '`first_party`, `open_to_all_tenants` and `resource_server` can be set only by the platform operator (400 with `field`).');

export const AppRegistrationPatch = named('AppRegistrationPatch', z.strictObject(appFields).partial(),
  'Changes the fields sent; `description: ""` removes it. A type change starts from the new type\'s defaults (PKCE '
    + 'back on, `client_secret_basic`); public → confidential answers a new `client_secret`, confidential → public deletes '
    + 'the secret and the keys. `jwks` or `jwks_uri` replace the keys; `token_endpoint_auth_method: "private_key_jwt"` '
    + '(with keys) deletes the secret, `"client_secret_basic"` drops the keys and answers a new `client_secret`.');

export const AppRegistrationBody = named('AppRegistration', z.strictObject({
  client_id: clientId,
  name: z.string(),
  description: z.string().optional().meta({ description: 'Absent when empty.' }),
  redirect_uris: z.array(z.string()),
  client_type: APP_REGISTRATION_FIELDS.clientType,
  pkce_enabled: z.boolean(),
  id_token_signed_response_alg: z.enum(['RS256', 'PS256', 'ES256', 'EdDSA']),
  first_party: z.boolean().meta({ description: "A platform-owned app: its users' tokens may list and revoke all of their consents." }),
  tenant: z.string().optional().meta({ description: 'The tenant that registered the app (apps registered through this API): only its users may authorize it.' }),
  open_to_all_tenants: z.boolean().meta({ description: "Set by the platform operator only: users of every tenant may authorize this tenant's app." }),
  resource_server: z.boolean().meta({ description: "Set by the platform operator only: an operator's app that may introspect every tenant's access tokens." }),
  post_logout_redirect_uris: z.array(z.string()),
  backchannel_logout_uri: z.string().optional(),
  token_endpoint_auth_method: TokenEndpointAuthMethod.optional().meta({ description: 'Confidential apps only (a public app does not authenticate).' }),
  jwks: ClientJwks.optional().meta({ description: 'A private_key_jwt app\'s public keys, when registered by value.' }),
  jwks_uri: z.string().optional().meta({ description: 'Where a private_key_jwt app\'s public keys are fetched, when registered by URL.' }),
  dpop: DPOP_RULE.optional().meta({ description: 'Absent: optional.' }),
  require_pushed_authorization_requests: z.boolean().meta({ description: 'Only pushed authorization requests (RFC 9126) are taken from the app.' }),
  profile: SECURITY_PROFILE.optional().meta({ description: 'The app\'s own profile; absent: standard.' }),
  created_at: timestamp,
  updated_at: timestamp,
  client_secret: ClientSecret.optional().meta({
    description: 'Only in the answer that creates a confidential client_secret_basic app, turns a public one confidential, '
      + 'or turns a private_key_jwt app back to `client_secret_basic`: the only time it is shown.',
  }),
}));

export const AppRegistrationList = named('AppRegistrationList', z.strictObject({
  app_registrations: z.array(AppRegistrationBody).meta({ description: "The apps registered by the caller's tenant, oldest first." }),
}));

export const PlatformAppBody = named('PlatformApp', z.strictObject({
  client_id: clientId,
  name: z.string(),
  description: z.string().optional().meta({ description: 'Absent when empty.' }),
  client_type: APP_REGISTRATION_FIELDS.clientType,
  first_party: z.boolean().meta({ description: "One of the platform's own apps (e.g. this portal)." }),
  registered_by: z.enum(['platform', 'another_tenant']).meta({
    description: '`platform`: an app of the operator (it serves every tenant); `another_tenant`: an app of another tenant that the operator opened to all tenants.',
  }),
  redirect_uris: z.array(z.string()),
}), "An app the caller's tenant did not register that its users may authorize: read-only, never a secret.");

export const PlatformAppList = named('PlatformAppList', z.strictObject({
  platform_apps: z.array(PlatformAppBody).meta({
    description: "The apps that serve the caller's tenant besides its own: the operator's, and other tenants' apps the operator opened to all, "
      + "less those the tenant's policy does not allow (`allowedApps`). What the authorization endpoint lets the tenant's users authorize.",
  }),
}));

// --- Sign-in holds ---------------------------------------------------------------------------

export const SignInUnlockRequestBody = named('SignInUnlockRequest', z.strictObject({
  username: z.string().min(1, 'must not be empty').max(200).meta({ description: 'As the user types it on the sign-in page; the AccountStore\'s `findByUsername` decides whose it is.' }),
}), "A user of the caller's tenant held by sign-in throttling.");

export const SignInUnlockResponseBody = named('SignInUnlockResponse', z.strictObject({
  unlocked: z.boolean().meta({
    description: '`true`: failed sign-ins were counted for the user, now cleared. `false`: none were, or the username is not one '
      + "of the caller's tenant's users (answered alike: nobody learns of another tenant's users).",
  }),
}));

// --- Tenant settings ---------------------------------------------------------------------------

const secondFactorField = z.enum(SECOND_FACTOR_RULES).meta({
  description: 'Who signs in with a second factor: `optional` (nobody is made to), `required_for_permissions` (users who hold a '
    + 'management permission), `required` (everyone).',
});

const ssoField = z.enum(SSO_RULES).meta({
  description: 'Enterprise sign-in: `required` refuses the passwords of the tenant\'s users while it has a connection (they sign in '
    + 'through their organisation\'s identity provider); `optional` offers both.',
});

const profileField = SECURITY_PROFILE.meta({
  description: 'The security profile of the tenant\'s clients (docs/high-security.md): `high-security` puts every client configuration '
    + 'and app of the tenant under it (a switch is refused, naming them, while one does not conform); `standard` leaves it to each client.',
});

export const TenantSettingsUpdate = named('TenantSettingsUpdate', z.strictObject({
  second_factor: secondFactorField.optional().meta({ description: 'The tenant\'s rule; absent: no choice (the host\'s applies).' }),
  passkey_only_sign_in: z.boolean().optional().meta({ description: 'Whether users may sign in with a passkey alone; absent: no choice.' }),
  sso: ssoField.optional().meta({ description: 'Whether users must sign in through the tenant\'s identity provider; absent: no choice.' }),
  profile: profileField.optional().meta({ description: 'The tenant\'s clients\' security profile; absent: no choice.' }),
}), "The caller's tenant's own settings, whole (a field left out is no choice). What applies combines them with the host's policy: "
  + 'the stricter second-factor rule wins (a tenant can ask for more than the host, never less), passkey-only sign-in needs '
  + 'the host not to forbid it, and SSO is required when either requires it.');

export const TenantSettingsBody = named('TenantSettings', z.strictObject({
  second_factor: secondFactorField.optional().meta({ description: 'The tenant\'s own rule, when it chose one.' }),
  passkey_only_sign_in: z.boolean().optional().meta({ description: 'The tenant\'s own choice, when it made one.' }),
  sso: ssoField.optional().meta({ description: 'The tenant\'s own SSO rule, when it chose one.' }),
  profile: profileField.optional().meta({ description: 'The tenant\'s own profile choice, when it made one.' }),
  effective: z.strictObject({
    second_factor: secondFactorField,
    passkey_only_sign_in: z.boolean(),
    sso: ssoField,
    profile: profileField.optional().meta({ description: '`high-security` when the tenant or the host selected it; absent: standard.' }),
  }).meta({ description: "What applies to the tenant's sign-ins: its settings combined with the host's policy." }),
}), "The caller's tenant's settings, and what applies.");

/** A tenant's settings, from the wire form of a PUT. */
export function tenantSettingsInput(body: Record<string, unknown>): TenantSecondFactorSettings {
  const input = parseWire(TenantSettingsUpdate, body, 'settings');
  return {
    ...(input.second_factor !== undefined ? { secondFactor: input.second_factor } : {}),
    ...(input.passkey_only_sign_in !== undefined ? { passkeyOnlySignIn: input.passkey_only_sign_in } : {}),
    ...(input.sso !== undefined ? { sso: input.sso } : {}),
    ...(input.profile !== undefined ? { profile: input.profile } : {}),
  };
}

/** A tenant's settings and what applies, on the wire. */
export function tenantSettingsWire(own: TenantSecondFactorSettings, effective: SecondFactorRuling, profile: SecurityProfile = 'standard'): Wire<typeof TenantSettingsBody> {
  return {
    ...(own.secondFactor !== undefined ? { second_factor: own.secondFactor } : {}),
    ...(own.passkeyOnlySignIn !== undefined ? { passkey_only_sign_in: own.passkeyOnlySignIn } : {}),
    ...(own.sso !== undefined ? { sso: own.sso } : {}),
    ...(own.profile !== undefined ? { profile: own.profile } : {}),
    effective: {
      second_factor: effective.secondFactor,
      passkey_only_sign_in: effective.passkeyOnlySignIn,
      sso: effective.sso,
      ...(profile === 'high-security' ? { profile } : {}),
    },
  };
}

/** A sign-in unlock request, from its wire form. */
export function signInUnlockInput(body: Record<string, unknown>): { username: string } {
  return parseWire(SignInUnlockRequestBody, body, 'username');
}

// --- A user's second factors -----------------------------------------------------------------

export const UserFactorBody = named('UserFactor', z.strictObject({
  id: z.string().meta({ description: "The factor's id: a passkey's credential ID, else an id made when the factor was added." }),
  type: z.enum(['passkey', 'totp', 'recovery_codes']).meta({ description: '`totp`: an authenticator app; `recovery_codes`: her set of recovery codes.' }),
  created_at: timestamp,
  label: z.string().optional().meta({ description: "The user's name for a passkey." }),
}), 'One second factor of a user: what it is and since when, never a secret, code, hash or key.');

export const UserFactorList = named('UserFactorList', z.strictObject({
  factors: z.array(UserFactorBody).meta({
    description: 'Her passkeys, then the authenticator app, then the recovery codes; empty when she holds none. A factor the '
      + 'host keeps itself (`accounts.secondFactor`) is not listed.',
  }),
  reset_requested: z.boolean().meta({ description: '`true` while a reset asked for is waiting for her next sign-in.' }),
}));

export const FactorResetRequestResponse = named('FactorResetRequestResponse', z.strictObject({
  reset_requested: z.boolean().meta({
    description: '`true`: at her next sign-in, after the password, she enrols anew and what she held goes (until then it still '
      + 'works). `false`: she holds no factor, so there is nothing to reset.',
  }),
}));

/** A user's factors on the wire (the CLI's `factors list --json` and the management API). */
export function userFactorsWire(factors: readonly FactorListEntry[], resetRequested: boolean): Wire<typeof UserFactorList> {
  return {
    factors: factors.map((factor) => ({
      id: factor.id,
      type: factor.type,
      created_at: factor.createdAt,
      ...(factor.label !== undefined ? { label: factor.label } : {}),
    })),
    reset_requested: resetRequested,
  };
}

/** An app that serves the caller's tenant, on the wire (nothing secret, nothing to edit). */
export function platformAppWire(app: AppRegistration): Wire<typeof PlatformAppBody> {
  return {
    client_id: app.clientId,
    name: app.name,
    ...(app.description ? { description: app.description } : {}),
    client_type: app.clientType,
    first_party: app.firstParty,
    registered_by: app.tenant === undefined ? 'platform' : 'another_tenant',
    redirect_uris: app.redirectUris,
  };
}

// --- Consents --------------------------------------------------------------------------------

export const ConsentScope = named('ConsentScope', z.strictObject({
  scope: z.string(),
  description: z.string().meta({ description: "The catalog's words for the scope." }),
  api: z.string().optional().meta({ description: 'The name of the API the scope belongs to (absent for OIDC scopes).' }),
}));

export const ConsentBody = named('Consent', z.strictObject({
  client_id: clientId,
  app_name: z.string().nullable().meta({ description: '`null` once the app has been deleted.' }),
  scopes: z.array(ConsentScope),
  created_at: timestamp,
  updated_at: timestamp,
}));

export const ConsentList = named('ConsentList', z.strictObject({
  consents: z.array(ConsentBody).meta({
    description:
      "Newest first. A first-party app's token sees all the caller's consents in the token's tenant; any other app's "
      + 'token sees only its own.',
  }),
}));

// --- The token endpoint ----------------------------------------------------------------------

/** What each token request parameter is, for the grants that take it (src/grants). */
const TOKEN_PARAMETERS: Record<string, z.ZodType> = {
  scope: z.string().meta({
    description: 'Space-separated. client_credentials: each assigned to the client (else `invalid_scope`); omitted, every '
      + 'assigned scope. refresh_token: may narrow the granted scopes, never widen them.',
  }),
  resource: z.string().meta({ format: 'uri', description: 'RFC 8707. The only resource is the audience of the platform APIs; any other is `invalid_target`.' }),
  client_id: z.string().meta({ description: 'Required without HTTP Basic (public apps); with Basic it must equal the Basic client ID.' }),
  code: z.string(),
  redirect_uri: z.string().meta({ description: 'Exactly the one of the authorization request.' }),
  code_verifier: z.string().regex(/^[A-Za-z0-9._~-]{43,128}$/).meta({
    description: 'PKCE (RFC 7636); required for public apps and when the code was issued with a challenge.',
  }),
  refresh_token: z.string(),
};

const GRANT_WORDS: Record<string, string> = {
  client_credentials: 'Machine-to-machine token. The client authenticates with HTTP Basic, or a private_key_jwt client '
    + 'with `client_assertion`.',
  authorization_code: 'Code exchange. A confidential app authenticates with HTTP Basic (or its `client_assertion`); a '
    + 'public app sends `client_id` and `code_verifier` and no Authorization header.',
  refresh_token: 'Refresh (confidential apps only, authenticated as at the code exchange). The answer carries the next '
    + 'refresh token; a spent one presented again after its successor was used revokes the whole grant.',
};

const schemaName = (grantType: string) => `${grantType.split('_').map((word) => word[0]!.toUpperCase() + word.slice(1)).join('')}Request`;

/** How a private_key_jwt client authenticates in the body instead of HTTP Basic (RFC 7523 §2.2). */
const ASSERTION_PARAMETERS = {
  client_assertion_type: z.literal('urn:ietf:params:oauth:client-assertion-type:jwt-bearer').optional().meta({
    description: 'A private_key_jwt client (instead of HTTP Basic, never with it): this exact value, with `client_assertion`.',
  }),
  client_assertion: z.string().optional().meta({
    description: 'A private_key_jwt client: a JWT signed by one of its registered keys (RS256, PS256, ES256, EdDSA or '
      + 'Ed25519), `iss` and `sub` its client ID, `aud` the issuer (or this endpoint\'s URL; the issuer alone under the '
      + 'high-security profile), `exp` within 300 s, a `jti` used once across every instance.',
  }),
};

/** One schema per grant, from the grant's rule: its required parameters and those it accepts. */
const grantRequests = [...GRANTS.values()].map((rule) => named(schemaName(rule.grantType), z.object({
  grant_type: z.literal(rule.grantType),
  ...Object.fromEntries(rule.required.map((name) => [name, TOKEN_PARAMETERS[name]!])),
  ...Object.fromEntries(rule.accepted.map((name) => [name, TOKEN_PARAMETERS[name]!.optional()])),
  ...ASSERTION_PARAMETERS,
}), GRANT_WORDS[rule.grantType]));

export const TokenRequest = named('TokenRequest', z.discriminatedUnion('grant_type', grantRequests as unknown as [z.ZodObject, ...z.ZodObject[]]),
  'The grants. A parameter sent twice is `invalid_request`; one sent empty counts as omitted; a parameter of another grant '
    + '(e.g. `refresh_token` with `authorization_code`) is `invalid_request`; `client_secret` in the body is '
    + '`invalid_client` (a secret goes only in the Basic header; a private_key_jwt client\'s assertion in the body).');

export const TokenResponse = named('TokenResponse', z.object({
  access_token: z.string(),
  token_type: z.enum(['Bearer', 'DPoP']).meta({ description: '`DPoP` when the request carried a DPoP proof: the token is bound to its key (RFC 9449).' }),
  expires_in: z.int().min(1).meta({
    description: `${CLIENT_CREDENTIALS_ACCESS_TOKEN_SECONDS} for \`client_credentials\`; otherwise the named-user lifetime (the tenant `
      + `policy's \`accessTokenTtl\`, else \`namedUserAccessTokenTtl\`, ${NAMED_USER_ACCESS_TOKEN.default} by default; at most `
      + `\`managementAccessTokenTtl\` with \`${MANAGEMENT_SCOPE}\`).`,
  }),
  scope: z.string().meta({ description: 'The granted scopes, space-separated. Always present.' }),
  refresh_token: z.string().optional().meta({
    description: 'Confidential apps, `authorization_code` and `refresh_token` grants only. Never for `client_credentials`.',
  }),
  id_token: z.string().optional().meta({ description: 'When `openid` was granted (named users only).' }),
}), 'RFC 6749 §5.1. `access_token` is an RFC 9068 JWT (`typ: at+jwt`) signed with a key of the JWKS.');

// --- The audit trail --------------------------------------------------------------------------

export const AuditEventBody = named('AuditEvent', z.strictObject({
  id: z.uuid(),
  time: timestamp,
  type: z.enum(AUDIT_EVENT_TYPES),
  tenant: z.string().optional().meta({ description: 'Absent for events of no tenant (the platform\'s).' }),
  actor: z.strictObject({
    type: z.enum(['user', 'operator', 'client', 'anonymous']),
    id: z.string().optional().meta({ description: 'The user\'s `sub`, the client ID, or the operator\'s name when one was given (`--actor`); absent for anonymous callers.' }),
  }),
  target: z.strictObject({
    type: z.enum(['client_configuration', 'app_registration', 'signing_key', 'management_api', 'user', 'tenant', 'connection']),
    id: z.string().meta({ description: 'The record\'s client ID, the key\'s `kid`, the route\'s name, or the user\'s `sub`.' }),
  }).optional(),
  address: z.string().optional().meta({ description: 'The source address of the request, when there was one.' }),
  details: z.record(z.string(), z.unknown()).optional().meta({
    description: 'What changed: field names of an update, the scopes of a consent, the reason of a refusal. Never a secret, token, code or password.',
  }),
}), 'One security-relevant action: who did what to which client, consent or session.');

export const AuditEventList = named('AuditEventList', z.strictObject({
  events: z.array(AuditEventBody).meta({ description: 'Newest first.' }),
  next: z.string().optional().meta({ description: 'Present when there may be more: pass it as `cursor` for the next page.' }),
}));

/** An audit event on the wire (it is stored in its wire form already). */
export function auditEventWire(event: AuditEvent): Wire<typeof AuditEventBody> {
  return event;
}

// --- Userinfo, introspection, revocation ------------------------------------------------------

export const Userinfo = named('Userinfo', z.looseObject({
  sub: z.string(),
  name: z.string().optional(),
  given_name: z.string().optional(),
  family_name: z.string().optional(),
  preferred_username: z.string().optional(),
  email: z.string().optional(),
  email_verified: z.boolean().optional(),
}), 'The user\'s claims: `sub`, and those of the `profile` and `email` scopes she consented to that her account has.');

const tokenTypeHint = z.enum(['access_token', 'refresh_token']).optional().meta({ description: 'Optional; not needed (the token\'s form tells).' });

export const IntrospectionRequest = named('IntrospectionRequest', z.object({
  token: z.string(),
  token_type_hint: tokenTypeHint,
}));

export const IntrospectionResponse = named('IntrospectionResponse', z.union([
  z.strictObject({
    active: z.literal(true),
    iss: z.string(),
    sub: z.string().meta({ description: 'The user (named-user token) or the client (machine token).' }),
    client_id: z.string(),
    scope: z.string(),
    exp: z.int(),
    iat: z.int(),
    aud: z.union([z.string(), z.array(z.string())]),
    token_type: z.enum(['Bearer', 'DPoP']),
    cnf: z.strictObject({ jkt: z.string() }).optional().meta({ description: 'A DPoP-bound token: the thumbprint of its key (RFC 9449 §6.2).' }),
    tenant: z.string().optional(),
    constraints: z.record(z.string(), z.record(z.string(), z.array(z.string()))).optional()
      .meta({ description: 'A machine token\'s data filters, per API: `{ [apiId]: { [dimension]: values } }`.' }),
  }),
  z.strictObject({ active: z.literal(false) }),
]), 'RFC 7662 §2.2. An inactive token is `{ "active": false }` and nothing more, whatever the reason.');

export const RevocationRequest = named('RevocationRequest', z.object({
  token: z.string(),
  token_type_hint: tokenTypeHint,
  client_id: z.string().optional().meta({ description: 'A public app\'s, without an Authorization header.' }),
}));

// --- Keys and metadata -----------------------------------------------------------------------

const signingAlgorithm = z.enum(['ES256', 'RS256', 'PS256', 'EdDSA']);

export const JsonWebKey = named('JsonWebKey', z.strictObject({
  kty: z.enum(['EC', 'RSA', 'OKP']),
  kid: z.string(),
  alg: signingAlgorithm,
  use: z.literal('sig'),
  crv: z.string().optional(),
  x: z.string().optional(),
  y: z.string().optional(),
  n: z.string().optional(),
  e: z.string().optional(),
}), 'A public signing key: public members only (a private member makes it invalid).');

export const JsonWebKeySet = named('JsonWebKeySet', z.object({ keys: z.array(JsonWebKey).min(1) }),
  'RFC 7517 JWK Set: the access-token key and the RS256 ID-token key.');

/** The discovery document's schema for an issuer (its endpoints are fixed strings of it). */
export function authorizationServerMetadata(issuer: string): z.ZodType {
  return z.looseObject({
    issuer: z.literal(issuer),
    authorization_endpoint: z.literal(`${issuer}/authorize`),
    token_endpoint: z.literal(`${issuer}/token`),
    jwks_uri: z.literal(`${issuer}/jwks`),
    response_types_supported: z.array(z.literal('code')),
    response_modes_supported: z.array(z.literal('query')).optional(),
    grant_types_supported: z.array(z.enum([...GRANTS.keys()] as [string, ...string[]])),
    token_endpoint_auth_methods_supported: z.array(z.enum(['client_secret_basic', 'private_key_jwt', 'none'])),
    token_endpoint_auth_signing_alg_values_supported: z.array(z.enum(CLIENT_ASSERTION_ALGS))
      .meta({ description: 'The algorithms a `private_key_jwt` client may sign its assertion with (asymmetric only).' }),
    code_challenge_methods_supported: z.array(z.literal('S256')),
    scopes_supported: z.array(z.string()).meta({ description: '`openid`, `offline_access`, `profile`, `email` and every scope of the API catalog.' }),
    subject_types_supported: z.array(z.string()),
    id_token_signing_alg_values_supported: z.array(z.string()),
    claims_supported: z.array(z.string()).optional(),
    authorization_response_iss_parameter_supported: z.boolean().optional(),
  }).meta({
    description: 'OpenID Connect Discovery 1.0 / RFC 8414 metadata. The members listed here are always present (but '
      + 'those marked optional); others may be added. Endpoints not listed are not served.',
  });
}

// --- Reading and writing ---------------------------------------------------------------------

/**
 * A request body against its wire schema.
 * @throws ValidationError naming the wire field of the first problem (`unknown field` for a field
 *   the schema does not have).
 */
export function parseWire<T>(schema: z.ZodType<T>, body: Record<string, unknown>, root: string): T {
  const result = schema.safeParse(body);
  if (result.success) return result.data;
  const issue = result.error.issues[0]!;
  if (issue.code === 'unrecognized_keys') throw new ValidationError([...issue.path, issue.keys[0]].join('.'), 'unknown field');
  throw new ValidationError(issue.path.length ? issue.path.join('.') : root, issue.message);
}

/** Field names in the library's errors are the wire's: `redirectUris.1` becomes `redirect_uris.1`. */
export function wireField(field: string): string {
  const [head, ...rest] = field.split('.');
  const wire = Object.entries(APP_FIELD_NAMES).find(([, name]) => name === head)?.[0] ?? head;
  return [wire, ...rest].join('.');
}

type Wire<T extends z.ZodType> = z.output<T>;

/** A client configuration's wire fields with the authentication fields under their library names. */
function clientFieldsOf<T extends Partial<Wire<typeof ClientConfigurationCreate>>>(wire: T): Omit<T, keyof typeof AUTHENTICATION_FIELD_NAMES> & Partial<Pick<ClientConfigurationInput, 'tokenEndpointAuthMethod' | 'jwks' | 'jwksUri'>> {
  const { token_endpoint_auth_method: tokenEndpointAuthMethod, jwks, jwks_uri: jwksUri, ...rest } = wire;
  return {
    ...rest,
    ...(tokenEndpointAuthMethod !== undefined ? { tokenEndpointAuthMethod } : {}),
    ...(jwks !== undefined ? { jwks: jwks as ClientConfigurationInput['jwks'] } : {}),
    ...(jwksUri !== undefined ? { jwksUri } : {}),
  };
}

/** A client configuration to create, from its wire form, in the caller's tenant. */
export function clientInput(body: Record<string, unknown>, tenant: string): ClientConfigurationInput {
  return { ...clientFieldsOf(parseWire(ClientConfigurationCreate, body, 'clientConfiguration')), tenant };
}

/** A client configuration change, from its wire form. */
export function clientPatch(body: Record<string, unknown>): Partial<ClientConfigurationInput> {
  return clientFieldsOf(parseWire(ClientConfigurationPatch, body, 'patch'));
}

/**
 * An app's wire body without the fields only the operator sets (they are refused, saying so). The
 * tenant's rule for a back-channel logout URI is applied where every way in meets
 * (src/records/app-registrations.ts, policies/backchannel-logout.ts).
 */
function tenantAppBody(body: Record<string, unknown>): Record<string, unknown> {
  for (const field of Object.keys(body)) {
    // Own keys only: `constructor` or `__proto__` must not find Object's.
    if (Object.hasOwn(OPERATOR_ONLY, field)) throw new ValidationError(field, OPERATOR_ONLY[field]!);
  }
  return body;
}

function appFieldsOf(wire: Partial<Wire<typeof AppRegistrationCreate>>): Partial<AppRegistrationInput> {
  const result: Record<string, unknown> = {};
  for (const [field, value] of Object.entries(wire)) result[APP_FIELD_NAMES[field as keyof typeof APP_FIELD_NAMES]] = value;
  return result as Partial<AppRegistrationInput>;
}

/** An app registration to create, from its wire form, owned by the caller's tenant. */
export function appInput(body: Record<string, unknown>, tenant: string): AppRegistrationInput {
  return { ...appFieldsOf(parseWire(AppRegistrationCreate, tenantAppBody(body), 'appRegistration')), tenant } as AppRegistrationInput;
}

/** An app registration change, from its wire form. */
export function appPatch(body: Record<string, unknown>): Partial<AppRegistrationInput> {
  return appFieldsOf(parseWire(AppRegistrationPatch, tenantAppBody(body), 'patch'));
}

/** A client configuration on the wire (with its secret when it was just made or just turned Basic). */
export function clientWire(client: ClientConfiguration & { clientSecret?: string }): Wire<typeof ClientConfigurationBody> {
  return {
    client_id: client.clientId,
    tenant: client.tenant,
    name: client.name,
    category: client.category,
    ...(client.description ? { description: client.description } : {}),
    resources: client.resources,
    token_endpoint_auth_method: client.tokenEndpointAuthMethod,
    ...authenticationWire(client),
    ...(client.dpop ? { dpop: client.dpop } : {}),
    ...(client.profile === 'high-security' ? { profile: client.profile } : {}),
    created_at: client.createdAt,
    updated_at: client.updatedAt,
    ...(client.clientSecret ? { client_secret: client.clientSecret } : {}),
  };
}

/** An app registration on the wire (with its secret when it was just made). */
export function appWire(app: AppRegistration & { clientSecret?: string }): Wire<typeof AppRegistrationBody> {
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
    resource_server: app.resourceServer,
    post_logout_redirect_uris: app.postLogoutRedirectUris,
    ...(app.backchannelLogoutUri ? { backchannel_logout_uri: app.backchannelLogoutUri } : {}),
    ...authenticationWire(app),
    ...(app.dpop ? { dpop: app.dpop } : {}),
    require_pushed_authorization_requests: app.requirePushedAuthorizationRequests,
    ...(app.profile === 'high-security' ? { profile: app.profile } : {}),
    created_at: app.createdAt,
    updated_at: app.updatedAt,
    ...(app.clientSecret ? { client_secret: app.clientSecret } : {}),
  };
}

/** A consent on the wire. */
export function consentWire(consent: Consent): Wire<typeof ConsentBody> {
  return {
    client_id: consent.clientId,
    app_name: consent.appName ?? null,
    scopes: consent.scopes,
    created_at: consent.createdAt,
    updated_at: consent.updatedAt,
  };
}
