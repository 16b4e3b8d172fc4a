import { randomBytes } from 'node:crypto';
import type { RecordStore } from '../../adapters/types.js';
import { TOTP_ENROLMENT_SECONDS, TOTP_ENROLMENT_SHOWN_AGAIN_SECONDS } from '../../policies/lifetimes.js';
import { ValidationError } from '../../policies/errors.js';
import { factorChanged, recoveryCodeUsed, secondFactorFailed, type FactorKind } from '../audit/events.js';
import { OPERATOR, type AuditContext, type AuditTrail } from '../audit/trail.js';
import { Sealer } from '../records/sealed.js';
import { checkedOwner, FactorRecords, factorRecordId, type FactorOwner, type FactorRecord } from './record.js';
import { isRecoveryCodeShape, matchRecoveryCode, newRecoveryCodes, recoveryCodeHash, recoveryCodeKeys } from './recovery-codes.js';
import { isTotpCodeShape, matchTotp, newTotpSecret, totpQrSvg, totpUri } from './totp.js';
import type { HostSecondFactor } from '../accounts.js';

/*
 * A USER'S SECOND FACTORS: enrol and use an authenticator app (totp.ts), make and use recovery
 * codes (recovery-codes.ts), list what a user holds, reset it all; one record per user
 * (record.ts), every change compared-and-set.
 *
 * - An authenticator app is enrolled in two steps: `startAuthenticatorApp` makes a secret (kept
 *   sealed as pending for TOTP_ENROLMENT_SECONDS) and answers it with its URI and QR code; a first
 *   valid code (`confirmAuthenticatorApp`) makes it the user's app, replacing one she had. The code
 *   that confirmed is used: it cannot sign in after.
 * - Audited (src/audit/events.ts): a factor added, removed or reset, written before the change and
 *   not made when the event cannot be written; a recovery code used; a second factor refused (as a
 *   refusal: once per user and window, then at the 10th, 100th...). Never a secret or a code.
 * - What is listed never holds a secret, a hash or a credential's key.
 * - The host's own factors (`accounts.secondFactor`): `summary` says whether the host holds one
 *   for her (`hostFactor`), and a code of digits she types goes to the host's check when she has
 *   no app of ours and the host holds one (a code of ours would be refused there: she has none).
 *   Only the host's `true` accepts; its refusal is audited like ours (factor `host`).
 */

export type { FactorOwner } from './record.js';
export { FACTORS } from './record.js';

/** The label of the factor keys' sealing key (distinct from every cookie use). */
const SEALING_LABEL = 'talent-auth factor secrets';

/** What a user holds, as listed (never a secret). */
export interface FactorSummary {
  /** The authenticator app, when one is enrolled (confirmed). */
  authenticatorApp: { addedAt: string } | undefined;
  /** The recovery codes, when a set was made: how many are left. */
  recoveryCodes: { remaining: number; createdAt: string } | undefined;
  /** The passkeys (filled by the passkey part). */
  passkeys: Array<{ id: string; name: string; createdAt: string; backedUp: boolean }>;
  /**
   * A reset asked for (by a tenant admin, `requestReset`) and not yet done: at her next sign-in,
   * after the password, she enrols anew and what she held goes.
   */
  resetRequested: boolean;
  /**
   * The host holds a second factor of its own for her (`accounts.secondFactor`): she has a factor
   * to give after the password even without one of ours.
   */
  hostFactor: boolean;
}

/**
 * Whether a user holds a second factor the sign-in asks for after the password: an authenticator
 * app, a passkey, or the host's own. Recovery codes alone are a way back in, not a factor.
 */
export function holdsSecondFactor(summary: FactorSummary): boolean {
  return summary.authenticatorApp !== undefined || summary.passkeys.length > 0 || summary.hostFactor;
}

/** One factor as `auth.factors.list` names it (the public contract): never a secret. */
export interface FactorListEntry {
  /** The factor's id: a passkey's credential ID, else an id made when the factor was added. */
  id: string;
  type: 'passkey' | 'totp' | 'recovery_codes';
  /** When it was added (ISO 8601). */
  createdAt: string;
  /** The user's name for a passkey. */
  label?: string;
}

