import type { Context, Next } from 'koa';
import type { AccountStore } from '../accounts.js';
import { OAuthError } from '../../policies/errors.js';
import type { Consent, Consents } from '../records/consents.js';
import { TokenError, type TokenVerifier } from '../resource-server/verifier.js';
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
        if (ctx.method !== 'GET') throw new OAuthError('invalid_request', 405, 'use GET to list consents');
        const { sub, tenant, clientId } = await caller(ctx);
        const all = await consents.list({ tenant, sub });
        // A third-party app must not learn which other apps the user uses.
        const visible = (await isFirstParty(clientId)) ? all : all.filter((consent) => consent.clientId === clientId);
        ctx.body = { consents: visible.map(wire) };
        return;
      }
      if (ctx.method !== 'DELETE') throw new OAuthError('invalid_request', 405, 'use DELETE to revoke a consent');
      const auth = await caller(ctx);
      let clientId: string;
      try {
        clientId = decodeURIComponent(one![1]!);
      } catch {
        throw new OAuthError('not_found', 404, 'no consent for this application');
      }
      if (clientId !== auth.clientId && !(await isFirstParty(auth.clientId))) {
        throw new TokenError('insufficient_scope', 403, "only the platform's own apps may revoke another app's consent", verifier.realm);
      }
      if (!(await consents.revoke({ tenant: auth.tenant, sub: auth.sub, clientId }))) {
        throw new OAuthError('not_found', 404, 'no consent for this application');
      }
      ctx.status = 204;
    } catch (error) {
      if (error instanceof TokenError) ctx.set('WWW-Authenticate', error.challenge);
      if (error instanceof OAuthError && error.status === 405) ctx.set('Allow', ctx.path === base ? 'GET' : 'DELETE');
      throw error;
    }
  };
}
