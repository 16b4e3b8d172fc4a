import { NotFound } from '../../policies/errors.js';

/** A tenant's records as the guard reads them: listed by tenant in the store, read by ID. */
export interface TenantRecords<R extends { tenant?: string | undefined }> {
  /** The tenant's records only, listed by the tenant in the store. */
  listByTenant(tenant: string): Promise<R[]>;
  get(id: string): Promise<R | undefined>;
}

/** Who asks, as the guard reads her: the tenant her token and account name. */
export interface TenantCaller {
  tenant: string;
}

/**
 * TENANT ISOLATION, ONE GUARD: every handler that serves records of a tenant (the management API,
 * the consent API) reads them through it, with the tenant of the caller's token and account.
 *
 * - A listing is the caller's tenant's, listed by that tenant in the store: never everything,
 *   then filtered (a filter forgotten, or a slow listing, would show or cost another's).
 * - A record by ID is the caller's only when it is of her tenant. Another tenant's is answered
 *   exactly like a record that exists nowhere (404 `not_found`), and both are told to `missing`
 *   alike (the audit trail records the probe in the caller's tenant), so that nothing tells the
 *   caller which IDs exist elsewhere.
 */
export class TenantGuard {
  constructor(private readonly missing: (caller: TenantCaller) => void = () => {}) {}

  /** The caller's tenant's records. */
  list<R extends { tenant?: string | undefined }>(records: TenantRecords<R>, caller: TenantCaller): Promise<R[]> {
    return records.listByTenant(caller.tenant);
  }

  /**
   * The record `id` of the caller's tenant.
   * @throws NotFound for a record of another tenant, or of none (`what` names the kind).
   */
  async own<R extends { tenant?: string | undefined }>(records: TenantRecords<R>, id: string, caller: TenantCaller, what: string): Promise<R> {
    const record = await records.get(id);
    if (record && record.tenant === caller.tenant) return record;
    this.missing(caller);
    throw new NotFound(`${what} ${id}`);
  }

  /** Whether a record the store keyed by tenant (a consent) was found for the caller: 404 otherwise. */
  found(found: boolean, what: string, caller: TenantCaller): void {
    if (found) return;
    this.missing(caller);
    throw new NotFound(what);
  }
}
