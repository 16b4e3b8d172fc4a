import { generateKeyPairSync } from 'node:crypto';
import type { Store } from '../../adapters/types.js';
import { ValidationError } from '../../policies/errors.js';
import { ApiCatalog } from '../../policies/catalog.js';
import { MAX_CLIENT_KEYS, type ClientJwk } from '../../policies/client-keys.js';
import { AuditTrail, DEFAULT_AUDIT_SETTINGS, type AuditEvent } from '../../src/audit/trail.js';
import { AppRegistrations } from '../../src/records/app-registrations.js';
import { ClientConfigurations, type ClientConfigurationInput } from '../../src/records/client-configurations.js';
import { secretMatches } from '../../src/records/secrets.js';
import { useAdapterStore } from '../support/adapter-stores.js';
import { capturingLogger } from '../support/fixtures.js';
import { STORE_KINDS } from '../support/stores.js';

const catalog = new ApiCatalog([{ id: 'scim', name: 'SCIM', scopes: { 'scim.read': 'r' }, constraints: [] }]);

/** A fresh public key as a JWK (with the private one, when asked, to see it refused). */
function jwkOf(kind: 'rsa' | 'rsa1024' | 'ec' | 'ec384' | 'ed25519', extra: Partial<ClientJwk> = {}, withPrivate = false): ClientJwk {
  const pair = kind === 'rsa' ? generateKeyPairSync('rsa', { modulusLength: 2048 })
    : kind === 'rsa1024' ? generateKeyPairSync('rsa', { modulusLength: 1024 })
      : kind === 'ec' ? generateKeyPairSync('ec', { namedCurve: 'P-256' })
        : kind === 'ec384' ? generateKeyPairSync('ec', { namedCurve: 'P-384' })
          : generateKeyPairSync('ed25519');
  const key = (withPrivate ? pair.privateKey : pair.publicKey).export({ format: 'jwk' }) as ClientJwk;
  return { ...key, ...extra };
}

const RSA = jwkOf('rsa', { kid: 'r1', alg: 'RS256', use: 'sig' });
const EC = jwkOf('ec', { kid: 'e1', alg: 'ES256' });
const ED = jwkOf('ed25519', { kid: 'd1', alg: 'EdDSA' });

/**
 * PRIVATE_KEY_JWT ON THE RECORDS (policies/client-keys.ts, src/records/client-configurations.ts,
 * src/records/app-registrations.ts), on both stores: the method and its keys registered, validated
 * naming the field, a private_key_jwt client without any secret, the method changed either way
 * (audited with both ends), and a secret rotation of a private_key_jwt client refused.
 */
