import { createHash } from 'node:crypto';
import engineInstance from 'oidc-provider/lib/helpers/weak_cache.js';
import { decodeProtectedHeader, type JWK } from 'jose';
import type Provider from 'oidc-provider';
import type { EngineAdapter } from '../../adapters/types.js';
import { JWKS_URI_KEYS_SECONDS, JWKS_URI_RETRY_SECONDS } from '../../policies/client-keys.js';
import { redirectUriMatches } from '../../policies/redirect-uris.js';
import { secretMatches } from '../records/secrets.js';
import { deliveringFor } from './backchannel-delivery.js';
import type { ClientLookups, EngineClient } from './client-cache.js';
import { engineAppOwner, engineKeysOwner } from './client-directory.js';
import { engineErrors, toEngineError } from './errors.js';
import { savingThroughSingleUse, type Consumable, type SingleUse } from './single-use.js';
import { engineRequest, knowEngine } from './request.js';
import type { LiveKeys } from './live-keys.js';

/**
 * EVERY CHANGE WE MAKE TO THE ENGINE'S INTERNALS, in this one module. node-oidc-provider has hooks
 * for most of our rules (src/engine/configuration.ts); these are the rules it has no hook for, so
 * we replace a method of its models. Each relies on an engine behaviour that
 * test/engine/patches.test.ts checks against a bare engine: an upgrade that changes one breaks
 * that file's tests first.
 *
 * 1. `Client.prototype.compareClientSecret`: we store a digest of each secret, never the secret;
 *    the presented secret is compared with it in constant time (src/records/secrets.ts).
 * 2. `Client.prototype.redirectUriAllowed` and `postLogoutRedirectUriAllowed`: a (post-logout)
 *    redirect URI must equal a registered one exactly; the engine would let a native app's
 *    loopback URI differ in port (RFC 8252 §7.3).
 * 3. `Client.prototype.responseModeAllowed`: code and state come back in the query only; another
 *    mode asked for explicitly is invalid_request, and that error itself goes back in the query
 *    (the requested mode is forgotten before the engine answers with it).
 * 4. `Client.find`: answered from our cache of clients (src/engine/client-cache.ts).
 * 5. `RefreshToken.find`, `RefreshToken.prototype.consume`, `RefreshToken.prototype.generateTokenId`,
 *    `AuthorizationCode.find`, `AuthorizationCode.prototype.consume`: single use with safe retries
 *    and derived successors (src/engine/single-use.ts).
 * 6. `Provider.ctx`: read (not changed) to know the request the engine is serving.
 * 7. `AccessToken.prototype.generateTokenId`: a named-user access token's `jti` starts with its
 *    grant's id and the id of the code's refresh-token chain it was issued in
 *    (`<grantId>.<chain>.<random>`). The engine does not store JWT access tokens, and a JWT has
 *    no grant claim: this is how userinfo and introspection tell that the token's grant has ended,
 *    or that its code was replayed (src/engine/live-tokens.ts).
 * 8. `Client.prototype.includeSid`: every ID token carries the session's `sid`, as discovery says
 *    (`backchannel_logout_session_supported`); the engine puts it only in the ID tokens of apps with
 *    a back-channel logout URI that asked for it. Logout tokens carry it because every app is
 *    registered with `backchannel_logout_session_required` (src/engine/client-directory.ts).
 * 9. `Client.prototype.backchannelLogout`: runs in the scope of the app's owner, so that the
 *    delivery (the engine's `fetch` hook, src/engine/backchannel-delivery.ts) knows whether the
 *    operator's private hosts may be reached for it.
 * 10. The key set of a client with a `jwks_uri` (`refresh`, `selectForVerify`): fetched in the scope
 *    of whoever named the URL, used at most JWKS_URI_KEYS_SECONDS, forgotten when it cannot be read
 *    (keysFetchedInScope below).
 * 11. `RefreshToken.prototype.generateTokenId` also binds a refresh token issued with a DPoP proof
 *    to that proof's key for confidential apps too (the engine binds public apps' only).
 * 12. The engine's key set and the public key set its `/jwks` serves (its instance state, read
 *    once at construction): replaced when our signing keys change while the server runs (keys
 *    kept in the store, src/engine/live-keys.ts), see followKeys below.
 * Errors of ours thrown inside them reach the engine as its own (src/engine/errors.ts).
 */

