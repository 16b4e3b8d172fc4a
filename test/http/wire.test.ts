import { ValidationError } from '../../policies/errors.js';
import {
  AppRegistrationBody,
  appInput,
  appPatch,
  appWire,
  ClientConfigurationBody,
  ClientConfigurationCreated,
  clientInput,
  clientPatch,
  clientWire,
  ConsentBody,
  consentWire,
  wireField,
} from '../../src/http/wire.js';

const at = '2026-11-23T10:00:00.000Z';
const ID = '1f0e8c84-5c3b-4b9a-9d7e-0a1b2c3d4e5f';
const SECRET = 'A'.repeat(43);

function refusal(read: () => unknown): { field: string; message: string } {
  try {
    read();
  } catch (error) {
    expect(error).toBeInstanceOf(ValidationError);
    return { field: (error as ValidationError).field, message: (error as ValidationError).description };
  }
  throw new Error('not refused');
}

describe('the wire (src/http/wire.ts)', () => {
  it.each([
    ['an unknown field', () => clientInput({ name: 'n', category: 'c', resources: {}, secret: 'x' }, 't'), 'secret', 'unknown field'],
    ['the tenant (it is the caller\'s)', () => clientInput({ name: 'n', category: 'c', resources: {}, tenant: 'x' }, 't'), 'tenant', 'unknown field'],
    ['a name of the wrong type', () => clientInput({ name: 1, category: 'c', resources: {} }, 't'), 'name', ''],
    ['a name over 200 characters', () => clientPatch({ name: 'x'.repeat(201) }), 'name', ''],
    ['an API without its scopes list', () => clientPatch({ resources: { scim: {} } }), 'resources.scim.scopes', ''],
    ['a camelCase field', () => appPatch({ redirectUris: [] }), 'redirectUris', 'unknown field'],
    ['first_party (operator only)', () => appInput({ name: 'n', redirect_uris: ['https://a/cb'], client_type: 'public', first_party: true }, 't'), 'first_party', 'only the platform operator'],
    ['open_to_all_tenants (operator only)', () => appPatch({ open_to_all_tenants: true }), 'open_to_all_tenants', 'only the platform operator'],
    ['an unknown client type', () => appPatch({ client_type: 'trusted' }), 'client_type', ''],
    ['21 redirect URIs', () => appPatch({ redirect_uris: Array.from({ length: 21 }, (_, i) => `https://a/${i}`) }), 'redirect_uris', ''],
    ['__proto__ as a field', () => appPatch(JSON.parse('{"__proto__": {"x": 1}}') as Record<string, unknown>), '__proto__', 'unknown field'],
  ])('refuses %s, naming the wire field', (_name, read, field, message) => {
    const refused = refusal(read);
    expect(refused.field).toBe(field);
    expect(refused.message).toContain(message);
  });

  it('turns wire fields into library fields, and library field names back in errors', () => {
    expect(appInput({ name: ' App ', redirect_uris: ['https://a/cb'], client_type: 'public', pkce_enabled: true, id_token_signed_response_alg: 'ES256' }, 't'))
      .toEqual({ name: 'App', redirectUris: ['https://a/cb'], clientType: 'public', pkceEnabled: true, idTokenSigningAlg: 'ES256', tenant: 't' });
    expect(clientInput({ name: 'n', category: 'c', resources: { scim: { scopes: ['scim.read'] } } }, 't'))
      .toEqual({ name: 'n', category: 'c', resources: { scim: { scopes: ['scim.read'] } }, tenant: 't' });
    expect(wireField('redirectUris.1')).toBe('redirect_uris.1');
    expect(wireField('postLogoutRedirectUris.0')).toBe('post_logout_redirect_uris.0');
    expect(appPatch({ post_logout_redirect_uris: ['https://a/out'], backchannel_logout_uri: 'https://app.example.com/bc' }))
      .toEqual({ postLogoutRedirectUris: ['https://a/out'], backchannelLogoutUri: 'https://app.example.com/bc' });
    expect(wireField('idTokenSigningAlg')).toBe('id_token_signed_response_alg');
    expect(appPatch({ require_pushed_authorization_requests: true })).toEqual({ requirePushedAuthorizationRequests: true });
    expect(wireField('requirePushedAuthorizationRequests')).toBe('require_pushed_authorization_requests');
    expect(wireField('resources.scim.scopes')).toBe('resources.scim.scopes');
    expect(wireField('jwksUri')).toBe('jwks_uri');
    expect(wireField('tokenEndpointAuthMethod')).toBe('token_endpoint_auth_method');
    expect(wireField('jwks.keys.0')).toBe('jwks.keys.0');
    const keys = { keys: [{ kty: 'EC', crv: 'P-256', x: 'x', y: 'y' }] };
    expect(clientPatch({ token_endpoint_auth_method: 'private_key_jwt', jwks: keys })).toEqual({ tokenEndpointAuthMethod: 'private_key_jwt', jwks: keys });
    expect(clientInput({ name: 'n', category: 'c', resources: {}, token_endpoint_auth_method: 'private_key_jwt', jwks_uri: 'https://k.example.com/' }, 't'))
      .toEqual({ name: 'n', category: 'c', resources: {}, tokenEndpointAuthMethod: 'private_key_jwt', jwksUri: 'https://k.example.com/', tenant: 't' });
    expect(appPatch({ token_endpoint_auth_method: 'client_secret_basic' })).toEqual({ tokenEndpointAuthMethod: 'client_secret_basic' });
    expect(refusal(() => clientPatch({ tokenEndpointAuthMethod: 'private_key_jwt' })).field).toBe('tokenEndpointAuthMethod');
  });

  it('what goes out matches the schemas the document publishes', () => {
    const client = { clientId: ID, tenant: 't', name: 'n', category: 'c', resources: { scim: { scopes: ['scim.read'] } }, tokenEndpointAuthMethod: 'client_secret_basic' as const, createdAt: at, updatedAt: at };
    expect(ClientConfigurationBody.parse(clientWire(client))).toBeDefined();
    expect(ClientConfigurationCreated.parse(clientWire({ ...client, clientSecret: SECRET }))).toHaveProperty('client_secret', SECRET);
    // A change back to Basic answers the new secret in the record's body (PATCH), once.
    expect(ClientConfigurationBody.parse(clientWire({ ...client, clientSecret: SECRET }))).toHaveProperty('client_secret', SECRET);
    const keys = { keys: [{ kty: 'OKP' as const, crv: 'Ed25519', x: '11qYAYKxCrfVS_7TyWQHOg7hcvPapiMlrwIaaPcHURo', kid: 'k1' }] };
    const withKeys = ClientConfigurationBody.parse(clientWire({ ...client, tokenEndpointAuthMethod: 'private_key_jwt', jwks: keys }));
    expect(withKeys).toMatchObject({ token_endpoint_auth_method: 'private_key_jwt', jwks: keys });
    expect(withKeys).not.toHaveProperty('client_secret');
    expect(ClientConfigurationBody.parse(clientWire({ ...client, tokenEndpointAuthMethod: 'private_key_jwt', jwksUri: 'https://keys.example.com/k' })))
      .toMatchObject({ token_endpoint_auth_method: 'private_key_jwt', jwks_uri: 'https://keys.example.com/k' });
    const app = {
      clientId: ID, name: 'n', redirectUris: ['https://a/cb'], clientType: 'public' as const, pkceEnabled: true, idTokenSigningAlg: 'RS256' as const,
      firstParty: false, openToAllTenants: false, resourceServer: false, postLogoutRedirectUris: [], requirePushedAuthorizationRequests: false, createdAt: at, updatedAt: at,
    };
    expect(AppRegistrationBody.parse(appWire(app))).not.toHaveProperty('client_secret');
    expect(AppRegistrationBody.parse(appWire(app))).not.toHaveProperty('token_endpoint_auth_method');
    expect(AppRegistrationBody.parse(appWire({ ...app, clientType: 'confidential', tokenEndpointAuthMethod: 'private_key_jwt', jwks: keys })))
      .toMatchObject({ token_endpoint_auth_method: 'private_key_jwt', jwks: keys });
    expect(AppRegistrationBody.parse(appWire({ ...app, tenant: 't', description: 'd', clientSecret: SECRET }))).toEqual(expect.objectContaining({ tenant: 't', description: 'd' }));
    expect(ConsentBody.parse(consentWire({ clientId: ID, appName: undefined, scopes: [{ scope: 'openid', description: 'x' }], createdAt: at, updatedAt: at }))).toHaveProperty('app_name', null);
  });
});
