import type { Context } from 'koa';
import type { AuditContext } from '../../audit/trail.js';
import { readJsonObject } from '../../http/json-body.js';
import { json, NO_STORE, ref, response, authFailures, type Json } from '../../http/openapi-parts.js';
import { tenantSettingsInput, tenantSettingsWire } from '../../http/wire.js';
import type { SecondFactorRules, TenantSettings } from '../../records/tenant-settings.js';

/**
 * THE TENANT'S OWN SETTINGS in the management API (`{api}/tenant-settings`: the second-factor rule,
 * passkey-only sign-in, SSO optional or required): GET answers what the
 * caller's tenant chose and what applies (with the host's policy); PUT replaces its choices whole
 * (a field left out: no choice), audited as `tenant_settings.updated`. Only the caller's tenant:
 * there is no parameter to name another. The same rights as the rest of the management API.
 */

/** What the routes read and write. */
export interface TenantSettingsSetup {
  tenantSettings: TenantSettings;
  secondFactorRules: SecondFactorRules;
  bodyLimit: number;
}

/** The methods of the route, each for the caller's tenant (management-api.ts authenticates the caller). */
export function tenantSettingsMethods(setup: TenantSettingsSetup): Record<'GET' | 'PUT', (ctx: Context, caller: { tenant: string; by: AuditContext }) => Promise<void>> {
  const answer = async (ctx: Context, tenant: string) => {
    const [own, effective, profile] = await Promise.all([setup.tenantSettings.get(tenant), setup.secondFactorRules.of(tenant), setup.secondFactorRules.profile(tenant)]);
    ctx.body = tenantSettingsWire(own, effective, profile);
  };
  return {
    GET: (ctx, { tenant }) => answer(ctx, tenant),
    PUT: async (ctx, { tenant, by }) => {
      const settings = tenantSettingsInput(await readJsonObject(ctx, setup.bodyLimit));
      await setup.tenantSettings.replace(tenant, settings, by);
      await answer(ctx, tenant);
    },
  };
}

/** The route's operations in the OpenAPI document. */
export function tenantSettingsOperation(): Json {
  const security = [{ bearerAuth: [] }];
  return {
    get: {
      operationId: 'getTenantSettings',
      tags: ['tenant-settings'],
      summary: "The caller's tenant's own settings, and what applies",
      description:
        'The second-factor rule, passkey-only sign-in and SSO rule the tenant chose (absent: no choice), and what applies to its '
        + "sign-ins: its choices combined with the host's policy (the stricter second-factor rule; passkey-only sign-in "
        + 'unless the host forbids it; SSO required when either requires it). The same rights as the rest of the management API.',
      security,
      responses: {
        200: { description: 'The settings.', headers: NO_STORE, content: json(ref('TenantSettings')) },
        ...authFailures,
      },
    },
    put: {
      operationId: 'replaceTenantSettings',
      tags: ['tenant-settings'],
      summary: "Replaces the caller's tenant's own settings",
      description:
        'The whole of the tenant\'s choices: a field left out is no choice (the host\'s applies). A rule weaker than the '
        + "host's is kept but does not apply (`effective` says what does): a tenant can ask for more than the host, never less. "
        + 'Recorded as `tenant_settings.updated` with the fields changed and their new values; nothing changed, nothing recorded.',
      security,
      requestBody: { required: true, content: json(ref('TenantSettingsUpdate')) },
      responses: {
        200: { description: 'The settings, as now.', headers: NO_STORE, content: json(ref('TenantSettings')) },
        400: response('ManagementBadRequest'),
        ...authFailures,
        413: response('PayloadTooLarge'),
        415: response('UnsupportedMediaType'),
      },
    },
  };
}
