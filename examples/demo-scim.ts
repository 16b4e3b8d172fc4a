import type { Context, Next } from 'koa';
import {
  authenticate,
  filterByConstraints,
  requireScopes,
  type AuthState,
  type TokenVerifier,
} from '../src/index.js';

interface DemoUser {
  id: string;
  userName: string;
  displayName: string;
  groups: string[];
  department: string;
}

/** The user-provisioning API's data: a few people in several groups and departments. */
export const scimUsers: DemoUser[] = [
  { id: 'u1', userName: 'grace', displayName: 'Grace Hopper', groups: ['engineering'], department: 'rnd' },
  { id: 'u2', userName: 'linus', displayName: 'Linus Torvalds', groups: ['engineering', 'platform'], department: 'rnd' },
  { id: 'u3', userName: 'katherine', displayName: 'Katherine Johnson', groups: ['analytics'], department: 'rnd' },
  { id: 'u4', userName: 'peter', displayName: 'Peter Drucker', groups: ['sales'], department: 'commercial' },
  { id: 'u5', userName: 'mary', displayName: 'Mary Parker Follett', groups: ['people'], department: 'operations' },
];

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

/**
 * A small SCIM-ish user-provisioning API protected by the resource-server kit: `scim.read` is
 * required, and the token's `scim` constraints (group, department) filter what it returns.
 */
export function demoScimApi(verifier: TokenVerifier) {
  const guard = [authenticate(verifier), requireScopes(verifier, 'scim.read')];
  return async function serveScim(ctx: Context, next: Next): Promise<void> {
    if (ctx.path !== '/scim/v2/Users' || ctx.method !== 'GET') return next();
    await guard[0]!(ctx, () => guard[1]!(ctx, async () => {
      const { auth } = ctx.state as AuthState;
      const visible = filterByConstraints(auth, 'scim', scimUsers, (user, dimension) =>
        dimension === 'group' ? user.groups : dimension === 'department' ? user.department : undefined);
      ctx.type = 'application/scim+json';
      ctx.body = {
        schemas: ['urn:ietf:params:scim:api:messages:2.0:ListResponse'],
        totalResults: visible.length,
        itemsPerPage: visible.length,
        startIndex: 1,
        Resources: visible.map(toScim),
      };
    }));
  };
}
