import { randomUUID } from 'node:crypto';
import { exportJWK, generateKeyPair, SignJWT, type CryptoKey } from 'jose';
import { JWT_BEARER_ASSERTION } from '../../policies/client-authentication.js';
import type { ClientJwk } from '../../policies/client-keys.js';
import { ValidationError } from '../../policies/errors.js';
import { testAccounts } from '../support/accounts.js';
import { basic, postToken, startServer, type RunningServer } from '../support/server.js';
import { signInForCode } from '../support/sign-in.js';
import { STORE_KINDS, useStore } from '../support/stores.js';
import { UserAgent } from '../support/user-agent.js';

const WEB = 'https://payroll.example.com/cb';
const PORTAL = 'https://portal.example/cb';
const resources = { scim: { scopes: ['scim.read'] } };

/**
 * THE HIGH-SECURITY PROFILE ON THE RECORDS (src/records/*, policies/high-security.ts) and in the
 * management API, on both stores: `profile` selected on a client configuration and an app (stored
 * only when high-security, answered, audited), every setting it does not allow refused at create
 * and update naming the field, a public app refused; a tenant's admin switching her tenant to it
 * refused while clients of the tenant do not conform (their IDs named), accepted once they do,
 * and what applies answered.
 */
describe.each(STORE_KINDS)('the high-security profile on the records (%s store)', (kind) => {
  const store = useStore(kind);
  let server: RunningServer;
  let jwk: ClientJwk;
  let privateKey: CryptoKey;
  const admin = { sub: 'admin', password: 'admin-pw', tenant: 'acme', permissions: ['integration_setup'] };
  let token: string;

  beforeAll(async () => {
    server = await startServer({ store: store.option(), accounts: testAccounts([admin]) });
    const pair = await generateKeyPair('ES256', { extractable: true });
    privateKey = pair.privateKey;
    jwk = { ...(await exportJWK(pair.publicKey)), kid: 'k1', alg: 'ES256' } as ClientJwk;
    const portal = await server.auth.appRegistrations.create({ name: 'Portal', redirectUris: [PORTAL], clientType: 'confidential', firstParty: true });
    const { code, verifier } = await signInForCode(server, { clientId: portal.clientId, redirectUri: PORTAL }, admin, 'openid manage.integrations', new UserAgent(server.baseUrl));
    token = (await postToken(server.oauthUrl, { grant_type: 'authorization_code', code, redirect_uri: PORTAL, code_verifier: verifier }, { authorization: basic(portal.clientId, portal.clientSecret!) })).body.access_token as string;
  });
  afterAll(() => server.stop());

  const conformingApp = () => ({
    name: 'Payroll', redirectUris: [WEB], clientType: 'confidential' as const, profile: 'high-security' as const,
    tokenEndpointAuthMethod: 'private_key_jwt' as const, jwks: { keys: [jwk] }, dpop: 'required' as const, requirePushedAuthorizationRequests: true,
  });
  const conformingClient = (tenant = 'acme') => ({
    tenant, name: 'Sync', category: 'payroll', resources, profile: 'high-security' as const,
    tokenEndpointAuthMethod: 'private_key_jwt' as const, jwks: { keys: [jwk] }, dpop: 'required' as const,
  });
  /** A client assertion signed with the registered key, for `aud`. */
  const assertionFor = async (clientId: string, aud: string) => new SignJWT({}).setProtectedHeader({ alg: 'ES256', kid: 'k1' })
    .setIssuer(clientId).setSubject(clientId).setAudience(aud).setIssuedAt().setExpirationTime('1m').setJti(randomUUID()).sign(privateKey);
  /** A DPoP proof for the token endpoint, with a fresh key. */
  const proof = async () => {
    const pair = await generateKeyPair('ES256');
    return new SignJWT({ htm: 'POST', htu: `${server.oauthUrl}/token`, jti: randomUUID() })
      .setProtectedHeader({ alg: 'ES256', typ: 'dpop+jwt', jwk: await exportJWK(pair.publicKey) }).setIssuedAt().sign(pair.privateKey);
  };
  const refusal = async (promise: Promise<unknown>) => promise.then(() => undefined, (error: unknown) => error);
  const api = (path: string, method = 'GET', body?: object) => fetch(`${server.baseUrl}/api/oauth2/${path}`, {
    method,
    headers: { authorization: `Bearer ${token}`, ...(body ? { 'content-type': 'application/json' } : {}) },
    ...(body ? { body: JSON.stringify(body) } : {}),
  });

  it('a conforming app and client configuration are created under the profile, answered with it, and audited', async () => {
    const app = await server.auth.appRegistrations.create(conformingApp());
    expect(app.profile).toBe('high-security');
    expect(app).not.toHaveProperty('clientSecret');
    expect((await server.auth.appRegistrations.get(app.clientId))!.profile).toBe('high-security');
    const client = await server.auth.clientConfigurations.create(conformingClient());
    expect(client).toMatchObject({ profile: 'high-security', tokenEndpointAuthMethod: 'private_key_jwt', dpop: 'required' });
    const [created] = (await server.auth.audit.list({ tenant: 'acme', type: 'client_configuration.created' })).events.filter((event) => event.target?.id === client.clientId);
    expect(created!.details).toMatchObject({ profile: 'high-security' });
  });

  it('a record without a profile is standard, with any settings', async () => {
    const app = await server.auth.appRegistrations.create({ name: 'Plain', redirectUris: ['http://127.0.0.1:9000/cb'], clientType: 'confidential', pkceEnabled: true });
    expect(app.profile).toBe('standard');
    expect((await server.auth.clientConfigurations.create({ tenant: 'globex', name: 'Plain', category: 'c', resources })).profile).toBe('standard');
  });

  it.each<[string, Record<string, unknown>, string]>([
    ['a public app', { clientType: 'public', tokenEndpointAuthMethod: undefined, jwks: undefined }, 'clientType'],
    ['Basic', { tokenEndpointAuthMethod: undefined, jwks: undefined }, 'tokenEndpointAuthMethod'],
    ['DPoP optional', { dpop: 'optional' }, 'dpop'],
    ['PAR not required', { requirePushedAuthorizationRequests: false }, 'requirePushedAuthorizationRequests'],
    ['PKCE off', { pkceEnabled: false }, 'pkceEnabled'],
    ['an http redirect URI', { redirectUris: [WEB, 'http://127.0.0.1:9000/cb'] }, 'redirectUris.1'],
  ])('an app under the profile with %s is refused at creation, naming the field', async (_name, change, field) => {
    const error = await refusal(server.auth.appRegistrations.create({ ...conformingApp(), ...change } as Parameters<RunningServer['auth']['appRegistrations']['create']>[0]));
    expect(error).toBeInstanceOf(ValidationError);
    expect(error).toMatchObject({ field, description: expect.stringContaining('the high-security profile requires') });
  });

  it('a client configuration under the profile with Basic or without DPoP required is refused, naming the field', async () => {
    const { tokenEndpointAuthMethod: _method, jwks: _jwks, ...basicClient } = conformingClient();
    expect(await refusal(server.auth.clientConfigurations.create(basicClient))).toMatchObject({ field: 'tokenEndpointAuthMethod' });
    expect(await refusal(server.auth.clientConfigurations.create({ ...conformingClient(), dpop: 'optional' }))).toMatchObject({ field: 'dpop' });
  });

  it('an update that breaks the profile is refused and changes nothing; leaving the profile first lets it through', async () => {
    const app = await server.auth.appRegistrations.create(conformingApp());
    expect(await refusal(server.auth.appRegistrations.update(app.clientId, { dpop: 'optional' }))).toMatchObject({ field: 'dpop' });
    expect(await refusal(server.auth.appRegistrations.update(app.clientId, { clientType: 'public' }))).toMatchObject({ field: 'clientType' });
    expect((await server.auth.appRegistrations.get(app.clientId))!).toMatchObject({ dpop: 'required', clientType: 'confidential', profile: 'high-security' });
    const standard = await server.auth.appRegistrations.update(app.clientId, { profile: 'standard', dpop: 'optional' });
    expect(standard).toMatchObject({ profile: 'standard', dpop: 'optional' });
    // Selecting it again with a setting it does not allow: refused.
    expect(await refusal(server.auth.appRegistrations.update(app.clientId, { profile: 'high-security' }))).toMatchObject({ field: 'dpop' });
    const [updated] = (await server.auth.audit.list({ tenant: null, type: 'app_registration.updated' })).events.filter((event) => event.target?.id === app.clientId);
    expect(updated!.details).toMatchObject({ fields: expect.arrayContaining(['profile', 'dpop']) });

    const client = await server.auth.clientConfigurations.create(conformingClient());
    expect(await refusal(server.auth.clientConfigurations.update(client.clientId, { tokenEndpointAuthMethod: 'client_secret_basic' }))).toMatchObject({ field: 'tokenEndpointAuthMethod' });
    expect((await server.auth.clientConfigurations.get(client.clientId))!.tokenEndpointAuthMethod).toBe('private_key_jwt');
  });

  it("the management API: profile on the wire, answered when high-security; a tenant's public app under it refused with the wire field", async () => {
    const created = await api('app-registrations', 'POST', { name: 'SPA', redirect_uris: [WEB], client_type: 'public', profile: 'high-security' });
    expect(created.status).toBe(400);
    expect(await created.json()).toMatchObject({ error: 'invalid_request', field: 'client_type' });
    const plain = await api('app-registrations', 'POST', { name: 'SPA', redirect_uris: [WEB], client_type: 'public' });
    expect(plain.status).toBe(201);
    expect((await plain.json()) as Record<string, unknown>).not.toHaveProperty('profile');
    const bad = await api('client-configurations', 'POST', { name: 'S', category: 'c', resources, profile: 'strict' });
    expect(bad.status).toBe(400);
    expect(await bad.json()).toMatchObject({ field: 'profile' });
  });

  it("a tenant's switch to the profile is refused while its clients do not conform, naming them; accepted once they do", async () => {
    const settings = (body?: object) => api('tenant-settings', body ? 'PUT' : 'GET', body);
    // At least one client of the tenant that does not conform (the other tests may have made more).
    await server.auth.clientConfigurations.create({ tenant: 'acme', name: 'Old sync', category: 'payroll', resources });
    const tenantClients = [
      ...(await server.auth.clientConfigurations.list('acme')).map((client) => client.clientId),
      ...(await server.auth.appRegistrations.listByTenant('acme')).map((app) => app.clientId),
    ];
    const nonConforming = [
      ...(await server.auth.clientConfigurations.list('acme')).filter((client) => client.profile !== 'high-security').map((client) => client.clientId),
      ...(await server.auth.appRegistrations.listByTenant('acme')).map((app) => app.clientId),
    ];
    expect(nonConforming.length).toBeGreaterThan(0);
    const refused = await settings({ profile: 'high-security' });
    expect(refused.status).toBe(400);
    const body = (await refused.json()) as { field: string; error_description: string };
    expect(body.field).toBe('profile');
    for (const id of nonConforming) expect(body.error_description).toContain(id);
    // A conforming client is not named.
    for (const id of tenantClients.filter((id) => !nonConforming.includes(id))) expect(body.error_description).not.toContain(id);
    expect(await (await settings()).json()).not.toHaveProperty('profile');
    expect((await server.auth.audit.list({ tenant: 'acme', type: 'tenant_settings.updated' })).events).toEqual([]);

    for (const client of await server.auth.clientConfigurations.list('acme')) if (client.profile !== 'high-security') await server.auth.clientConfigurations.delete(client.clientId);
    for (const app of await server.auth.appRegistrations.listByTenant('acme')) await server.auth.appRegistrations.delete(app.clientId);
    // A conforming client of its own profile standard: before the switch its assertion may name the token endpoint URL.
    const { profile: _own, ...conformingStandard } = conformingClient();
    const standardClient = await server.auth.clientConfigurations.create(conformingStandard);
    const tokenFor = async () => postToken(server.oauthUrl, {
      grant_type: 'client_credentials', client_assertion_type: JWT_BEARER_ASSERTION, client_assertion: await assertionFor(standardClient.clientId, `${server.oauthUrl}/token`),
    }, { dpop: await proof() });
    expect((await tokenFor()).status).toBe(200);
    const accepted = await settings({ profile: 'high-security' });
    expect(accepted.status).toBe(200);
    expect(await accepted.json()).toMatchObject({ profile: 'high-security', effective: { profile: 'high-security' } });
    // At once (the instance forgets what it kept of the tenant's clients): the profile's audience rule applies.
    expect((await tokenFor()).body).toMatchObject({ error: 'invalid_client' });

    // Now every new client of the tenant must conform, its own profile standard or not.
    const { profile: _profile, ...ownStandard } = conformingClient();
    expect(await refusal(server.auth.clientConfigurations.create({ ...ownStandard, dpop: 'optional' }))).toMatchObject({ field: 'dpop', description: expect.stringContaining("the client's tenant selected it") });
    expect((await server.auth.clientConfigurations.create(ownStandard)).profile).toBe('standard');
    // Back to standard: no check.
    expect((await settings({})).status).toBe(200);
  });
});
