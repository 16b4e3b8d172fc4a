import type { Context, Next } from 'koa';
import type Provider from 'oidc-provider';
import { UPSTREAM_SIGN_OUT_SECONDS } from '../../../policies/lifetimes.js';
import type { AccountStore } from '../../accounts.js';
import type { Connections } from '../../federation/connections.js';
import type { SignedInThroughStore } from '../../federation/signed-in-through.js';
import type { Upstreams } from '../../federation/upstreams.js';
import type { Localizer } from '../../i18n/localizer.js';
import type { Logger } from '../../logger.js';
import { errorPage, sendPage } from '../../pages/html.js';
import type { Sealer } from '../../records/sealed.js';
import type { RouteHandler } from '../../http/router.js';

/*
 * THE PROVIDER'S SIGN-OUT AFTER OURS (RP-initiated logout at the tenant's identity provider):
 *
 * - When our sign-out ends a browser's session (the engine's confirmation, `logout=yes`) whose
 *   sign-in went through a provider (its `amr` holds `fed`) and its user last signed in through a
 *   connection that asks for it (`signOutUpstream`), the browser
 *   goes on to the provider's end-session endpoint (when its discovery names one) with the ID
 *   token it gave us as `id_token_hint`, our client ID, our one post-logout URI
 *   (`{oauth}/federation/signed-out`, registered by the tenant at its provider) and a `state`.
 * - The `state` is where our sign-out would have sent the browser (the app's registered
 *   post-logout URI with its state, or our "signed out" page), sealed and dated
 *   (UPSTREAM_SIGN_OUT_SECONDS): nothing is stored for it. Back at `{oauth}/federation/signed-out`
 *   only a state we sealed, still in date, sends the browser on; a forged, altered or old one gets
 *   a page saying so (never a redirect to a URL a request names).
 * - The entry of the provider she signed in through is forgotten once our sign-out is done. A
 *   session she began with her password (another browser) neither goes to the provider with the
 *   ID token of another browser's sign-in nor forgets it: that browser's sign-out still goes there.
 * - Our sign-out is done before the provider is asked anything: a provider that cannot be reached
 *   (its discovery not answered within `federation.timeoutMs`) leaves the browser where our
 *   sign-out sends it.
 */

/** What the upstream sign-out needs of the server. */
export interface UpstreamSignOutSetup {
  provider: Provider;
  accounts: AccountStore | undefined;
  connections: Connections;
  upstreams: Upstreams;
  signedInThrough: SignedInThroughStore;
  /** Seals the way back (the cookie keys). */
  sealer: Sealer;
  /** `{baseUrl}{oauth}/federation/signed-out`: what each tenant registers at its provider. */
  postLogoutRedirectUri: string;
  localizer: Localizer;
  logger: Logger;
  /** Counts each sign-out of a user who signed in through a provider, by outcome (the metric's labels). */
  counted?: (outcome: 'redirected' | 'no_endpoint' | 'not_asked') => void;
  now?: () => number;
}

/** The sealed `state`: where to go, until when (epoch seconds). */
interface WayBack {
  to: string;
  exp: number;
}

const PURPOSE = 'upstream sign-out return';

/** The handlers: the engine's sign-out confirmation wrapped, and the way back from the provider. */
export function upstreamSignOut(setup: UpstreamSignOutSetup): { confirm: RouteHandler; signedOut: RouteHandler } {
  const now = setup.now ?? Date.now;
  const { provider, sealer } = setup;

  /** The provider's end-session URL for the user whose session just ended, or undefined. */
  async function upstreamUrl(accountId: string, to: string): Promise<URL | undefined> {
    const account = setup.accounts ? await setup.accounts.findAccount(accountId) : undefined;
    if (!account) return undefined;
    const user = { tenant: account.tenant, sub: account.sub };
    const through = await setup.signedInThrough.of(user);
    if (!through) return undefined;
    await setup.signedInThrough.forget(user);
    const connection = await setup.connections.forSignIn(through.connectionId);
    // A connection gone, changed not to ask for it, or (never) another tenant's: our sign-out only.
    if (!connection || !connection.signOutUpstream || connection.tenant !== account.tenant) {
      setup.counted?.('not_asked');
      return undefined;
    }
    const state = sealer.seal({ to, exp: Math.floor(now() / 1000) + UPSTREAM_SIGN_OUT_SECONDS } satisfies WayBack, PURPOSE);
    const url = await setup.upstreams.endSessionUrl(connection, { idTokenHint: through.idToken, postLogoutRedirectUri: setup.postLogoutRedirectUri, state });
    setup.counted?.(url ? 'redirected' : 'no_endpoint');
    return url;
  }

  const confirm: RouteHandler = async (ctx: Context, _params: unknown, next: Next) => {
    const session = await provider.Session.get(ctx as never);
    const { accountId, jti } = session;
    const federated = Array.isArray(session.amr) && session.amr.includes('fed');
    await next();
    const to = ctx.response.get('Location');
    if (!accountId || !federated || ctx.status !== 303 || !to) return;
    try {
      // Only a session the engine ended (logout=yes), not one app's part of it.
      if (await provider.Session.find(jti)) return;
      const url = await upstreamUrl(accountId, to);
      if (url) ctx.redirect(url.href);
    } catch (error) {
      // Our sign-out is done: the browser goes where it sends it.
      setup.logger.warn('upstream sign-out skipped', { error: (error as Error).name });
    }
  };

  const signedOut: RouteHandler = async (ctx: Context) => {
    const state = ctx.query.state;
    const back = typeof state === 'string' ? sealer.open<WayBack>(state, PURPOSE) : undefined;
    if (!back || typeof back.to !== 'string' || typeof back.exp !== 'number' || back.exp < Math.floor(now() / 1000)) {
      const locale = setup.localizer.choose({ acceptLanguage: ctx.get('accept-language') });
      sendPage(ctx, errorPage(locale.t.upstreamSignOutReturnInvalid, locale.t.signOutHeading, locale), 400);
      return;
    }
    ctx.set('Cache-Control', 'no-store');
    ctx.status = 303;
    ctx.redirect(back.to);
  };

  return { confirm, signedOut };
}
