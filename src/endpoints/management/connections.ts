import type { Context } from 'koa';
import type { AuditContext } from '../../audit/trail.js';
import type { Connection, Connections } from '../../federation/connections.js';
import { readJsonObject } from '../../http/json-body.js';
import { authFailures, json, NO_STORE, ref, response, type Json } from '../../http/openapi-parts.js';
import { connectionInput, connectionPatch, connectionWire, connectionWireError } from '../../http/wire-connections.js';
import { TenantGuard, type TenantRecords } from '../tenant-guard.js';

/*
 * A TENANT'S CONNECTIONS in the management API (`{api}/connections`, `{api}/connections/{id}`):
 * its admins list, add, read, change and delete the identity providers its users sign in through
 * (enterprise sign-in, docs/federation.md), with the rights of the rest of the management API.
 *
 * - Only the caller's tenant: created in it, listed by it in the store, and a connection of another
 *   tenant is answered exactly like one that exists nowhere (404, recorded as a probe: TenantGuard).
 * - Named by a tenant (`author: 'tenant'`): the issuer an https public host on port 443, the domains
 *   public names and no mailbox provider's shared domain (policies/upstream-issuer.ts,
 *   policies/email-domains.ts); the operator's looser rules are the library's and the CLI's.
 * - The client secret goes in and never comes out: `has_client_secret` says there is one.
 * - Every answer names the connection's own redirect URI (`redirect_uri`, to register at the provider).
 * - Every change audited by the records (`connection.created`/`updated`/`deleted`) with the admin
 *   as actor and her address.
 */

/** The caller as the management API hands her: her tenant, and who acts. */
interface Caller {
  tenant: string;
  by: AuditContext;
}

type Method = (ctx: Context, caller: Caller, id: string | undefined) => Promise<void>;

/** What the connection routes are built from. */
export interface ConnectionRoutesSetup {
  connections: Connections;
  /** Largest JSON body accepted, in bytes. */
  bodyLimit: number;
  /** A connection asked for that is none of the caller's tenant's (recorded as `management.denied`, 404). */
  missing(ctx: Context, caller: Caller): void;
}

/** The methods of `{api}/connections` (list, create) and `{api}/connections/{id}` (read, change, delete). */
export function connectionMethods(setup: ConnectionRoutesSetup): { list: Record<string, Method>; one: Record<string, Method> } {
  const { connections, bodyLimit } = setup;
  const records: TenantRecords<Connection> = { listByTenant: (tenant) => connections.list(tenant), get: (id) => connections.get(id) };
  /** The caller's connection `id` (another tenant's: 404 like none). */
  const own = (ctx: Context, caller: Caller, id: string | undefined) =>
    new TenantGuard(() => setup.missing(ctx, caller)).own(records, id ?? '', caller, 'connection');
  /** Input errors with the wire's field names. */
  const wired = async <T>(work: () => Promise<T>): Promise<T> => {
    try {
      return await work();
    } catch (error) {
      throw connectionWireError(error);
    }
  };
  return {
    list: {
      GET: async (ctx, caller) => {
        ctx.body = { connections: (await new TenantGuard().list(records, caller)).map(connectionWire) };
      },
      POST: async (ctx, { tenant, by }) => {
        const input = connectionInput(await readJsonObject(ctx, bodyLimit), tenant);
        const created = await wired(() => connections.create(input, by, 'tenant'));
        ctx.status = 201;
        ctx.body = connectionWire(created);
      },
    },
    one: {
      GET: async (ctx, caller, id) => {
        ctx.body = connectionWire(await own(ctx, caller, id));
      },
      PATCH: async (ctx, caller, id) => {
        const current = await own(ctx, caller, id);
        const patch = connectionPatch(await readJsonObject(ctx, bodyLimit));
        ctx.body = connectionWire(await wired(() => connections.update(current.id, patch, caller.by, 'tenant')));
      },
      DELETE: async (ctx, caller, id) => {
        const current = await own(ctx, caller, id);
        await connections.delete(current.id, caller.by);
        ctx.status = 204;
      },
    },
  };
}

/** The routes' operations in the OpenAPI document. */
export function connectionOperations(): { list: Json; one: Json } {
  const common = { tags: ['connections'], security: [{ bearerAuth: [] }] };
  const rights = 'The same rights as the rest of the management API.';
  const notHers = 'A connection of another tenant is answered exactly like one that exists nowhere: 404 `not_found`.';
  const input = {
    400: response('ManagementBadRequest'),
    413: response('PayloadTooLarge'),
    415: response('UnsupportedMediaType'),
  };
  const id = {
    name: 'id',
    in: 'path',
    required: true,
    schema: { type: 'string', format: 'uuid' },
    description: "The connection's id.",
  };
  return {
    list: {
      get: {
        ...common,
        operationId: 'listConnections',
        summary: "The identity providers of the caller's tenant",
        description: `Its connections (enterprise sign-in), oldest first, never with a client secret. ${rights}`,
        responses: {
          200: { description: 'The connections.', headers: NO_STORE, content: json(ref('ConnectionList')) },
          ...authFailures,
        },
      },
      post: {
        ...common,
        operationId: 'createConnection',
        summary: "Connects an identity provider of the caller's tenant",
        description:
          'The provider\'s issuer must be https on port 443 to a public host; the domains public names no other connection owns '
          + '(400 naming `domains.<i>`); at most 20 connections per tenant (400, `field: tenant`). The client secret is stored '
          + 'sealed and never shown again. The answer\'s `redirect_uri` is this connection\'s own redirect URI '
          + '(`{baseUrl}{pathPrefix}/oauth2/federation/callback/{id}`), to register at the provider now that the connection exists. '
          + `Recorded as \`connection.created\` with the caller as actor (never the secret). ${rights}`,
        requestBody: { required: true, content: json(ref('ConnectionCreate')) },
        responses: {
          201: { description: 'The new connection.', headers: NO_STORE, content: json(ref('Connection')) },
          ...input,
          ...authFailures,
          409: response('Conflict'),
        },
      },
    },
    one: {
      parameters: [id],
      get: {
        ...common,
        operationId: 'getConnection',
        summary: 'One connection',
        description: `${notHers} ${rights}`,
        responses: {
          200: { description: 'The connection.', headers: NO_STORE, content: json(ref('Connection')) },
          ...authFailures,
          404: response('NotFound'),
        },
      },
      patch: {
        ...common,
        operationId: 'updateConnection',
        summary: 'Changes a connection',
        description: `The rules of creation apply to the fields sent. Recorded as \`connection.updated\` with the fields changed. ${notHers} ${rights}`,
        requestBody: { required: true, content: json(ref('ConnectionPatch')) },
        responses: {
          200: { description: 'The changed connection.', headers: NO_STORE, content: json(ref('Connection')) },
          ...input,
          ...authFailures,
          404: response('NotFound'),
          409: response('Conflict'),
        },
      },
      delete: {
        ...common,
        operationId: 'deleteConnection',
        summary: 'Deletes a connection',
        description: `Its users no longer sign in through it, and its domains are free again. Recorded as \`connection.deleted\`. ${notHers} ${rights}`,
        responses: {
          204: { description: 'Deleted.', headers: NO_STORE },
          ...authFailures,
          404: response('NotFound'),
        },
      },
    },
  };
}
