import type { RecordStore } from '../../adapters/types.js';
import { domainOfEmail } from '../../policies/email-domains.js';
import type { Account, AccountStore, FederatedClaims } from '../accounts.js';
import { CONNECTION, MAPPABLE_CLAIMS, type Connection } from './connections.js';
import { FederatedLinks } from './federated-links.js';

/*
 * WHO AN IDENTITY A PROVIDER VOUCHED FOR IS HERE (enterprise sign-in, after the code exchange):
 *
 * 1. The provider's claims are mapped by the connection's `claimMapping` (our claim ← the
 *    provider's claim; unmapped: the same name), keeping the claims we know, of their types.
 * 2. Its email must be at one of the connection's domains; a connection that lists none takes an
 *    address at no domain another connection owns verified (a tenant's provider never speaks for
 *    a domain the operator vouched is another's; a domain another tenant merely named, unverified,
 *    does not lock this tenant's users out). No email at all: refused (there is nothing to match or check).
 * 3. The account: the host's `accounts.federate({ tenant, connection, claims })` when it has one
 *    (it may create the account); otherwise a link remembered at an earlier sign-in (the
 *    connection and the provider's `sub` → our `sub`), else `findByUsername(email)` when the
 *    provider does not say the address is unverified; that link is then remembered, so that a
 *    changed address at the provider still finds her (src/federation/federated-links.ts: deleted
 *    with the connection).
 * 4. Always: the account must be one of the connection's tenant: an identity of one tenant's
 *    provider never signs in to another tenant's account, whatever the hook or the store says.
 */

/** Why no account was found for an identity (each has its page and audit reason). */
export type FederatedAccountRefusal = 'domain_not_owned' | 'no_email' | 'no_account' | 'wrong_tenant';

/** The outcome of finding the account of an identity. */
export type FederatedAccountOutcome =
  | { found: true; account: Account; claims: FederatedClaims }
  | { found: false; reason: FederatedAccountRefusal };

/** The claims as our side names them: the connection's mapping applied, the known claims of their types only. */
export function mapClaims(claims: Record<string, unknown>, mapping: Connection['claimMapping']): FederatedClaims | undefined {
  const mapped: Record<string, unknown> = {};
  for (const claim of MAPPABLE_CLAIMS) {
    const value = claims[mapping[claim] ?? claim];
    if (claim === 'email_verified') {
      if (typeof value === 'boolean') mapped[claim] = value;
      // Some providers send it as a string.
      else if (value === 'true' || value === 'false') mapped[claim] = value === 'true';
    } else if (typeof value === 'string' && value.length > 0 && value.length <= 512) {
      mapped[claim] = value;
    }
  }
  return typeof mapped.sub === 'string' ? (mapped as unknown as FederatedClaims) : undefined;
}

/** The accounts of federated identities (see above). */
export class FederatedAccounts {
  readonly #links: FederatedLinks;

  constructor(
    records: RecordStore,
    private readonly accounts: AccountStore | undefined,
    /** The connection that owns an email domain (another tenant's too). */
    private readonly ownerOfDomain: (domain: string) => Promise<Pick<Connection, 'id' | 'verifiedDomains'> | undefined>,
  ) {
    this.#links = new FederatedLinks(records, async (id) => (await records.get(CONNECTION, id)) !== undefined);
  }

  /** The account `claims` (the provider's, unmapped) sign in as, through `connection`. */
  async accountOf(connection: Connection, providerClaims: Record<string, unknown>): Promise<FederatedAccountOutcome> {
    const claims = mapClaims(providerClaims, connection.claimMapping);
    if (!claims) return { found: false, reason: 'no_account' };
    const domain = domainOfEmail(claims.email);
    if (!domain) return { found: false, reason: 'no_email' };
    const owner = connection.domains.length > 0 ? undefined : await this.ownerOfDomain(domain);
    if (connection.domains.length > 0 ? !connection.domains.includes(domain) : owner !== undefined && owner.id !== connection.id && owner.verifiedDomains.includes(domain)) {
      return { found: false, reason: 'domain_not_owned' };
    }
    const account = await this.find(connection, claims);
    if (!account) return { found: false, reason: 'no_account' };
    if (account.tenant !== connection.tenant) return { found: false, reason: 'wrong_tenant' };
    return { found: true, account, claims };
  }

  private async find(connection: Connection, claims: FederatedClaims): Promise<Account | undefined> {
    const accounts = this.accounts;
    if (!accounts) return undefined;
    if (accounts.federate) {
      return accounts.federate({ tenant: connection.tenant, connection: { id: connection.id, name: connection.name, issuer: connection.issuer }, claims });
    }
    const link = await this.#links.of(connection, claims.sub);
    if (link && link.tenant === connection.tenant) {
      const linked = await accounts.findAccount(link.sub);
      if (linked) return linked;
    }
    // An address the provider says is unverified names nobody: anyone may have typed it there.
    if (claims.email_verified === false || !accounts.findByUsername || !claims.email) return undefined;
    const account = await accounts.findByUsername(claims.email);
    if (!account || account.tenant !== connection.tenant) return account;
    await this.#links.remember(connection, claims.sub, account);
    return account;
  }
}
