import type { Context, Next } from 'koa';
import { INTEGRATION_SETUP, type AccountStore } from '../accounts.js';
import { NotFound, OAuthError, ValidationError } from '../errors.js';
import type { AppRegistrations } from '../records/app-registrations.js';
import type { ClientConfigurations } from '../records/client-configurations.js';
import { TokenError, type TokenVerifier } from '../resource-server/verifier.js';
import { readJsonObject } from './json-body.js';
import { namedUserCaller } from './named-user-caller.js';
import { appInput, appPatch, appWire, clientInput, clientPatch, clientWire, wireField } from './management-wire.js';

interface ManagementSetup {
  base: string;
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
 * against the AccountStore on every call so that a withdrawn permission takes effect at once.
 */
export function managementApi({ base, bodyLimit, verifier, accounts, clients, apps, isFirstParty }: ManagementSetup) {
  async function callerTenant(ctx: Context): Promise<string> {
    const { auth, account } = await namedUserCaller(ctx, verifier, accounts);
    // A third-party app the user signed in to must not manage her tenant's integrations.
    if (!(await isFirstParty(auth.clientId))) {
      throw new TokenError('insufficient_scope', 403, "only the platform's own apps may use the management API", verifier.realm);
    }
    if (!account.permissions?.includes(INTEGRATION_SETUP)) {
      throw new TokenError('insufficient_scope', 403, 'the permission "Create and update integration setup" is required', verifier.realm);
    }
    return account.tenant;
  }

  async function ownClient(id: string, tenant: string) {
    const client = await clients.get(id);
    // Another tenant's client is answered exactly like a missing one.
    if (!client || client.tenant !== tenant) throw new NotFound(`client configuration ${id}`);
    return client;
  }

  async function ownApp(id: string, tenant: string) {
    const app = await apps.get(id);
    if (!app || app.tenant !== tenant) throw new NotFound(`app registration ${id}`);
    return app;
  }

  const routes: Record<string, Record<string, Handler>> = {
    'client-configurations': {
      GET: async (ctx, tenant) => {
        ctx.body = { client_configurations: (await clients.list(tenant)).map(clientWire) };
      },
      POST: async (ctx, tenant) => {
        ctx.status = 201;
        ctx.body = clientWire(await clients.create(clientInput(await readJsonObject(ctx, bodyLimit), tenant)));
      },
    },
    'client-configurations/:id': {
      GET: async (ctx, tenant, id) => {
        ctx.body = clientWire(await ownClient(id!, tenant));
      },
      PATCH: async (ctx, tenant, id) => {
        await ownClient(id!, tenant);
        ctx.body = clientWire(await clients.update(id!, clientPatch(await readJsonObject(ctx, bodyLimit))));
      },
      DELETE: async (ctx, tenant, id) => {
        await ownClient(id!, tenant);
        await clients.delete(id!);
        ctx.status = 204;
      },
    },
    'client-configurations/:id/secret': {
      POST: async (ctx, tenant, id) => {
        await ownClient(id!, tenant);
        ctx.body = { client_id: id, client_secret: (await clients.rotateSecret(id!)).clientSecret };
      },
    },
    'app-registrations': {
      GET: async (ctx, tenant) => {
        ctx.body = { app_registrations: (await apps.list()).filter((app) => app.tenant === tenant).map(appWire) };
      },
      POST: async (ctx, tenant) => {
        ctx.status = 201;
        ctx.body = appWire(await apps.create(appInput(await readJsonObject(ctx, bodyLimit), tenant)));
      },
    },
    'app-registrations/:id': {
      GET: async (ctx, tenant, id) => {
        ctx.body = appWire(await ownApp(id!, tenant));
      },
      PATCH: async (ctx, tenant, id) => {
        await ownApp(id!, tenant);
        ctx.body = appWire(await apps.update(id!, appPatch(await readJsonObject(ctx, bodyLimit))));
      },
      DELETE: async (ctx, tenant, id) => {
        await ownApp(id!, tenant);
        await apps.delete(id!);
        ctx.status = 204;
      },
    },
    'app-registrations/:id/secret': {
      POST: async (ctx, tenant, id) => {
        await ownApp(id!, tenant);
        ctx.body = { client_id: id, client_secret: (await apps.rotateSecret(id!)).clientSecret };
      },
    },
  };

  function match(path: string): { route: Record<string, Handler>; id: string | undefined } | undefined {
    if (!path.startsWith(`${base}/`)) return undefined;
    const [collection, id, tail, ...extra] = path.slice(base.length + 1).split('/');
    if (extra.length || !collection) return undefined;
    const key = [collection, id === undefined ? undefined : ':id', tail].filter(Boolean).join('/');
    const route = routes[key];
    return route && { route, id: id === undefined ? undefined : decodeURIComponent(id) };
  }

  return async function serveManagementApi(ctx: Context, next: Next): Promise<void> {
    let found: ReturnType<typeof match>;
    try {
      found = match(ctx.path);
    } catch {
      throw new NotFound('resource');
    }
    if (!found) return next();
    ctx.set('Cache-Control', 'no-store');
    const handler = found.route[ctx.method];
    try {
      if (!handler) {
        ctx.set('Allow', Object.keys(found.route).join(', '));
        throw new OAuthError('invalid_request', 405, `${ctx.method} is not allowed here`);
      }
      await handler(ctx, await callerTenant(ctx), found.id);
    } catch (error) {
      if (error instanceof TokenError) ctx.set('WWW-Authenticate', error.challenge);
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
