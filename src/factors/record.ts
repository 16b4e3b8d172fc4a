import type { RecordStore } from '../../adapters/types.js';
import { Conflict, ValidationError } from '../../policies/errors.js';

/*
 * A USER'S FACTORS, ONE RECORD: everything a user (a `sub` of a tenant) holds beyond her password
 * is one record of the RecordStore (kind `factors`, its group the tenant), so that one
 * compare-and-set covers every change: two instances (or two requests) that change or use a factor
 * at once never undo each other, and a code used on one is used on all.
 *
 * - Nothing that could sign in is kept in clear: the authenticator app's secret is sealed
 *   (AES-256-GCM under the factor keys, bound to the tenant and user), recovery codes are kept as
 *   HMACs only.
 * - Every change reads the record with its revision, decides, and writes it back only if it is
 *   still at that revision (`replace`); a lost race reads again and decides again, up to
 *   CHANGE_ATTEMPTS times (then Conflict: 409).
 * - A record is made at the user's first factor and then stays (emptied by a reset, never
 *   deleted): a delete could not be compared-and-set, and a record that goes and comes back could
 *   lose a change made meanwhile. It is one small record per user who ever enrolled.
 */

/** The kind of the factor records in the RecordStore. */
export const FACTORS = 'factors';

/** How often a change is tried again after losing a race before it answers Conflict. */
const CHANGE_ATTEMPTS = 8;
/** The longest tenant or `sub` taken (what an ID claim holds in practice). */
const MAX_ID_LENGTH = 255;

/** Whose factors: a user (`sub`) in a tenant. */
export interface FactorOwner {
  tenant: string;
  sub: string;
}

/** An authenticator app (TOTP), enrolled. */
export interface StoredAuthenticatorApp {
  /** Its factor id (as `auth.factors.list` names it). */
  id: string;
  /** The secret, sealed (never in clear). */
  secret: string;
  /** The time step of the last code accepted: a code of this step or an earlier one is refused. */
  lastStep: number;
  addedAt: string;
}

/** An authenticator app waiting for its first code. */
export interface PendingAuthenticatorApp {
  /** The secret, sealed. */
  secret: string;
  /** Epoch ms after which the enrolment must start again. */
  expiresAt: number;
  /**
   * What the enrolment belongs to (a sign-in's interaction, the portal): only there is it shown
   * again and confirmed, so that another sign-in with her password neither sees her new secret
   * nor confirms it.
   */
  boundTo?: string;
}

/** The recovery codes of a user: the HMACs of those not yet used. */
export interface StoredRecoveryCodes {
  /** The set's factor id (a new set, a new id). */
  id: string;
  hashes: string[];
  createdAt: string;
}

/** A passkey (WebAuthn credential): filled by the passkey part. */
export interface StoredPasskey {
  /** The credential ID (base64url). */
  id: string;
  /** The COSE public key (base64url). */
  publicKey: string;
  /** The signature counter last seen. */
  counter: number;
  /** Whether the credential may be backed up (synced), and whether it is. */
  backupEligible: boolean;
  backedUp: boolean;
  /** How the browser said it reaches the authenticator (`internal`, `usb`, `hybrid`...), handed back in the options. */
  transports?: string[];
  /** The user's name for it. */
  name: string;
  createdAt: string;
}

/** The one record of a user's factors. */
export interface FactorRecord {
  tenant: string;
  sub: string;
  authenticatorApp?: StoredAuthenticatorApp;
  pendingAuthenticatorApp?: PendingAuthenticatorApp;
  recoveryCodes?: StoredRecoveryCodes;
  passkeys: StoredPasskey[];
  /** The user handle her passkeys carry (base64url, random: never her `sub`), made with her first passkey. */
  passkeyUserHandle?: string;
  /** When a tenant admin asked for a reset that she completes at her next sign-in (ISO 8601). */
  resetRequestedAt?: string;
}

const part = (value: string) => encodeURIComponent(value);

/** The record's id: the tenant and the user (each escaped, so that no pair reads as another). */
export function factorRecordId(owner: FactorOwner): string {
  return `${part(owner.tenant)}:${part(owner.sub)}`;
}

/** The owner as given, checked: a tenant and a `sub`, non-empty strings of at most 255 characters. */
export function checkedOwner(owner: FactorOwner): FactorOwner {
  for (const field of ['tenant', 'sub'] as const) {
    const value: unknown = (owner as unknown as Record<string, unknown> | null | undefined)?.[field];
    if (typeof value !== 'string' || value.length === 0 || value.length > MAX_ID_LENGTH) {
      throw new ValidationError(field, `must be a string of 1 to ${MAX_ID_LENGTH} characters`);
    }
  }
  return { tenant: owner.tenant, sub: owner.sub };
}

function holdsNothing(record: FactorRecord): boolean {
  return !record.authenticatorApp && !record.pendingAuthenticatorApp && !record.recoveryCodes && record.passkeys.length === 0;
}

/** What a change decided: the record to write (undefined: none to keep) and what to answer. */
export interface Decision<R> {
  /** The new record (undefined: emptied); `unchanged` writes nothing. */
  next: FactorRecord | undefined | 'unchanged';
  result: R;
}

/** The factor records of a store: read one, change one by compare-and-set. */
export class FactorRecords {
  constructor(private readonly records: RecordStore) {}

  /** The user's record, or undefined when she holds no factor. */
  async read(owner: FactorOwner): Promise<FactorRecord | undefined> {
    return this.records.get<FactorRecord>(FACTORS, factorRecordId(owner));
  }

  /**
   * Changes the user's record: `decide` gets the record as it is now (a fresh empty one when there
   * is none) and answers what it becomes; written only if nobody changed it meanwhile, else
   * decided again on what is there then.
   * @throws Conflict when it lost the race CHANGE_ATTEMPTS times.
   */
  async change<R>(owner: FactorOwner, decide: (record: FactorRecord) => Decision<R> | Promise<Decision<R>>): Promise<R> {
    const id = factorRecordId(owner);
    for (let attempt = 0; attempt < CHANGE_ATTEMPTS; attempt += 1) {
      const current = await this.records.getVersioned<FactorRecord>(FACTORS, id);
      const record: FactorRecord = current ? structuredClone(current.value) : { tenant: owner.tenant, sub: owner.sub, passkeys: [] };
      const { next, result } = await decide(record);
      if (next === 'unchanged') return result;
      const keep: FactorRecord = next ?? { tenant: owner.tenant, sub: owner.sub, passkeys: [] };
      if (!current) {
        // Nothing stored yet: created only if nobody created it meanwhile (else decided again).
        if (holdsNothing(keep) || (await this.records.create(FACTORS, id, part(owner.tenant), keep))) return result;
        continue;
      }
      if (await this.records.replace(FACTORS, id, keep, current.revision)) return result;
    }
    throw new Conflict("the user's factors");
  }
}
