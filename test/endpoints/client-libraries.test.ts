import * as oauth from 'oauth4webapi';
import * as client from 'openid-client';
import { startServer, type RunningServer } from '../support/server.js';

/**
 * docs/client-libraries.md, checked with the Node libraries users have: client credentials go in
 * the HTTP Basic header, which each library must be told to use where its default differs.
 */
describe('client libraries (docs/client-libraries.md)', () => {
  let server: RunningServer;
  let clientId: string;
  let clientSecret: string;

  beforeAll(async () => {
    server = await startServer();
    ({ clientId, clientSecret } = await server.auth.clientConfigurations.create({
      tenant: 'acme', name: 'Sync', category: 'hr', resources: { scim: { scopes: ['scim.read'] } },
    }));
  });
  afterAll(() => server.stop());

  it('openid-client with ClientSecretBasic gets a token', async () => {
    const config = await client.discovery(new URL(server.oauthUrl), clientId, undefined, client.ClientSecretBasic(clientSecret), {
      execute: [client.allowInsecureRequests],
    });
    const tokens = await client.clientCredentialsGrant(config, { scope: 'scim.read' });
    expect(tokens).toMatchObject({ token_type: 'bearer', scope: 'scim.read', expires_in: 3600 });
  });

  it("openid-client's default for a secret (client_secret_post) is refused: credentials never go in the body", async () => {
    const config = await client.discovery(new URL(server.oauthUrl), clientId, clientSecret, undefined, {
      execute: [client.allowInsecureRequests],
    });
    const error = await client.clientCredentialsGrant(config, { scope: 'scim.read' }).catch((caught: unknown) => caught);
    // A 401 with a WWW-Authenticate challenge: the library reports the challenge's error.
    expect(error).toMatchObject({ status: 401, code: 'OAUTH_WWW_AUTHENTICATE_CHALLENGE' });
    expect((error as { cause: Array<{ scheme: string; parameters: Record<string, string> }> }).cause[0]).toMatchObject({
      scheme: 'basic', parameters: { error: 'invalid_client' },
    });
  });

  it('oauth4webapi with ClientSecretBasic gets a token', async () => {
    const issuer = new URL(server.oauthUrl);
    const as = await oauth.processDiscoveryResponse(issuer, await oauth.discoveryRequest(issuer, { [oauth.allowInsecureRequests]: true }));
    const response = await oauth.clientCredentialsGrantRequest(
      as, { client_id: clientId }, oauth.ClientSecretBasic(clientSecret), new URLSearchParams({ scope: 'scim.read' }),
      { [oauth.allowInsecureRequests]: true },
    );
    const tokens = await oauth.processClientCredentialsResponse(as, { client_id: clientId }, response);
    expect(tokens.scope).toBe('scim.read');
  });
});