/** An authenticator app enrolled by the host for a user (`auth.factors.enrollTotp`): to show once. */
export interface TotpEnrolment {
  /** The id of the new factor (as `list` names it). */
  factorId: string;
  /** The secret, base32 (SHA-1, 6 digits, 30 s: what authenticator apps expect). */
  secret: string;
  /** The `otpauth://totp/...` URI (what a QR code holds). */
  otpauthUri: string;
}

/** An authenticator app's enrolment, to show once: the secret in text, its URI and QR code. */
export interface AuthenticatorAppEnrolment {
  /** The secret, base32, for typing into the app. */
  secret: string;
  /** The `otpauth://totp/...` URI (what the QR code holds). */
  uri: string;
  /** The QR code as an SVG document, drawn on the server. */
  qrSvg: string;
  /** When the enrolment ends unless confirmed (ISO 8601). */
  expiresAt: string;
}

/** A code checked by the host's own factor (`accounts.secondFactor`): a one-time code (`otp`) like ours. */
export type HostCodeCheck = FactorCheck & { factor: 'host' };

/** What a code checked answers: accepted, or refused and why. */
export type FactorCheck = { accepted: true } | { accepted: false; reason: 'malformed' | 'wrong' | 'replayed' | 'not_enrolled' | 'expired' };

/** How the factors are set up. */
export interface FactorSettings {
  /** The keys: the first seals and keys new recovery codes, every one opens and matches. */
  keys: readonly string[];
  /** The name authenticator apps show for us (the `issuer` of the URI). */
  issuerName: string;
  /** The clock (epoch ms); tests move it. */
  now?: () => number;
  /** The host's own second factors (`accounts.secondFactor`), if it has any. */
  host?: HostSecondFactor | undefined;
}

/** A user's second factors (see above). */
export class Factors {
  readonly #records: FactorRecords;
  readonly #sealer: Sealer;
  readonly #codeKeys: Buffer[];
  readonly #issuerName: string;
  readonly #now: () => number;
  readonly #host: HostSecondFactor | undefined;

  constructor(
    records: RecordStore,
    settings: FactorSettings,
    private readonly audit: AuditTrail,
  ) {
    this.#records = new FactorRecords(records);
    this.#sealer = new Sealer(settings.keys, SEALING_LABEL);
    this.#codeKeys = recoveryCodeKeys(settings.keys);
    this.#issuerName = settings.issuerName;
    this.#now = settings.now ?? Date.now;
    this.#host = settings.host;
  }

