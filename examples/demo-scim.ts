import type { Context, Next } from 'koa';
import {
  authenticate,
  filterByConstraints,
  requireScopes,
  requireTenant,
  type AuthState,
  type KoaLikeContext,
  type KoaLikeMiddleware,
  type TokenVerifier,
} from '../src/resource-server/index.js';

interface DemoUser {
  id: string;
  userName: string;
  displayName: string;
  groups: string[];
  department: string;
}

/** The user-provisioning API's data, per tenant: a few people in several groups and departments. */
export const scimUsers: Record<string, DemoUser[]> = {
  demo: [
    { id: 'u1', userName: 'grace', displayName: 'Grace Hopper', groups: ['engineering'], department: 'rnd' },
    { id: 'u2', userName: 'linus', displayName: 'Linus Torvalds', groups: ['engineering', 'platform'], department: 'rnd' },
    { id: 'u3', userName: 'katherine', displayName: 'Katherine Johnson', groups: ['analytics'], department: 'rnd' },
    { id: 'u4', userName: 'peter', displayName: 'Peter Drucker', groups: ['sales'], department: 'commercial' },
    { id: 'u5', userName: 'mary', displayName: 'Mary Parker Follett', groups: ['people'], department: 'operations' },
  ],
  acme: [
    { id: 'a1', userName: 'wile', displayName: 'Wile E. Coyote', groups: ['engineering'], department: 'rnd' },
    { id: 'a2', userName: 'road', displayName: 'Road Runner', groups: ['sales'], department: 'commercial' },
  ],
};

/** The tenant in the path: `/tenants/{tenant}/scim/v2/Users`. */
const USERS_PATH = /^\/tenants\/([^/]+)\/scim\/v2\/Users$/;

type ScimContext = KoaLikeContext & { path: string; method: string; type: string };

const tenantInPath = (ctx: ScimContext): string | undefined => {
  const match = USERS_PATH.exec(ctx.path);
  return match ? decodeURIComponent(match[1]!) : undefined;
};

function toScim(user: DemoUser) {
  return {
    schemas: ['urn:ietf:params:scim:schemas:core:2.0:User'],
    id: user.id,
    userName: user.userName,
    displayName: user.displayName,
    groups: user.groups.map((group) => ({ value: group, display: group })),
    'urn:ietf:params:scim:schemas:extension:enterprise:2.0:User': { department: user.department },
  };
}

/** Runs kit middleware one after the other, then `last`. */
function chain(ctx: Context, steps: KoaLikeMiddleware[], last: () => Promise<void>): Promise<void> {
  const [first, ...rest] = steps;
  return first ? first(ctx, () => chain(ctx, rest, last)) : last();
}

/**
 * A small SCIM-ish user-provisioning API per tenant (`GET /tenants/{tenant}/scim/v2/Users`),
 * protected by the resource-server kit as the docs show it: the token is verified, its tenant must
 * be the path's (the tenant guard: a token of another tenant gets 403), `scim.read` is required,
 * and the token's `scim` constraints (group, department) filter what it returns.
 */
export function demoScimApi(verifier: TokenVerifier) {
  const guard = [authenticate(verifier), requireTenant(verifier, tenantInPath), requireScopes(verifier, 'scim.read')];
  return async function serveScim(ctx: Context, next: Next): Promise<void> {
    if (!USERS_PATH.test(ctx.path) || ctx.method !== 'GET') return next();
    await chain(ctx, guard, async () => {
      const { auth } = ctx.state as AuthState;
      const visible = filterByConstraints(auth, 'scim', scimUsers[auth.tenant!] ?? [], (user, dimension) =>
        dimension === 'group' ? user.groups : dimension === 'department' ? user.department : undefined);
      ctx.type = 'application/scim+json';
      ctx.body = {
        schemas: ['urn:ietf:params:scim:api:messages:2.0:ListResponse'],
        totalResults: visible.length,
        itemsPerPage: visible.length,
        startIndex: 1,
        Resources: visible.map(toScim),
      };
    });
  };
}
