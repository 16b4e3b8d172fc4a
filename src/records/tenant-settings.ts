import type { RecordStore } from '../../adapters/types.js';
import { Conflict, ValidationError } from '../../policies/errors.js';
import { tenantProfile as combineProfiles, type SecurityProfile } from '../../policies/high-security.js';
import { combineSecondFactorRules, type SecondFactorRuling, type TenantSecondFactorSettings } from '../../policies/second-factor-rule.js';
import { tenantPolicy, type SecondFactorRule, type SsoRule, type TenantPolicyFunction } from '../../policies/tenant-policy.js';
import { changed } from '../audit/events.js';
import type { AuditContext, AuditTrail } from '../audit/trail.js';

/*
 * A TENANT'S OWN SETTINGS: what a tenant admin chose for her tenant through the management API
 * (`{api}/tenant-settings`): the second-factor rule, passkey-only sign-in, the SSO rule and the
 * security profile of its clients (policies/high-security.ts). One record per
 * tenant (kind `tenant_settings`), written only by an admin of that tenant, each change audited
 * (`tenant_settings.updated`, written before the change: not made when it cannot be written) and
 * compared-and-set (two admins at once never undo each other). What applies to sign-ins is this
 * combined with the host's `tenantPolicy` (policies/second-factor-rule.ts): SecondFactorRules.
 * A switch to the high-security profile is refused while a client of the tenant does not conform
 * to it, naming those clients (the admin changes them first): a switch must not leave clients
 * that its run-time checks would then refuse without the admin having seen which.
 */

/** The kind of the tenant settings records in the RecordStore. */
export const TENANT_SETTINGS = 'tenant_settings';
/** Every tenant's record is in one group: there is one per tenant that ever chose something. */
export const TENANT_SETTINGS_GROUP = 'tenants';
const GROUP = TENANT_SETTINGS_GROUP;
const ATTEMPTS = 5;

/** A tenant's own choices (absent: none made). */
export interface TenantSettingsRecord extends TenantSecondFactorSettings {
  secondFactor?: SecondFactorRule;
  passkeyOnlySignIn?: boolean;
  sso?: SsoRule;
  profile?: SecurityProfile;
  updatedAt?: string;
}

/** The settings fields, as the audit event names them. */
const FIELDS = ['secondFactor', 'passkeyOnlySignIn', 'sso', 'profile'] as const;
/** At most this many client IDs are named in a refused switch to the high-security profile. */
const NAMED_CLIENTS = 20;

/** The IDs of a tenant's clients (client configurations and apps) that do not conform to the high-security profile. */
export type NonConformingClients = (tenant: string) => Promise<string[]>;

/** The tenants' own settings in the store. */
export class TenantSettings {
  constructor(
    private readonly records: RecordStore,
    private readonly audit: AuditTrail,
    private readonly now: () => number = Date.now,
    /** Which clients of a tenant keep it from switching to the high-security profile (none checked when absent). */
    private readonly nonConforming?: NonConformingClients,
  ) {}

  /** What `tenant` chose (an empty object when nothing). */
  async get(tenant: string): Promise<TenantSettingsRecord> {
    return (await this.records.get<TenantSettingsRecord>(TENANT_SETTINGS, tenant)) ?? {};
  }

  /**
   * Replaces what `tenant` chose with `settings` (an absent field: no choice), audited as
   * `tenant_settings.updated` with the fields that changed and their new values (none secret).
   * Nothing changed: nothing written, nothing audited.
   */
  async replace(tenant: string, settings: TenantSecondFactorSettings, by: AuditContext): Promise<TenantSettingsRecord> {
    const next: TenantSettingsRecord = {
      ...(settings.secondFactor !== undefined ? { secondFactor: settings.secondFactor } : {}),
      ...(settings.passkeyOnlySignIn !== undefined ? { passkeyOnlySignIn: settings.passkeyOnlySignIn } : {}),
      ...(settings.sso !== undefined ? { sso: settings.sso } : {}),
      ...(settings.profile !== undefined ? { profile: settings.profile } : {}),
    };
    for (let attempt = 0; attempt < ATTEMPTS; attempt += 1) {
      const current = await this.records.getVersioned<TenantSettingsRecord>(TENANT_SETTINGS, tenant);
      const before: TenantSettingsRecord = current?.value ?? {};
      const fields = FIELDS.filter((field) => before[field] !== next[field]);
      if (fields.length === 0) return before;
      if (next.profile === 'high-security' && before.profile !== 'high-security') await this.checkClientsConform(tenant);
      const written = { ...next, updatedAt: new Date(this.now()).toISOString() };
      await this.audit.record(changed('tenant_settings.updated', by, { type: 'tenant', id: tenant }, tenant, {
        fields,
        ...Object.fromEntries(fields.map((field) => [field, next[field] ?? null])),
      }));
      // The tenant's first choice is created only where none is: two at once, the second decides again.
      const stored = current
        ? await this.records.replace(TENANT_SETTINGS, tenant, written, current.revision)
        : await this.records.create(TENANT_SETTINGS, tenant, GROUP, written);
      if (stored) return written;
    }
    throw new Conflict(`the settings of tenant ${tenant}`);
  }

  /** @throws ValidationError (`profile`) naming the clients of `tenant` that do not conform to the high-security profile. */
  private async checkClientsConform(tenant: string): Promise<void> {
    refuseSwitchWith((await this.nonConforming?.(tenant)) ?? []);
  }
}

/**
 * The rule of a tenant's switch to the high-security profile (here and in a restore): refused
 * while any of its clients does not conform.
 * @param ids the non-conforming clients' IDs (nonConformingClients).
 * @throws ValidationError (`profile`) naming them.
 */
export function refuseSwitchWith(ids: readonly string[]): void {
  if (ids.length === 0) return;
  const named = ids.slice(0, NAMED_CLIENTS).join(', ') + (ids.length > NAMED_CLIENTS ? ` and ${ids.length - NAMED_CLIENTS} more` : '');
  throw new ValidationError('profile', `these clients of the tenant do not conform to the high-security profile; change them first: ${named}`);
}

/**
 * The second-factor rule of each tenant, read at every use (a change by the host or the tenant's
 * admin applies at the next sign-in or token): the host's `tenantPolicy` combined with the
 * tenant's own settings (policies/second-factor-rule.ts).
 */
export class SecondFactorRules {
  constructor(
    private readonly policyOf: TenantPolicyFunction | undefined,
    private readonly settings: TenantSettings,
  ) {}

  /** What applies to `tenant`'s sign-ins. */
  async of(tenant: string): Promise<SecondFactorRuling> {
    const [host, own] = await Promise.all([tenantPolicy(this.policyOf, tenant), this.settings.get(tenant)]);
    return combineSecondFactorRules(host, own);
  }

  /** Whether `tenant`'s users must sign in through its identity provider (their passwords refused while it has a connection). */
  async ssoRequired(tenant: string): Promise<boolean> {
    return (await this.of(tenant)).sso === 'required';
  }

  /** The security profile `tenant` puts its clients under (the host's or its own: high-security when either is). */
  async profile(tenant: string): Promise<SecurityProfile> {
    const [host, own] = await Promise.all([tenantPolicy(this.policyOf, tenant), this.settings.get(tenant)]);
    return combineProfiles(host, own);
  }

  /** Whether `tenant`'s users may sign in with a passkey alone. */
  async passkeyOnlyAllowed(tenant: string): Promise<boolean> {
    return (await this.of(tenant)).passkeyOnlySignIn;
  }
}
