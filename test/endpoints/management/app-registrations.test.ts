import { decodeProtectedHeader } from 'jose';
import { NotFound, ValidationError } from '../../../src/index.js';
import { alice, testAccounts } from '../../support/accounts.js';
import { testJwks } from '../../support/keys.js';
import { basic, postToken, startServer, type RunningServer } from '../../support/server.js';
import { signInForCode } from '../../support/sign-in.js';
import { STORE_KINDS, useStore } from '../../support/stores.js';
import { UserAgent } from '../../support/user-agent.js';

const WEB = 'https://portal.example.com/cb';
const LOCAL = 'http://localhost:3000/cb';

describe.each(STORE_KINDS)('app registrations (%s store)', (kind) => {
  const store = useStore(kind);
  let server: RunningServer;

  beforeAll(async () => {
    server = await startServer({
      store: store.option(),
      accounts: testAccounts([alice]),
      keys: await testJwks(['ES256', 'RS256']),
      namedUserAccessTokenTtl: 3600,
    });
  });
  afterAll(async () => {
    await server.stop();
  });

  const apps = () => server.auth.appRegistrations;

  it('public apps: no secret, PKCE always on', async () => {
    const app = await apps().create({ name: 'SPA', redirectUris: [LOCAL, 'com.example.app://cb'], clientType: 'public' });
    expect(app).not.toHaveProperty('clientSecret');
    expect(app).toMatchObject({ clientType: 'public', pkceEnabled: true, idTokenSigningAlg: 'RS256' });
    await expect(apps().create({ name: 'SPA', redirectUris: [LOCAL], clientType: 'public', pkceEnabled: false })).rejects.toThrow(
      new ValidationError('pkceEnabled', 'PKCE is always on for public apps'),
    );
    await expect(apps().rotateSecret(app.clientId)).rejects.toBeInstanceOf(ValidationError);
  });

  it('confidential apps: a secret shown once, PKCE on by default, off only with https URIs', async () => {
    const app = await apps().create({ name: 'Portal', description: 'HR portal', redirectUris: [WEB], clientType: 'confidential' });
    expect(app.clientSecret).toMatch(/^[A-Za-z0-9_-]{43}$/);
    expect(app.pkceEnabled).toBe(true);
    expect(await apps().get(app.clientId)).not.toHaveProperty('clientSecret');
    expect(JSON.stringify(await apps().list())).not.toContain(app.clientSecret);
    const legacy = await apps().create({ name: 'Legacy', redirectUris: [WEB], clientType: 'confidential', pkceEnabled: false });
    expect(legacy.pkceEnabled).toBe(false);
    await expect(
      apps().create({ name: 'Legacy', redirectUris: [WEB, LOCAL], clientType: 'confidential', pkceEnabled: false }),
    ).rejects.toThrow(/every redirect URI is https/);
    await expect(apps().update(legacy.clientId, { redirectUris: [LOCAL] })).rejects.toThrow(/every redirect URI is https/);
    const nowPublic = await apps().update(legacy.clientId, { clientType: 'public' });
    expect(nowPublic).toMatchObject({ clientType: 'public', pkceEnabled: true });
    expect(nowPublic).not.toHaveProperty('clientSecret');
  });

  it('refuses invalid redirect URIs naming the URI and the rule', async () => {
    const error = await apps().create({ name: 'X', redirectUris: [WEB, 'http://evil.example/cb'], clientType: 'public' }).catch((e: unknown) => e);
    expect(error).toBeInstanceOf(ValidationError);
    expect((error as ValidationError).field).toBe('redirectUris.1');
    expect((error as ValidationError).description).toContain('http://evil.example/cb');
    expect((error as ValidationError).description).toContain('plain http');
    await expect(apps().create({ name: 'X', redirectUris: [], clientType: 'public' })).rejects.toBeInstanceOf(ValidationError);
    await expect(apps().create({ name: '', redirectUris: [WEB], clientType: 'public' })).rejects.toBeInstanceOf(ValidationError);
    await expect(apps().create({ name: 'X', redirectUris: [WEB], clientType: 'spa' as never })).rejects.toBeInstanceOf(ValidationError);
    await expect(apps().create({ name: 'X', redirectUris: ['https://localhost/cb', 'myapp://cb'], clientType: 'public' })).rejects.toMatchObject({ field: 'redirectUris' });
  });

  it('public → confidential generates a secret; confidential → public deletes it', async () => {
    const app = await apps().create({ name: 'Switch', redirectUris: [WEB], clientType: 'public' });
    const confidential = await apps().update(app.clientId, { clientType: 'confidential' });
    expect(confidential.clientSecret).toMatch(/^[A-Za-z0-9_-]{43}$/);
    const { code, verifier } = await signInForCode(server, { clientId: app.clientId, redirectUri: WEB }, alice);
    const exchange = (secret?: string) => postToken(
      server.oauthUrl,
      { grant_type: 'authorization_code', code, redirect_uri: WEB, code_verifier: verifier, ...(secret ? {} : { client_id: app.clientId }) },
      secret ? { authorization: basic(app.clientId, secret) } : {},
    );
    await apps().update(app.clientId, { clientType: 'public' });
    expect((await exchange(confidential.clientSecret)).body.error).toBe('invalid_client');
    const renamed = await apps().update(app.clientId, { name: 'Renamed' });
    expect(renamed).not.toHaveProperty('clientSecret');
    // The type change ended the grants made before it, the code's with them; a new sign-in works.
    expect((await exchange()).body.error).toBe('invalid_grant');
    const again = await signInForCode(server, { clientId: app.clientId, redirectUri: WEB }, alice);
    const exchanged = await postToken(server.oauthUrl, { grant_type: 'authorization_code', code: again.code, redirect_uri: WEB, code_verifier: again.verifier, client_id: app.clientId });
    expect(exchanged.status).toBe(200);
  });

  it('a rotated secret replaces the old one at once', async () => {
    const app = await apps().create({ name: 'Rotate', redirectUris: [WEB], clientType: 'confidential' });
    const { code, verifier } = await signInForCode(server, { clientId: app.clientId, redirectUri: WEB }, alice);
    const { clientSecret } = await apps().rotateSecret(app.clientId);
    const body = { grant_type: 'authorization_code', code, redirect_uri: WEB, code_verifier: verifier };
    expect((await postToken(server.oauthUrl, body, { authorization: basic(app.clientId, app.clientSecret!) })).status).toBe(401);
    expect((await postToken(server.oauthUrl, body, { authorization: basic(app.clientId, clientSecret) })).status).toBe(200);
  });

  it('a deleted app can no longer start a sign-in', async () => {
    const app = await apps().create({ name: 'Gone', redirectUris: [WEB], clientType: 'public' });
    expect(await apps().delete(app.clientId)).toBe(true);
    expect(await apps().get(app.clientId)).toBeUndefined();
    await expect(apps().update(app.clientId, { name: 'x' })).rejects.toBeInstanceOf(NotFound);
    const step = await new UserAgent(server.baseUrl).request(
      `${server.oauthUrl}/authorize?response_type=code&client_id=${app.clientId}&redirect_uri=${encodeURIComponent(WEB)}&scope=openid&state=s`,
    );
    expect(step.status).toBe(400);
    expect(step.location).toBeUndefined();
  });

  it('signs ID tokens with the algorithm the app registered; access tokens keep theirs; TTL is configurable', async () => {
    const app = await apps().create({ name: 'ES', redirectUris: [WEB], clientType: 'confidential', idTokenSigningAlg: 'ES256' });
    const { code, verifier } = await signInForCode(server, { clientId: app.clientId, redirectUri: WEB }, alice);
    const tokens = await postToken(server.oauthUrl, { grant_type: 'authorization_code', code, redirect_uri: WEB, code_verifier: verifier }, { authorization: basic(app.clientId, app.clientSecret!) });
    expect(decodeProtectedHeader(tokens.body.id_token as string).alg).toBe('ES256');
    expect(decodeProtectedHeader(tokens.body.access_token as string).alg).toBe('ES256');
    expect(tokens.body.expires_in).toBe(3600);
    await expect(apps().create({ name: 'Ed', redirectUris: [WEB], clientType: 'public', idTokenSigningAlg: 'EdDSA' })).rejects.toMatchObject({ field: 'idTokenSigningAlg' });
  });
});
