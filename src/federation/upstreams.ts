import * as client from 'openid-client';
import { PrivateHosts } from '../../policies/backchannel-logout.js';
import { isLoopbackHost } from '../../policies/upstream-issuer.js';
import { checkedFetch, DeliveryError } from '../engine/backchannel-delivery.js';
import type { ConnectionForSignIn } from './connections.js';
import type { Tracing } from '../observability/tracing.js';

/*
 * THE UPSTREAM RELYING PARTY: our server as a client of a tenant's identity provider, built on
 * openid-client (never hand-rolled): discovery, the authorization request (code flow, PKCE S256,
 * state and nonce), the code exchange with the ID token checked (issuer, audience, signature,
 * nonce, expiry, issued-at), and the provider's end-session URL.
 *
 * - Every request to a provider goes through the checked fetch (src/engine/backchannel-delivery.ts):
 *   the addresses a name resolves to are checked before connecting (a tenant's provider is a public
 *   host; the operator's loopback provider is reachable because the operator named it), one timeout
 *   for the whole exchange (`federation.timeoutMs`), answers up to 256 KiB, redirects not followed.
 * - A provider's configuration (its discovery document, with the keys openid-client caches in it)
 *   is kept `federation.metadataCacheSeconds`, and dropped when its connection changes. A failed
 *   discovery is not kept: the next sign-in tries again.
 * - The ID token's signature is checked although it came straight from the token endpoint over TLS
 *   (openid-client's non-repudiation checks): a provider's key is what vouches for the identity.
 */

/** The largest answer read from a provider (a discovery document or key set is a few KiB). */
const MAX_ANSWER_BYTES = 256 * 1024;
/** The most provider configurations kept at once (the oldest goes first). */
const MAX_CACHED = 500;

/** Why a sign-in through a provider failed; each has its page, audit reason and metric label. */
export type UpstreamFailureReason =
  /** The provider's address could not be reached (closed port, DNS, TLS). */
  | 'unreachable'
  /** No answer within `federation.timeoutMs`. */
  | 'timeout'
  /** The provider's host is not one our server may call (a special-use address of a tenant's provider). */
  | 'refused'
  /** Its discovery document is missing, not JSON, too large, or names another issuer. */
  | 'bad_metadata'
  /** It answered the authorization or token request with an error (`access_denied`, `invalid_client`...). */
  | 'error_response'
  /** Its answer failed a check: the ID token's issuer, audience, signature, nonce or expiry, the state, PKCE. */
  | 'invalid_response';

/** The failures with no answer to blame; any other failure of a discovery is its bad metadata. */
const BEFORE_AN_ANSWER: ReadonlySet<UpstreamFailureReason> = new Set(['unreachable', 'timeout', 'refused']);

/** A sign-in through a provider that failed: the reason, and a detail for logs (never a token or code). */
export class UpstreamFailure extends Error {
  constructor(
    readonly reason: UpstreamFailureReason,
    readonly detail: string,
    /** The provider's OAuth error code, for `error_response`. */
    readonly error?: string,
  ) {
    super(`upstream sign-in failed (${reason}): ${detail}`);
    this.name = 'UpstreamFailure';
  }
}

/** What the upstream sign-in proved: the ID token's claims, and the ID token itself (for the provider's end-session hint). */
export interface UpstreamIdentity {
  claims: client.IDToken;
  idToken: string;
}

/** What the Upstreams need from the server. */
export interface UpstreamsSetup {
  timeoutMs: number;
  metadataCacheSeconds: number;
  /**
   * The base of our callback URLs (`{baseUrl}{pathPrefix}/oauth2/federation/callback`): each
   * connection's redirect URI, registered at its provider, is this with `/{connection id}`.
   */
  callbackBase: string;
  /** Our signing key for `private_key_jwt` (its public half is at our `jwks_uri`). */
  signingKey: () => Promise<client.PrivateKey>;
  now?: () => number;
  /** Requests to providers in spans (src/observability/tracing.ts). */
  tracing?: Tracing;
}

/** The checks of one upstream authorization request (all three derived and kept by our side). */
export interface UpstreamChecks {
  state: string;
  nonce: string;
  codeVerifier: string;
}

interface Cached {
  version: string;
  expires: number;
  config: Promise<client.Configuration>;
}

/** Our relying party at the tenants' identity providers. */
export class Upstreams {
  readonly #cache = new Map<string, Cached>();
  readonly #now: () => number;

