import type { KoaContextWithOIDC } from 'oidc-provider';
import { sessionEnded } from '../../audit/events.js';
import { Sealer } from '../../records/sealed.js';
import { browserRequestGuard } from '../../limits/browser-requests.js';
import { ENGINE_ROW, GET, row, type EndpointModule, type ServerParts } from '../endpoint.js';
import { endSessionHandler } from './end-session.js';
import { upstreamSignOut } from './upstream-sign-out.js';

/** A sign-out the engine completed: recorded with its user and tenant (src/engine/sign-out.ts). */
function recordSignOuts(parts: ServerParts): void {
  const { engine, settings, audit, addressOf } = parts;
  engine.provider.on('end_session.success', (ctx: KoaContextWithOIDC) => {
    const accountId = ctx.oidc.session?.accountId;
    const clientId = ctx.oidc.client?.clientId;
    void (async () => {
      const account = accountId && settings.accounts ? await settings.accounts.findAccount(accountId).catch(() => undefined) : undefined;
      audit.recordLater(sessionEnded(accountId ? { sub: accountId, tenant: account?.tenant } : undefined, clientId, addressOf(ctx)));
    })();
  });
}

/**
 * SIGN-OUT (OpenID Connect RP-Initiated Logout): the engine's end-session endpoint and its steps,
 * behind the guard of browser requests, a browser that is not signed in answered here without
 * anything stored (src/endpoints/sign-out/end-session.ts). Browser pages: not in the document.
 */
export const signOutEndpoints: EndpointModule<'endSession' | 'endSessionConfirm' | 'endSessionSuccess' | 'federationSignedOut'> = {
  routes: ({ oauth }) => [
    row({ name: 'endSession', path: `${oauth}/session/end`, methods: ['GET', 'POST'], group: 'sign_out', store: true, ...ENGINE_ROW }),
    row({ name: 'endSessionConfirm', path: `${oauth}/session/end/confirm`, methods: ['POST'], group: 'sign_out', store: true, ...ENGINE_ROW }),
    row({ name: 'endSessionSuccess', path: `${oauth}/session/end/success`, methods: GET, group: 'sign_out', store: false, ...ENGINE_ROW }),
    // The way back from a tenant's identity provider after its sign-out (upstream-sign-out.ts).
    row({ name: 'federationSignedOut', path: `${oauth}/federation/signed-out`, methods: GET, group: 'sign_out', store: false, refuse: 'page' }),
  ],
  operations: () => ({}),
  audits: ['session.ended'],
  handlers(parts) {
    const { settings, store, addressOf, logger, metrics, engine, look, cookieKeys } = parts;
    recordSignOuts(parts);
    // After our sign-out, the provider's, where the user's connection asks for it (upstream-sign-out.ts).
    const upstream = upstreamSignOut({
      provider: engine.provider,
      accounts: settings.accounts,
      connections: parts.connections,
      upstreams: parts.upstreams,
      signedInThrough: parts.signedInThrough,
      sealer: new Sealer(cookieKeys, 'talent-auth upstream sign-out'),
      postLogoutRedirectUri: `${settings.baseUrl}${settings.pathPrefix}/oauth2/federation/signed-out`,
      localizer: look.localizer,
      logger,
      counted: (outcome) => metrics?.upstreamSignOuts.inc({ outcome }),
    });
    return {
      endSessionConfirm: upstream.confirm,
      federationSignedOut: upstream.signedOut,
      endSession: endSessionHandler({
        provider: engine.provider,
        look,
        sealer: new Sealer(cookieKeys, 'talent-auth sign-out requests'),
        bodyLimit: settings.limits.authorizeQueryBytes,
        guard: browserRequestGuard(
          { queryBytes: settings.limits.authorizeQueryBytes, perAddress: settings.rateLimits.authorize },
          'signout',
          store.counters,
          addressOf,
          logger,
          () => metrics?.rateLimited.inc({ limit: 'sign_out' }),
        ),
      }),
    };
  },
};
