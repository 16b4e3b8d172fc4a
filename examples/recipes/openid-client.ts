/**
 * Client recipes with openid-client 6: private_key_jwt, DPoP, PAR with an authorization code and
 * PKCE. docs/client-recipes.md shows each `#region` verbatim, and
 * test/example/client-recipes.test.ts runs them against a server.
 */
import * as client from 'openid-client';

// #region configuration
/**
 * The client's configuration: the server's metadata and how the client authenticates, here with
 * private_key_jwt (the library signs a new assertion for every request). A development server on
 * plain http needs `{ execute: [client.allowInsecureRequests] }` as `options`. `key`:
 * `{ key: privateKey, kid }`, the kid the public key was registered under.
 */
export function configure(issuer: URL, clientId: string, key: client.PrivateKey, options?: client.DiscoveryRequestOptions) {
  return client.discovery(issuer, clientId, undefined, client.PrivateKeyJwt(key), options);
}
// #endregion

// #region private-key-jwt
export function machineToken(config: client.Configuration) {
  return client.clientCredentialsGrant(config, { scope: 'scim.read' });
}
// #endregion

// #region dpop
/**
 * Tokens bound to the client's DPoP key, and an API call with one. The handle keeps the server's
 * DPoP-Nonce and the library sends a request once more by itself when it is refused with
 * use_dpop_nonce. One key pair per client instance, for token requests and API calls alike.
 */
export async function dpopClient(config: client.Configuration) {
  const DPoP = client.getDPoPHandle(config, await client.randomDPoPKeyPair('ES256'));
  return {
    token: () => client.clientCredentialsGrant(config, { scope: 'scim.read' }, { DPoP }),
    get: (accessToken: string, url: URL) => client.fetchProtectedResource(config, accessToken, url, 'GET', undefined, undefined, { DPoP }),
  };
}
// #endregion

// #region par
/** Sign-in with a pushed authorization request and PKCE; keep `codeVerifier` and `state` in the session. */
export async function startSignIn(config: client.Configuration, redirectUri: string) {
  const codeVerifier = client.randomPKCECodeVerifier();
  const state = client.randomState();
  const url = await client.buildAuthorizationUrlWithPAR(config, {
    redirect_uri: redirectUri,
    scope: 'openid scim.read',
    code_challenge: await client.calculatePKCECodeChallenge(codeVerifier),
    code_challenge_method: 'S256',
    state,
  });
  return { url, codeVerifier, state };
}

/** At the redirect URI (`callback`, the full URL the browser came back to). */
export function finishSignIn(
  config: client.Configuration,
  callback: URL,
  pending: { codeVerifier: string; state: string },
): Promise<client.TokenEndpointResponse & client.TokenEndpointResponseHelpers> {
  return client.authorizationCodeGrant(config, callback, { pkceCodeVerifier: pending.codeVerifier, expectedState: pending.state });
}
// #endregion