/**
 * The `jti` of a named-user access token: its grant's id, a dot, the id of its refresh-token
 * chain and a dot when it has one (src/engine/single-use.ts), a random id (engine ids have no dot).
 */
export function grantBoundTokenId(grantId: string, id: string, chain?: string): string {
  return chain === undefined ? `${grantId}.${id}` : `${grantId}.${chain}.${id}`;
}

/** The grant id a `jti` of ours names, if it names one. */
export function grantIdOfTokenId(jti: string): string | undefined {
  const dot = jti.indexOf('.');
  return dot > 0 ? jti.slice(0, dot) : undefined;
}

/** The chain id a `jti` of ours names, if it names one. */
export function chainOfTokenId(jti: string): string | undefined {
  const parts = jti.split('.');
  return parts.length === 3 ? parts[1] : undefined;
}

/** What the patches delegate to. */
export interface EnginePatches {
  clients: ClientLookups;
  singleUse: SingleUse;
}

function asEngineError(error: unknown): never {
  throw toEngineError(error);
}

interface ConsumableModel {
  find(value: string, options?: object): Promise<Consumable | undefined>;
  prototype: Consumable & { generateTokenId(): string };
}

/** A refresh token as the engine models its DPoP binding: the proof key's thumbprint, if bound. */
interface DpopBindable {
  jkt?: string;
}

/**
 * A refresh token issued with a DPoP proof is bound to that proof's key whatever the client kind.
 * The engine binds only public clients' refresh tokens and leaves confidential clients' bound by
 * their client authentication alone; we bind both, so that a refresh token copied together with a
 * client secret is still useless without the private key. It runs when the token is first saved
 * (its id is generated only then); a rotated token inherits its predecessor's binding from the
 * engine, and the refresh grant refuses a proof of another key ("failed jkt verification").
 */
function bindToProofKey(token: DpopBindable): void {
  if (token.jkt !== undefined) return;
  const request = engineRequest() as { get?(name: string): string } | undefined;
  const proof = request?.get?.('DPoP');
  // The engine checked the proof before it issues anything (a bad one ends the request first), so
  // its header's key is the key the access token was bound to; the engine keeps its own reading
  // out of reach, hence the thumbprint computed again from the same key.
  if (proof) token.jkt = proofKeyThumbprint(proof);
}

/** The JWK thumbprint (RFC 7638, SHA-256) of the key in a DPoP proof's header, synchronously. */
function proofKeyThumbprint(proof: string): string | undefined {
  let jwk: JWK | undefined;
  try {
    jwk = decodeProtectedHeader(proof).jwk;
  } catch {
    return undefined;
  }
  if (jwk === undefined) return undefined;
  // The required members of each key type, in lexicographic order (RFC 7638 §3.2).
  const required = jwk.kty === 'EC' ? { crv: jwk.crv, kty: jwk.kty, x: jwk.x, y: jwk.y }
    : jwk.kty === 'OKP' ? { crv: jwk.crv, kty: jwk.kty, x: jwk.x }
      : jwk.kty === 'RSA' ? { e: jwk.e, kty: jwk.kty, n: jwk.n } : undefined;
  if (required === undefined || Object.values(required).some((value) => typeof value !== 'string')) return undefined;
  return createHash('sha256').update(JSON.stringify(required)).digest('base64url');
}

/** `find` and `prototype.consume` of a code or refresh token model, each followed by our rule. */
function patchConsumable(
  model: ConsumableModel,
  found: (entity: Consumable | undefined) => Promise<void>,
  consumeOnce: (entity: Consumable, consume: () => Promise<void>) => Promise<void>,
): void {
  const find = model.find.bind(model);
  model.find = engineErrors(async (value: string, options?: object) => {
    const entity = await find(value, options);
    await found(entity);
    return entity;
  });
  const consume = model.prototype.consume;
  model.prototype.consume = function consumeWithRule(this: Consumable) {
    return consumeOnce(this, () => consume.call(this)).catch(asEngineError);
  };
}

