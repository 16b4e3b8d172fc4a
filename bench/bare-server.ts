/**
 * Child process: node-oidc-provider with nothing of ours, as the reference. Argv: <alg>.
 * Static clients (a client_credentials service, the same with private_key_jwt and with DPoP
 * required, and a confidential named-user app per ID-token algorithm, registered with it), JWT access
 * tokens for one resource signed with <alg>, ID tokens signed as each app registered, the same keys as ours, and the
 * engine's own memory adapter. That adapter's store is an LRU of 1,000 entries, which would evict
 * the supply of codes minted before a measured run: here the same LRU holds 1,000,000.
 *
 * Userinfo and introspection: the engine's own (`features.userinfo`, on by default, at `/me`;
 * `features.introspection` at `/token/introspection`, client_secret_basic), which serve only tokens
 * the engine stores, and its userinfo only tokens without audience. So the codes minted for them
 * (purpose `lifecycle`) name no resource and their grant holds the identity scopes alone: their
 * exchange gives an opaque access token, scope `openid profile email`, without audience. Both
 * features add routes only: the token endpoint's work is the same with them on.
 */
import { randomBytes } from 'node:crypto';
import type { JWK } from 'jose';
import Provider, { type ClientMetadata, type Configuration, type KoaContextWithOIDC } from 'oidc-provider';
import MemoryAdapter from 'oidc-provider/lib/adapters/memory_adapter.js';
import LRU from 'oidc-provider/lib/helpers/lru.js';
import { listenOnFreePort } from './listen.js';
import { BENCH_USERS, mintCodes, namedUserCodeRequest } from './mint-codes.js';
import { ID_TOKEN_ALGORITHMS, parseAlgorithm, type Algorithm, type AppClient, type IdTokenAlgorithm, type ServerTarget } from './protocol.js';
import { serveUntilParentLeaves, type BenchServer } from './server-child.js';
import { clientPublicJwk, sharedKeys } from './shared-keys.js';

const SERVICE = { clientId: 'bench-client', clientSecret: 'bench-secret-that-is-long-enough-for-the-engine' };
/** The client-authentication workloads' clients, as ours's (bench/ours-server.ts). */
const KEY_SERVICE = { clientId: 'bench-key-client' };
const DPOP_SERVICE = { clientId: 'bench-dpop-client', clientSecret: 'bench-dpop-secret-that-is-long-enough-for-the-engine' };
/** The named-user apps, one per ID-token algorithm (RS256's is `bench-app`, as before there were others). */
const APPS = Object.fromEntries(ID_TOKEN_ALGORITHMS.map((idTokenAlg) => {
  const suffix = idTokenAlg === 'RS256' ? '' : `-${idTokenAlg.toLowerCase()}`;
  return [idTokenAlg, {
    clientId: `bench-app${suffix}`,
    clientSecret: `bench-app${suffix}-secret-that-is-long-enough-for-the-engine`,
    redirectUri: 'https://app.bench.example/callback',
  }];
})) as Record<IdTokenAlgorithm, AppClient>;
const APP = APPS.RS256;
/** As ours: the named-user and code lifetimes of its engine configuration. */
const TTL = { ClientCredentials: 3600, AccessToken: 300, AuthorizationCode: 300, RefreshToken: 3600, IdToken: 3600 };

const users = new Set(BENCH_USERS);

