import type { Client, Configuration, KoaContextWithOIDC } from 'oidc-provider';
import type { Store } from '../../adapters/types.js';
import type { ApiCatalog } from '../../policies/catalog.js';
import type { Constraints } from '../../policies/constraints.js';
import { InvalidRequest, InvalidTarget } from '../../policies/errors.js';
import {
  accessTokenSeconds,
  AUTHORIZATION_CODE_SECONDS,
  ID_TOKEN_SECONDS,
  INTERACTION_SECONDS,
  REFRESH_TOKEN_SECONDS,
} from '../../policies/lifetimes.js';
import { MANAGEMENT_SCOPE } from '../../policies/management.js';
import { MAX_STATE_OR_NONCE } from '../../policies/request-limits.js';
import { checkCodeChallenge, pkceRequired } from '../../policies/pkce.js';
import { namedUserResourceScopes, validateAuthorizationScopes } from '../../policies/scopes.js';
import { tenantPolicy } from '../../policies/tenant-policy.js';
import { CLIENT_CREDENTIALS_TOKEN_SECONDS, clientCredentialsClaims, clientCredentialsScopes } from '../grants/client-credentials.js';
import { IDENTITY_CLAIMS, namedUserClaims, namedUserResource, namedUserTokenScope } from '../grants/named-user.js';
import { issuesRefreshTokens } from '../grants/refresh-token.js';
import type { ResolvedOptions } from '../options.js';
import type { Consents } from '../records/consents.js';
import { PrivateHosts } from '../../policies/backchannel-logout.js';
import { accountOf, engineAccount } from './accounts.js';
import { deliveryFetch } from './backchannel-delivery.js';
import type { ClientDirectory } from './client-directory.js';
import { EXTRA_CLIENT_METADATA, engineAppOwner } from './client-directory.js';
import { consentGrantLoader } from './consent-grants.js';
import { errorPageRenderer } from './error-page.js';
import { engineErrors } from './errors.js';
import { signingKid, type PrivateJwks, type SigningAlgorithm } from './keys.js';
import { engineKeys } from './signing-keys.js';
import { signOutSources, type SignOutLook } from './sign-out.js';
import { Localizer } from '../i18n/localizer.js';


interface EngineClientExtras {
  tenant?: string;
  constraints?: Constraints;
  first_party?: boolean;
}

export interface EngineSetup {
  options: ResolvedOptions;
  catalog: ApiCatalog;
  store: Store;
  clients: ClientDirectory;
  jwks: PrivateJwks;
  /** Every algorithm we sign with (access tokens, ID tokens). */
  algorithms: readonly SigningAlgorithm[];
  /** Path of the sign-in pages; the engine sends browsers to `{interactionPath}/{uid}`. */
  interactionPath: string;
  cookieKeys: string[];
  consents: Consents;
  /** The languages and branding of the engine's pages (errors, sign-out); English when absent. */
  look?: SignOutLook;
}

const TOKEN_SCOPE = Symbol('the scope of the named-user access token this request issued');

/**
 * The token response's `scope` made the access token's own (RFC 6749 §5.1): a named-user token's
 * scope also names the OIDC scopes it may use at userinfo, which the engine's answer leaves out.
 */
export function alignTokenResponseScope(ctx: { state: Record<PropertyKey, unknown>; status: number; body: unknown }): void {
  const scope = ctx.state[TOKEN_SCOPE];
  const body = ctx.body as { scope?: unknown } | undefined;
  if (ctx.status === 200 && typeof scope === 'string' && body && typeof body === 'object') body.scope = scope;
}

