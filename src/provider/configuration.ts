import type { Configuration, KoaContextWithOIDC } from 'oidc-provider';
import { errors } from 'oidc-provider';
import type { Store } from '../../adapters/types.js';
import { constraintsForGrantedScopes, type Constraints } from '../../policies/constraints.js';
import { resolveRequestedScopes } from '../../policies/scopes.js';
import type { ApiCatalog } from '../catalog.js';
import type { ResolvedOptions } from '../options.js';
import type { ClientDirectory } from './client-directory.js';
import { EXTRA_CLIENT_METADATA } from './client-directory.js';
import type { PrivateJwks, SigningAlgorithm } from './keys.js';
import { engineKeys } from './signing-keys.js';
import { renderErrorPage } from './error-page.js';

/** Spec limits: client_credentials tokens live one hour, not configurable. */
export const CLIENT_CREDENTIALS_TTL = 3600;
const NAMED_USER_ACCESS_TOKEN_TTL = 300;
const AUTHORIZATION_CODE_TTL = 300;
const REFRESH_TOKEN_TTL = 3600;

interface EngineClientExtras {
  tenant?: string;
  constraints?: Constraints;
}

export interface EngineSetup {
  options: ResolvedOptions;
  catalog: ApiCatalog;
  store: Store;
  clients: ClientDirectory;
  jwks: PrivateJwks;
  /** Every algorithm we sign with (access tokens, ID tokens). */
  algorithms: readonly SigningAlgorithm[];
}

/** The node-oidc-provider configuration: every engine decision of ours is in this one place. */
export function engineConfiguration({ options, catalog, store, clients, jwks, algorithms }: EngineSetup): Configuration {
  const { audience, accessTokenAlgorithm } = options;

  return {
    adapter: (model: string) => (model === 'Client' ? clients : store.engine(model)),
    jwks: { keys: engineKeys(jwks, algorithms) } as Configuration['jwks'],
    clients: [],
    scopes: ['openid', 'offline_access', ...catalog.scopes],
    responseTypes: ['code'],
    // Credentials only in the Basic header (DESIGN); no HS*/client_secret_jwt: we keep only a digest.
    clientAuthMethods: ['client_secret_basic', 'none'],
    clientBasedCORS: () => false,
    extraClientMetadata: {
      properties: [...EXTRA_CLIENT_METADATA],
      validator() {},
    },
    features: {
      devInteractions: { enabled: false },
      // Lets keys sign through node:crypto (provider/signing-keys.ts): a third less CPU per token.
      externalSigningSupport: { enabled: true, ack: 'experimental-01' },
      clientCredentials: { enabled: true },
      dPoP: { enabled: false },
      pushedAuthorizationRequests: { enabled: false },
      rpInitiatedLogout: { enabled: false },
      introspection: { enabled: false },
      revocation: { enabled: false },
      resourceIndicators: {
        enabled: true,
        defaultResource: () => audience,
        useGrantedResource: () => true,
        getResourceServerInfo(ctx: KoaContextWithOIDC, resourceIndicator: string, client) {
          if (resourceIndicator !== audience) {
            throw new errors.InvalidTarget(`unknown resource; the only resource is ${audience}`);
          }
          if (ctx.oidc.params?.grant_type === 'client_credentials') {
            const granted = resolveRequestedScopes(
              ctx.oidc.params.scope as string | undefined,
              new Set(client.scope?.split(' ') ?? []),
            ).join(' ');
            // The engine reads the requested scopes after this call: an omitted scope means all.
            ctx.oidc.params.scope = granted;
            return {
              scope: granted,
              audience,
              accessTokenTTL: CLIENT_CREDENTIALS_TTL,
              accessTokenFormat: 'jwt',
              jwt: { sign: { alg: accessTokenAlgorithm } },
            };
          }
          return {
            scope: catalog.scopes.join(' '),
            audience,
            accessTokenTTL: NAMED_USER_ACCESS_TOKEN_TTL,
            accessTokenFormat: 'jwt',
            jwt: { sign: { alg: accessTokenAlgorithm } },
          };
        },
      },
    },
    async extraTokenClaims(_ctx, token) {
      const client = (token as { client?: EngineClientExtras }).client;
      if (!client?.tenant) return undefined;
      const constraints = constraintsForGrantedScopes(
        catalog,
        client.constraints ?? {},
        token.scope?.split(' ') ?? [],
      );
      return { tenant: client.tenant, ...(constraints ? { constraints } : {}) };
    },
    enabledJWA: {
      clientAuthSigningAlgValues: ['ES256', 'RS256', 'PS256', 'EdDSA'],
      idTokenSigningAlgValues: ['RS256', 'PS256', 'ES256', 'EdDSA'],
      requestObjectSigningAlgValues: ['ES256', 'RS256', 'PS256', 'EdDSA'],
      userinfoSigningAlgValues: ['RS256', 'PS256', 'ES256', 'EdDSA'],
    },
    routes: {
      authorization: '/authorize',
      token: '/token',
      jwks: '/jwks',
      userinfo: '/userinfo',
    },
    ttl: {
      ClientCredentials: CLIENT_CREDENTIALS_TTL,
      AccessToken: NAMED_USER_ACCESS_TOKEN_TTL,
      AuthorizationCode: AUTHORIZATION_CODE_TTL,
      RefreshToken: REFRESH_TOKEN_TTL,
      IdToken: 3600,
      Interaction: 600,
      Session: 86400,
      Grant: 365 * 86400,
    },
    renderError: renderErrorPage,
  };
}
