import type { Context, Next } from 'koa';
import type { AccountStore } from '../accounts.js';
import { InsufficientScope, MethodNotAllowed, NotFound } from '../../policies/errors.js';
import type { Consent, Consents } from '../records/consents.js';
import type { TokenVerifier } from '../resource-server/verifier.js';
import { namedUserCaller } from './named-user-caller.js';

function wire(consent: Consent) {
  return {
    client_id: consent.clientId,
    app_name: consent.appName ?? null,
    scopes: consent.scopes,
    created_at: consent.createdAt,
    updated_at: consent.updatedAt,
  };
}

/**
 * The consent API: `GET {base}` lists, `DELETE {base}/{clientId}` revokes the consents of the
 * user of a named-user access token, in the token's tenant only. The account must still exist and
 * still belong to that tenant.
 */
export function consentApi(
  base: string,
  verifier: TokenVerifier,
  consents: Consents,
  accounts: AccountStore | undefined,
  isFirstParty: (clientId: string) => Promise<boolean>,
) {
  const item = new RegExp(`^${base.replace(/[.*+?^${}()|[\]\\]/g, '\\$&')}/([^/]+)$`);

  const caller = async (ctx: Context) => (await namedUserCaller(ctx, verifier, accounts)).auth;

  return async function serveConsentApi(ctx: Context, next: Next): Promise<void> {
    const one = item.exec(ctx.path);
    if (ctx.path !== base && !one) return next();
    ctx.set('Cache-Control', 'no-store');
    try {
      if (ctx.path === base) {
        if (ctx.method !== 'GET') throw new MethodNotAllowed(['GET']);
        const { sub, tenant, clientId } = await caller(ctx);
        const all = await consents.list({ tenant, sub });
        // A third-party app must not learn which other apps the user uses.
        const visible = (await isFirstParty(clientId)) ? all : all.filter((consent) => consent.clientId === clientId);
        ctx.body = { consents: visible.map(wire) };
        return;
      }
      if (ctx.method !== 'DELETE') throw new MethodNotAllowed(['DELETE']);
      const auth = await caller(ctx);
      let clientId: string;
      try {
        clientId = decodeURIComponent(one![1]!);
      } catch {
        throw new NotFound('consent for this application');
      }
      if (clientId !== auth.clientId && !(await isFirstParty(auth.clientId))) {
        throw new InsufficientScope("only the platform's own apps may revoke another app's consent", verifier.realm);
      }
      if (!(await consents.revoke({ tenant: auth.tenant, sub: auth.sub, clientId }))) {
        throw new NotFound('consent for this application');
      }
      ctx.status = 204;
    } catch (error) {
      throw error;
    }
  };
}
