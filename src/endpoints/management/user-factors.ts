import type { Context } from 'koa';
import type { AccountStore } from '../../accounts.js';
import type { AuditContext } from '../../audit/trail.js';
import { checkedOwner } from '../../factors/record.js';
import type { Factors } from '../../factors/index.js';
import { userFactorsWire } from '../../http/wire.js';
import { TenantGuard } from '../tenant-guard.js';

/*
 * A USER'S SECOND FACTORS, FOR HER TENANT'S ADMIN (management API): list what a user holds, and
 * ask for a reset that she completes herself at her next sign-in (Factors.requestReset): her
 * factors keep working until then, so a reset asked for by mistake locks nobody out, and nobody
 * but her enrols what replaces them.
 *
 * - Only a user of the caller's tenant: the AccountStore's `findAccount` tells whose the `sub` is,
 *   and a user of another tenant is answered exactly like one that exists nowhere (404, recorded
 *   as a probe in the caller's tenant: TenantGuard), so that nothing tells which users exist
 *   elsewhere. Her factors are read and changed under the caller's tenant only.
 * - Never a secret, code, hash or key: the list is the contract's (`auth.factors.list`).
 * - A reset asked for is audited (`factor.reset`, `requested: true`) with the admin as actor.
 */

/** The caller as the management API hands her: her tenant, and who acts. */
interface Caller {
  tenant: string;
  by: AuditContext;
}

type Method = (ctx: Context, caller: Caller, sub: string | undefined) => Promise<void>;

/** What the user-factor routes are built from. */
export interface UserFactorsSetup {
  factors: Factors;
  accounts: AccountStore | undefined;
  /** A user asked for who is none of the caller's tenant's (recorded as `management.denied`, 404). */
  missing(ctx: Context, caller: Caller): void;
}

/** The methods of `GET .../users/{sub}/factors` and `POST .../users/{sub}/factors/reset-request`. */
export function userFactorMethods(setup: UserFactorsSetup): { list: Record<string, Method>; resetRequest: Record<string, Method> } {
  const { factors, accounts } = setup;

  /** The user `sub` of the caller's tenant (400 for a `sub` that cannot be one, 404 for another tenant's or none). */
  async function ownUser(ctx: Context, caller: Caller, sub: string | undefined): Promise<{ tenant: string; sub: string }> {
    const owner = checkedOwner({ tenant: caller.tenant, sub: sub ?? '' });
    const users = { listByTenant: async () => [], get: async (id: string) => accounts?.findAccount(id) };
    await new TenantGuard(() => setup.missing(ctx, caller)).own(users, owner.sub, caller, 'user');
    return owner;
  }

  return {
    list: {
      GET: async (ctx, caller, sub) => {
        const owner = await ownUser(ctx, caller, sub);
        const [listed, summary] = await Promise.all([factors.list(owner), factors.summary(owner)]);
        ctx.body = userFactorsWire(listed, summary.resetRequested);
      },
    },
    resetRequest: {
      POST: async (ctx, caller, sub) => {
        const owner = await ownUser(ctx, caller, sub);
        ctx.body = { reset_requested: await factors.requestReset(owner, caller.by) };
      },
    },
  };
}