  constructor(private readonly setup: UpstreamsSetup) {
    this.#now = setup.now ?? Date.now;
  }

  /**
   * A connection's redirect URI: its own, so that a provider's answer is taken only at the callback
   * of the connection its sign-in was sent to (RFC 9700 §4.4.2: a client of several providers
   * tells their answers apart by distinct redirect URIs, against mix-up attacks).
   */
  redirectUriOf(connectionId: string): string {
    return `${this.setup.callbackBase}/${encodeURIComponent(connectionId)}`;
  }

  /** Forgets a connection's provider configuration (`undefined`: every one). */
  forget(connectionId: string | undefined): void {
    if (connectionId === undefined) this.#cache.clear();
    else this.#cache.delete(connectionId);
  }

  /**
   * The URL of the provider's authorization endpoint for this sign-in: code flow, PKCE S256,
   * `state` and `nonce`, the connection's scopes, and a `login_hint` when the user typed her address.
   * @throws UpstreamFailure when the provider's discovery fails.
   */
  async authorizationUrl(connection: ConnectionForSignIn, checks: UpstreamChecks, loginHint?: string): Promise<URL> {
    const config = await this.configuration(connection);
    return client.buildAuthorizationUrl(config, {
      redirect_uri: this.redirectUriOf(connection.id),
      response_type: 'code',
      scope: connection.scopes.join(' '),
      state: checks.state,
      nonce: checks.nonce,
      code_challenge: await client.calculatePKCECodeChallenge(checks.codeVerifier),
      code_challenge_method: 'S256',
      ...(loginHint ? { login_hint: loginHint } : {}),
    });
  }

  /**
   * The provider's answer at our callback (`callbackUrl`: our redirect URI with the query it
   * sent), exchanged for its tokens: the ID token checked (issuer, audience, signature, nonce,
   * expiry), the state and PKCE verifier matched.
   * @throws UpstreamFailure saying why.
   */
  async exchange(connection: ConnectionForSignIn, callbackUrl: URL, checks: UpstreamChecks): Promise<UpstreamIdentity> {
    const config = await this.configuration(connection);
    try {
      // openid-client refuses a token answer without an ID token (idTokenExpected), and checks the
      // one it holds: the claims and the token are there once it returns.
      const tokens = await client.authorizationCodeGrant(config, callbackUrl, {
        pkceCodeVerifier: checks.codeVerifier,
        expectedState: checks.state,
        expectedNonce: checks.nonce,
        idTokenExpected: true,
      });
      return { claims: tokens.claims()!, idToken: tokens.id_token! };
    } catch (error) {
      throw failureOf(error);
    }
  }

  /**
   * The provider's end-session URL (RP-initiated logout) sending the browser back to
   * `postLogoutRedirectUri` with `state`, or undefined when its discovery names no end-session
   * endpoint (or cannot be read now: our own sign-out is never held up by the provider).
   */
  async endSessionUrl(connection: ConnectionForSignIn, parameters: { idTokenHint?: string; postLogoutRedirectUri: string; state: string }): Promise<URL | undefined> {
    let config: client.Configuration;
    try {
      config = await this.configuration(connection);
    } catch {
      return undefined;
    }
    if (!config.serverMetadata().end_session_endpoint) return undefined;
    return client.buildEndSessionUrl(config, {
      post_logout_redirect_uri: parameters.postLogoutRedirectUri,
      state: parameters.state,
      client_id: connection.clientId,
      ...(parameters.idTokenHint ? { id_token_hint: parameters.idTokenHint } : {}),
    });
  }