  /** What `owner` holds (never a secret); nothing enrolled: every entry empty. */
  async summary(owner: FactorOwner): Promise<FactorSummary> {
    const who = checkedOwner(owner);
    const [record, hostFactor] = await Promise.all([this.#records.read(who), this.#hostHolds(who)]);
    return {
      authenticatorApp: record?.authenticatorApp ? { addedAt: record.authenticatorApp.addedAt } : undefined,
      recoveryCodes: record?.recoveryCodes ? { remaining: record.recoveryCodes.hashes.length, createdAt: record.recoveryCodes.createdAt } : undefined,
      passkeys: (record?.passkeys ?? []).map(({ id, name, createdAt, backedUp }) => ({ id, name, createdAt, backedUp })),
      resetRequested: record?.resetRequestedAt !== undefined,
      hostFactor,
    };
  }

  /**
   * The factors of `owner` as the public contract lists them (`auth.factors.list`): passkeys, the
   * authenticator app, the recovery codes; never a secret. Nothing enrolled: an empty list.
   */
  async list(owner: FactorOwner): Promise<FactorListEntry[]> {
    const record = await this.#records.read(checkedOwner(owner));
    if (!record) return [];
    const entries: FactorListEntry[] = record.passkeys.map(({ id, name, createdAt }) => ({ id, type: 'passkey', createdAt, label: name }));
    if (record.authenticatorApp) entries.push({ id: record.authenticatorApp.id, type: 'totp', createdAt: record.authenticatorApp.addedAt });
    if (record.recoveryCodes) entries.push({ id: record.recoveryCodes.id, type: 'recovery_codes', createdAt: record.recoveryCodes.createdAt });
    return entries;
  }

  /**
   * Enrols an authenticator app for `owner` at once, without a first code (the host's own
   * enrolment: it shows the secret and is trusted to have confirmed it): `factor.added` by `by`,
   * replacing an app she had. Answers the secret once; only its sealed form is kept.
   */
  async enrollTotp(owner: FactorOwner, account: string, by: AuditContext): Promise<TotpEnrolment> {
    const who = checkedOwner(owner);
    checkedAccountName(account);
    const secret = newTotpSecret();
    const factorId = newFactorId();
    await this.#records.change(who, async (record) => {
      await this.audit.record(factorChanged('factor.added', by, who, { factor: 'authenticator_app', replaced: record.authenticatorApp !== undefined }));
      const { pendingAuthenticatorApp: _pending, ...rest } = record;
      return { next: { ...rest, authenticatorApp: { id: factorId, secret: this.#seal(who, 'app', secret), lastStep: -1, addedAt: new Date(this.#now()).toISOString() } }, result: undefined };
    });
    return { factorId, secret, otpauthUri: totpUri(secret, this.#issuerName, account) };
  }

  /**
   * Removes one factor of `owner` by its id (as `list` names it): a passkey, the authenticator
   * app or the recovery codes (`factor.removed` by `by`). False when she holds none with that id.
   */
  async remove(owner: FactorOwner, factorId: string, by: AuditContext): Promise<boolean> {
    const who = checkedOwner(owner);
    if (typeof factorId !== 'string' || factorId.length === 0 || factorId.length > 1024) throw new ValidationError('id', 'must be a factor id');
    return this.#records.change(who, async (record) => {
      const passkeys = record.passkeys.filter((passkey) => passkey.id !== factorId);
      let factor: FactorKind;
      let next: FactorRecord;
      if (passkeys.length !== record.passkeys.length) {
        factor = 'passkey';
        next = { ...record, passkeys };
      } else if (record.authenticatorApp?.id === factorId) {
        factor = 'authenticator_app';
        const { authenticatorApp: _app, ...rest } = record;
        next = rest;
      } else if (record.recoveryCodes?.id === factorId) {
        factor = 'recovery_codes';
        const { recoveryCodes: _codes, ...rest } = record;
        next = rest;
      } else {
        return { next: 'unchanged', result: false };
      }
      await this.audit.record(factorChanged('factor.removed', by, who, { factor }));
      return { next, result: true };
    });
  }

  /**
   * Asks for a reset of `owner`'s factors that she completes herself at her next sign-in (a tenant
   * admin's reset): her factors stay until then (a reset started by mistake locks nobody out), and
   * the sign-in leads her through enrolment after the password, which replaces them. Audited as
   * `factor.reset` with `requested: true`. False when she holds no factor.
   */
  async requestReset(owner: FactorOwner, by: AuditContext): Promise<boolean> {
    const who = checkedOwner(owner);
    return this.#records.change(who, async (record) => {
      if (!record.authenticatorApp && !record.recoveryCodes && record.passkeys.length === 0) return { next: 'unchanged', result: false };
      await this.audit.record(factorChanged('factor.reset', by, who, { requested: true }));
      return { next: { ...record, resetRequestedAt: new Date(this.#now()).toISOString() }, result: true };
    });
  }

  /**
   * Checks a code typed on the second-factor page, whichever it is: for a user whose factor is the
   * host's (no app of ours), six to eight digits go to the host's check; six digits (spaces
   * allowed between them) are the authenticator app's code, the shape of a recovery code is tried
   * as one.
   * Anything else is `malformed`, refused unread: no record read, nothing audited, and (the
   * caller's) not counted as a guess.
   */
  async checkCode(owner: FactorOwner, code: unknown): Promise<FactorCheck & { factor?: 'authenticator_app' | 'recovery_codes' | 'host' }> {
    const typed = typeof code === 'string' ? code.trim() : code;
    if (typeof typed === 'string' && HOST_CODE.test(typed) && (await this.#hostChecks(owner))) return this.#hostCheck(owner, typed);
    if (isTotpCodeShape(code)) return { ...(await this.verifyAuthenticatorApp(owner, code)), factor: 'authenticator_app' };
    if (isRecoveryCodeShape(code)) return { ...(await this.useRecoveryCode(owner, code)), factor: 'recovery_codes' };
    checkedOwner(owner);
    return { accepted: false, reason: 'malformed' };
  }

  /** Whether the host holds a factor of its own for her (only its `true` counts). */
  async #hostHolds(who: FactorOwner): Promise<boolean> {
    return this.#host !== undefined && (await this.#host.has({ tenant: who.tenant, sub: who.sub })) === true;
  }

  /** Whether her code goes to the host: it holds a factor for her, and she has no app of ours. */
  async #hostChecks(owner: FactorOwner): Promise<boolean> {
    if (!this.#host) return false;
    const who = checkedOwner(owner);
    const record = await this.#records.read(who);
    return !record?.authenticatorApp && (await this.#hostHolds(who));
  }

  /** The host's answer to her code; a refusal is audited as ours are. */
  async #hostCheck(owner: FactorOwner, code: string): Promise<HostCodeCheck> {
    const who = checkedOwner(owner);
    if ((await this.#host!.check({ tenant: who.tenant, sub: who.sub, code })) === true) return { accepted: true, factor: 'host' };
    this.#refused(who, 'host', 'wrong');
    return { accepted: false, reason: 'wrong', factor: 'host' };
  }

  /**
   * Starts enrolling an authenticator app: a new secret, pending until a first code confirms it
   * (an enrolment started before is replaced). `account`: what the app shows beside the issuer
   * (the user's username or e-mail address).
   */
  async startAuthenticatorApp(owner: FactorOwner, account: string, boundTo?: string): Promise<AuthenticatorAppEnrolment> {
    const who = checkedOwner(owner);
    checkedAccountName(account);
    const secret = newTotpSecret();
    const expiresAt = this.#now() + TOTP_ENROLMENT_SECONDS * 1000;
    const sealed = this.#seal(who, 'pending', secret);
    const pending = { secret: sealed, expiresAt, ...(boundTo !== undefined ? { boundTo } : {}) };
    await this.#records.change(who, (record) => ({ next: { ...record, pendingAuthenticatorApp: pending }, result: undefined }));
    const uri = totpUri(secret, this.#issuerName, account);
    return { secret, uri, qrSvg: await totpQrSvg(uri), expiresAt: new Date(expiresAt).toISOString() };
  }

  /**
   * The authenticator app's enrolment under way for `owner`, to show again (the sign-in's
   * enrolment page reloaded, or shown with an error: the app she scanned stays the one to
   * confirm); a new one when none is pending for `boundTo` or it ends within a minute.
   */
  async authenticatorAppEnrolment(owner: FactorOwner, account: string, boundTo: string): Promise<AuthenticatorAppEnrolment> {
    const who = checkedOwner(owner);
    checkedAccountName(account);
    const pending = (await this.#records.read(who))?.pendingAuthenticatorApp;
    const ours = pending?.boundTo === boundTo && pending.expiresAt - this.#now() > TOTP_ENROLMENT_SHOWN_AGAIN_SECONDS * 1000;
    const secret = ours ? this.#open(who, 'pending', pending.secret) : undefined;
    if (!pending || secret === undefined) return this.startAuthenticatorApp(owner, account, boundTo);
    const uri = totpUri(secret, this.#issuerName, account);
    return { secret, uri, qrSvg: await totpQrSvg(uri), expiresAt: new Date(pending.expiresAt).toISOString() };
  }

  /**
   * Confirms the pending authenticator app with its first code: it becomes the user's app
   * (`factor.added`, by `by`), replacing one she had. Refused (nothing changed): no enrolment
   * pending (`not_enrolled`), past its time (`expired`), a code that is not one or not right.
   * `replaceAll`: the enrolment completes a reset (a tenant admin's, `requestReset`): in the same
   * change every other factor goes (`factor.reset`, by `by`, before `factor.added`) and the
   * request is cleared, so that she never holds both or neither.
   * `boundTo`: only an enrolment started there is confirmed. `onlyWhenNeeded` (the sign-in's
   * enrolment, which the password alone reaches): refused, and the enrolment dropped, unless she
   * still holds no app or passkey (or, with `replaceAll`, the reset is still asked for), so that a
   * sign-in started before she enrolled cannot add or swap a factor afterwards.
   */
  async confirmAuthenticatorApp(
    owner: FactorOwner, code: unknown, by: AuditContext,
    { replaceAll = false, boundTo, onlyWhenNeeded = false }: { replaceAll?: boolean; boundTo?: string; onlyWhenNeeded?: boolean } = {},
  ): Promise<FactorCheck> {
    const who = checkedOwner(owner);
    return this.#records.change<FactorCheck>(who, async (record) => {
      const pending = record.pendingAuthenticatorApp;
      if (!pending || pending.boundTo !== boundTo) return { next: 'unchanged', result: { accepted: false, reason: 'not_enrolled' } };
      const needed = replaceAll ? record.resetRequestedAt !== undefined : !record.authenticatorApp && record.passkeys.length === 0;
      if (onlyWhenNeeded && !needed) {
        const { pendingAuthenticatorApp: _dropped, ...rest } = record;
        return { next: rest, result: { accepted: false, reason: 'not_enrolled' } };
      }
      const now = this.#now();
      if (now > pending.expiresAt) {
        const { pendingAuthenticatorApp: _gone, ...rest } = record;
        return { next: rest, result: { accepted: false, reason: 'expired' } };
      }
      const secret = this.#open(who, 'pending', pending.secret);
      if (secret === undefined) return { next: 'unchanged', result: { accepted: false, reason: 'not_enrolled' } };
      const match = matchTotp(secret, code, now, -1);
      if (!match.accepted) return { next: 'unchanged', result: { accepted: false, reason: match.reason } };
      if (replaceAll) {
        const removed: FactorKind[] = [
          ...(record.authenticatorApp ? ['authenticator_app' as const] : []),
          ...(record.recoveryCodes ? ['recovery_codes' as const] : []),
          ...(record.passkeys.length > 0 ? ['passkey' as const] : []),
        ];
        await this.audit.record(factorChanged('factor.reset', by, who, { removed }));
      }
      await this.audit.record(factorChanged('factor.added', by, who, { factor: 'authenticator_app', replaced: record.authenticatorApp !== undefined }));
      const { pendingAuthenticatorApp: _done, ...kept } = record;
      const rest: FactorRecord = replaceAll ? { tenant: record.tenant, sub: record.sub, passkeys: [] } : kept;
      return {
        next: { ...rest, authenticatorApp: { id: newFactorId(), secret: this.#seal(who, 'app', secret), lastStep: match.step, addedAt: new Date(now).toISOString() } },
        result: { accepted: true },
      };
    });
  }

  /**
   * Checks a code of the user's authenticator app (the second factor of a sign-in): accepted once,
   * within a step either side of now, never again nor an older one. A refusal is audited
   * (`sign_in.second_factor_failed`); counting guesses against the sign-in throttle is the caller's.
   */
  async verifyAuthenticatorApp(owner: FactorOwner, code: unknown): Promise<FactorCheck> {
    const who = checkedOwner(owner);
    const check = await this.#records.change<FactorCheck>(who, (record) => {
      const app = record.authenticatorApp;
      const secret = app && this.#open(who, 'app', app.secret);
      if (!app || secret === undefined) return { next: 'unchanged', result: { accepted: false, reason: 'not_enrolled' } };
      const match = matchTotp(secret, code, this.#now(), app.lastStep);
      if (!match.accepted) return { next: 'unchanged', result: { accepted: false, reason: match.reason } };
      // The step is written before the code is accepted: the compare-and-set lets one use win.
      return { next: { ...record, authenticatorApp: { ...app, lastStep: match.step } }, result: { accepted: true } };
    });
    if (!check.accepted) this.#refused(who, 'authenticator_app', check.reason);
    return check;
  }

  /**
   * Removes the user's authenticator app (`factor.removed`); false when she had none. An enrolment
   * pending goes too.
   */
  async removeAuthenticatorApp(owner: FactorOwner, by: AuditContext): Promise<boolean> {
    const who = checkedOwner(owner);
    return this.#records.change(who, async (record) => {
      if (!record.authenticatorApp && !record.pendingAuthenticatorApp) return { next: 'unchanged', result: false };
      if (record.authenticatorApp) await this.audit.record(factorChanged('factor.removed', by, who, { factor: 'authenticator_app' }));
      const { authenticatorApp: _app, pendingAuthenticatorApp: _pending, ...rest } = record;
      return { next: rest, result: record.authenticatorApp !== undefined };
    });
  }

  /**
   * A new set of recovery codes, to show once: replaces the set she had (`factor.added`, with
   * `replaced`). Only their HMACs are kept.
   */
  async newRecoveryCodes(owner: FactorOwner, by: AuditContext): Promise<string[]> {
    const who = checkedOwner(owner);
    const codes = newRecoveryCodes();
    const key = this.#codeKeys[0]!;
    const hashes = codes.map((code) => recoveryCodeHash(code, key));
    await this.#records.change(who, async (record) => {
      await this.audit.record(factorChanged('factor.added', by, who, { factor: 'recovery_codes', replaced: record.recoveryCodes !== undefined }));
      return { next: { ...record, recoveryCodes: { id: newFactorId(), hashes, createdAt: new Date(this.#now()).toISOString() } }, result: undefined };
    });
    return codes;
  }

  /**
   * Uses a recovery code (instead of the second factor): accepted once, then gone
   * (`recovery_code.used`, with how many are left). A refusal is audited like a wrong code.
   */
  async useRecoveryCode(owner: FactorOwner, code: unknown): Promise<FactorCheck> {
    const who = checkedOwner(owner);
    const check = await this.#records.change<FactorCheck & { remaining?: number }>(who, (record) => {
      const set = record.recoveryCodes;
      if (!set) return { next: 'unchanged', result: { accepted: false, reason: 'not_enrolled' } };
      const index = matchRecoveryCode(code, set.hashes, this.#codeKeys);
      if (index === -1) return { next: 'unchanged', result: { accepted: false, reason: 'wrong' } };
      const hashes = set.hashes.filter((_, at) => at !== index);
      return { next: { ...record, recoveryCodes: { ...set, hashes } }, result: { accepted: true, remaining: hashes.length } };
    });
    if (!check.accepted) {
      this.#refused(who, 'recovery_codes', check.reason);
      return check;
    }
    this.audit.recordLater(recoveryCodeUsed(who, check.remaining ?? 0));
    return { accepted: true };
  }

  /**
   * Resets every factor of the user (authenticator app, pending enrolment, recovery codes,
   * passkeys): `factor.reset` by `by` (default: the operator), written before. False when she held
   * none.
   */
  async reset(owner: FactorOwner, by: AuditContext = OPERATOR): Promise<boolean> {
    const who = checkedOwner(owner);
    return this.#records.change(who, async (record) => {
      const removed: FactorKind[] = [
        ...(record.authenticatorApp ? ['authenticator_app' as const] : []),
        ...(record.recoveryCodes ? ['recovery_codes' as const] : []),
        ...(record.passkeys.length > 0 ? ['passkey' as const] : []),
      ];
      if (removed.length === 0 && !record.pendingAuthenticatorApp && !record.resetRequestedAt) return { next: 'unchanged', result: false };
      await this.audit.record(factorChanged('factor.reset', by, who, { removed }));
      return { next: undefined, result: removed.length > 0 };
    });
  }

  #refused(who: FactorOwner, factor: FactorKind, reason: Exclude<FactorCheck, { accepted: true }>['reason']): void {
    const why = reason === 'expired' ? 'wrong' : reason;
    this.audit.recordRefusal(secondFactorFailed(who, factor, why), { who: who.sub, where: factor });
  }

  /** The purpose a secret is sealed for: its use and its owner, so that a copy elsewhere does not open. */
  #purpose(who: FactorOwner, use: 'pending' | 'app'): string {
    return `factor:totp:${use}:${factorRecordId(who)}`;
  }

  #seal(who: FactorOwner, use: 'pending' | 'app', secret: string): string {
    return this.#sealer.seal(secret, this.#purpose(who, use));
  }

  #open(who: FactorOwner, use: 'pending' | 'app', sealed: string): string | undefined {
    const secret = this.#sealer.open<unknown>(sealed, this.#purpose(who, use));
    return typeof secret === 'string' ? secret : undefined;
  }
}

/**
 * A code the host's check takes: 6 to 8 digits (what authenticator apps and text messages send;
 * RFC 4226 §5.3 allows HOTP codes of 6 to 8 digits).
 */
const HOST_CODE = /^\d{6,8}$/;

/** What an authenticator app shows beside our name: a string of 1 to 255 characters. */
function checkedAccountName(account: unknown): void {
  if (typeof account !== 'string' || account.length === 0 || account.length > 255) {
    throw new ValidationError('account', 'must be a string of 1 to 255 characters');
  }
}

/** A new factor id: random, URL-safe, never derived from a secret. */
function newFactorId(): string {
  return randomBytes(12).toString('base64url');
}

/** Re-exported for the composition and tests: the record as stored. */
export type { FactorRecord };
