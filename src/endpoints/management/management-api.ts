import type { Context } from 'koa';
import type { AccountStore } from '../../accounts.js';
import { holdsIntegrationSetup, MANAGEMENT_SCOPE } from '../../../policies/management.js';
import { InsufficientScope, InvalidRequest, TokenError, ValidationError } from '../../../policies/errors.js';
import type { AuditContext, AuditEventType, AuditQuery, AuditTrail } from '../../audit/trail.js';
import { appRefusal } from '../../../policies/consent.js';
import { tenantPolicy, type TenantPolicyFunction } from '../../../policies/tenant-policy.js';
import type { AppRegistrations } from '../../records/app-registrations.js';
import type { ClientConfigurations } from '../../records/client-configurations.js';
import { checkScopes, type TokenVerifier } from '../../resource-server/verifier.js';
import { readJsonObject } from '../../http/json-body.js';
import { namedUserCaller } from '../../http/named-user-caller.js';
import type { RouteHandler } from '../../http/router.js';
import type { RouteName } from '../../http/routes.js';
import type { SignInHolds } from '../../limits/sign-in.js';
import { appInput, appPatch, appWire, auditEventWire, clientInput, clientPatch, clientWire, platformAppWire, signInUnlockInput, wireField } from '../../http/wire.js';
import { managementDenied } from '../../audit/events.js';
import { TenantGuard, type TenantRecords } from '../tenant-guard.js';
import type { Factors } from '../../factors/index.js';
import { userFactorMethods } from './user-factors.js';
import type { SecondFactorRules, TenantSettings } from '../../records/tenant-settings.js';
import { tenantSettingsMethods } from './tenant-settings.js';
import type { Connections } from '../../federation/connections.js';
import { connectionMethods } from './connections.js';

/** The query of `GET audit-events`: each parameter once, as text (the trail checks the values). */
function auditQuery(query: Record<string, string | string[] | undefined>): Omit<AuditQuery, 'tenant'> {
  const one = (name: string): string | undefined => {
    const value = query[name];
    if (Array.isArray(value)) throw new InvalidRequest(`parameter '${name}' must be sent once`);
    return value === '' ? undefined : value;
  };
  for (const name of Object.keys(query)) {
    if (!['type', 'since', 'until', 'limit', 'cursor'].includes(name)) throw new InvalidRequest(`unknown parameter '${name}'`);
  }
  const limit = one('limit');
  if (limit !== undefined && !/^\d{1,4}$/.test(limit)) throw new InvalidRequest('limit must be an integer between 1 and 200');
  // An absent (or empty) parameter is undefined: the trail takes undefined as not asked for.
  return { type: one('type') as AuditEventType | undefined, since: one('since'), until: one('until'), limit: limit === undefined ? undefined : Number(limit), cursor: one('cursor') };
}

interface ManagementSetup {
  /** Largest JSON body accepted, in bytes. */
  bodyLimit: number;
  verifier: TokenVerifier;
  accounts: AccountStore | undefined;
  clients: ClientConfigurations;
  apps: AppRegistrations;
  /** Only the platform's own apps may act on a tenant's setup with their users' tokens. */
  isFirstParty: (clientId: string) => Promise<boolean>;
  /** Changes are recorded there (by the records), and refusals here; the Activity list reads it. */
  audit: AuditTrail;
  /** The source address of a request, for the audit trail. */
  addressOf: (ctx: Context) => string;
  /** Sign-in holds a tenant's admin may lift for her users. */
  holds: SignInHolds;
  /** The host's per-tenant policy: which apps of others serve a tenant. */
  tenantPolicy: TenantPolicyFunction | undefined;
  /** The users' second factors: listed, and a reset asked for, by the tenant's admin. */
  factors: Factors;
  /** The tenant's own settings, and the rule they make with the host's policy. */
  tenantSettings: TenantSettings;
  secondFactorRules: SecondFactorRules;
  /** The tenant's identity providers (enterprise sign-in). */
  connections: Connections;
}

/** Who calls: the tenant whose setup it is, and who acts, for the audit trail. */
interface Caller {
  tenant: string;
  by: AuditContext;
}

type Handler = (ctx: Context, caller: Caller, id: string | undefined) => Promise<void>;

/**
 * The management API: client configurations and app registrations of the caller's tenant, for
 * named users holding "Create and update integration setup" (`integration_setup`), checked
 * against the AccountStore on every call so that a withdrawn permission takes effect at once,
 * with an access token that carries the management right (`manage.integrations`) issued to a
 * first-party app.
 */