  /**
   * The provider's configuration (discovery, client authentication, the checked fetch), kept
   * `metadataCacheSeconds` for this version of the connection.
   * @throws UpstreamFailure when discovery fails.
   */
  async configuration(connection: ConnectionForSignIn): Promise<client.Configuration> {
    const version = `${connection.updatedAt}|${connection.issuer}|${connection.clientId}`;
    const now = this.#now();
    const cached = this.#cache.get(connection.id);
    if (cached && cached.version === version && cached.expires > now) return cached.config;
    const config = this.discover(connection);
    if (this.setup.metadataCacheSeconds > 0) {
      if (this.#cache.size >= MAX_CACHED) this.#cache.delete(this.#cache.keys().next().value!);
      const entry = { version, expires: now + this.setup.metadataCacheSeconds * 1000, config };
      this.#cache.set(connection.id, entry);
      config.catch(() => {
        if (this.#cache.get(connection.id) === entry) this.#cache.delete(connection.id);
      });
    }
    return config;
  }

  private async discover(connection: ConnectionForSignIn): Promise<client.Configuration> {
    const fetch = this.fetchFor(connection);
    const auth = await this.clientAuth(connection);
    const insecure = new URL(connection.issuer).protocol === 'http:' && connection.trustedHost !== undefined && isLoopbackHost(connection.trustedHost);
    try {
      // No client metadata: the redirect URI of a code exchange is the callback URL's own (without
      // its query), which is the connection's redirect URI.
      const config = await client.discovery(new URL(connection.issuer), connection.clientId, undefined, auth, {
        [client.customFetch]: fetch,
        execute: [client.enableNonRepudiationChecks, ...(insecure ? [client.allowInsecureRequests] : [])],
      });
      config[client.customFetch] = fetch;
      return config;
    } catch (error) {
      const failure = failureOf(error);
      throw BEFORE_AN_ANSWER.has(failure.reason) ? failure : new UpstreamFailure('bad_metadata', failure.detail);
    }
  }

  private async clientAuth(connection: ConnectionForSignIn): Promise<client.ClientAuth> {
    switch (connection.tokenEndpointAuthMethod) {
      case 'client_secret_basic':
        return client.ClientSecretBasic(connection.clientSecret);
      case 'client_secret_post':
        return client.ClientSecretPost(connection.clientSecret);
      default:
        return client.PrivateKeyJwt(await this.setup.signingKey());
    }
  }

  /** The checked fetch of a connection: the operator's provider host may be special-use, a tenant's never. */
  private fetchFor(connection: ConnectionForSignIn): client.CustomFetch {
    const exceptions = new PrivateHosts(connection.trustedHost ? [connection.trustedHost.replace(/^\[|\]$/g, '')] : []);
    const fetch = checkedFetch({ exceptions: () => exceptions, timeoutMs: this.setup.timeoutMs, maxAnswerBytes: MAX_ANSWER_BYTES, tooLarge: 'fail', ...(this.setup.tracing ? { tracing: this.setup.tracing, purpose: () => 'upstream' } : {}) });
    // openid-client's own timeout signal is not passed on: the checked fetch's timeout
    // (`federation.timeoutMs`) is the one that ends a request to a provider.
    return (url, options) => fetch(url, {
      method: options.method,
      headers: options.headers,
      body: options.body ?? undefined,
    });
  }
}

/** The UpstreamFailure an error of openid-client (or of our fetch under it) stands for. */
export function failureOf(error: unknown): UpstreamFailure {
  if (error instanceof UpstreamFailure) return error;
  for (let cause: unknown = error, depth = 0; cause && depth < 5; cause = (cause as { cause?: unknown }).cause, depth += 1) {
    if (cause instanceof DeliveryError) {
      const reason = cause.failure === 'too_large' ? 'bad_metadata' : cause.failure;
      return new UpstreamFailure(reason, cause.detail);
    }
    if (cause instanceof Error && cause.name === 'TimeoutError') return new UpstreamFailure('timeout', 'no answer in time');
  }
  if (error instanceof client.ResponseBodyError || error instanceof client.AuthorizationResponseError) return refusal(error.error);
  // A 401 with a WWW-Authenticate challenge (a wrong client secret: `invalid_client`) is the
  // provider refusing us, not a bad answer.
  if (error instanceof client.WWWAuthenticateChallengeError) return refusal(error.cause[0]?.parameters.error ?? 'invalid_client');
  const code = (error as { code?: unknown } | null | undefined)?.code;
  const message = error instanceof Error ? error.message : String(error);
  return new UpstreamFailure('invalid_response', `${typeof code === 'string' ? `${code}: ` : ''}${message}`);
}

/**
 * The provider refusing, with its error code. The code is repeated in the audit trail and the log:
 * only what an OAuth error code may be (RFC 6749 §5.2: printable ASCII without '"' and '\\'),
 * bounded; anything else is 'malformed' (a challenge's quoted parameter may hold any text).
 */
function refusal(error: unknown): UpstreamFailure {
  const code = typeof error === 'string' && /^[\x20\x21\x23-\x5b\x5d-\x7e]{1,64}$/.test(error) ? error : 'malformed';
  return new UpstreamFailure('error_response', `the provider answered ${code}`, code);
}
