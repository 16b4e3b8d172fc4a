import type { Context } from 'koa';
import { StoreUnavailable } from '../../adapters/types.js';
import { OAuthError } from '../../policies/errors.js';
import { formRefusal } from '../http/csrf.js';
import { Form, readForm } from '../http/forms.js';
import { SignedOut } from './api-client.js';
import type { PortalKit } from './kit.js';
import { forbidden, mayManage } from './outcomes.js';
import { freshOrSignInAgain } from './reauth.js';
import { PORTAL_ROUTES, REPEATABLE, type PortalCall, type PortalRouteName, type PortalHandlers, type PortalMatch, type PortalRouter } from './routes.js';

/*
 * HOW A REQUEST IS ANSWERED: its row of the table (src/portal/routes.ts) and what the row needs.
 * A GET of a browser without a session leads home (to sign in); a POST needs the session and the
 * form's CSRF token (src/http/csrf.ts: the token kept in the session, a browser's Origin ours) and
 * is read by the pages' one form reader (src/http/forms.ts). A row that needs the management right
 * is the permission's page (403) without it. Errors end as pages, never as a stack.
 */

/** The largest form (a client configuration with many constraint values). */
const FORM_LIMIT = 64 * 1024;
/** A GET's form. */
const NO_FORM = new Form([]);

/** The portal's answer to a request under its path. */
export class PortalDispatcher {
  /** Our public origin: forms must come from it. */
  readonly #origin: string;

  constructor(
    private readonly kit: PortalKit,
    private readonly router: PortalRouter,
    private readonly handlers: PortalHandlers,
  ) {
    this.#origin = new URL(kit.setup.baseUrl).origin;
  }

  /** Answers a request under the portal's path (every error a page). */
  async answer(ctx: Context): Promise<void> {
    const { pages, t } = this.kit;
    const path = ctx.path.slice(pages.base.length);
    try {
      if (ctx.method === 'GET' || ctx.method === 'HEAD') return await this.#get(ctx, path);
      if (ctx.method === 'POST') return await this.#post(ctx, path);
      ctx.set('Allow', 'GET, HEAD, POST');
      return pages.simple(ctx, 405, t.errors.notAllowed);
    } catch (error) {
      return this.#fail(ctx, error);
    }
  }

  async #get(ctx: Context, path: string): Promise<void> {
    const { pages, t } = this.kit;
    const found = this.router.match('GET', path);
    if (found?.route.right === 'public') return this.handlers[found.route.name](ctx);
    const now = await this.kit.cookies.current(ctx);
    if (!now?.session.user) {
      if (path !== '' && path !== '/') return pages.seeOther(ctx);
      return pages.landing(ctx, ctx.query.state === 'signed-out' ? t.signedOut : '');
    }
    if (!found) return pages.simple(ctx, 404, t.errors.notFound);
    return this.#signedIn(found, { ctx, now, id: found.id, form: NO_FORM });
  }

  async #post(ctx: Context, path: string): Promise<void> {
    const { pages, t } = this.kit;
    const now = await this.kit.cookies.current(ctx);
    const form = await this.#formOf(ctx);
    if (!form) return;
    if (!now?.session.user || formRefusal(ctx, this.#origin, form.get('csrf'), now.session.csrf)) {
      return pages.simple(ctx, 403, t.errors.refused);
    }
    const found = this.router.match('POST', path);
    if (!found) return pages.simple(ctx, 404, t.errors.notFound);
    return this.#signedIn(found, { ctx, now, id: found.id, form });
  }

  /** The request's form, or undefined when it was answered with why not (413, 415, 400). */
  async #formOf(ctx: Context): Promise<Form | undefined> {
    try {
      return await readForm(ctx, FORM_LIMIT, REPEATABLE);
    } catch (error) {
      if (!(error instanceof OAuthError) || error.status >= 500) throw error;
      this.kit.pages.simple(ctx, error.status, error.status === 413 ? this.kit.t.errors.tooLarge : this.kit.t.errors.refused);
      return undefined;
    }
  }

  /** A row of a signed-in user: the management right checked first where the row needs it. */
  async #signedIn({ route }: PortalMatch, call: PortalCall): Promise<void> {
    // (No row answers both anyone and signed-in users: a public row is a GET's, before the session.)
    if (route.right === 'public') return this.kit.pages.simple(call.ctx, 404, this.kit.t.errors.notFound);
    // Forms and confirmations of the organisation's setup are not for a user without the
    // management right: a page that says so, and no call to the APIs (never a silent return home).
    if (route.right === 'manage' && !(await mayManage(this.kit, call.ctx, call.now))) return forbidden(this.kit, call.ctx, call.now);
    const named = { ...call, route: route.name };
    // A destructive row: done only after a recent sign-in, else kept for after a sign-in again.
    if ('fresh' in route && route.fresh && !(await freshOrSignInAgain(this.kit, named))) return;
    return this.handlers[route.name](named);
  }

  /**
   * Does the action a session kept for after its fresh sign-in (src/portal/reauth.ts), as its row
   * would: the row's right checked on the new session's token; a row that is gone, a 404.
   */
  async resume(name: PortalRouteName, call: PortalCall): Promise<void> {
    try {
      const route = PORTAL_ROUTES.find((row) => row.name === name && row.method === 'POST');
      if (!route) return this.kit.pages.simple(call.ctx, 404, this.kit.t.errors.notFound);
      return await this.#signedIn({ route, id: call.id }, call);
    } catch (error) {
      return this.#fail(call.ctx, error);
    }
  }

  /** What went wrong, as a page: signed out (the grant ended), the store down, anything else. */
  async #fail(ctx: Context, error: unknown): Promise<void> {
    const { cookies, pages, t } = this.kit;
    if (error instanceof SignedOut) {
      const now = await cookies.current(ctx).catch(() => undefined);
      if (now) await cookies.end(ctx, now.id).catch(() => undefined);
      return pages.landing(ctx, t.signInEnded, 401);
    }
    if (error instanceof StoreUnavailable) return pages.simple(ctx, 503, t.errors.unavailable);
    // Only the error's class: a message could quote request data.
    this.kit.setup.logger.error('portal error', { error: error instanceof Error ? error.name : 'unknown' });
    return pages.simple(ctx, 502, t.errors.failed);
  }
}
