/**
 * WHO MAY INTROSPECT WHOSE TOKENS (RFC 7662 §4: the endpoint must not help a caller scan for
 * tokens, nor tell it about tokens it has no business with). An authenticated client learns about
 * an access token only when
 *
 * - the token was issued to it (it holds the token already: whether it still works is its own);
 * - it belongs to a tenant, and the token is of that tenant (a tenant's resource servers and
 *   integrations see their own tenant's tokens);
 * - or it is the operator's (no tenant) and the operator made it first-party (the platform's own
 *   apps) or marked it a resource server (`resourceServer`): only those see every tenant's tokens.
 *
 * Anyone else gets `{ "active": false }` for every token, exactly as for an unknown one.
 */

/** The calling client as this rule reads it. */
export interface Introspector {
  clientId: string;
  tenant?: string | undefined;
  firstParty: boolean;
  resourceServer: boolean;
}

/** The access token as this rule reads it: its client, and its tenant (undefined: a token of no tenant). */
export interface IntrospectedToken {
  clientId: string;
  tenant?: string | undefined;
}

/** Whether `caller` may be told about `token` (see above). */
export function mayIntrospect(caller: Introspector, token: IntrospectedToken): boolean {
  if (token.clientId === caller.clientId) return true;
  if (caller.tenant !== undefined) return token.tenant === caller.tenant;
  return caller.firstParty || caller.resourceServer;
}
