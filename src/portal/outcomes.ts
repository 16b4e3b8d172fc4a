import type { Context } from 'koa';
import { MANAGEMENT_SCOPE } from '../../policies/management.js';
import { reasonOf, type ApiAnswer } from './api-client.js';
import type { PortalKit } from './kit.js';
import type { Current } from './session-cookies.js';
import { forbiddenPage } from './views/simple-pages.js';

/* How the portal's pages end: the permission's page, a failure said at home, a change done. */

/**
 * Whether the session's access token carries the management right (refreshed first when due; a
 * refreshed token is kept at once, whatever the page does next).
 */
export async function mayManage(kit: PortalKit, ctx: Context, now: Current): Promise<boolean> {
  const scopes = await kit.api.grantedScopes(now.session);
  await kit.cookies.save(ctx, now);
  return scopes.has(MANAGEMENT_SCOPE);
}

/** The page (403) of a user without the permission: what she asked for is neither shown nor sent. */
export async function forbidden(kit: PortalKit, ctx: Context, now: Current): Promise<void> {
  await kit.cookies.save(ctx, now);
  kit.pages.send(ctx, kit.t.forbidden.title, forbiddenPage(kit.pages.view(now.session), now.session.user!), { status: 403 });
}

/**
 * An API answer the portal can do no more with: a refusal (the permission withdrawn since the
 * token was issued) is the permission's page; anything else goes back home with the reason.
 */
export async function failed(kit: PortalKit, ctx: Context, now: Current, answer: ApiAnswer): Promise<void> {
  if (answer.status === 403) return forbidden(kit, ctx, now);
  const { t } = kit;
  now.session.notice = {
    kind: 'error',
    text: answer.status === 404 ? t.errors.gone : `${t.errors.failed} (${reasonOf(answer)})`,
  };
  await kit.cookies.save(ctx, now);
  kit.pages.seeOther(ctx);
}

/** A change done (or, `kind: 'error'`, not done): a page of the portal (home by default), with what happened said there. */
export async function done(kit: PortalKit, ctx: Context, now: Current, text: string, kind: 'ok' | 'error' = 'ok', path = ''): Promise<void> {
  now.session.notice = { kind, text };
  await kit.cookies.save(ctx, now);
  kit.pages.seeOther(ctx, path);
}
