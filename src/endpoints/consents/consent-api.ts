import type { Context } from 'koa';
import type { AccountStore } from '../../accounts.js';
import { InsufficientScope } from '../../../policies/errors.js';
import type { Consents } from '../../records/consents.js';
import type { RouteHandler } from '../../http/router.js';
import type { RouteName } from '../../http/routes.js';
import { consentWire } from '../../http/wire.js';
import type { TokenVerifier } from '../../resource-server/verifier.js';
import { namedUserCaller } from '../../http/named-user-caller.js';
import { TenantGuard } from '../tenant-guard.js';

/**
 * The consent API: `GET {base}` lists, `DELETE {base}/{clientId}` revokes the consents of the
 * user of a named-user access token, in the token's tenant only. The account must still exist and
 * still belong to that tenant.
 */
export function consentHandlers(
  verifier: TokenVerifier,
  consents: Consents,
  accounts: AccountStore | undefined,
  isFirstParty: (clientId: string) => Promise<boolean>,
  addressOf: (ctx: Context) => string,
): Partial<Record<RouteName, RouteHandler>> {
  const caller = async (ctx: Context) => (await namedUserCaller(ctx, verifier, accounts)).auth;
  return {
    async consents(ctx) {
      ctx.set('Cache-Control', 'no-store');
      const { sub, tenant, clientId } = await caller(ctx);
      const all = await consents.list({ tenant, sub });
      // A third-party app must not learn which other apps the user uses.
      const visible = (await isFirstParty(clientId)) ? all : all.filter((consent) => consent.clientId === clientId);
      ctx.body = { consents: visible.map(consentWire) };
    },
    async consent(ctx, { clientId }) {
      ctx.set('Cache-Control', 'no-store');
      const auth = await caller(ctx);
      if (clientId !== auth.clientId && !(await isFirstParty(auth.clientId))) {
        throw new InsufficientScope("only the platform's own apps may revoke another app's consent", verifier.realm);
      }
      const by = { actor: { type: 'user' as const, id: auth.sub }, address: addressOf(ctx) };
      // The consents of the caller's tenant and user only: the store keys them so (TenantGuard).
      new TenantGuard().found(await consents.revoke({ tenant: auth.tenant, sub: auth.sub, clientId: clientId! }, by), 'consent for this application', auth);
      ctx.status = 204;
    },
  };
}
