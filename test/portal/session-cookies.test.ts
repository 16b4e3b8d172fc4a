import { IncomingMessage, ServerResponse } from 'node:http';
import { Socket } from 'node:net';
import { jest } from '@jest/globals';
import Koa, { type Context } from 'koa';
import { createMemoryStore } from '../../adapters/memory.js';
import { PORTAL_SIGN_IN_SECONDS } from '../../policies/lifetimes.js';
import { SessionCookies } from '../../src/portal/session-cookies.js';
import { PortalSessions } from '../../src/portal/sessions.js';

/**
 * The portal's cookies on real Koa contexts: the session cookie and when a session is written,
 * the pending sign-ins' sealed cookie.
 */

const COOKIE_KEY = 'a-cookie-key-of-the-portal-tests-0123456789';

/** A request with these cookies, as Koa gives it to the portal. */
function request(cookie?: string, https = false): Context {
  const req = new IncomingMessage(new Socket());
  req.headers = { ...(cookie ? { cookie } : {}), ...(https ? { 'x-forwarded-proto': 'https' } : {}) };
  return new Koa({ proxy: https }).createContext(req, new ServerResponse(req));
}

/** What the response sets, by cookie name: value and attributes. */
function setCookies(ctx: Context): Map<string, string> {
  const headers = (ctx.res.getHeader('set-cookie') ?? []) as string[];
  return new Map(headers.map((header) => [header.slice(0, header.indexOf('=')), header.slice(header.indexOf('=') + 1)]));
}

function parts() {
  const store = createMemoryStore();
  const adapter = store.engine('PortalSession');
  const sessions = new PortalSessions(adapter, store.engine('PortalSecret'), [COOKIE_KEY], 1800);
  return { sessions, cookies: new SessionCookies(sessions, '/portal', false) };
}

describe('the portal session cookie', () => {
  it('names a session written at its first save: HttpOnly, SameSite=Lax, on the portal\'s path, for the idle lifetime', async () => {
    const { sessions, cookies } = parts();
    const first = request();
    const now = cookies.fresh({ user: { sub: 'ada' } });
    expect(now.session.csrf).toMatch(/^[A-Za-z0-9_-]{43}$/);
    expect(await sessions.get(now.id)).toBeUndefined();
    await cookies.save(first, now);
    expect(setCookies(first).get('portal_session')).toMatch(new RegExp(`^${now.id}; path=/portal; expires=[^;]+; samesite=lax; httponly$`));
    const next = request(`portal_session=${now.id}`);
    expect(await cookies.current(next)).toMatchObject({ id: now.id, session: { user: { sub: 'ada' }, csrf: now.session.csrf } });
    // Read once per request.
    expect(cookies.current(next)).toBe(cookies.current(next));
    expect(await cookies.current(request('portal_session=not-a-session'))).toBeUndefined();
    expect(await cookies.current(request())).toBeUndefined();
  });

  it('is Secure on https', async () => {
    const { sessions } = parts();
    const ctx = request(undefined, true);
    const cookies = new SessionCookies(sessions, '/portal', true);
    await cookies.save(ctx, cookies.fresh());
    expect(setCookies(ctx).get('portal_session')).toMatch(/; secure; httponly$/);
  });

  it('writes a session only when it changed, or to renew it after five minutes (never an old copy over a newer one)', async () => {
    const { sessions, cookies } = parts();
    const now = cookies.fresh({ user: { sub: 'ada' } });
    await cookies.save(request(), now);
    const read = (await cookies.current(request(`portal_session=${now.id}`)))!;
    // Another request of the browser stores a rotated refresh token meanwhile.
    await sessions.save(now.id, { ...read.session, refreshToken: 'rotated' });
    await cookies.save(request(), read);
    expect((await sessions.get(now.id))?.refreshToken).toBe('rotated');
    read.session.notice = { kind: 'ok', text: 'changed' };
    await cookies.save(request(), read);
    expect(await sessions.get(now.id)).toMatchObject({ notice: { text: 'changed' } });
    expect((await sessions.get(now.id))?.refreshToken).toBeUndefined();
    await sessions.delete(now.id);
    read.session.savedAt = Date.now() - 5 * 60_000 - 1;
    read.stored = JSON.stringify(read.session);
    await cookies.save(request(), read);
    expect(await sessions.get(now.id)).toMatchObject({ notice: { text: 'changed' } });
  });

  it('on a held clock: renewed when five minutes have passed since it was written, not a millisecond before; the cookie lasts the idle lifetime', async () => {
    const { sessions, cookies } = parts();
    const t = 1_800_000_000_000;
    const clock = jest.spyOn(Date, 'now').mockReturnValue(t);
    try {
      const now = cookies.fresh({ user: { sub: 'ada' } });
      const first = request();
      await cookies.save(first, now);
      expect(setCookies(first).get('portal_session')).toContain(`expires=${new Date(t + 1800 * 1000).toUTCString()};`);
      await sessions.delete(now.id);
      clock.mockReturnValue(t + 5 * 60_000);
      await cookies.save(request(), now);
      expect(await sessions.get(now.id)).toBeUndefined();
      clock.mockReturnValue(t + 5 * 60_000 + 1);
      await cookies.save(request(), now);
      expect(await sessions.get(now.id)).toMatchObject({ savedAt: t + 5 * 60_000 + 1 });
    } finally {
      clock.mockRestore();
    }
  });

  it('a session never written is written at its first save, whatever it carries', async () => {
    const { sessions, cookies } = parts();
    const now = cookies.fresh({ user: { sub: 'ada' }, savedAt: Date.now() });
    await cookies.save(request(), now);
    expect(await sessions.get(now.id)).toMatchObject({ user: { sub: 'ada' } });
  });

  it('one Set-Cookie per cookie and response: a cookie set twice in a request is sent once, as last set', async () => {
    const { cookies } = parts();
    const now = cookies.fresh();
    const ctx = request();
    await cookies.save(ctx, now);
    await cookies.end(ctx, now.id);
    const headers = (ctx.res.getHeader('set-cookie') ?? []) as string[];
    expect(headers.filter((header) => header.startsWith('portal_session='))).toEqual([expect.stringMatching(/^portal_session=; /)]);
    cookies.addPendingSignIn(ctx, { state: 'a', verifier: 'v', nonce: 'n', expires: Date.now() + 60_000 });
    cookies.addPendingSignIn(ctx, { state: 'b', verifier: 'v', nonce: 'n', expires: Date.now() + 60_000 });
    expect(((ctx.res.getHeader('set-cookie') ?? []) as string[]).filter((header) => header.startsWith('portal_signin='))).toHaveLength(1);
  });

  it('ends with its session: gone from the store, the cookie cleared', async () => {
    const { sessions, cookies } = parts();
    const now = cookies.fresh();
    await cookies.save(request(), now);
    const ctx = request(`portal_session=${now.id}`);
    await cookies.end(ctx, now.id);
    expect(await sessions.get(now.id)).toBeUndefined();
    expect(setCookies(ctx).get('portal_session')).toMatch(/^; path=\/portal; expires=Thu, 01 Jan 1970/);
  });
});

