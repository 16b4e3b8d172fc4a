import { PORTAL_REAUTH_SECONDS } from '../../policies/lifetimes.js';
import { Form } from '../http/forms.js';
import type { PortalKit } from './kit.js';
import { REPEATABLE, type PortalCall, type PortalRouteName } from './routes.js';
import type { Current } from './session-cookies.js';
import type { PendingAction, PortalSession } from './sessions.js';
import { startSignIn } from './sign-in-request.js';
import { reauthPage } from './views/simple-pages.js';

/*
 * SIGNING IN AGAIN BEFORE A DESTRUCTIVE ACTION: deleting a client configuration or an app,
 * regenerating a secret, changing an app's client type, lowering a client's protection (DPoP or
 * PAR no longer required, private_key_jwt back to a shared secret, the high-security profile left),
 * changing the tenant's security profile of its clients, removing or replacing a second factor,
 * and adding or changing an identity provider (it decides who signs in as the organisation's users).
 * Such an action is done at once when the user gave her password (and second factor) within
 * PORTAL_REAUTH_SECONDS; otherwise the portal keeps it and sends her through a fresh sign-in:
 *
 * - The action is the POST that asked for it, checked as every POST is (session, CSRF token,
 *   Origin) and kept server-side, sealed, under the session's ID (one per session: a newer one
 *   replaces it), for PORTAL_SIGN_IN_SECONDS, with the user who posted it.
 * - A page says why (her last sign-in is older than that) and leads on with a button (a POST with
 *   the CSRF token: no link from elsewhere can lead her into completing an action she left), or
 *   back home: a sign-in page right after a click on "Delete" must not look like a session that ended.
 * - The sign-in is the portal's usual one (code, PKCE, state, nonce) with `max_age=0` (OpenID
 *   Connect Core §3.1.2.1): the sign-in pages ask for the password again, and then for the second
 *   factor as at any sign-in of a user who holds one. The portal does not ask for a factor of its
 *   own: the sign-in decides, as for every app.
 * - Its callback takes the action once (the store's single-use mark: a replayed callback finds
 *   nothing) from the session the browser had, and does it only when the new ID token names the
 *   same user and tenant and says she signed in after the action was asked for (`auth_time`);
 *   otherwise the action is dropped and the page says it was not done. The action runs again
 *   through the table (src/portal/dispatch.ts), so the management right is checked on the new token.
 */

/** A clock skew allowed between the ID token's `auth_time` and our own clock. */
const SKEW_SECONDS = 5;

/** Whether the session's last sign-in is recent enough for a destructive action. */
export function signedInRecently(session: PortalSession, nowMs = Date.now()): boolean {
  return typeof session.authTime === 'number' && nowMs / 1000 - session.authTime <= PORTAL_REAUTH_SECONDS;
}

/**
 * True when the call may go on (a recent sign-in); else the action is kept and the page that leads
 * to a fresh sign-in is sent (answered: the caller returns).
 */
export async function freshOrSignInAgain(kit: PortalKit, call: PortalCall): Promise<boolean> {
  const { ctx, now, id, form, route } = call;
  if (signedInRecently(now.session)) return true;
  const user = now.session.user!;
  if (!route) throw new Error('a destructive action must name its row');
  const action: PendingAction = {
    route,
    id,
    // Every field as posted (empty ones too: an app's URI inputs are told apart by position), but its CSRF token.
    fields: form.entries().filter(([name]) => name !== 'csrf'),
    sub: user.sub,
    ...(user.tenant !== undefined ? { tenant: user.tenant } : {}),
    createdAt: Date.now(),
  };
  await kit.setup.sessions.putAction(now.id, action);
  await kit.cookies.save(ctx, now);
  kit.pages.send(ctx, kit.t.reauth.title, reauthPage(kit.pages.view(now.session), Math.round(PORTAL_REAUTH_SECONDS / 60)));
  return false;
}

/** POST /reauth: the sign-in again (`max_age=0`) whose callback does the action the session kept. */
export async function signInAgain(kit: PortalKit, { ctx, now }: PortalCall): Promise<void> {
  await kit.cookies.save(ctx, now);
  startSignIn(kit, ctx, true);
}

/** What a callback does with the action its session kept: done, or why not. */
export type Completion = { run: true; route: PortalRouteName; call: Omit<PortalCall, 'ctx' | 'now'> } | { run: false };

/**
 * The action kept by the session `before` (taken once), when the sign-in that just ended is the
 * same user's and newer than the action; `{ run: false }` otherwise (and for a sign-in without one).
 */
export async function keptAction(kit: PortalKit, before: Current | undefined, user: NonNullable<PortalSession['user']>, authTime: number | undefined): Promise<Completion | undefined> {
  if (!before) return undefined;
  const action = await kit.setup.sessions.takeAction(before.id);
  if (!action) return undefined;
  const sameUser = action.sub === user.sub && action.tenant === user.tenant;
  const newer = typeof authTime === 'number' && authTime >= Math.floor(action.createdAt / 1000) - SKEW_SECONDS;
  if (!sameUser || !newer) return { run: false };
  return { run: true, route: action.route as PortalRouteName, call: { id: action.id, form: new Form(action.fields, REPEATABLE) } };
}