describe.each(STORE_KINDS)('client authentication on the records (%s store)', (kind) => {
  const handle = useAdapterStore(kind);
  let store: Store;
  let clients: ClientConfigurations;
  let apps: AppRegistrations;
  let events: AuditEvent[];

  beforeEach(async () => {
    store = await handle.create();
    events = [];
    const audit = new AuditTrail(store, DEFAULT_AUDIT_SETTINGS, capturingLogger().logger, (event) => void events.push(event));
    clients = new ClientConfigurations(store.records, catalog, audit);
    apps = new AppRegistrations(store.records, async () => {}, async () => 0, audit);
  });
  afterEach(async () => {
    await new Promise((resolve) => setTimeout(resolve, 30));
    await store.close();
  });

  const base = { tenant: 'acme', name: 'Sync', category: 'HRIS', resources: { scim: { scopes: ['scim.read'] } } } satisfies ClientConfigurationInput;
  const refusal = async (promise: Promise<unknown>) => promise.then(() => undefined, (error: unknown) => error);

  it('a private_key_jwt client configuration gets no secret, stored or returned; Basic stays the default', async () => {
    const created = await clients.create({ ...base, tokenEndpointAuthMethod: 'private_key_jwt', jwks: { keys: [RSA, EC, ED] } });
    expect(created).not.toHaveProperty('clientSecret');
    expect(created.tokenEndpointAuthMethod).toBe('private_key_jwt');
    expect(created.jwks?.keys.map((key) => key.kid)).toEqual(['r1', 'e1', 'd1']);
    const stored = await store.records.get<Record<string, unknown>>('client', created.clientId);
    expect(stored).not.toHaveProperty('secretDigest');
    expect(stored?.['tokenEndpointAuthMethod']).toBe('private_key_jwt');
    const basic = await clients.create(base);
    expect(basic.tokenEndpointAuthMethod).toBe('client_secret_basic');
    expect(basic.clientSecret).toMatch(/.{20,}/);
    const byUri = await clients.create({ ...base, tokenEndpointAuthMethod: 'private_key_jwt', jwksUri: 'https://keys.acme.example/jwks.json' });
    expect(await clients.get(byUri.clientId)).toEqual(expect.objectContaining({ jwksUri: 'https://keys.acme.example/jwks.json', tokenEndpointAuthMethod: 'private_key_jwt' }));
    expect(events.find((event) => event.type === 'client_configuration.created' && event.target?.id === created.clientId)?.details)
      .toEqual(expect.objectContaining({ token_endpoint_auth_method: 'private_key_jwt' }));
  });

  it.each([
    ['a private key (d)', { jwks: { keys: [jwkOf('ec', { kid: 'x' }, true)] } }, 'jwks.keys.0', /private member .d. must never/],
    ['an RSA private key', { jwks: { keys: [jwkOf('rsa', { kid: 'x' }, true)] } }, 'jwks.keys.0', /private member .d. must never/],
    ['a symmetric key', { jwks: { keys: [{ kty: 'oct', k: 'c2VjcmV0' }] } }, 'jwks.keys.0.kty', /RSA, EC or OKP/],
    ['an HS256 key', { jwks: { keys: [{ ...RSA, alg: 'HS256' }] } }, 'jwks.keys.0', /HS256 is not allowed/],
    ['RS384', { jwks: { keys: [{ ...RSA, alg: 'RS384' }] } }, 'jwks.keys.0', /RS384 is not allowed/],
    ['ES256 on an RSA key', { jwks: { keys: [{ ...RSA, alg: 'ES256' }] } }, 'jwks.keys.0', /not allowed for a RSA key/],
    ['an EC key on P-384', { jwks: { keys: [jwkOf('ec384')] } }, 'jwks.keys.0', /curve P-256/],
    ['an RSA key of 1024 bits', { jwks: { keys: [jwkOf('rsa1024')] } }, 'jwks.keys.0', /2048 bits/],
    ['a broken key', { jwks: { keys: [{ kty: 'EC', crv: 'P-256', x: 'AA', y: 'AA' }] } }, 'jwks.keys.0', /not a valid EC public key/],
    ['an encryption key', { jwks: { keys: [{ ...EC, use: 'enc' }] } }, 'jwks.keys.0', /use must be .sig./],
    ['two keys with one kid', { jwks: { keys: [RSA, { ...EC, kid: 'r1' }] } }, 'jwks.keys.1.kid', /used twice/],
    ['several keys without kids', { jwks: { keys: [jwkOf('ec'), jwkOf('ec')] } }, 'jwks.keys.0.kid', /needs a key ID/],
    ['too many keys', { jwks: { keys: Array.from({ length: MAX_CLIENT_KEYS + 1 }, (_, index) => ({ ...EC, kid: `k${index}` })) } }, 'jwks.keys', /10/],
    ['no keys', { jwks: { keys: [] } }, 'jwks.keys', /at least one key/],
    ['neither jwks nor jwksUri', {}, 'jwks', /jwks or jwksUri/],
    ['both jwks and jwksUri', { jwks: { keys: [EC] }, jwksUri: 'https://keys.acme.example/jwks' }, 'jwksUri', /not both/],
    ['a jwksUri that is not a URL', { jwksUri: 'keys' }, 'jwksUri', /absolute https URL/],
    ['a plain http jwksUri off loopback', { jwksUri: 'http://keys.acme.example/jwks' }, 'jwksUri', /https/],
    ['a jwksUri with credentials', { jwksUri: 'https://u:p@keys.acme.example/jwks' }, 'jwksUri', /credentials/],
    ['a jwksUri with a fragment', { jwksUri: 'https://keys.acme.example/jwks#signing' }, 'jwksUri', /no fragment/],
    ['a jwksUri with an empty fragment', { jwksUri: 'https://keys.acme.example/jwks#' }, 'jwksUri', /no fragment/],
  ])('refuses %s for private_key_jwt, naming the field, and stores nothing', async (_name, change, field, rule) => {
    const error = await refusal(clients.create({ ...base, tokenEndpointAuthMethod: 'private_key_jwt', ...change } as ClientConfigurationInput));
    expect(error).toBeInstanceOf(ValidationError);
    expect((error as ValidationError).field).toBe(field);
    expect((error as ValidationError).message).toMatch(rule);
    expect(await clients.list('acme')).toEqual([]);
  });

  it('refuses keys on a Basic client and an unknown method', async () => {
    expect(await refusal(clients.create({ ...base, jwks: { keys: [EC] } }))).toEqual(expect.objectContaining({ field: 'jwks' }));
    expect(await refusal(clients.create({ ...base, jwksUri: 'https://keys.acme.example/jwks' }))).toEqual(expect.objectContaining({ field: 'jwksUri' }));
    expect(await refusal(clients.create({ ...base, tokenEndpointAuthMethod: 'client_secret_post' } as never))).toEqual(expect.objectContaining({ field: 'tokenEndpointAuthMethod' }));
  });

  it('a jwksUri on loopback http: the operator may name it, a tenant may not (nor a private name)', async () => {
    const loopback = { ...base, tokenEndpointAuthMethod: 'private_key_jwt' as const, jwksUri: 'http://127.0.0.1:8080/jwks' };
    expect((await clients.create(loopback)).jwksUri).toBe('http://127.0.0.1:8080/jwks');
    expect(await refusal(clients.create(loopback, undefined, 'tenant'))).toEqual(expect.objectContaining({ field: 'jwksUri', message: expect.stringMatching(/https URI/) }));
    expect(await refusal(clients.create({ ...loopback, jwksUri: 'https://keys.corp/jwks' }, undefined, 'tenant'))).toEqual(expect.objectContaining({ field: 'jwksUri', message: expect.stringMatching(/\.corp/) }));
    expect((await clients.create({ ...loopback, jwksUri: 'https://keys.acme.example/jwks' }, undefined, 'tenant')).jwksUri).toBe('https://keys.acme.example/jwks');
  });

  it('changes the method either way: the secret goes, comes back new (returned once); audited with both ends', async () => {
    const created = await clients.create(base);
    const toJwt = await clients.update(created.clientId, { tokenEndpointAuthMethod: 'private_key_jwt', jwks: { keys: [EC] } });
    expect(toJwt).not.toHaveProperty('clientSecret');
    expect(await store.records.get('client', created.clientId)).not.toHaveProperty('secretDigest');
    // Keys kept across an unrelated change; new keys replace the old ones (of either kind).
    expect((await clients.update(created.clientId, { name: 'Renamed' })).jwks).toEqual({ keys: [EC] });
    const byUri = await clients.update(created.clientId, { jwksUri: 'https://keys.acme.example/jwks' });
    expect(byUri).not.toHaveProperty('jwks');
    expect(byUri.jwksUri).toBe('https://keys.acme.example/jwks');
    expect(await refusal(clients.rotateSecret(created.clientId))).toEqual(expect.objectContaining({ field: 'tokenEndpointAuthMethod', message: expect.stringMatching(/no secret to rotate/) }));
    const back = await clients.update(created.clientId, { tokenEndpointAuthMethod: 'client_secret_basic' });
    expect(back).not.toHaveProperty('jwksUri');
    expect(back.clientSecret).not.toBe(created.clientSecret);
    const stored = await store.records.get<{ secretDigest: string }>('client', created.clientId);
    expect(secretMatches(back.clientSecret!, stored!.secretDigest)).toBe(true);
    expect(secretMatches(created.clientSecret, stored!.secretDigest)).toBe(false);
    // Basic to Basic: no new secret.
    expect(await clients.update(created.clientId, { tokenEndpointAuthMethod: 'client_secret_basic', name: 'Again' })).not.toHaveProperty('clientSecret');
    // private_key_jwt without keys is refused; keys without the method on a Basic client too.
    expect(await refusal(clients.update(created.clientId, { tokenEndpointAuthMethod: 'private_key_jwt' }))).toEqual(expect.objectContaining({ field: 'jwks' }));
    expect(await refusal(clients.update(created.clientId, { jwks: { keys: [EC] } }))).toEqual(expect.objectContaining({ field: 'jwks' }));
    const updates = events.filter((event) => event.type === 'client_configuration.updated').map((event) => event.details);
    expect(updates).toContainEqual(expect.objectContaining({ token_endpoint_auth_method: { from: 'client_secret_basic', to: 'private_key_jwt' } }));
    expect(updates).toContainEqual(expect.objectContaining({ token_endpoint_auth_method: { from: 'private_key_jwt', to: 'client_secret_basic' } }));
    expect(JSON.stringify(events)).not.toContain(back.clientSecret);
  });

  it('a confidential app may use private_key_jwt (no secret), a public app takes no method or keys', async () => {
    const app = await apps.create({ name: 'Web', redirectUris: ['https://web.example/cb'], clientType: 'confidential', tokenEndpointAuthMethod: 'private_key_jwt', jwks: { keys: [ED] } });
    expect(app).not.toHaveProperty('clientSecret');
    expect(app.tokenEndpointAuthMethod).toBe('private_key_jwt');
    expect(await store.records.get('app', app.clientId)).not.toHaveProperty('secretDigest');
    expect(await refusal(apps.rotateSecret(app.clientId))).toEqual(expect.objectContaining({ field: 'tokenEndpointAuthMethod' }));
    const basic = await apps.create({ name: 'Web', redirectUris: ['https://web.example/cb'], clientType: 'confidential' });
    expect(basic.tokenEndpointAuthMethod).toBe('client_secret_basic');
    expect(basic.clientSecret).toBeDefined();
    const spa = await apps.create({ name: 'SPA', redirectUris: ['https://spa.example/cb'], clientType: 'public' });
    expect(spa).not.toHaveProperty('tokenEndpointAuthMethod');
    expect(await refusal(apps.create({ name: 'SPA', redirectUris: ['https://spa.example/cb'], clientType: 'public', tokenEndpointAuthMethod: 'private_key_jwt', jwks: { keys: [ED] } })))
      .toEqual(expect.objectContaining({ field: 'tokenEndpointAuthMethod' }));
    expect(await refusal(apps.create({ name: 'Web', redirectUris: ['https://web.example/cb'], clientType: 'confidential', tokenEndpointAuthMethod: 'private_key_jwt', jwks: { keys: [{ ...ED, alg: 'HS256' } as never] } })))
      .toEqual(expect.objectContaining({ field: 'jwks.keys.0' }));
  });

  it("an app's jwksUri: the operator's app may name loopback http, a tenant's app only a public https host", async () => {
    const input = { name: 'Web', redirectUris: ['https://web.example/cb'], clientType: 'confidential' as const, tokenEndpointAuthMethod: 'private_key_jwt' as const, jwksUri: 'http://localhost:9000/jwks' };
    expect((await apps.create(input)).jwksUri).toBe('http://localhost:9000/jwks');
    expect(await refusal(apps.create({ ...input, tenant: 'acme' }))).toEqual(expect.objectContaining({ field: 'jwksUri' }));
    expect((await apps.create({ ...input, tenant: 'acme', jwksUri: 'https://keys.acme.example/jwks' })).jwksUri).toBe('https://keys.acme.example/jwks');
  });

  it("an app's method changes either way and with its client type; audited with both ends", async () => {
    const app = await apps.create({ name: 'Web', redirectUris: ['https://web.example/cb'], clientType: 'confidential' });
    const toJwt = await apps.update(app.clientId, { tokenEndpointAuthMethod: 'private_key_jwt', jwks: { keys: [EC] } });
    expect(toJwt).not.toHaveProperty('clientSecret');
    expect(await store.records.get('app', app.clientId)).not.toHaveProperty('secretDigest');
    expect((await apps.update(app.clientId, { name: 'Renamed' })).jwks).toEqual({ keys: [EC] });
    const back = await apps.update(app.clientId, { tokenEndpointAuthMethod: 'client_secret_basic' });
    expect(back.clientSecret).toBeDefined();
    expect(back).not.toHaveProperty('jwks');
    // To public: no method, no keys, no secret; back to confidential: Basic with a new secret.
    await apps.update(app.clientId, { tokenEndpointAuthMethod: 'private_key_jwt', jwks: { keys: [EC] } });
    const spa = await apps.update(app.clientId, { clientType: 'public' });
    expect(spa).not.toHaveProperty('tokenEndpointAuthMethod');
    expect(spa).not.toHaveProperty('jwks');
    const again = await apps.update(app.clientId, { clientType: 'confidential' });
    expect(again.tokenEndpointAuthMethod).toBe('client_secret_basic');
    expect(again.clientSecret).toBeDefined();
    const viaType = await apps.update(app.clientId, { clientType: 'public' }).then(() => apps.update(app.clientId, { clientType: 'confidential', tokenEndpointAuthMethod: 'private_key_jwt', jwksUri: 'https://keys.web.example/jwks' }));
    expect(viaType).not.toHaveProperty('clientSecret');
    expect(await refusal(apps.update(app.clientId, { clientType: 'public', jwks: { keys: [EC] } }))).toEqual(expect.objectContaining({ field: 'jwks' }));
    const updates = events.filter((event) => event.type === 'app_registration.updated').map((event) => event.details);
    expect(updates).toContainEqual(expect.objectContaining({ token_endpoint_auth_method: { from: 'client_secret_basic', to: 'private_key_jwt' } }));
    expect(updates).toContainEqual(expect.objectContaining({ token_endpoint_auth_method: { from: 'private_key_jwt', to: 'none' } }));
  });
});