export function managementHandlers(setup: ManagementSetup): Partial<Record<RouteName, RouteHandler>> {
  const { bodyLimit, verifier, accounts, clients, apps, isFirstParty, audit, addressOf, holds } = setup;

  /** The caller, or a 401/403, which is recorded (`management.denied`) with whoever we know it is. */
  async function callerOf(ctx: Context, route: RouteName): Promise<Caller> {
    let known: { sub: string; tenant: string } | undefined;
    try {
      const { auth, account } = await namedUserCaller(ctx, verifier, accounts);
      known = { sub: account.sub, tenant: account.tenant };
      // The management right is a scope of its own (policies/management.ts): a token the user got
      // for anything else is not an admin credential.
      checkScopes(auth, [MANAGEMENT_SCOPE], verifier.realm);
      // A third-party app the user signed in to must not manage her tenant's integrations.
      if (!(await isFirstParty(auth.clientId))) {
        throw new InsufficientScope("only the platform's own apps may use the management API", verifier.realm);
      }
      if (!holdsIntegrationSetup(account.permissions)) {
        throw new InsufficientScope(`the permission 'Create and update integration setup' is required`, verifier.realm);
      }
      return { tenant: account.tenant, by: { actor: { type: 'user', id: account.sub }, address: addressOf(ctx) } };
    } catch (error) {
      if (error instanceof TokenError) denied(ctx, route, known, error.status, error.error);
      throw error;
    }
  }

  /**
   * A refusal (`management.denied`), in the caller's tenant when known, counted per who (the user,
   * else the address), route and window: anyone can cause refusals (AuditTrail.recordRefusal).
   */
  function denied(ctx: Context, route: RouteName, known: { sub: string; tenant: string } | undefined, status: number, error: string): void {
    const address = addressOf(ctx);
    audit.recordRefusal(
      managementDenied(known, route, { method: ctx.method, address }, { status, error }),
      { who: known ? `user:${known.sub}` : `address:${address}`, where: `${route}:${ctx.method}:${status}` },
    );
  }

  /** One tenant-scoped collection's routes: list, create, read, update, delete, new secret. */
  function collectionHandlers<R extends { tenant?: string }>(what: string, listKey: string, routes: { list: RouteName; one: RouteName; secret: RouteName }, collection: TenantRecords<R> & {
    create(body: Record<string, unknown>, tenant: string, by: AuditContext): Promise<R>;
    update(id: string, body: Record<string, unknown>, by: AuditContext): Promise<R>;
    delete(id: string, by: AuditContext): Promise<unknown>;
    rotateSecret(id: string, by: AuditContext): Promise<{ clientSecret: string }>;
    wire(record: R): unknown;
  }): { list: RouteHandler; one: RouteHandler; secret: RouteHandler } {
    /** The caller's record `id` (TenantGuard: another tenant's is answered and recorded like a missing one). */
    const own = (ctx: Context, route: RouteName, id: string, caller: Caller): Promise<R> =>
      new TenantGuard(() => denied(ctx, route, { sub: caller.by.actor.id!, tenant: caller.tenant }, 404, 'not_found')).own(collection, id, caller, what);
    return {
      list: handler(routes.list, {
        GET: async (ctx, caller) => {
          ctx.body = { [listKey]: (await new TenantGuard().list(collection, caller)).map(collection.wire) };
        },
        POST: async (ctx, { tenant, by }) => {
          const body = await readJsonObject(ctx, bodyLimit);
          ctx.status = 201;
          ctx.body = collection.wire(await collection.create(body, tenant, by));
        },
      }),
      one: handler(routes.one, {
        GET: async (ctx, caller, id) => {
          ctx.body = collection.wire(await own(ctx, routes.one, id!, caller));
        },
        PATCH: async (ctx, caller, id) => {
          await own(ctx, routes.one, id!, caller);
          ctx.body = collection.wire(await collection.update(id!, await readJsonObject(ctx, bodyLimit), caller.by));
        },
        DELETE: async (ctx, caller, id) => {
          await own(ctx, routes.one, id!, caller);
          await collection.delete(id!, caller.by);
          ctx.status = 204;
        },
      }),
      secret: handler(routes.secret, {
        POST: async (ctx, caller, id) => {
          const { by } = caller;
          await own(ctx, routes.secret, id!, caller);
          ctx.body = { client_id: id, client_secret: (await collection.rotateSecret(id!, by)).clientSecret };
        },
      }),
    };
  }

  /** A route's methods, each run for the caller's tenant; input errors name the wire field. */
  function handler(route: RouteName, methods: Record<string, Handler>): RouteHandler {
    return async (ctx, params) => {
      ctx.set('Cache-Control', 'no-store');
      try {
        // The router answers other methods with 405 (the management module lists these: src/endpoints/management/index.ts).
        await methods[ctx.method]!(ctx, await callerOf(ctx, route), params.clientId ?? params.sub ?? params.id);
      } catch (error) {
        if (error instanceof ValidationError) {
          const field = wireField(error.field);
          ctx.status = 400;
          ctx.body = { error: 'invalid_request', error_description: error.description.replace(error.field, field), field };
          return;
        }
        throw error;
      }
    };
  }

  const clientRoutes = collectionHandlers('client configuration', 'client_configurations', {
    list: 'clientConfigurations', one: 'clientConfiguration', secret: 'clientConfigurationSecret',
  }, {
    listByTenant: (tenant) => clients.list(tenant),
    get: (id) => clients.get(id),
    // A tenant's admin names a jwks_uri under the tenant's rule (public hosts only), never the operator's.
    create: (body, tenant, by) => clients.create(clientInput(body, tenant), by, 'tenant'),
    update: (id, body, by) => clients.update(id, clientPatch(body), by, 'tenant'),
    delete: (id, by) => clients.delete(id, by),
    rotateSecret: (id, by) => clients.rotateSecret(id, by),
    wire: clientWire,
  });
  const appRoutes = collectionHandlers('app registration', 'app_registrations', {
    list: 'appRegistrations', one: 'appRegistration', secret: 'appRegistrationSecret',
  }, {
    listByTenant: (tenant) => apps.listByTenant(tenant),
    get: (id) => apps.get(id),
    create: (body, tenant, by) => apps.create(appInput(body, tenant), by),
    update: (id, body, by) => apps.update(id, appPatch(body), by),
    delete: (id, by) => apps.delete(id, by),
    rotateSecret: (id, by) => apps.rotateSecret(id, by),
    wire: appWire,
  });
  const userFactors = userFactorMethods({
    factors: setup.factors,
    accounts,
    missing: (ctx, caller) => denied(ctx, ctx.method === 'GET' ? 'userFactors' : 'userFactorResetRequest', { sub: caller.by.actor.id!, tenant: caller.tenant }, 404, 'not_found'),
  });
  const connections = connectionMethods({
    connections: setup.connections,
    bodyLimit,
    missing: (ctx, caller) => denied(ctx, 'connection', { sub: caller.by.actor.id!, tenant: caller.tenant }, 404, 'not_found'),
  });
  return {
    clientConfigurations: clientRoutes.list,
    clientConfiguration: clientRoutes.one,
    clientConfigurationSecret: clientRoutes.secret,
    appRegistrations: appRoutes.list,
    appRegistration: appRoutes.one,
    appRegistrationSecret: appRoutes.secret,
    // The tenant's Activity: its audit events, newest first, a page at a time.
    auditEvents: handler('auditEvents', {
      GET: async (ctx, { tenant }) => {
        const query = auditQuery(ctx.query);
        const page = await audit.list({ tenant, ...query });
        ctx.body = { events: page.events.map(auditEventWire), ...(page.next ? { next: page.next } : {}) };
      },
    }),
    // The apps the tenant's users may authorize besides its own, as the consent rule decides at
    // /authorize (policies/consent.ts): read-only, without secrets.
    platformApps: handler('platformApps', {
      GET: async (ctx, { tenant }) => {
        const policy = await tenantPolicy(setup.tenantPolicy, tenant);
        const serving = (await apps.list()).filter((app) => app.tenant !== tenant && appRefusal(app, tenant, policy) === undefined);
        ctx.body = { platform_apps: serving.map(platformAppWire) };
      },
    }),
    // A user of the tenant held by sign-in throttling, let in again (src/limits/sign-in.ts).
    signInUnlock: handler('signInUnlock', {
      POST: async (ctx, { tenant, by }) => {
        const { username } = signInUnlockInput(await readJsonObject(ctx, bodyLimit));
        ctx.body = await holds.unlock({ tenant, username }, by);
      },
    }),
    // A user's second factors: listed, and a reset she completes at her next sign-in (user-factors.ts).
    userFactors: handler('userFactors', userFactors.list),
    userFactorResetRequest: handler('userFactorResetRequest', userFactors.resetRequest),
    // The tenant's own settings: its second-factor rule (src/endpoints/management/tenant-settings.ts).
    tenantSettings: handler('tenantSettings', tenantSettingsMethods({ ...setup, bodyLimit })),
    // The tenant's identity providers (connections.ts).
    connections: handler('connections', connections.list),
    connection: handler('connection', connections.one),
  };
}
