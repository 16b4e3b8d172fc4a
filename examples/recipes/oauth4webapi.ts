/**
 * Client recipes with oauth4webapi: private_key_jwt, DPoP with the server's nonce, PAR with an
 * authorization code and PKCE. docs/client-recipes.md shows each `#region` verbatim, and
 * test/example/client-recipes.test.ts runs them against a server (so the documented code works).
 */
import * as oauth from 'oauth4webapi';

/**
 * Request options of the recipes: `{}` in production (https only); a development server on plain
 * http needs `{ [oauth.allowInsecureRequests]: true }`.
 */
export interface Http {
  [oauth.allowInsecureRequests]?: boolean;
}

// #region discovery
/** The server's metadata, from its issuer (`https://auth.example.com/oauth2`). */
export async function discover(issuer: URL, http: Http = {}): Promise<oauth.AuthorizationServer> {
  return oauth.processDiscoveryResponse(issuer, await oauth.discoveryRequest(issuer, http));
}
// #endregion

// #region private-key-jwt
/**
 * client_credentials with private_key_jwt: the library signs a new assertion for every request.
 * `key`: `{ key: privateKey, kid }`, the kid the public key was registered under.
 */
export async function machineToken(as: oauth.AuthorizationServer, clientId: string, key: oauth.PrivateKey, http: Http = {}) {
  const client: oauth.Client = { client_id: clientId };
  const clientAuth = oauth.PrivateKeyJwt(key);
  const response = await oauth.clientCredentialsGrantRequest(as, client, clientAuth, { scope: 'scim.read' }, http);
  return oauth.processClientCredentialsResponse(as, client, response);
}
// #endregion

// #region dpop
/**
 * A client whose tokens are bound to its DPoP key: one key pair per client instance, kept in
 * memory, for its token requests and its API calls alike. `clientAuth` is how it authenticates
 * (oauth.PrivateKeyJwt(...) or oauth.ClientSecretBasic(secret)).
 */
export async function dpopClient(as: oauth.AuthorizationServer, clientId: string, clientAuth: oauth.ClientAuth, http: Http = {}) {
  const client: oauth.Client = { client_id: clientId };
  const DPoP = oauth.DPoP(client, await oauth.generateKeyPair('ES256'));
  // Every answer carries a DPoP-Nonce that the handle keeps and puts in its next proof. When the
  // server refuses a proof with use_dpop_nonce (its nonce moved on), the handle has already taken
  // the new one from the refusal: send the request once more.
  async function onceMoreOnNewNonce<T>(attempt: () => Promise<T>): Promise<T> {
    try {
      return await attempt();
    } catch (error) {
      if (!oauth.isDPoPNonceError(error)) throw error;
      return attempt();
    }
  }
  return {
    /** A DPoP-bound access token (token_type DPoP). */
    token: () =>
      onceMoreOnNewNonce(async () => {
        const response = await oauth.clientCredentialsGrantRequest(as, client, clientAuth, { scope: 'scim.read' }, { ...http, DPoP });
        return oauth.processClientCredentialsResponse(as, client, response);
      }),
    /** An API call with the bound token: `Authorization: DPoP <token>` and a proof for this URL. */
    get: (accessToken: string, url: URL) =>
      onceMoreOnNewNonce(() => oauth.protectedResourceRequest(accessToken, 'GET', url, undefined, undefined, { ...http, DPoP })),
  };
}
// #endregion

// #region par
/**
 * Sign-in with a pushed authorization request (PAR) and PKCE: the parameters go to the server
 * first, authenticated; the browser is sent with a short-lived `request_uri` only. Keep
 * `codeVerifier` and `state` in the user's session until the callback.
 */
export async function startSignIn(as: oauth.AuthorizationServer, client: oauth.Client, clientAuth: oauth.ClientAuth, redirectUri: string, http: Http = {}) {
  const codeVerifier = oauth.generateRandomCodeVerifier();
  const state = oauth.generateRandomState();
  const pushed = await oauth.processPushedAuthorizationResponse(as, client, await oauth.pushedAuthorizationRequest(as, client, clientAuth, {
    redirect_uri: redirectUri,
    scope: 'openid scim.read',
    response_type: 'code',
    code_challenge: await oauth.calculatePKCECodeChallenge(codeVerifier),
    code_challenge_method: 'S256',
    state,
  }, http));
  const url = new URL(as.authorization_endpoint!);
  url.searchParams.set('client_id', client.client_id);
  url.searchParams.set('request_uri', pushed.request_uri);
  return { url, codeVerifier, state };
}

/** At the redirect URI: check the answer (state, iss) and exchange the code with the verifier. */
export async function finishSignIn(
  as: oauth.AuthorizationServer,
  client: oauth.Client,
  clientAuth: oauth.ClientAuth,
  redirectUri: string,
  callback: URL,
  pending: { codeVerifier: string; state: string },
  http: Http = {},
) {
  const params = oauth.validateAuthResponse(as, client, callback, pending.state);
  const response = await oauth.authorizationCodeGrantRequest(as, client, clientAuth, params, redirectUri, pending.codeVerifier, http);
  return oauth.processAuthorizationCodeResponse(as, client, response, { requireIdToken: true });
}
// #endregion
