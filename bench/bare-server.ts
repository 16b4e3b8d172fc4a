/**
 * Child process: node-oidc-provider with nothing of ours, as the reference: default in-memory
 * adapter, one static client, JWT access tokens for one resource. Argv: <alg>.
 */
import { exportJWK, generateKeyPair, type JWK } from 'jose';
import Provider, { type Configuration } from 'oidc-provider';
import { listenOnFreePort } from './listen.js';
import { parseAlgorithm, serveUntilParentLeaves, type Algorithm, type TokenTarget } from './protocol.js';

const CLIENT_ID = 'bench-client';
const CLIENT_SECRET = 'bench-secret-that-is-long-enough-for-the-engine';

async function signingKey(alg: Algorithm): Promise<JWK> {
  const { privateKey } = await generateKeyPair(alg, { extractable: true, ...(alg === 'RS256' ? { modulusLength: 2048 } : {}) });
  return { ...(await exportJWK(privateKey)), alg, use: 'sig', kid: `bench-${alg}` };
}

function configuration(alg: Algorithm, audience: string, key: JWK): Configuration {
  return {
    jwks: { keys: [key] } as Configuration['jwks'],
    // A client's scope must be one the server declares.
    scopes: ['openid', 'scim.read'],
    clients: [
      {
        client_id: CLIENT_ID,
        client_secret: CLIENT_SECRET,
        grant_types: ['client_credentials'],
        response_types: [],
        redirect_uris: [],
        scope: 'scim.read',
        // The engine rejects a client whose default ID-token alg (RS256) has no key; none is issued here.
        id_token_signed_response_alg: alg,
      },
    ],
    features: {
      devInteractions: { enabled: false },
      clientCredentials: { enabled: true },
      resourceIndicators: {
        enabled: true,
        defaultResource: () => audience,
        getResourceServerInfo: () => ({
          scope: 'scim.read',
          audience,
          accessTokenFormat: 'jwt',
          accessTokenTTL: 3600,
          jwt: { sign: { alg } },
        }),
      },
    },
  };
}

async function start(): Promise<TokenTarget> {
  const alg = parseAlgorithm(process.argv[2]);
  const { port, serve } = await listenOnFreePort();
  const issuer = `http://127.0.0.1:${port}`;
  const provider = new Provider(issuer, configuration(alg, `${issuer}/api`, await signingKey(alg)));
  serve(provider.callback());
  return { tokenUrl: `${issuer}/token`, clientId: CLIENT_ID, clientSecret: CLIENT_SECRET };
}

await serveUntilParentLeaves(start);
