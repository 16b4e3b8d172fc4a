import { AccessDenied, InvalidGrant } from './errors.js';
import type { TenantPolicy } from './tenant-policy.js';

/**
 * CONSENT: which apps a user may let act for her, and when that is checked.
 *
 * - A user consents once per (tenant, user, app): signing in again from another browser does not
 *   ask again, and a new consent to more scopes replaces the recorded one (src/records/consents.ts).
 * - An app may be authorized by a user only when both hold:
 *   1. her tenant's policy allows the app (`allowedApps`, when the host's policy lists apps);
 *   2. the app serves her tenant: an app of the operator (no tenant) serves every tenant; an app a
 *      tenant registered serves that tenant's users only (so that a look-alike name cannot win
 *      another tenant's users' consent), unless the operator opened it to all tenants.
 * - Both are checked when the authorization request first knows the user (refused with
 *   `access_denied`, back to the app) and again whenever a token is issued for her (a code
 *   exchange, a refresh: `invalid_grant`), since policies and apps change while grants live.
 * - What she may consent to: the scopes she holds that her tenant allows (policies/scopes.ts);
 *   revoking a consent ends its grant and every token of it.
 */

/** The owner of an app as the consent rule reads it. */
export interface AppOwner {
  clientId: string;
  /** The tenant that registered it; none for the operator's apps. */
  tenant?: string | undefined;
  /** An operator's decision: a tenant's app that serves every tenant. */
  openToAllTenants?: boolean | undefined;
}

/** Why a user may not authorize an app, or undefined when she may. */
export type AppRefusal = 'not-allowed-by-tenant' | 'another-tenants-app';

/**
 * Whether a user of `tenant` may authorize the app: an operator's app (no tenant) serves every
 * tenant; a tenant's app serves its own tenant only, unless the operator opened it to all.
 */
export function appServesTenant(app: Omit<AppOwner, 'clientId'>, tenant: string): boolean {
  return app.tenant === undefined || app.tenant === tenant || app.openToAllTenants === true;
}

/** The reason a user of `tenant` under `policy` may not authorize `app`, if any. */
export function appRefusal(app: AppOwner, tenant: string, policy: TenantPolicy): AppRefusal | undefined {
  if (policy.allowedApps && !policy.allowedApps.includes(app.clientId)) return 'not-allowed-by-tenant';
  if (!appServesTenant(app, tenant)) return 'another-tenants-app';
  return undefined;
}

/**
 * The consent rule where it is enforced: at the authorization request (`authorize`) and whenever a
 * token is issued for the user (`token`).
 * @throws AccessDenied at authorize, InvalidGrant at token, when the app may not act for her.
 */
export function checkAppForUser(app: AppOwner, tenant: string, policy: TenantPolicy, at: 'authorize' | 'token'): void {
  const refusal = appRefusal(app, tenant, policy);
  if (!refusal) return;
  if (at === 'token') throw new InvalidGrant("the user's organization does not allow this application");
  throw new AccessDenied(refusal === 'not-allowed-by-tenant'
    ? 'your organization does not allow this application'
    : 'this application belongs to another organization');
}
