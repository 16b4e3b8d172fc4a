import type { Client, Configuration, KoaContextWithOIDC } from 'oidc-provider';
import type { SignedOutUsers } from '../records/signed-out-users.js';
import type { Store } from '../../adapters/types.js';
import type { ApiCatalog } from '../../policies/catalog.js';
import { InvalidClient, InvalidRequest, InvalidTarget } from '../../policies/errors.js';
import { CLIENT_ASSERTION_ALGS, MAX_ASSERTION_SECONDS, MAX_JWKS_BYTES } from '../../policies/client-keys.js';
import { assertionAudienceAllowed, authorizationCodeSeconds, refuseNonConforming } from '../../policies/high-security.js';
import {
  accessTokenSeconds,
  CLIENT_CREDENTIALS_ACCESS_TOKEN_SECONDS,
  ID_TOKEN_SECONDS,
  INTERACTION_SECONDS,
  REFRESH_TOKEN_SECONDS,
} from '../../policies/lifetimes.js';
import { MANAGEMENT_SCOPE } from '../../policies/management.js';
import { MAX_STATE_OR_NONCE } from '../../policies/request-limits.js';
import { checkCodeChallenge, pkceRequired } from '../../policies/pkce.js';
import { IDENTITY_CLAIMS, validateAuthorizationScopes } from '../../policies/scopes.js';
import { ACR_VALUES } from '../../policies/authentication-context.js';
import type { AccountStore } from '../accounts.js';
import type { TenantPolicyFunction } from '../../policies/tenant-policy.js';
import type { Consents } from '../records/consents.js';
import { PrivateHosts } from '../../policies/backchannel-logout.js';
import { engineAccount } from './accounts.js';
import { deliveryFetch } from './backchannel-delivery.js';
import type { ClientDirectory } from './client-directory.js';
import { EXTRA_CLIENT_METADATA } from './client-directory.js';
import type { EngineGrants } from './grants.js';
import { consentGrantLoader } from './consent-grants.js';
import { errorPageRenderer } from './error-page.js';
import { readingGrantsAhead } from './grant-read-ahead.js';
import type { SingleUse } from './single-use.js';
import { engineErrors } from './errors.js';
import { signInPolicy } from './sign-in-policy.js';
import type { SecondFactorRules } from '../records/tenant-settings.js';
import type { LiveKeys } from './live-keys.js';
import { signOutSources, type SignOutLook } from './sign-out.js';
import { Localizer } from '../i18n/localizer.js';
import type { Tracing } from '../observability/tracing.js';
import { DPOP_ALGORITHMS } from '../resource-server/dpop.js';


/** What the configuration reads of a client beyond the engine's metadata. */
interface EngineClientExtras {
  first_party?: boolean;
}

/** The settings the engine configuration reads (the server's resolved options hold them). */
export interface EngineSettings {
  audience: string;
  namedUserAccessTokenTtl: number;
  managementAccessTokenTtl: number;
  sessionTtl: number;
  grantIdleSeconds: number;
  accounts?: AccountStore | undefined;
  tenantPolicy?: TenantPolicyFunction | undefined;
  backchannelLogout: { privateHosts: readonly string[] };
}

export interface EngineSetup {
  options: EngineSettings;
  catalog: ApiCatalog;
  store: Store;
  clients: ClientDirectory;
  /** Our signing keys (their order is the rotation rule); the engine follows their changes (patches.ts, followKeys). */
  keys: LiveKeys;
  /** Path of the sign-in pages; the engine sends browsers to `{interactionPath}/{uid}`. */
  interactionPath: string;
  cookieKeys: string[];
  consents: Consents;
  /** The languages and branding of the engine's pages (errors, sign-out); English when absent. */
  look?: SignOutLook;
  /** The grants: what each hook asks of the request's grant (src/grants). */
  grants: EngineGrants;
  /** Single use of codes and refresh tokens: a code exchanged without a refresh token is consumed through it. */
  singleUse: Pick<SingleUse, 'noRefreshToken'>;
  /** Each tenant's second-factor rule: a session without one signs in again for the management right. */
  secondFactorRules?: SecondFactorRules | undefined;
  /** Users signed out everywhere: their older sessions sign them in no more. */
  signedOutUsers?: SignedOutUsers | undefined;
  /**
   * The 32-byte secret of DPoP server nonces (RFC 9449 §8), the same on every instance so that a
   * nonce one instance gave is honoured by the others.
   */
  dpopNonceSecret: Buffer;
  /** The engine's outgoing requests in spans (src/observability/tracing.ts). */
  tracing?: Tracing;
}


