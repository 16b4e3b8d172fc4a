import { createCipheriv, createDecipheriv, createHash, createHmac, randomBytes, timingSafeEqual } from 'node:crypto';
import type { EngineAdapter } from '../../adapters/types.js';

/*
 * THE PORTAL'S SESSIONS, kept in the store (memory or Redis) so that every instance serves every
 * browser. A session holds the user's access and refresh tokens and, for one page view, a secret
 * just created: the store sees only ciphertext (AES-256-GCM under a key derived from the cookie
 * keys), under the SHA-256 of the session ID (the cookie's value), so that reading the store gives
 * neither a token nor a session to hijack.
 */

/** A secret shown once, on the next GET of the secret page. */
export interface ShownSecret {
  what: 'client_configuration' | 'app_registration';
  name: string;
  clientId: string;
  clientSecret: string;
  regenerated: boolean;
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
}

/** One browser's portal session. */
export interface PortalSession {
  csrf: string;
  user?: { sub: string; name?: string; tenant?: string };
  accessToken?: string;
  accessTokenExpires?: number;
  refreshToken?: string;
  secret?: ShownSecret;
  notice?: Notice;
  pending?: PendingSignIn[];
}

const MODEL = 'PortalSession';

/** Sessions by ID, encrypted at rest. */
export class PortalSessions {
  readonly #key: Buffer;

  constructor(
    private readonly adapter: EngineAdapter,
    cookieKey: string,
    /** Idle lifetime, in seconds. */
    readonly ttlSeconds: number,
  ) {
    this.#key = createHmac('sha256', cookieKey).update('talent-auth portal sessions').digest();
  }

  /** A fresh session ID: 256 random bits, the cookie's value. */
  static newId(): string {
    return randomBytes(32).toString('base64url');
  }

  private storageKey(id: string): string {
    return createHash('sha256').update(id).digest('base64url');
  }

  async get(id: string | undefined): Promise<PortalSession | undefined> {
    if (!id || !/^[A-Za-z0-9_-]{43}$/.test(id)) return undefined;
    const payload = await this.adapter.find(this.storageKey(id));
    const sealed = typeof payload?.sealed === 'string' ? Buffer.from(payload.sealed, 'base64url') : undefined;
    if (!sealed || sealed.length < 29) return undefined;
    try {
      const decipher = createDecipheriv('aes-256-gcm', this.#key, sealed.subarray(0, 12));
      decipher.setAuthTag(sealed.subarray(sealed.length - 16));
      const plain = Buffer.concat([decipher.update(sealed.subarray(12, sealed.length - 16)), decipher.final()]);
      return JSON.parse(plain.toString('utf8')) as PortalSession;
    } catch {
      // Sealed under another key (rotated cookie keys): as good as no session.
      return undefined;
    }
  }

  async save(id: string, session: PortalSession): Promise<void> {
    const iv = randomBytes(12);
    const cipher = createCipheriv('aes-256-gcm', this.#key, iv);
    const body = Buffer.concat([cipher.update(JSON.stringify(session), 'utf8'), cipher.final()]);
    const sealed = Buffer.concat([iv, body, cipher.getAuthTag()]).toString('base64url');
    await this.adapter.upsert(this.storageKey(id), { sealed }, this.ttlSeconds);
  }

  async delete(id: string): Promise<void> {
    await this.adapter.destroy(this.storageKey(id));
  }
}

/** Constant-time comparison of two strings (hashed first, so lengths do not leak either). */
export function same(a: string, b: string): boolean {
  const digest = (value: string) => createHash('sha256').update(value).digest();
  return timingSafeEqual(digest(a), digest(b)) && a === b;
}
