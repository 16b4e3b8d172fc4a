import { createServer } from 'node:http';
import type { AddressInfo } from 'node:net';
import * as oauth from 'oauth4webapi';
import * as full from '../../src/index.js';
import * as light from '../../src/resource-server/index.js';
import { payslipApis, type PayslipsApi } from '../support/payslips-api.js';
import { basic, postToken, startServer, type RunningServer } from '../support/server.js';

const insecure = { [oauth.allowInsecureRequests]: true } as const;

/**
 * A DPoP-BOUND TOKEN IS NO BEARER TOKEN, through either entry of the kit: the root entry
 * (`talent-auth`) and the light one (`talent-auth/resource-server`), each in Koa and Express, with
 * and without the `dpop` option, and in introspect mode: presented as Bearer it is refused (401
 * invalid_token, before any introspection call); with its proof, made by oauth4webapi, it works
 * where `dpop` is on.
 */
describe('the kit refuses a DPoP-bound token presented as Bearer, at both entries', () => {
  let server: RunningServer;
  let machine: { clientId: string; clientSecret: string };
  let as: oauth.AuthorizationServer;
  const apis: Array<PayslipsApi & { dpop: boolean }> = [];

  beforeAll(async () => {
    server = await startServer();
    machine = await server.auth.clientConfigurations.create({ tenant: 'acme', name: 'Payroll', category: 'hr', resources: { scim: { scopes: ['scim.read'] } } });
    const issuer = new URL(server.oauthUrl);
    as = await oauth.processDiscoveryResponse(issuer, await oauth.discoveryRequest(issuer, insecure));
    for (const [entryName, entry] of [['root', full], ['light', light]] as const) {
      for (const dpop of [true, false]) {
        const verifier = entry.createTokenVerifier({ issuer: server.auth.issuer, audience: server.auth.audience, jwks: new URL(`${server.oauthUrl}/jwks`), dpop });
        for (const api of await payslipApis(() => verifier, entry, (framework) => `${entryName} entry, ${framework}, dpop ${String(dpop)}`)) apis.push({ ...api, dpop });
      }
    }
  });
  afterAll(async () => {
    await Promise.all(apis.map((api) => api.close()));
    await server.stop();
  });

  it('the root entry exports the kit itself (the same functions as the light entry)', () => {
    expect(full.createTokenVerifier).toBe(light.createTokenVerifier);
    expect(full.authenticate).toBe(light.authenticate);
    expect(full.expressAuthenticate).toBe(light.expressAuthenticate);
  });

  const NAMES = ['root', 'light'].flatMap((entry) => ['true', 'false'].flatMap((dpop) => ['Koa', 'Express'].map((framework) => `${entry} entry, ${framework}, dpop ${dpop}`)));

  it.each(NAMES)('%s: Bearer refused; with its proof (oauth4webapi) accepted where dpop is on', async (name) => {
    const api = apis.find((each) => each.name === name)!;
    const DPoP = oauth.DPoP({}, await oauth.generateKeyPair('ES256'));
    const grant = () => oauth.clientCredentialsGrantRequest(as, { client_id: machine.clientId }, oauth.ClientSecretBasic(machine.clientSecret), new URLSearchParams(), { ...insecure, DPoP });
    const tokens = await oauth.processClientCredentialsResponse(as, { client_id: machine.clientId }, await grant());
    expect(tokens.token_type).toBe('dpop');
    const asBearer = await fetch(api.url, { headers: { authorization: `Bearer ${tokens.access_token}` } });
    expect({ api: api.name, status: asBearer.status }).toEqual({ api: api.name, status: 401 });
    expect(asBearer.headers.get('www-authenticate')).toMatch(/^Bearer realm="[^"]+", error="invalid_token"/);
    expect(((await asBearer.json()) as { error_description: string }).error_description).toMatch(/bound to a DPoP key/);
    // Without the dpop option the kit answers a DPoP request with a challenge (oauth4webapi throws it).
    const withProof = await oauth.protectedResourceRequest(tokens.access_token, 'GET', new URL(api.url), undefined, undefined, { ...insecure, DPoP })
      .catch((error: unknown) => { if (error instanceof oauth.WWWAuthenticateChallengeError) return error.response; throw error; });
    expect({ api: api.name, status: withProof.status }).toEqual({ api: api.name, status: api.dpop ? 200 : 400 });
  });

  it('introspect mode: a bound token as Bearer is refused before the introspection call', async () => {
    let calls = 0;
    const introspection = createServer((_request, response) => {
      calls += 1;
      response.writeHead(200, { 'content-type': 'application/json' }).end('{"active":true}');
    });
    await new Promise<void>((resolve) => introspection.listen(0, '127.0.0.1', resolve));
    try {
      const url = new URL(`http://127.0.0.1:${(introspection.address() as AddressInfo).port}/introspect`);
      for (const entry of [full, light]) {
        const verifier = entry.createTokenVerifier({
          issuer: server.auth.issuer, audience: server.auth.audience, jwks: new URL(`${server.oauthUrl}/jwks`), dpop: true,
          introspection: { url, clientId: machine.clientId, clientSecret: machine.clientSecret, cacheSeconds: 0 },
        });
        const DPoP = oauth.DPoP({}, await oauth.generateKeyPair('ES256'));
        const tokens = await oauth.processClientCredentialsResponse(as, { client_id: machine.clientId },
          await oauth.clientCredentialsGrantRequest(as, { client_id: machine.clientId }, oauth.ClientSecretBasic(machine.clientSecret), new URLSearchParams(), { ...insecure, DPoP }));
        await expect(verifier.verifyRequest({ authorization: `Bearer ${tokens.access_token}`, dpop: undefined, method: 'GET', url: 'http://api.example/payslips' }))
          .rejects.toMatchObject({ status: 401, error: 'invalid_token' });
        await expect(verifier.verifyAuthorization(`Bearer ${tokens.access_token}`)).rejects.toMatchObject({ status: 401, error: 'invalid_token' });
        expect(calls).toBe(0);
        // A plain Bearer token goes on to the introspection call.
        const bearer = (await postToken(server.oauthUrl, 'grant_type=client_credentials', { authorization: basic(machine.clientId, machine.clientSecret) })).body.access_token as string;
        await expect(verifier.verifyAuthorization(`Bearer ${bearer}`)).resolves.toMatchObject({ sub: machine.clientId });
        expect(calls).toBe(1);
        calls = 0;
      }
    } finally {
      introspection.closeAllConnections();
      await new Promise((resolve) => introspection.close(resolve));
    }
  });
});
