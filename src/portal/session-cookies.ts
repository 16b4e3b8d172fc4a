import { PORTAL_SIGN_IN_SECONDS } from '../../policies/lifetimes.js';
import { randomBytes } from 'node:crypto';
import type { Context } from 'koa';
import { PortalSessions, type PendingSignIn, type PortalSession } from './sessions.js';

/*
 * THE PORTAL'S COOKIES: the session cookie (a random ID; the session itself is sealed in the store,
 * src/portal/sessions.ts) and, before sign-in, the sealed cookie of the sign-ins under way (nothing
 * is stored for a browser that has not signed in). Both HttpOnly, SameSite=Lax (the callback
 * arrives by a redirect), on the portal's path, Secure on https.
 */

const SESSION_COOKIE = 'portal_session';
/** The sign-ins under way in this browser, sealed (nothing is stored before a user signs in). */
const SIGN_IN_COOKIE = 'portal_signin';
/** An unchanged session is written again (its idle lifetime renewed) at most this often. */
const RENEW_AFTER_MS = 5 * 60_000;
/** Sign-ins under way at once in one browser (tabs); the oldest go first. */
const MAX_PENDING = 3;

/** The session of the request being answered. */
export interface Current {
  id: string;
  session: PortalSession;
  /** The session as it was read or last written (JSON): unchanged sessions are not written again. */
  stored?: string;
}

/** Whether the session is what was read or last written (when it was saved aside). */
function unchanged(now: Current): boolean {
  if (now.stored === undefined) return false;
  const { savedAt: _saved, ...rest } = now.session;
  return JSON.stringify({ ...JSON.parse(now.stored) as PortalSession, savedAt: undefined }) === JSON.stringify({ ...rest, savedAt: undefined });
}

/** The portal's session cookie and the pending sign-ins' sealed cookie. */
export class SessionCookies {
  /** The request's session, read once per request (the look needs it before the page does). */
  readonly #read = new WeakMap<Context, Promise<Current | undefined>>();

  constructor(
    private readonly sessions: PortalSessions,
    /** The portal's path: the cookies' scope. */
    private readonly path: string,
    private readonly secure: boolean,
  ) {}

  #set(ctx: Context, name: string, value: string, maxAge: number): void {
    ctx.cookies.set(name, value, { httpOnly: true, sameSite: 'lax', signed: false, secure: this.secure, path: this.path, maxAge, overwrite: true });
  }

  /** The request's session, when its cookie names one in the store. */
  current(ctx: Context): Promise<Current | undefined> {
    let reading = this.#read.get(ctx);
    if (!reading) {
      const id = ctx.cookies.get(SESSION_COOKIE, { signed: false });
      reading = this.sessions.get(id).then((session) => (id && session ? { id, session, stored: JSON.stringify(session) } : undefined));
      this.#read.set(ctx, reading);
    }
    return reading;
  }

  /** A new session, with a new ID and CSRF token (written by the first `save`). */
  fresh(carried: Partial<PortalSession> = {}): Current {
    return { id: PortalSessions.newId(), session: { ...carried, csrf: randomBytes(32).toString('base64url') } };
  }

  /**
   * Writes the session when it changed, or to renew its idle lifetime now and then. Requests of one
   * browser run concurrently: one that changed nothing must not write back what it read, over a
   * rotated refresh token that another request stored meanwhile.
   */
  async save(ctx: Context, now: Current): Promise<void> {
    if (!unchanged(now) || Date.now() - (now.session.savedAt ?? 0) > RENEW_AFTER_MS) {
      now.session.savedAt = Date.now();
      await this.sessions.save(now.id, now.session);
      now.stored = JSON.stringify(now.session);
    }
    // The ID is a random secret kept server-side (only its digest is a store key): unsigned is enough.
    this.#set(ctx, SESSION_COOKIE, now.id, this.sessions.ttlSeconds * 1000);
  }

  /** Ends the session: gone from the store, its cookie cleared. */
  async end(ctx: Context, id: string): Promise<void> {
    await this.sessions.delete(id);
    this.#set(ctx, SESSION_COOKIE, '', 0);
  }

  /** The sign-ins under way in this browser (at most three: tabs), from their sealed cookie. */
  pendingSignIns(ctx: Context): PendingSignIn[] {
    const list = this.sessions.open<PendingSignIn[]>(ctx.cookies.get(SIGN_IN_COOKIE, { signed: false }), 'sign-in');
    return Array.isArray(list) ? list.filter((entry) => entry.expires > Date.now()).slice(-MAX_PENDING) : [];
  }

  /** One more sign-in under way in this browser (the oldest goes when there are too many). */
  addPendingSignIn(ctx: Context, signIn: PendingSignIn): void {
    this.setPendingSignIns(ctx, [...this.pendingSignIns(ctx).slice(-(MAX_PENDING - 1)), signIn]);
  }

  /** Keeps the sign-ins under way in their sealed cookie (cleared when there are none). */
  setPendingSignIns(ctx: Context, list: PendingSignIn[]): void {
    this.#set(ctx, SIGN_IN_COOKIE, list.length ? this.sessions.seal(list, 'sign-in') : '', list.length ? PORTAL_SIGN_IN_SECONDS * 1000 : 0);
  }
}