/** Marks the engine's client key-set class once its refresh runs in its owner's scope. */
const FAILED_UNTIL: unique symbol = Symbol('talent-auth key set read failed');
const SCOPED = Symbol('talent-auth: key fetch scoped');

/** The engine's key set of one client, as far as we change it. */
interface ClientKeySet {
  freshUntil?: number | undefined;
  /** Until when (epoch seconds) a read is not tried again, after one that failed. */
  [FAILED_UNTIL]?: number;
  client?: object;
  stale(): boolean;
  refresh(): Promise<void>;
  selectForVerify(options: object): unknown[];
  [SCOPED]?: true;
}

/**
 * A client's key set at its `jwks_uri` (the engine's key-set class is private: reached through the
 * first client that has one, its prototype changed once):
 *
 * - fetched by the engine through our checked fetch (configuration.ts `fetch`), in the scope of
 *   whoever named the URL, so that only the operator's URLs get the operator's `privateHosts`
 *   exceptions (as a back-channel logout does);
 * - used at most JWKS_URI_KEYS_SECONDS after it was read. The engine would keep it as long as the
 *   key server's Cache-Control or Expires say, and it reads the set again only when no key verifies
 *   an assertion: a key the client removed from its set would have worked for as long as the
 *   engine keeps the client. Here a stale set verifies nothing, so the engine reads it again first;
 * - forgotten when it cannot be read (no answer, an error status, not a key set): the assertion
 *   fails (fail closed, a removed key included); the assertions of the next JWKS_URI_RETRY_SECONDS
 *   fail without another read (a key server that is down is not sent one request per assertion of
 *   whoever names the client), and the first after them reads the set again rather than waiting
 *   out the engine's minute.
 */
function keysFetchedInScope(client: EngineClient): void {
  const keystore = (client as unknown as { asymmetricKeyStore?: object }).asymmetricKeyStore;
  if (!keystore) return;
  const proto = Object.getPrototypeOf(keystore) as ClientKeySet;
  if (proto[SCOPED]) return;
  const refresh = proto.refresh;
  proto.refresh = async function refreshInOwnerScope(this: ClientKeySet) {
    const now = Math.floor(Date.now() / 1000);
    const failedUntil = this[FAILED_UNTIL];
    if (failedUntil !== undefined && now < failedUntil && this.stale()) throw new Error('the key set could not be read a moment ago');
    try {
      await deliveringFor(engineKeysOwner(this.client ?? {}), () => refresh.call(this), 'jwks_uri');
    } catch (error) {
      // Stale: it verifies nothing (below); the first assertion after JWKS_URI_RETRY_SECONDS
      // reads the set again.
      this.freshUntil = undefined;
      this[FAILED_UNTIL] = now + JWKS_URI_RETRY_SECONDS;
      throw error;
    }
    this[FAILED_UNTIL] = undefined;
    const latest = Math.floor(Date.now() / 1000) + JWKS_URI_KEYS_SECONDS;
    if (this.freshUntil !== undefined && this.freshUntil > latest) this.freshUntil = latest;
  };
  const selectForVerify = proto.selectForVerify;
  proto.selectForVerify = function selectFreshForVerify(this: ClientKeySet, options: object) {
    return this.stale() ? [] : selectForVerify.call(this, options);
  };
  proto[SCOPED] = true;
}

/** The members of a key the engine publishes at /jwks (its own list, in its order). */
const PUBLISHED_MEMBERS = ['kty', 'use', 'key_ops', 'kid', 'alg', 'crv', 'e', 'n', 'x', 'x5c', 'y', 'pub'] as const;

/**
 * The engine signs and verifies with the keys of `live`, from now on and at every change: its key
 * set is emptied and filled again with the new keys in their order, and the key set its `/jwks`
 * answers is rebuilt as the engine builds it at construction. Both in one synchronous step, so no
 * request sees half a change. The engine picks the signing key of an algorithm among these keys
 * in their order (all of ours name alg and use alike), which keeps the rotation rule.
 */