describe('the pending sign-ins cookie', () => {
  const signIn = (state: string, expires = Date.now() + 60_000) => ({ state, verifier: `verifier-of-${state}`, nonce: `nonce-of-${state}`, expires });
  const carried = (ctx: Context) => `portal_signin=${setCookies(ctx).get('portal_signin')!.split(';')[0]!}`;

  it('keeps the last three sign-ins of a browser, sealed, for ten minutes; expired ones are dropped', () => {
    const { sessions, cookies } = parts();
    let cookie: string | undefined;
    for (const state of ['a', 'b', 'c', 'd']) {
      const ctx = request(cookie);
      cookies.addPendingSignIn(ctx, signIn(state));
      expect(setCookies(ctx).get('portal_signin')).toMatch(/^[A-Za-z0-9_-]+; path=\/portal; expires=[^;]+; samesite=lax; httponly$/);
      cookie = carried(ctx);
    }
    // Sealed: no state, verifier or nonce in clear; the cookie itself holds three, not more.
    // (Long markers: a sealed value is random base64url, where a short one like `n-d` turns up by chance.)
    expect(cookie).not.toMatch(/verifier-of-|nonce-of-/);
    expect(sessions.open<Array<{ state: string }>>(cookie!.slice('portal_signin='.length), 'sign-in')?.map((entry) => entry.state)).toEqual(['b', 'c', 'd']);
    expect(cookies.pendingSignIns(request(cookie)).map((entry) => entry.state)).toEqual(['b', 'c', 'd']);
    const withExpired = request();
    cookies.setPendingSignIns(withExpired, [signIn('old', Date.now() - 1), signIn('new')]);
    expect(cookies.pendingSignIns(request(carried(withExpired))).map((entry) => entry.state)).toEqual(['new']);
  });

  it('on a held clock: a sign-in is dropped at its expiry (not after); the cookie lasts PORTAL_SIGN_IN_SECONDS; at most three are read, the newest', () => {
    const { cookies } = parts();
    const t = 1_800_000_000_000;
    const clock = jest.spyOn(Date, 'now').mockReturnValue(t);
    try {
      const ctx = request();
      cookies.setPendingSignIns(ctx, [signIn('ends-now', t), signIn('a', t + 1), signIn('b', t + 1), signIn('c', t + 1), signIn('d', t + 1)]);
      expect(setCookies(ctx).get('portal_signin')).toContain(`expires=${new Date(t + PORTAL_SIGN_IN_SECONDS * 1000).toUTCString()};`);
      expect(cookies.pendingSignIns(request(carried(ctx))).map((entry) => entry.state)).toEqual(['b', 'c', 'd']);
      const ending = request();
      cookies.setPendingSignIns(ending, [signIn('ends-now', t), signIn('a', t + 1)]);
      expect(cookies.pendingSignIns(request(carried(ending))).map((entry) => entry.state)).toEqual(['a']);
    } finally {
      clock.mockRestore();
    }
  });

  it('opens only as sealed by this server for sign-ins; cleared when none is left', () => {
    const { sessions, cookies } = parts();
    expect(cookies.pendingSignIns(request('portal_signin=garbage'))).toEqual([]);
    expect(cookies.pendingSignIns(request(`portal_signin=${sessions.seal([signIn('x')], 'session x')}`))).toEqual([]);
    expect(cookies.pendingSignIns(request(`portal_signin=${sessions.seal([signIn('x')], 'sign-in')}`)).map((entry) => entry.state)).toEqual(['x']);
    const ctx = request();
    cookies.setPendingSignIns(ctx, []);
    expect(setCookies(ctx).get('portal_signin')).toMatch(/^; path=\/portal; expires=Thu, 01 Jan 1970/);
  });
});