/** The node-oidc-provider configuration: every engine decision of ours is in this one place. */
export function engineConfiguration(setup: EngineSetup): Configuration {
  const { options, catalog, store, clients, keys, interactionPath, cookieKeys, consents, grants, singleUse } = setup;
  const look = setup.look ?? { localizer: new Localizer(), brands: undefined };
  const { audience, namedUserAccessTokenTtl, managementAccessTokenTtl, accounts, tenantPolicy: policyOf } = options;

  return {
    adapter: (model: string) => (model === 'Client' ? clients : readingGrantsAhead(model, store.engine(model))),
    jwks: { keys: [...keys.engineKeys] } as Configuration['jwks'],
    clients: [],
    scopes: ['openid', 'offline_access', 'profile', 'email', MANAGEMENT_SCOPE, ...catalog.scopes],
    responseTypes: ['code'],
    // Every ID token says how and when its user signed in (`amr`, `acr`, `auth_time`), not only
    // when the app asked (the engine's default): they come with the `openid` scope.
    claims: { ...IDENTITY_CLAIMS, openid: [...IDENTITY_CLAIMS.openid!, 'acr', 'amr', 'auth_time'] } as Configuration['claims'],
    // The sign-in classes (policies/authentication-context.ts), in discovery's acr_values_supported.
    acrValues: [...ACR_VALUES],
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
      // The engine's reasons to sign the user in, and unmet `acr_values` (src/engine/sign-in-policy.ts).
      policy: signInPolicy({
        accounts,
        ruleOf: setup.secondFactorRules && ((tenant) => setup.secondFactorRules!.of(tenant)),
        signedOutAt: setup.signedOutUsers && ((user) => setup.signedOutUsers!.at(user)),
      }),
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
      state: engineErrors((ctx: KoaContextWithOIDC, value: unknown, client: Client) => {
        // A client under the high-security profile without private_key_jwt (its tenant selected
        // the profile after it was registered) pushes and asks for nothing (policies/high-security.ts).
        refuseNonConforming(client);
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
      // Enterprise sign-in: the domain whose organisation signs the user in (src/endpoints/sign-in/
      // federation-steps.ts), a domain name at most: kept with the pending sign-in.
      domain_hint: engineErrors((_ctx: KoaContextWithOIDC, value: unknown) => {
        if (value !== undefined && (typeof value !== 'string' || value.length > 253)) throw new InvalidRequest('domain_hint must be a domain name of at most 253 characters');
      }),
      // The engine takes 43..128 characters; an S256 challenge is exactly 43 (policies/pkce.ts).
      code_challenge: engineErrors((_ctx: KoaContextWithOIDC, value: unknown) => checkCodeChallenge(value)),
    },
    pkce: {
      required: (_ctx, client) => pkceRequired(client as unknown as Parameters<typeof pkceRequired>[0]),
    },
    // Refresh tokens: confidential apps only, rotated on every use (src/grants/refresh-token.ts).
    // Without one, a code this request exchanges is consumed now, inside the engine's issuance
    // (with one, in the step that saves it: src/engine/single-use.ts).
    issueRefreshToken: engineErrors(async (_ctx: KoaContextWithOIDC, client: Client) => {
      const issues = grants.issuesRefreshTokens(client);
      if (!issues) await singleUse.noRefreshToken();
      return issues;
    }),
    expiresWithSession: async () => false,
    rotateRefreshToken: true,
    // A secret only in the Basic header, or an assertion signed by the client's own key
    // (policies/client-authentication.ts); no HS*/client_secret_jwt: we keep only a digest.
    clientAuthMethods: ['client_secret_basic', 'private_key_jwt', 'none'],
    // The engine checks an assertion's signature, iss, sub, exp, jti (single use through the
    // store's ReplayDetection, until exp) and aud (the issuer or the token endpoint URL); we also
    // bound its lifetime, which bounds what the single-use check keeps.
    assertJwtClientAuthClaimsAndHeader: engineErrors(async (ctx: KoaContextWithOIDC, claims: Record<string, unknown>, _header: unknown, client: Client) => {
      const now = Math.floor(Date.now() / 1000);
      if (typeof claims['exp'] !== 'number' || claims['exp'] > now + MAX_ASSERTION_SECONDS) {
        throw new InvalidClient(`the client assertion must expire within ${MAX_ASSERTION_SECONDS} seconds`);
      }
      // The high-security profile: the audience is the issuer identifier alone, as a string
      // (not the token endpoint URL, not an array), so that an assertion made for another
      // endpoint or server cannot be replayed here.
      if (!assertionAudienceAllowed(client, claims['aud'], ctx.oidc.issuer)) {
        throw new InvalidClient('under the high-security profile the client assertion audience (aud) must be the issuer identifier, as a string');
      }
    }),
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
      // Sender-constrained tokens (RFC 9449): a token request with a DPoP proof gets tokens bound
      // to its key (`cnf.jkt`, token_type DPoP); a client whose record says `dpop: 'required'`
      // gets none without a proof (client-directory.ts). Each proof's `jti` is used once, in the
      // store every instance shares (ReplayDetection). Nonces are offered on every answer
      // (`DPoP-Nonce`) and demanded only of a proof whose `iat` is not recent.
      dPoP: { enabled: true, nonceSecret: setup.dpopNonceSecret, allowReplay: false },
      // RFC 9126, in front of it our guard (src/endpoints/sign-in/pushed-authorization.ts). A pushed
      // request lives 60 s (the engine's longest) and is used up by the authorization response it
      // leads to; an app may be required to push (`requirePushedAuthorizationRequests`).
      pushedAuthorizationRequests: { enabled: true, requirePushedAuthorizationRequests: false, allowUnregisteredRedirectUris: false },
      // Sign-out: the engine's end_session endpoint with our pages (src/engine/sign-out.ts).
      rpInitiatedLogout: { enabled: true, ...signOutSources(look) },
      // Delivered by our fetch below: only where policies/backchannel-logout.ts allows.
      backchannelLogout: { enabled: true },
      // Ours instead (src/endpoints/lifecycle/userinfo.ts, introspection.ts, revocation.ts): the engine's serve
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
          // Every grant's token request comes here: a client under the high-security profile
          // without private_key_jwt gets no token (policies/high-security.ts).
          refuseNonConforming(client);
          // Its scopes, lifetime and format: the request's grant's (src/grants).
          return grants.of(ctx).resource(ctx, client);
        }),
      },
    },
    // An access token's own claims: the request's grant's (a machine's tenant and data filters, a user's tenant).
    extraTokenClaims: (ctx, token) => grants.of(ctx).claims(ctx, token),
    formats: {
      customizers: {
        // The JWT's last touch: the request's grant's (a named user's `scope`, src/grants/named-user.ts).
        jwt(ctx, token, jwt) {
          grants.of(ctx).customizeJwt?.(ctx, token, jwt as { payload: Record<string, unknown> });
        },
      },
    },
    enabledJWA: {
      // Asymmetric only: an HS256 assertion would need a shared secret (we keep only digests).
      clientAuthSigningAlgValues: [...CLIENT_ASSERTION_ALGS],
      // Discovery's dpop_signing_alg_values_supported: the resource-server kit takes the same.
      dPoPSigningAlgValues: [...DPOP_ALGORITHMS],
      idTokenSigningAlgValues: ['RS256', 'PS256', 'ES256', 'EdDSA'],
      requestObjectSigningAlgValues: ['ES256', 'RS256', 'PS256', 'EdDSA'],
      userinfoSigningAlgValues: ['RS256', 'PS256', 'ES256', 'EdDSA'],
    },
    routes: {
      authorization: '/authorize',
      token: '/token',
      pushed_authorization_request: '/par',
      jwks: '/jwks',
      userinfo: '/userinfo',
    },
    ttl: {
      ClientCredentials: CLIENT_CREDENTIALS_ACCESS_TOKEN_SECONDS,
      // The resource server's lifetime: per tenant for named users (getResourceServerInfo).
      AccessToken: (_ctx, token) => accessTokenSeconds(
        token.scope?.split(' ') ?? [],
        token.resourceServer?.accessTokenTTL ?? namedUserAccessTokenTtl,
        managementAccessTokenTtl,
      ),
      // 5 minutes; 60 s for a client under the high-security profile (policies/high-security.ts).
      AuthorizationCode: (_ctx, _code, client) => authorizationCodeSeconds(client),
      RefreshToken: REFRESH_TOKEN_SECONDS,
      IdToken: ID_TOKEN_SECONDS,
      Interaction: INTERACTION_SECONDS,
      Session: options.sessionTtl,
      // A grant nobody used for this long ends (each refresh extends it: engine/single-use.ts).
      Grant: options.grantIdleSeconds,
    },
    // Every request the engine makes (back-channel logout tokens): addresses checked before
    // connecting, the operator's private hosts for the operator's apps (src/engine/backchannel-delivery.ts).
    // Also a private_key_jwt client's keys at its jwks_uri (patches.ts: in the scope of who named it).
    fetch: deliveryFetch(new PrivateHosts(options.backchannelLogout.privateHosts), setup.tracing),
    // A client's key set larger than this is refused (the engine's default has no bound).
    fetchResponseBodyLimits: { jwks_uri: MAX_JWKS_BYTES },
    renderError: errorPageRenderer(look.localizer),
    // The languages of our pages, for apps that pass ui_locales.
    discovery: { ui_locales_supported: [...look.localizer.available] },
  };
}
