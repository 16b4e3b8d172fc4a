import { PORTAL_SECRET_SECONDS, PORTAL_SIGN_IN_SECONDS } from '../../policies/lifetimes.js';
import { createHash, randomBytes } from 'node:crypto';
import type { EngineAdapter } from '../../adapters/types.js';
import { Sealer } from '../records/sealed.js';

/*
 * THE PORTAL'S SESSIONS, kept in the store (memory or Redis) so that every instance serves every
 * browser. A session holds the user's access and refresh tokens; a secret just created waits for
 * its page apart from it. The store sees only ciphertext (AES-256-GCM under a key derived from the
 * cookie keys), under the SHA-256 of the session ID (the cookie's value), so that reading the store
 * gives neither a token nor a session to hijack. Before sign-in nothing is stored: the pending
 * sign-in (state, PKCE verifier, nonce) travels sealed in a short-lived cookie of its own.
 */

/** A secret shown once, on the next GET of the secret page. */
export interface ShownSecret {
  what: 'client_configuration' | 'app_registration';
  name: string;
  clientId: string;
  clientSecret: string;
  regenerated: boolean;
  /** A private_key_jwt client switched back to a shared secret (its keys no longer work). */
  fromKeys?: boolean;
}

/** A message for the next page view. */
export interface Notice {
  kind: 'ok' | 'error';
  text: string;
}

/** A sign-in under way: the state, PKCE verifier and nonce of its authorization request. */
export interface PendingSignIn {
  state: string;
  verifier: string;
  nonce: string;
  expires: number;
  /** A sign-in again before a destructive action (src/portal/reauth.ts): its callback completes the action. */
  reauth?: true;
}

/**
 * A destructive action waiting for a fresh sign-in (src/portal/reauth.ts): the row of the portal's
 * table, its `{id}` and the form that was posted (CSRF-checked then), for the user who posted it.
 */
export interface PendingAction {
  /** The row's name (src/portal/routes.ts). */
  route: string;
  id: string;
  fields: Array<[string, string]>;
  sub: string;
  tenant?: string;
  /** When it was asked for (epoch ms): only a sign-in after it completes it. */
  createdAt: number;
}

/** One browser's portal session. */
export interface PortalSession {
  csrf: string;
  user?: { sub: string; name?: string; tenant?: string };
  accessToken?: string;
  accessTokenExpires?: number;
  /** The scopes the access token was granted: the portal shows and asks only what they allow. */
  scopes?: string[];
  refreshToken?: string;
  /** When the user last gave her password (the ID token's `auth_time`, epoch seconds). */
  authTime?: number;
  notice?: Notice;
  /** When the session was last written (epoch ms): an unchanged session is rewritten only now and then. */
  savedAt?: number;
}

/**
 * Sessions by ID, sealed at rest, and the portal's other sealed values (the pending sign-ins'
 * cookie, the secret shown once). A seal is bound to what it is (AES-GCM additional data): a sealed
 * value copied under another key, or into another cookie, does not open.
 */
export class PortalSessions {
  readonly #sealer: Sealer;

  constructor(
    private readonly adapter: EngineAdapter,
    private readonly secrets: EngineAdapter,
    /** The cookie keys, newest first: the first seals, every one opens (so that keys can rotate). */
    cookieKeys: readonly string[],
    /** Idle lifetime, in seconds. */
    readonly ttlSeconds: number,
  ) {
    this.#sealer = new Sealer(cookieKeys, 'talent-auth portal sessions');
  }

  /** A fresh session ID: 256 random bits, the cookie's value. */
  static newId(): string {
    return randomBytes(32).toString('base64url');
  }

  private storageKey(id: string): string {
    return createHash('sha256').update(id).digest('base64url');
  }

  /** `value` as JSON, sealed for `purpose` (AES-256-GCM, base64url: fit for a cookie). */
  seal(value: unknown, purpose: string): string {
    return this.#sealer.seal(value, purpose);
  }

  /** What `seal` sealed for `purpose`, or undefined (another purpose, a changed byte, a key no longer known). */
  open<T>(sealed: unknown, purpose: string): T | undefined {
    return this.#sealer.open<T>(sealed, purpose);
  }

  async get(id: string | undefined): Promise<PortalSession | undefined> {
    if (!id || !/^[A-Za-z0-9_-]{43}$/.test(id)) return undefined;
    const key = this.storageKey(id);
    const payload = await this.adapter.find(key);
    return this.open<PortalSession>(payload?.sealed, `session ${key}`);
  }

  async save(id: string, session: PortalSession, ttlSeconds = this.ttlSeconds): Promise<void> {
    const key = this.storageKey(id);
    await this.adapter.upsert(key, { sealed: this.seal(session, `session ${key}`) }, ttlSeconds);
  }

  async delete(id: string): Promise<void> {
    await this.adapter.destroy(this.storageKey(id));
  }

  /** Keeps a secret for the session's next secret page (sealed, apart from the session). */
  async putSecret(id: string, secret: ShownSecret): Promise<void> {
    await this.keepOnce(this.storageKey(id), 'secret', secret, PORTAL_SECRET_SECONDS);
  }

  /**
   * The session's secret, once: of two requests that ask at the same time, one gets it (the
   * store's single-use mark decides), and it is gone afterwards.
   */
  async takeSecret(id: string): Promise<ShownSecret | undefined> {
    return this.takeOnce<ShownSecret>(this.storageKey(id), 'secret');
  }

  /** Keeps `value` sealed under `key` (its purpose names the use and the key) for `seconds`. */
  private async keepOnce(key: string, use: 'secret' | 'action', value: unknown, seconds: number): Promise<void> {
    await this.secrets.upsert(key, { sealed: this.seal(value, `${use} ${key}`) }, seconds);
  }

  /** What keepOnce kept under `key`, once: the store's single-use mark decides, then it is gone. */
  private async takeOnce<T>(key: string, use: 'secret' | 'action'): Promise<T | undefined> {
    const payload = await this.secrets.find(key);
    if (!payload) return undefined;
    try {
      await this.secrets.consume(key);
    } catch {
      return undefined;
    }
    await this.secrets.destroy(key);
    return this.open<T>(payload.sealed, `${use} ${key}`);
  }

  /** The key of a session's pending action (beside its secret's, in the same short-lived model). */
  private actionKey(id: string): string {
    return `${this.storageKey(id)}.action`;
  }

  /** Keeps the one action of the session that waits for a fresh sign-in (a newer one replaces it). */
  async putAction(id: string, action: PendingAction): Promise<void> {
    await this.keepOnce(this.actionKey(id), 'action', action, PORTAL_SIGN_IN_SECONDS);
  }

  /**
   * The session's pending action, once (the store's single-use mark decides between two callbacks
   * at once); gone afterwards, so that a replayed callback finds nothing to do.
   */
  async takeAction(id: string): Promise<PendingAction | undefined> {
    return this.takeOnce<PendingAction>(this.actionKey(id), 'action');
  }
}
