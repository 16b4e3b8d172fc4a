import { createHash } from 'node:crypto';
import type { RecordStore } from '../../adapters/types.js';

/*
 * THE REMEMBERED LINKS of federated identities (src/federation/federated-accounts.ts): the
 * provider's `sub` at a connection → our user, written at a sign-in that found her by her address,
 * so that an address changed at the provider still finds her.
 *
 * - One record per link (kind `federated-link`), its id a digest of the connection, its issuer
 *   and the provider's `sub` (a `sub` is unique at one issuer only: a connection moved to another
 *   provider finds none of the old provider's links, so an equal `sub` there is nobody yet), its
 *   group the connection: the links of a connection are listed, and deleted
 *   with it (Connections.delete), without reading any other connection's (a tenant's links are
 *   many, its connections few).
 * - A link written while its connection is being deleted is not kept: after the write the
 *   connection is read again, and gone, the link goes too (the delete lists the links after it
 *   removed the connection, so one of the two always sees the other).
 */

/** The record kind of the links (group: the connection's id). */
const LINK = 'federated-link';

/** A link: our user, and the connection (and its issuer) it is of. */
export interface FederatedLink {
  /** Its record id (see linkIdOf). */
  id: string;
  connection: string;
  issuer: string;
  sub: string;
  tenant: string;
}

/** The connection a link is of: its id and the issuer its subjects are unique at. */
export interface LinkedConnection {
  id: string;
  issuer: string;
}

/** A link's record id: the connection, its issuer and the provider's subject, hashed (bounded length, no separator games). */
function linkIdOf(connection: LinkedConnection, upstreamSub: string): string {
  return createHash('sha256').update(`${connection.id.length}:${connection.id}:${connection.issuer.length}:${connection.issuer}:${upstreamSub}`).digest('base64url');
}

/** The links of federated identities to our users (see above). */
export class FederatedLinks {
  constructor(
    private readonly records: RecordStore,
    /** Whether the connection still exists (read after a link is written). */
    private readonly connectionExists: (connectionId: string) => Promise<boolean>,
  ) {}

  /** The user the provider's `upstreamSub` at `connection` (its current issuer) was linked to, or undefined. */
  async of(connection: LinkedConnection, upstreamSub: string): Promise<FederatedLink | undefined> {
    const link = await this.records.get<FederatedLink>(LINK, linkIdOf(connection, upstreamSub));
    return link && link.connection === connection.id && link.issuer === connection.issuer ? link : undefined;
  }

  /** Links the provider's `upstreamSub` at `connection` to `user` (not kept when the connection went meanwhile). */
  async remember(connection: LinkedConnection, upstreamSub: string, user: { sub: string; tenant: string }): Promise<void> {
    const id = linkIdOf(connection, upstreamSub);
    await this.records.put<FederatedLink>(LINK, id, connection.id, { id, connection: connection.id, issuer: connection.issuer, sub: user.sub, tenant: user.tenant });
    if (!(await this.connectionExists(connection.id))) await this.records.delete(LINK, id);
  }

  /** Deletes every link of a connection (it was deleted). @returns how many went. */
  async forgetAllOf(connectionId: string): Promise<number> {
    const links = await this.records.list<FederatedLink>(LINK, connectionId);
    let deleted = 0;
    for (const link of links) if (await this.records.delete(LINK, link.id)) deleted += 1;
    return deleted;
  }
}