export function followKeys(provider: Provider, live: LiveKeys): void {
  const replace = (): void => {
    const state = engineInstance(provider);
    state.keystore.clear();
    for (const key of live.engineKeys) state.keystore.add(key);
    state.jwks = {
      keys: [...state.keystore].map((key) => Object.fromEntries(PUBLISHED_MEMBERS.map((member) => [member, key[member]]).filter(([, value]) => value !== undefined))),
    };
  };
  live.onChange(replace);
}

/** Installs every patch on one engine instance (its models are its own: other instances are untouched). */
export function patchEngine(provider: Provider, { clients, singleUse }: EnginePatches): void {
  knowEngine(provider);
  const Client = provider.Client;
  Client.prototype.compareClientSecret = function compareClientSecret(actual: string) {
    return typeof this.clientSecret === 'string' && secretMatches(actual, this.clientSecret);
  };
  Client.prototype.redirectUriAllowed = function redirectUriAllowed(value: string) {
    return redirectUriMatches(this.redirectUris ?? [], value);
  };
  Client.prototype.postLogoutRedirectUriAllowed = function postLogoutRedirectUriAllowed(value: string) {
    return redirectUriMatches(this.postLogoutRedirectUris ?? [], value);
  };
  Client.prototype.responseModeAllowed = function responseModeAllowed(mode: string) {
    const params = engineRequest()?.oidc?.params;
    // A mode the request did not name is the response type's default: the response type's own
    // check decides (only `code` is supported, whose default is query).
    if (mode === 'query' || params?.response_mode === undefined) return true;
    params.response_mode = undefined;
    return false;
  };
  Client.prototype.includeSid = function includeSid() {
    return true;
  };
  // Not in the engine's types: the method that posts one app's logout token.
  const withLogout = Client.prototype as unknown as { backchannelLogout(this: object, sub: string, sid: string): Promise<void> };
  const backchannelLogout = withLogout.backchannelLogout;
  withLogout.backchannelLogout = function backchannelLogoutOfOwner(this: object, sub: string, sid: string) {
    return deliveringFor(engineAppOwner(this), () => backchannelLogout.call(this, sub, sid), 'backchannel_logout_uri');
  };
  const AccessToken = provider.AccessToken as unknown as { prototype: { grantId?: string; generateTokenId(): string } };
  const generateAccessTokenId = AccessToken.prototype.generateTokenId;
  AccessToken.prototype.generateTokenId = function generateTokenId(this: { grantId?: string; generateTokenId(): string }) {
    const id = generateAccessTokenId.call(this);
    return this.grantId ? grantBoundTokenId(this.grantId, id, singleUse.chainNow()) : id;
  };
  const find = clients.cached(Client.find.bind(Client) as (id: string) => Promise<EngineClient | undefined>);
  Client.find = (async (id: string) => {
    const client = await find(id);
    if (client?.jwksUri) keysFetchedInScope(client);
    return client;
  }) as typeof Client.find;

  const RefreshToken = provider.RefreshToken as unknown as ConsumableModel;
  patchConsumable(RefreshToken, (token) => singleUse.refreshTokenFound(token), (token, consume) => singleUse.consumeRefreshToken(token, consume));
  const generateRefreshTokenId = RefreshToken.prototype.generateTokenId;
  RefreshToken.prototype.generateTokenId = function generateTokenId(this: Consumable & DpopBindable & { generateTokenId(): string }) {
    bindToProofKey(this);
    return singleUse.refreshTokenId(() => generateRefreshTokenId.call(this));
  };
  // The first refresh token of a code's exchange is saved in the same store step as the code's
  // consumption (single-use.ts): its save goes through single use. The engine reaches a model's
  // adapter only through these two getters (the configuration's adapter, made once per model).
  const saving = savingThroughSingleUse('RefreshToken', (provider.RefreshToken as unknown as { adapter: EngineAdapter }).adapter, singleUse);
  Object.defineProperty(provider.RefreshToken, 'adapter', { get: () => saving, configurable: true });
  Object.defineProperty(provider.RefreshToken.prototype, 'adapter', { get: () => saving, configurable: true });

  patchConsumable(
    provider.AuthorizationCode as unknown as ConsumableModel,
    (code) => singleUse.codeFound(code),
    (code, consume) => singleUse.consumeCode(code, consume),
  );
}
