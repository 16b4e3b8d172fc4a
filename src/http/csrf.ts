import { randomBytes } from 'node:crypto';
import type { Context } from 'koa';
import { constantTimeEqual } from '../../policies/constant-time.js';

/** Why a form was refused: it came from another site, or its token is not this browser's. */
export type FormRefusal = 'other_site' | 'expired';

/**
 * THE CSRF RULE OF OUR PAGES (the sign-in pages and the portal, alike): a form must come from our
 * own origin and carry the token its page was served with.
 *
 * - The token is random and travels twice: in the form's hidden `csrf` field, and where another
 *   site can neither read it nor make the browser send it with a form of its own: a signed,
 *   HttpOnly, SameSite=Strict cookie scoped to the pages' path (the sign-in pages, `CsrfTokens`), or
 *   the portal's server-side session (`formRefusal`). The two are compared in constant time.
 * - A browser's `Origin`, when it sends one, must be ours; `Origin: null` (a browser hiding it) is
 *   taken from `Sec-Fetch-Site` instead, which must say same-origin.
 */
export class CsrfTokens {
  constructor(
    /** The cookie's name (one per set of pages). */
    private readonly cookie: string,
    /** The path the cookie is scoped to (the pages'). */
    private readonly path: string,
    /** Our public origin: forms must come from it. */
    private readonly publicOrigin: string,
  ) {}

  /** A token for the page being served (and its cookie, set now). */
  issue(ctx: Context): string {
    const token = randomBytes(24).toString('base64url');
    ctx.cookies.set(this.cookie, token, { signed: true, httpOnly: true, sameSite: 'strict', path: this.path, overwrite: true });
    return token;
  }

  /** Why the form `sent` (its `csrf` field) is refused, or undefined when it may go on. */
  refusal(ctx: Context, sent: string | undefined): FormRefusal | undefined {
    return formRefusal(ctx, this.publicOrigin, sent, ctx.cookies.get(this.cookie, { signed: true }));
  }
}

/**
 * The rule above for a token kept elsewhere than in its cookie: the portal keeps it in its
 * server-side session (sealed in the store, a new one at every sign-in), so that the session
 * cookie alone carries it. Why the form `sent` is refused, or undefined when it may go on.
 */
export function formRefusal(ctx: Context, publicOrigin: string, sent: string | undefined, expected: string | undefined): FormRefusal | undefined {
  const origin = ctx.get('origin');
  const sameSite = origin === 'null' ? ctx.get('sec-fetch-site') === 'same-origin' : origin === publicOrigin;
  if (origin && !sameSite) return 'other_site';
  if (expected === undefined || sent === undefined || !constantTimeEqual(sent, expected)) return 'expired';
  return undefined;
}