/** The node-oidc-provider configuration: every engine decision of ours is in this one place. */
export function engineConfiguration(setup: EngineSetup): Configuration {
  const { options, catalog, store, clients, jwks, algorithms, interactionPath, cookieKeys, consents } = setup;
  const look = setup.look ?? { localizer: new Localizer(), brands: undefined };
  const { audience, accessTokenAlgorithm, namedUserAccessTokenTtl, managementAccessTokenTtl, accounts, tenantPolicy: policyOf } = options;
  // The access-token key by kid: the first key of the algorithm (the rotation rule, engine/keys.ts).
  const accessTokenKid = signingKid(jwks, accessTokenAlgorithm, algorithms);
  const jwtFormat = { accessTokenFormat: 'jwt' as const, jwt: { sign: { alg: accessTokenAlgorithm, kid: accessTokenKid } } };

  return {
    adapter: (model: string) => (model === 'Client' ? clients : store.engine(model)),
    jwks: { keys: engineKeys(jwks, algorithms) } as Configuration['jwks'],
    clients: [],
    scopes: ['openid', 'offline_access', 'profile', 'email', MANAGEMENT_SCOPE, ...catalog.scopes],
    responseTypes: ['code'],
    claims: IDENTITY_CLAIMS as Configuration['claims'],
    // ID tokens carry the identity claims their scopes allow (userinfo answers them too).
    conformIdTokenClaims: false,
    // redirect_uri is always required and must match a registered one exactly (policies/redirect-uris.ts).
    allowOmittingSingleRegisteredRedirectUri: false,
    cookies: {
      keys: cookieKeys,
      long: { httpOnly: true, sameSite: 'lax' },
      short: { httpOnly: true, sameSite: 'lax' },
    },
    interactions: {
      url: (_ctx, interaction) => `${interactionPath}/${interaction.uid}`,
    },
    async findAccount(_ctx, sub) {
      const account = accounts ? await accounts.findAccount(sub) : undefined;
      return account && engineAccount(account);
    },
    loadExistingGrant: engineErrors(consentGrantLoader(consents, catalog, audience, policyOf)) as Configuration['loadExistingGrant'],
    extraParams: {
      // state is required (it is the app's CSRF protection of its callback, RFC 6749 §10.12); the
      // engine would let it be omitted. Checked after the client
      // and redirect URI are known, so the error goes back to the app.
      state: engineErrors((ctx: KoaContextWithOIDC, value: unknown) => {
        if (typeof value !== 'string' || value === '') throw new InvalidRequest(`missing required parameter 'state'`);
        // What a pending sign-in stores is bounded: state and nonce are kept until it ends.
        if (value.length > MAX_STATE_OR_NONCE) throw new InvalidRequest(`state must be at most ${MAX_STATE_OR_NONCE} characters`);
        const nonce = ctx.oidc.params?.nonce;
        if (typeof nonce === 'string' && nonce.length > MAX_STATE_OR_NONCE) {
          throw new InvalidRequest(`nonce must be at most ${MAX_STATE_OR_NONCE} characters`);
        }
      }),
      scope: engineErrors((_ctx: KoaContextWithOIDC, value: unknown, client: Client) => {
        validateAuthorizationScopes(catalog, value as string | undefined, (client as EngineClientExtras).first_party === true);
      }),
      // The engine takes 43..128 characters; an S256 challenge is exactly 43 (policies/pkce.ts).
      code_challenge: engineErrors((_ctx: KoaContextWithOIDC, value: unknown) => checkCodeChallenge(value)),
    },
    pkce: {
      required: (_ctx, client) => pkceRequired(client as unknown as Parameters<typeof pkceRequired>[0]),
    },
    // Refresh tokens: confidential apps only, rotated on every use (src/grants/refresh-token.ts).
    issueRefreshToken: async (_ctx, client) => issuesRefreshTokens(client),
    expiresWithSession: async () => false,
    rotateRefreshToken: true,
    // Credentials only in the Basic header (policies/client-authentication.ts); no HS*/client_secret_jwt: we keep only a digest.
    clientAuthMethods: ['client_secret_basic', 'none'],
    // Browser apps (public clients) may call the token endpoint from the origins of their
    // redirect URIs; nobody else gets CORS.
    clientBasedCORS: (_ctx, origin, client) =>
      client.clientAuthMethod === 'none' && (client.redirectUris ?? []).some((uri) => URL.parse(uri)?.origin === origin),
    extraClientMetadata: {
      properties: [...EXTRA_CLIENT_METADATA],
      validator() {},
    },
    features: {
      devInteractions: { enabled: false },
      // Lets keys sign through node:crypto (engine/signing-keys.ts): a third less CPU per token.
      externalSigningSupport: { enabled: true, ack: 'experimental-01' },
      clientCredentials: { enabled: true },
      dPoP: { enabled: false },
      pushedAuthorizationRequests: { enabled: false },
      // Sign-out: the engine's end_session endpoint with our pages (src/engine/sign-out.ts).
      rpInitiatedLogout: { enabled: true, ...signOutSources(look) },
      // Delivered by our fetch below: only where policies/backchannel-logout.ts allows.
      backchannelLogout: { enabled: true },
      // Ours instead (src/http/userinfo.ts, introspection.ts, revocation.ts): the engine's serve
      // only tokens it stores (ours are JWTs it does not keep) and refuse any with an audience.
      introspection: { enabled: false },
      revocation: { enabled: false },
      userinfo: { enabled: false },
      resourceIndicators: {
        enabled: true,
        defaultResource: () => audience,
        useGrantedResource: () => true,
        getResourceServerInfo: engineErrors(async (ctx: KoaContextWithOIDC, resourceIndicator: string, client: Client) => {
          // RFC 8707 §2: a resource the server does not know is invalid_target.
          if (resourceIndicator !== audience) throw new InvalidTarget(`unknown resource; the only resource is ${audience}`);
          const extras = client as EngineClientExtras;
          if (ctx.oidc.params?.grant_type === 'client_credentials') {
            const policy = await tenantPolicy(policyOf, extras.tenant);
            const granted = clientCredentialsScopes(ctx.oidc.params.scope as string | undefined, client.scope?.split(' ') ?? [], policy).join(' ');
            // The engine reads the requested scopes after this call: an omitted scope means all.
            ctx.oidc.params.scope = granted;
            return { scope: granted, audience, accessTokenTTL: CLIENT_CREDENTIALS_TOKEN_SECONDS, ...jwtFormat };
          }
          // Named users: the engine keeps the consented scopes that this list holds, so a scope
          // the user does not hold (now: permissions can change) never reaches a token.
          const account = accountOf(ctx);
          const policy = account ? await tenantPolicy(policyOf, account.tenant) : {};
          const app = { clientId: client.clientId, firstParty: extras.first_party === true, ...engineAppOwner(client) };
          // The authorization request once the browser's user is known (the resumption after
          // sign-in, or a session): the engine asks consent for this list, so it holds only what
          // she may receive. A scope she cannot have is then neither on her consent page nor in
          // her grant, and gaining it later asks her (she allows the management right on the
          // consent page, policies/management.ts). The consent rule's app check comes next, in
          // loadExistingGrant (access_denied).
          const sessionAccountId = account ? undefined : ctx.oidc.session?.accountId;
          const signedIn = sessionAccountId && accounts ? await accounts.findAccount(sessionAccountId) : undefined;
          if (signedIn) {
            const scopes = namedUserResourceScopes(catalog, signedIn, await tenantPolicy(policyOf, signedIn.tenant), app.firstParty);
            return { scope: scopes.join(' '), audience, accessTokenTTL: namedUserAccessTokenTtl, ...jwtFormat };
          }
          const { scopes, lifetime } = namedUserResource(catalog, app, account, policy, namedUserAccessTokenTtl);
          return { scope: scopes.join(' '), audience, accessTokenTTL: lifetime, ...jwtFormat };
        }),
      },
    },
    async extraTokenClaims(ctx, token) {
      const user = accountOf(ctx);
      if (token.kind === 'AccessToken') return user ? namedUserClaims(user) : undefined;
      const client = (token as { client?: EngineClientExtras }).client;
      if (!client?.tenant) return undefined;
      return clientCredentialsClaims(catalog, { tenant: client.tenant, constraints: client.constraints }, token.scope?.split(' ') ?? []);
    },
    formats: {
      customizers: {
        // A named-user access token's scope names the OIDC scopes its request was allowed too
        // (src/grants/named-user.ts): what userinfo answers for it.
        jwt(ctx, token, jwt) {
          if (!('accountId' in token) || !token.accountId) return;
          const entities = ctx.oidc.entities as { AuthorizationCode?: { scope?: string }; RefreshToken?: { scope?: string }; Grant?: { getOIDCScope(): string } };
          const requested = ctx.oidc.params?.scope ?? entities.AuthorizationCode?.scope ?? entities.RefreshToken?.scope ?? '';
          const allowed = entities.Grant?.getOIDCScope() ?? '';
          const payload = jwt.payload as { scope?: string };
          const scope = namedUserTokenScope(payload.scope?.split(' ') ?? [], new Set(String(requested).split(' ')), new Set(allowed.split(' ')));
          payload.scope = scope.join(' ') || undefined;
          // The answer's `scope` is the token's (RFC 6749 §5.1): alignTokenResponseScope uses this.
          (ctx.state as Record<symbol, unknown>)[TOKEN_SCOPE] = payload.scope;
        },
      },
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
      ClientCredentials: CLIENT_CREDENTIALS_TOKEN_SECONDS,
      // The resource server's lifetime: per tenant for named users (getResourceServerInfo).
      AccessToken: (_ctx, token) => accessTokenSeconds(
        token.scope?.split(' ') ?? [],
        token.resourceServer?.accessTokenTTL ?? namedUserAccessTokenTtl,
        managementAccessTokenTtl,
      ),
      AuthorizationCode: AUTHORIZATION_CODE_SECONDS,
      RefreshToken: REFRESH_TOKEN_SECONDS,
      IdToken: ID_TOKEN_SECONDS,
      Interaction: INTERACTION_SECONDS,
      Session: options.sessionTtl,
      // A grant nobody used for this long ends (each refresh extends it: engine/single-use.ts).
      Grant: options.grantIdleSeconds,
    },
    // Every request the engine makes (back-channel logout tokens): addresses checked before
    // connecting, the operator's private hosts for the operator's apps (src/engine/backchannel-delivery.ts).
    fetch: deliveryFetch(new PrivateHosts(options.backchannelLogout.privateHosts)),
    renderError: errorPageRenderer(look.localizer),
    // The languages of our pages, for apps that pass ui_locales.
    discovery: { ui_locales_supported: [...look.localizer.available] },
  };
}
