import type { RecordStore, Store } from '../../adapters/types.js';
import { endGrant } from './end-grant.js';
import type { ApiCatalog } from '../../policies/catalog.js';
import { scopeWords } from '../pages/scope-words.js';
import { APP_REGISTRATION, type StoredAppRegistration } from './app-registrations.js';
import { OPERATOR, type AuditContext, type AuditTrail } from '../audit/trail.js';
import { consentChanged } from '../audit/events.js';

export const CONSENT = 'consent';
/** The index of an app's consents (group: the app), so that they can all end with the app. */
export const CONSENT_OF_APP = 'consent-of-app';

/** What we keep: one record per (tenant, user, app), pointing at the engine's grant. */
export interface ConsentRecord {
  tenant: string;
  sub: string;
  clientId: string;
  grantId: string;
  /** Every scope consented: OIDC scopes and API scopes. */
  scopes: string[];
  createdAt: string;
  updatedAt: string;
}

/** What a user sees of a consent. */
export interface Consent {
  clientId: string;
  /** The app's name; undefined when the app has been deleted since. */
  appName: string | undefined;
  scopes: Array<{ scope: string; description: string; api?: string }>;
  createdAt: string;
  updatedAt: string;
}

/** Whose consents: a user (`sub`) in a tenant. */
export interface ConsentKey {
  tenant: string;
  sub: string;
}

const part = (value: string) => encodeURIComponent(value);
const groupOf = ({ tenant, sub }: ConsentKey) => `${part(tenant)}:${part(sub)}`;
const idOf = (key: ConsentKey & { clientId: string }) => `${groupOf(key)}:${part(key.clientId)}`;

/**
 * Consents: the permission a user of a tenant gave an app. Re-authorizing updates the one record
 * (it never piles up grants); revoking ends the grant, its refresh tokens and unused codes at once.
 */
export class Consents {
  private readonly records: RecordStore;

  constructor(
    private readonly store: Store,
    private readonly catalog: ApiCatalog,
    /** Where each consent granted or revoked is recorded before it is (src/audit/trail.ts). */
    private readonly audit?: AuditTrail,
  ) {
    this.records = store.records;
  }

  private async audited(type: 'consent.granted' | 'consent.revoked', by: AuditContext, key: ConsentKey & { clientId: string }, details: Record<string, unknown>): Promise<void> {
    await this.audit?.record(consentChanged(type, by, key, details));
  }

  /**
   * Records (or updates) the consent of a user for an app after the consent page. `by`: who gave it,
   * for the audit trail (`consent.granted`); none when a grant is only remade for a consent given
   * before (nobody decided anything).
   */
  async record(key: ConsentKey & { clientId: string; grantId: string; scopes: string[] }, by?: AuditContext): Promise<void> {
    const existing = await this.find(key);
    if (by) await this.audited('consent.granted', by, key, { scopes: [...new Set(key.scopes)] });
    const now = new Date().toISOString();
    const record: ConsentRecord = {
      tenant: key.tenant,
      sub: key.sub,
      clientId: key.clientId,
      grantId: key.grantId,
      scopes: [...new Set(key.scopes)],
      createdAt: existing?.createdAt ?? now,
      updatedAt: now,
    };
    await this.records.put(CONSENT, idOf(key), groupOf(key), record);
    await this.records.put<ConsentKey>(CONSENT_OF_APP, idOf(key), part(key.clientId), { tenant: key.tenant, sub: key.sub });
    // One grant per consent: a grant made meanwhile elsewhere (two first consents at once) goes.
    if (existing && existing.grantId !== key.grantId) await endGrant(this.store, existing.grantId);
  }

  find(key: ConsentKey & { clientId: string }): Promise<ConsentRecord | undefined> {
    return this.records.get<ConsentRecord>(CONSENT, idOf(key));
  }

  /** The consents of one user in one tenant, newest first. */
  async list(key: ConsentKey): Promise<Consent[]> {
    const records = await this.records.list<ConsentRecord>(CONSENT, groupOf(key));
    const consents = await Promise.all(records.map((record) => this.describe(record)));
    return consents.sort((a, b) => b.updatedAt.localeCompare(a.updatedAt));
  }

  /** Revokes a consent; false when there was none for that user, tenant and app. */
  async revoke(key: ConsentKey & { clientId: string }, by: AuditContext = OPERATOR, reason?: string): Promise<boolean> {
    const record = await this.find(key);
    if (!record) return false;
    await this.audited('consent.revoked', by, key, { scopes: record.scopes, ...(reason ? { reason } : {}) });
    await this.records.delete(CONSENT, idOf(key));
    await this.records.delete(CONSENT_OF_APP, idOf(key));
    await endGrant(this.store, record.grantId);
    return true;
  }

  /**
   * Ends every consent given to an app, each with its grant (refresh tokens, unused codes, the
   * access tokens' liveness): when the app is deleted or changes client type. Returns how many.
   */
  async endAllOf(clientId: string, by: AuditContext = OPERATOR, reason = 'app_deleted'): Promise<number> {
    const users = await this.records.list<ConsentKey>(CONSENT_OF_APP, part(clientId));
    const ended = await Promise.all(users.map((user) => this.revoke({ tenant: user.tenant, sub: user.sub, clientId }, by, reason)));
    return ended.filter(Boolean).length;
  }


  /**
   * Ends every consent of one user in one tenant, each with its grant (its refresh tokens, unused
   * codes, the access tokens' liveness): when she is signed out everywhere. Returns how many.
   */
  async endAllOfUser(key: ConsentKey, by: AuditContext = OPERATOR, reason = 'user_signed_out'): Promise<number> {
    const records = await this.records.list<ConsentRecord>(CONSENT, groupOf(key));
    const ended = await Promise.all(records.map((record) => this.revoke({ tenant: key.tenant, sub: key.sub, clientId: record.clientId }, by, reason)));
    return ended.filter(Boolean).length;
  }

  private async describe(record: ConsentRecord): Promise<Consent> {
    const app = await this.records.get<StoredAppRegistration>(APP_REGISTRATION, record.clientId);
    return {
      clientId: record.clientId,
      appName: app?.name,
      scopes: record.scopes.map((scope) => ({ scope, ...scopeWords(this.catalog, scope) })),
      createdAt: record.createdAt,
      updatedAt: record.updatedAt,
    };
  }
}
