import type { Context } from 'koa';
import type { AccountStore } from '../accounts.js';
import { holdsIntegrationSetup, MANAGEMENT_SCOPE } from '../../policies/management.js';
import { InsufficientScope, NotFound, ValidationError } from '../../policies/errors.js';
import type { AppRegistrations } from '../records/app-registrations.js';
import type { ClientConfigurations } from '../records/client-configurations.js';
import { checkScopes, type TokenVerifier } from '../resource-server/verifier.js';
import { readJsonObject } from './json-body.js';
import { namedUserCaller } from './named-user-caller.js';
import type { RouteHandler } from './router.js';
import type { RouteName } from './routes.js';
import { appInput, appPatch, appWire, clientInput, clientPatch, clientWire, wireField } from './wire.js';

interface ManagementSetup {
  /** Largest JSON body accepted, in bytes. */
  bodyLimit: number;
  verifier: TokenVerifier;
  accounts: AccountStore | undefined;
  clients: ClientConfigurations;
  apps: AppRegistrations;
  /** Only the platform's own apps may act on a tenant's setup with their users' tokens. */
  isFirstParty: (clientId: string) => Promise<boolean>;
}

type Handler = (ctx: Context, tenant: string, id: string | undefined) => Promise<void>;

/**
 * The management API: client configurations and app registrations of the caller's tenant, for
 * named users holding "Create and update integration setup" (`integration_setup`), checked
 * against the AccountStore on every call so that a withdrawn permission takes effect at once,
 * with an access token that carries the management right (`manage.integrations`) issued to a
 * first-party app.
 */
export function managementHandlers({ bodyLimit, verifier, accounts, clients, apps, isFirstParty }: ManagementSetup): Partial<Record<RouteName, RouteHandler>> {
  async function callerTenant(ctx: Context): Promise<string> {
    const { auth, account } = await namedUserCaller(ctx, verifier, accounts);
    // The management right is a scope of its own (policies/management.ts): a token the user got
    // for anything else is not an admin credential.
    checkScopes(auth, [MANAGEMENT_SCOPE], verifier.realm);
    // A third-party app the user signed in to must not manage her tenant's integrations.
    if (!(await isFirstParty(auth.clientId))) {
      throw new InsufficientScope("only the platform's own apps may use the management API", verifier.realm);
    }
    if (!holdsIntegrationSetup(account.permissions)) {
      throw new InsufficientScope('the permission "Create and update integration setup" is required', verifier.realm);
    }
    return account.tenant;
  }

  /** One tenant-scoped collection's routes: list, create, read, update, delete, new secret. */
  function collectionHandlers<R extends { tenant?: string }>(what: string, listKey: string, collection: {
    list(tenant: string): Promise<R[]>;
    get(id: string): Promise<R | undefined>;
    create(body: Record<string, unknown>, tenant: string): Promise<R>;
    update(id: string, body: Record<string, unknown>): Promise<R>;
    delete(id: string): Promise<unknown>;
    rotateSecret(id: string): Promise<{ clientSecret: string }>;
    wire(record: R): unknown;
  }): { list: RouteHandler; one: RouteHandler; secret: RouteHandler } {
    async function own(id: string, tenant: string): Promise<R> {
      const record = await collection.get(id);
      // Another tenant's record is answered exactly like a missing one.
      if (!record || record.tenant !== tenant) throw new NotFound(`${what} ${id}`);
      return record;
    }
    return {
      list: handler({
        GET: async (ctx, tenant) => {
          ctx.body = { [listKey]: (await collection.list(tenant)).map(collection.wire) };
        },
        POST: async (ctx, tenant) => {
          ctx.status = 201;
          ctx.body = collection.wire(await collection.create(await readJsonObject(ctx, bodyLimit), tenant));
        },
      }),
      one: handler({
        GET: async (ctx, tenant, id) => {
          ctx.body = collection.wire(await own(id!, tenant));
        },
        PATCH: async (ctx, tenant, id) => {
          await own(id!, tenant);
          ctx.body = collection.wire(await collection.update(id!, await readJsonObject(ctx, bodyLimit)));
        },
        DELETE: async (ctx, tenant, id) => {
          await own(id!, tenant);
          await collection.delete(id!);
          ctx.status = 204;
        },
      }),
      secret: handler({
        POST: async (ctx, tenant, id) => {
          await own(id!, tenant);
          ctx.body = { client_id: id, client_secret: (await collection.rotateSecret(id!)).clientSecret };
        },
      }),
    };
  }

  /** A route's methods, each run for the caller's tenant; input errors name the wire field. */
  function handler(methods: Record<string, Handler>): RouteHandler {
    return async (ctx, params) => {
      ctx.set('Cache-Control', 'no-store');
      try {
        // The router answers other methods with 405 (src/http/routes.ts lists these).
        await methods[ctx.method]!(ctx, await callerTenant(ctx), params.clientId);
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
    list: (tenant) => clients.list(tenant),
    get: (id) => clients.get(id),
    create: (body, tenant) => clients.create(clientInput(body, tenant)),
    update: (id, body) => clients.update(id, clientPatch(body)),
    delete: (id) => clients.delete(id),
    rotateSecret: (id) => clients.rotateSecret(id),
    wire: clientWire,
  });
  const appRoutes = collectionHandlers('app registration', 'app_registrations', {
    list: async (tenant) => (await apps.list()).filter((app) => app.tenant === tenant),
    get: (id) => apps.get(id),
    create: (body, tenant) => apps.create(appInput(body, tenant)),
    update: (id, body) => apps.update(id, appPatch(body)),
    delete: (id) => apps.delete(id),
    rotateSecret: (id) => apps.rotateSecret(id),
    wire: appWire,
  });
  return {
    clientConfigurations: clientRoutes.list,
    clientConfiguration: clientRoutes.one,
    clientConfigurationSecret: clientRoutes.secret,
    appRegistrations: appRoutes.list,
    appRegistration: appRoutes.one,
    appRegistrationSecret: appRoutes.secret,
  };
}