function configuration(alg: Algorithm, audience: string): Configuration {
  const store = new LRU({ maxSize: 1_000_000 });
  return {
    adapter: (model: string) => new MemoryAdapter(model, store),
    jwks: sharedKeys() as Configuration['jwks'],
    // A client's scope must be one the server declares (API scopes are declared scopes, as in ours).
    scopes: ['openid', 'offline_access', 'profile', 'email', 'scim.read'],
    claims: {
      openid: ['sub'],
      profile: ['name', 'given_name', 'family_name', 'preferred_username'],
      email: ['email', 'email_verified'],
    },
    conformIdTokenClaims: false,
    clients: [
      {
        client_id: SERVICE.clientId,
        client_secret: SERVICE.clientSecret,
        grant_types: ['client_credentials'],
        response_types: [],
        redirect_uris: [],
        scope: 'scim.read',
      },
      {
        client_id: KEY_SERVICE.clientId,
        token_endpoint_auth_method: 'private_key_jwt',
        jwks: { keys: [clientPublicJwk() as JWK] },
        grant_types: ['client_credentials'],
        response_types: [],
        redirect_uris: [],
        scope: 'scim.read',
      },
      {
        client_id: DPOP_SERVICE.clientId,
        client_secret: DPOP_SERVICE.clientSecret,
        grant_types: ['client_credentials'],
        response_types: [],
        redirect_uris: [],
        scope: 'scim.read',
        dpop_bound_access_tokens: true,
      },
      ...ID_TOKEN_ALGORITHMS.map((idTokenAlg): ClientMetadata => ({
        client_id: APPS[idTokenAlg].clientId,
        client_secret: APPS[idTokenAlg].clientSecret,
        grant_types: ['authorization_code', 'refresh_token'],
        response_types: ['code'],
        redirect_uris: [APPS[idTokenAlg].redirectUri],
        id_token_signed_response_alg: idTokenAlg,
      })),
    ],
    async findAccount(_ctx, sub) {
      if (!users.has(sub)) return undefined;
      return { accountId: sub, claims: async () => ({ sub, name: `Bench User ${sub.slice(11)}`, email: `${sub}@bench.example` }) };
    },
    // As ours: codes and refresh tokens outlive the browser session, refresh tokens for confidential
    // apps, rotated at every use.
    expiresWithSession: async () => false,
    issueRefreshToken: async (_ctx, client) => client.clientAuthMethod !== 'none' && client.grantTypeAllowed('refresh_token'),
    rotateRefreshToken: true,
    features: {
      devInteractions: { enabled: false },
      clientCredentials: { enabled: true },
      introspection: { enabled: true },
      // As ours: proofs checked, server nonces given, each proof's jti used once (the engine's
      // ReplayDetection, in its memory). Like the two features above, it costs nothing to a
      // request without a DPoP header, so it is always on.
      dPoP: { enabled: true, nonceSecret: randomBytes(32), allowReplay: false },
      resourceIndicators: {
        enabled: true,
        defaultResource: () => audience,
        useGrantedResource: () => true,
        getResourceServerInfo: (ctx: KoaContextWithOIDC) => ({
          scope: 'scim.read',
          audience,
          accessTokenFormat: 'jwt',
          accessTokenTTL: ctx.oidc.params?.grant_type === 'client_credentials' ? TTL.ClientCredentials : TTL.AccessToken,
          jwt: { sign: { alg } },
        }),
      },
    },
    ttl: TTL,
  };
}

async function start(): Promise<BenchServer> {
  const alg = parseAlgorithm(process.argv[2]);
  const { port, serve } = await listenOnFreePort();
  const issuer = `http://127.0.0.1:${port}`;
  const audience = `${issuer}/api`;
  const provider = new Provider(issuer, configuration(alg, audience));
  serve(provider.callback());
  const target: ServerTarget = {
    tokenUrl: `${issuer}/token`,
    userinfoUrl: `${issuer}/me`,
    introspectionUrl: `${issuer}/token/introspection`,
    service: SERVICE,
    app: APP,
    apps: APPS,
    keyService: KEY_SERVICE,
    dpopService: DPOP_SERVICE,
  };
  // Userinfo's and introspection's codes are the RS256 app's, whatever the ID-token algorithm asked.
  const codeRequest = (purpose: 'exchange' | 'lifecycle', idTokenAlg: IdTokenAlgorithm) =>
    purpose === 'lifecycle' ? namedUserCodeRequest(APP) : namedUserCodeRequest(APPS[idTokenAlg], audience);
  return { target, mint: (count, purpose, idTokenAlg) => mintCodes(provider, codeRequest(purpose, idTokenAlg), count) };
}

await serveUntilParentLeaves(start);
