import type { Context } from 'koa';
import type { Connection, Connections } from '../../federation/connections.js';
import { localeOf } from '../../i18n/localizer.js';
import type { Brands } from '../../pages/branding.js';
import { sendPage } from '../../pages/html.js';
import { ssoRequiredPage } from '../../pages/sso-required.js';
import type { AppRegistration } from '../../records/app-registrations.js';
import type { SecondFactorRules } from '../../records/tenant-settings.js';

/*
 * SSO REQUIRED: a tenant whose host policy or own setting says `sso: 'required'`
 * (SecondFactorRules.ssoRequired) signs its users in through its identity provider only: their
 * passwords are refused, with a page that names the provider and offers "Continue with <name>"
 * (the interaction's `federate` step, field `connection`).
 *
 * - Only while the tenant has a connection: a tenant that requires SSO and has none keeps
 *   passwords, so that no tenant is locked out by its own setting.
 * - A tenant's app (only its users sign in there): the tenant is known before the password, which
 *   is refused unread (nothing learnt about the password); its login page is this page straight
 *   away (no password form).
 * - A platform app (no tenant), or a tenant's app open to all tenants: the tenant is the user's,
 *   known only once her password checked.
 *   The refusal then says the password was right; a right password signed her in before the rule,
 *   so it tells no more than a sign-in told (and the throttle counts wrong guesses as always).
 */

/** The connections a tenant's users must sign in through. */
export interface SsoRuleSetup {
  rules: SecondFactorRules;
  connections: Connections;
  /** The path of the sign-in pages (the page's forms post to `{path}/{uid}/federate`). */
  path: string;
  brands: Brands | undefined;
  issueCsrf: (ctx: Context) => string;
}

/** The SSO-required rule of the sign-in pages. */
export interface SsoRule {
  /** The connections `tenant`'s users must sign in through, or undefined (passwords allowed). */
  required(tenant: string | undefined): Promise<Connection[] | undefined>;
  /**
   * Sends the page that says `tenant` signs its users in through its provider, when it does
   * (`status` 200 as the login page, 403 as a refused password); `back`: a link back to the sign-in page.
   * @returns whether the page was sent.
   */
  offer(ctx: Context, uid: string, app: AppRegistration, tenant: string | undefined, status: 200 | 403, back?: string): Promise<boolean>;
}

/** The tenant whose users alone sign in at `app` (known before the password), or undefined (any tenant's). */
export function tenantBeforePassword(app: Pick<AppRegistration, 'tenant' | 'openToAllTenants'>): string | undefined {
  return app.openToAllTenants ? undefined : app.tenant;
}

export function ssoRule(setup: SsoRuleSetup): SsoRule {
  async function required(tenant: string | undefined): Promise<Connection[] | undefined> {
    if (tenant === undefined || !(await setup.rules.ssoRequired(tenant))) return undefined;
    const connections = await setup.connections.list(tenant);
    return connections.length > 0 ? connections : undefined;
  }
  return {
    required,
    async offer(ctx, uid, app, tenant, status, back) {
      const connections = await required(tenant);
      if (!connections) return false;
      sendPage(ctx, ssoRequiredPage({
        action: `${setup.path}/${uid}/federate`,
        csrf: setup.issueCsrf(ctx),
        appName: app.name,
        connections: connections.map(({ id, name, issuer }) => ({ id, name, issuer })),
        ...(back ? { back } : {}),
        locale: localeOf(ctx),
        branding: await setup.brands?.of(app.tenant),
      }), status);
      return true;
    },
  };
}
