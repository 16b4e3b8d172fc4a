import { createServer, type Server } from 'node:http';
import type { AddressInfo } from 'node:net';
import { createTokenVerifier, TokenError } from '../../src/resource-server/index.js';
import { basic, postToken, startServer, type RunningServer } from '../support/server.js';

/** The kit's introspect mode: a revoked token is refused at once, not at its exp. */
describe('resource-server kit: introspect mode', () => {
  let server: RunningServer;
  let api: { clientId: string; clientSecret: string };
  let machine: { clientId: string; clientSecret: string };

  beforeAll(async () => {
    server = await startServer();
    api = await server.auth.clientConfigurations.create({ tenant: 'acme', name: 'Users API', category: 'api', resources: { scim: { scopes: ['scim.read'] } } });
    machine = await server.auth.clientConfigurations.create({ tenant: 'acme', name: 'Sync', category: 'hr', resources: { scim: { scopes: ['scim.read'] } } });
  });
  afterAll(() => server.stop());

  const token = async () => (await postToken(server.oauthUrl, 'grant_type=client_credentials', { authorization: basic(machine.clientId, machine.clientSecret) })).body.access_token as string;
  const revoke = (value: string) => fetch(`${server.oauthUrl}/revoke`, {
    method: 'POST', headers: { authorization: basic(machine.clientId, machine.clientSecret), 'content-type': 'application/x-www-form-urlencoded' }, body: `token=${value}`,
  });
  const verifier = (cacheSeconds: number, credentials = api) => createTokenVerifier({
    issuer: server.auth.issuer, audience: server.auth.audience, jwks: new URL(`${server.oauthUrl}/jwks`),
    introspection: { clientId: credentials.clientId, clientSecret: credentials.clientSecret, cacheSeconds },
  });

  it('without a cache: a token is accepted while live, refused (401) as soon as it is revoked', async () => {
    const kit = verifier(0);
    const value = await token();
    await expect(kit.verify(value)).resolves.toMatchObject({ clientId: machine.clientId, tenant: 'acme' });
    expect((await revoke(value)).status).toBe(200);
    await expect(kit.verify(value)).rejects.toMatchObject({ status: 401, error: 'invalid_token' });
  });

  it('with a cache: the answer is reused for cacheSeconds, then asked again', async () => {
    const kit = verifier(1);
    const value = await token();
    await kit.verify(value);
    await revoke(value);
    await expect(kit.verify(value)).resolves.toBeDefined();
    await new Promise((resolve) => setTimeout(resolve, 1100));
    await expect(kit.verify(value)).rejects.toBeInstanceOf(TokenError);
  });

  it('a local verifier (no introspection) accepts a revoked token until its exp: the trade-off it documents', async () => {
    const local = createTokenVerifier({ issuer: server.auth.issuer, audience: server.auth.audience, jwks: new URL(`${server.oauthUrl}/jwks`) });
    const value = await token();
    await revoke(value);
    await expect(local.verify(value)).resolves.toBeDefined();
  });

  it('fails closed: wrong API credentials or an unreachable server refuse the request with 503', async () => {
    const value = await token();
    await expect(verifier(0, { ...api, clientSecret: 'x'.repeat(43) }).verify(value)).rejects.toMatchObject({ status: 503, error: 'temporarily_unavailable' });
    const dead: Server = createServer((_req, res) => res.destroy());
    await new Promise<void>((resolve) => dead.listen(0, '127.0.0.1', resolve));
    const kit = createTokenVerifier({
      issuer: server.auth.issuer, audience: server.auth.audience, jwks: new URL(`${server.oauthUrl}/jwks`),
      introspection: { url: new URL(`http://127.0.0.1:${(dead.address() as AddressInfo).port}/introspect`), clientId: api.clientId, clientSecret: api.clientSecret, timeoutMs: 500 },
    });
    await expect(kit.verify(value)).rejects.toMatchObject({ status: 503 });
    await new Promise((resolve) => dead.close(resolve));
  });
});
