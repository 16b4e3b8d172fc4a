import { createLocalJWKSet, decodeProtectedHeader, jwtVerify, type JSONWebKeySet } from 'jose';
import { basic, postToken, startServer, type RunningServer } from '../../support/server.js';
import { STORE_KINDS, useStore } from '../../support/stores.js';

const resources = {
  scim: { scopes: ['scim.read'], constraints: { group: ['eng'], department: ['rnd', 'ops'] } },
  subscriptions: { scopes: ['manage.subscriptions'] },
};

describe.each(STORE_KINDS)('client_credentials over HTTP (%s store)', (kind) => {
  const store = useStore(kind);

  describe.each(['', '/auth2'])('pathPrefix "%s"', (pathPrefix) => {
    let server: RunningServer;
    let clientId: string;
    let clientSecret: string;
    let jwks: JSONWebKeySet;

    beforeAll(async () => {
      server = await startServer({ pathPrefix, store: store.option() });
      ({ clientId, clientSecret } = await server.auth.clientConfigurations.create({
        tenant: 'acme',
        name: 'Payroll sync',
        category: 'payroll',
        resources,
      }));
      jwks = (await (await fetch(`${server.oauthUrl}/jwks`)).json()) as JSONWebKeySet;
    });
    afterAll(async () => {
      await server.stop();
    });

    const token = (body: Record<string, string>, headers?: Record<string, string>) =>
      postToken(server.oauthUrl, body, headers ?? { authorization: basic(clientId, clientSecret) });

    it('issues a one-hour RFC 9068 JWT with tenant, scopes and constraints', async () => {
      const response = await token({ grant_type: 'client_credentials', scope: 'scim.read' });
      expect(response.status).toBe(200);
      expect(response.headers.get('cache-control')).toBe('no-store');
      expect(response.body).toMatchObject({ token_type: 'Bearer', expires_in: 3600, scope: 'scim.read' });
      expect(response.body).not.toHaveProperty('refresh_token');
      const accessToken = response.body.access_token as string;
      expect(decodeProtectedHeader(accessToken)).toMatchObject({ alg: 'ES256', typ: 'at+jwt' });
      const { payload } = await jwtVerify(accessToken, createLocalJWKSet(jwks), {
        issuer: `${server.baseUrl}${pathPrefix}/oauth2`,
        audience: `${server.baseUrl}/api`,
        typ: 'at+jwt',
      });
      expect(payload).toMatchObject({
        sub: clientId,
        client_id: clientId,
        scope: 'scim.read',
        tenant: 'acme',
        constraints: { scim: { group: ['eng'], department: ['rnd', 'ops'] } },
      });
      expect(payload.exp! - payload.iat!).toBe(3600);
      expect(typeof payload.jti).toBe('string');
    });

    it('grants every assigned scope when scope is omitted', async () => {
      const response = await token({ grant_type: 'client_credentials' });
      expect(response.status).toBe(200);
      expect(new Set((response.body.scope as string).split(' '))).toEqual(
        new Set(['scim.read', 'manage.subscriptions']),
      );
    });

    it('carries the constraints of granted APIs only', async () => {
      const response = await token({ grant_type: 'client_credentials', scope: 'manage.subscriptions' });
      const { payload } = await jwtVerify(response.body.access_token as string, createLocalJWKSet(jwks));
      expect(payload.scope).toBe('manage.subscriptions');
      expect(payload).not.toHaveProperty('constraints');
    });

    it('never reads constraints from the request', async () => {
      const response = await token({
        grant_type: 'client_credentials',
        scope: 'scim.read',
        constraints: '{"scim":{"group":["everyone"]}}',
        tenant: 'globex',
      });
      expect(response.status).toBe(200);
      const { payload } = await jwtVerify(response.body.access_token as string, createLocalJWKSet(jwks));
      expect(payload.tenant).toBe('acme');
      expect(payload.constraints).toEqual({ scim: { group: ['eng'], department: ['rnd', 'ops'] } });
    });

    it('issues a new token on every call; the earlier one stays valid', async () => {
      const first = await token({ grant_type: 'client_credentials' });
      const second = await token({ grant_type: 'client_credentials' });
      expect(first.body.access_token).not.toBe(second.body.access_token);
      for (const response of [first, second]) {
        await expect(jwtVerify(response.body.access_token as string, createLocalJWKSet(jwks))).resolves.toBeTruthy();
      }
    });

    it('refuses a scope that is not assigned with invalid_scope', async () => {
      const response = await token({ grant_type: 'client_credentials', scope: 'scim.read scim.write' });
      expect(response.status).toBe(400);
      expect(response.body.error).toBe('invalid_scope');
      expect(response.body.error_description).toContain('scim.write');
    });

    it('refuses an unknown resource indicator', async () => {
      const response = await token({ grant_type: 'client_credentials', resource: 'https://evil.example/api' });
      expect(response.status).toBe(400);
      expect(response.body.error).toBe('invalid_target');
    });

    it('publishes discovery at both the OIDC and the RFC 8414 address', async () => {
      const oidc = await (await fetch(`${server.oauthUrl}/.well-known/openid-configuration`)).json();
      const rfc8414 = await (
        await fetch(`${server.baseUrl}/.well-known/oauth-authorization-server${pathPrefix}/oauth2`)
      ).json();
      expect(oidc).toEqual(rfc8414);
      expect(oidc).toMatchObject({
        issuer: `${server.baseUrl}${pathPrefix}/oauth2`,
        token_endpoint: `${server.baseUrl}${pathPrefix}/oauth2/token`,
        jwks_uri: `${server.baseUrl}${pathPrefix}/oauth2/jwks`,
        authorization_endpoint: `${server.baseUrl}${pathPrefix}/oauth2/authorize`,
        token_endpoint_auth_methods_supported: ['client_secret_basic', 'private_key_jwt', 'none'],
        // The algorithms of private_key_jwt assertions: asymmetric only (no secret-based HS*).
        token_endpoint_auth_signing_alg_values_supported: ['RS256', 'PS256', 'ES256', 'EdDSA', 'Ed25519'],
      });
    });

    it('publishes public keys only', async () => {
      expect(jwks.keys.length).toBeGreaterThanOrEqual(2);
      for (const key of jwks.keys) {
        for (const member of ['d', 'p', 'q', 'dp', 'dq', 'qi', 'k']) expect(key).not.toHaveProperty(member);
        expect(key.kid).toEqual(expect.any(String));
      }
    });
  });
});
