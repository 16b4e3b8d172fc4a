import { randomBytes } from 'node:crypto';
import type * as WebAuthn from '@simplewebauthn/server';
import type {
  AuthenticationResponseJSON,
  AuthenticatorTransport,
  PublicKeyCredentialCreationOptionsJSON,
  PublicKeyCredentialRequestOptionsJSON,
  RegistrationResponseJSON,
} from '@simplewebauthn/server';
import { AlreadyConsumed, type Store } from '../../adapters/types.js';
import { constantTimeEqual } from '../../policies/constant-time.js';
import { PASSKEY_CHALLENGE_SECONDS } from '../../policies/lifetimes.js';
import { ValidationError } from '../../policies/errors.js';
import { factorChanged, secondFactorFailed } from '../audit/events.js';
import type { AuditContext, AuditTrail } from '../audit/trail.js';
import { checkedOwner, FactorRecords, type FactorOwner, type StoredPasskey } from './record.js';

/**
 * The WebAuthn library, loaded at the first ceremony: it is half a second of start-up on its own,
 * which a server whose users never use a passkey should not pay.
 */
let webauthn: Promise<typeof WebAuthn> | undefined;
const webAuthn = () => (webauthn ??= import('@simplewebauthn/server'));

/*
 * PASSKEYS (WebAuthn): register a user's passkeys, and sign in with one, as the second factor
 * after the password or (where the tenant allows it, the sign-in step's decision) alone.
 *
 * - The relying party is pinned to the server's public base URL: its host name is the RP ID and
 *   its origin the only origin accepted. A request's Host header never takes part, so that a
 *   request sent to us under another name cannot make us accept a credential made for that name.
 * - A ceremony's challenge stays on the server, as an entry of its own (model PasskeyChallenge)
 *   that lives PASSKEY_CHALLENGE_SECONDS and is used once (the store's atomic consume): the
 *   browser gets the ceremony id and the options, and the answer is checked against that entry
 *   only, for the purpose and the user it was made for.
 * - Registration excludes the credentials the user holds, prefers a resident (discoverable) key and
 *   user verification, asks no attestation. What is kept: the credential id, its public key, the
 *   counter, backup eligibility and state, transports, a name; never anything that could sign in.
 * - The counter: a credential whose stored counter or new counter is not zero must show a counter
 *   greater than the one stored; one that does not is a cloned authenticator, refused and audited
 *   (`sign_in.second_factor_failed`, reason `cloned_authenticator`), checked only once the
 *   signature is verified, so that no forged answer can raise that alarm. The new counter and
 *   backup state are written by compare-and-set: of two uses of one assertion, one wins.
 * - The amr method of a passkey: `swk` when it is backup-eligible (a synced passkey: its key lives
 *   in software and in a cloud keychain), `hwk` when it is not (the key cannot leave the
 *   authenticator). Eligibility is fixed at registration, so a credential's method never changes.
 * - A passkey-only sign-in (no user known before) finds the user through the user handle the
 *   credential carries: a random handle per user (never her `sub`, which may be an e-mail address),
 *   indexed per tenant (kind `passkey_user`, one small record per user who ever registered one).
 *   Such a sign-in requires user verification (the passkey is then the whole sign-in).
 */

/** The engine-store model of a ceremony's challenge. */
const CHALLENGE_MODEL = 'PasskeyChallenge';
/** The record kind of the user-handle index. */
export const PASSKEY_USERS = 'passkey_user';
/** How many passkeys a user may hold (a bound on her record). */
export const MAX_PASSKEYS = 20;
/** The longest name a passkey may have. */
const MAX_NAME_LENGTH = 64;
/** The longest ceremony id or credential answer field we read before refusing it unread. */
const MAX_CEREMONY_LENGTH = 64;
const MAX_RESPONSE_FIELD = 16_384;

/** The amr method (RFC 8176) a passkey signs in with. */
export type PasskeyMethod = 'hwk' | 'swk';

/** Why a passkey answer was refused. */
export type PasskeyRefusal =
  /** Not a credential answer, or fields of the wrong shape or size. */
  | 'malformed'
  /** No such ceremony, used already, past its time, or made for another purpose or user. */
  | 'expired'
  /** The signature, challenge, origin or RP ID did not verify, or the credential is not the user's. */
  | 'wrong'
  /** The counter did not grow: a copy of the authenticator. */
  | 'cloned_authenticator'
  /** Registration: the credential is registered already, or the user holds MAX_PASSKEYS. */
  | 'not_allowed';

/** A ceremony to run in the browser: its id (posted back with the answer) and its options. */
export interface PasskeyCeremony<O> {
  /** The id of the challenge kept on the server (not a secret: it is used once, for one user). */
  ceremony: string;
  /** The options for `navigator.credentials.create`/`get`, as JSON (base64url binaries). */
  options: O;
}

/** A registration's outcome. */
export type PasskeyRegistration = { accepted: true; passkey: { id: string; name: string; backedUp: boolean; method: PasskeyMethod } } | { accepted: false; reason: PasskeyRefusal };

/** A sign-in's outcome: the user, the passkey and its amr method, or why not. */
export type PasskeyAuthentication =
  | { accepted: true; owner: FactorOwner; passkeyId: string; method: PasskeyMethod; userVerified: boolean }
  | { accepted: false; reason: PasskeyRefusal };

/** How the passkeys are set up. */
export interface PasskeySettings {
  /** The server's public base URL (options.baseUrl): its host is the RP ID, its origin the one origin accepted. */
  baseUrl: string;
  /** The name the browser shows for us. */
  rpName: string;
}

/** The challenge entry of a ceremony. */
interface ChallengeEntry {
  [claim: string]: unknown;
  purpose: 'register' | 'authenticate';
  tenant: string;
  /** The user, when known (always for registration). */
  sub?: string;
  challenge: string;
}

/** The amr method of a passkey (see above). */
export function passkeyMethod(passkey: Pick<StoredPasskey, 'backupEligible'>): PasskeyMethod {
  return passkey.backupEligible ? 'swk' : 'hwk';
}

/** The relying party of a base URL: its RP ID (host name) and origin. */
export function relyingParty(baseUrl: string): { rpID: string; origin: string } {
  const url = new URL(baseUrl);
  return { rpID: url.hostname, origin: url.origin };
}

const BASE64URL = /^[A-Za-z0-9_-]*$/;

function isRecord(value: unknown): value is Record<string, unknown> {
  return typeof value === 'object' && value !== null && !Array.isArray(value);
}

function base64urlField(value: unknown, optional = false): boolean {
  if (value === undefined) return optional;
  return typeof value === 'string' && value.length <= MAX_RESPONSE_FIELD && BASE64URL.test(value);
}

/** Whether `value` has the shape of a credential answer (read before the library sees it). */
function credentialShape(value: unknown, kind: 'create' | 'get'): boolean {
  if (!isRecord(value) || value.type !== 'public-key' || !base64urlField(value.id) || !base64urlField(value.rawId)) return false;
  if (typeof value.id !== 'string' || value.id.length === 0 || value.id !== value.rawId) return false;
  const response = value.response;
  if (!isRecord(response) || !base64urlField(response.clientDataJSON)) return false;
  if (kind === 'create') {
    if (!base64urlField(response.attestationObject)) return false;
    const transports = response.transports;
    if (transports !== undefined && !(Array.isArray(transports) && transports.length <= 8 && transports.every((t) => typeof t === 'string' && t.length <= 32))) return false;
    return true;
  }
  return base64urlField(response.authenticatorData) && base64urlField(response.signature) && base64urlField(response.userHandle, true);
}

/** A user's passkeys (see above). */
export class Passkeys {
  readonly #records: FactorRecords;
  readonly #rp: { rpID: string; origin: string };

  constructor(
    private readonly store: Store,
    private readonly settings: PasskeySettings,
    private readonly audit: AuditTrail,
  ) {
    this.#records = new FactorRecords(store.records);
    this.#rp = relyingParty(settings.baseUrl);
  }

  /**
   * Starts registering a passkey for `owner`: the options for `navigator.credentials.create`, her
   * passkeys excluded. `userName`: what the browser shows (her username or e-mail address).
   */
  async registrationOptions(owner: FactorOwner, userName: string, displayName = userName): Promise<PasskeyCeremony<PublicKeyCredentialCreationOptionsJSON>> {
    const who = checkedOwner(owner);
    for (const [field, value] of [['userName', userName], ['displayName', displayName]] as const) {
      if (typeof value !== 'string' || value.length === 0 || value.length > 255) throw new ValidationError(field, 'must be a string of 1 to 255 characters');
    }
    const record = await this.#records.read(who);
    const handle = record?.passkeyUserHandle ?? randomBytes(32).toString('base64url');
    const options = await (await webAuthn()).generateRegistrationOptions({
      rpName: this.settings.rpName,
      rpID: this.#rp.rpID,
      userName,
      userDisplayName: displayName,
      userID: Buffer.from(handle, 'base64url'),
      attestationType: 'none',
      excludeCredentials: (record?.passkeys ?? []).map((passkey) => ({ id: passkey.id, ...(passkey.transports ? { transports: passkey.transports } : {}) })) as Array<{ id: string; transports?: AuthenticatorTransport[] }>,
      authenticatorSelection: { residentKey: 'preferred', userVerification: 'preferred' },
      timeout: PASSKEY_CHALLENGE_SECONDS * 1000,
    });
    const ceremony = await this.#keep({ purpose: 'register', tenant: who.tenant, sub: who.sub, challenge: options.challenge, handle });
    return { ceremony, options };
  }

  /**
   * Completes a registration with the browser's answer (`response`: the credential as JSON) and the
   * name the user gives it: stored, audited (`factor.added`, by `by`). Refused, nothing stored: a
   * ceremony that is not hers or is used or past, an answer that does not verify, a credential she
   * or anyone holds already, a user at MAX_PASSKEYS.
   */
  async register(owner: FactorOwner, ceremony: unknown, response: unknown, name: unknown, by: AuditContext): Promise<PasskeyRegistration> {
    const who = checkedOwner(owner);
    if (typeof name !== 'string' || name.trim().length === 0 || name.length > MAX_NAME_LENGTH) throw new ValidationError('name', `must be a string of 1 to ${MAX_NAME_LENGTH} characters`);
    if (!credentialShape(response, 'create')) return { accepted: false, reason: 'malformed' };
    const entry = await this.#use(ceremony, 'register', who);
    if (!entry || typeof entry.handle !== 'string') return { accepted: false, reason: 'expired' };
    let verified;
    try {
      verified = await (await webAuthn()).verifyRegistrationResponse({
        response: response as unknown as RegistrationResponseJSON,
        expectedChallenge: entry.challenge,
        expectedOrigin: this.#rp.origin,
        expectedRPID: this.#rp.rpID,
        requireUserVerification: false,
      });
    } catch {
      return { accepted: false, reason: 'wrong' };
    }
    if (!verified.verified) return { accepted: false, reason: 'wrong' };
    const info = verified.registrationInfo;
    const handle = entry.handle;
    const transports = (response as { response: { transports?: string[] } }).response.transports;
    const passkey: StoredPasskey = {
      id: info.credential.id,
      publicKey: Buffer.from(info.credential.publicKey).toString('base64url'),
      counter: info.credential.counter,
      backupEligible: info.credentialDeviceType === 'multiDevice',
      backedUp: info.credentialBackedUp,
      ...(transports ? { transports } : {}),
      name: name.trim(),
      createdAt: new Date().toISOString(),
    };
    // The index first: written again as it is at each registration, it is never ahead of a record.
    await this.store.records.put(PASSKEY_USERS, `${encodeURIComponent(who.tenant)}:${handle}`, encodeURIComponent(who.tenant), { sub: who.sub });
    return this.#records.change<PasskeyRegistration>(who, async (record) => {
      // Two first registrations at once draw two handles: the first kept wins, the other starts again.
      if (record.passkeyUserHandle !== undefined && record.passkeyUserHandle !== handle) return { next: 'unchanged', result: { accepted: false, reason: 'expired' } };
      if (record.passkeys.length >= MAX_PASSKEYS || record.passkeys.some((held) => held.id === passkey.id)) return { next: 'unchanged', result: { accepted: false, reason: 'not_allowed' } };
      await this.audit.record(factorChanged('factor.added', by, who, { factor: 'passkey' }));
      return {
        next: { ...record, passkeyUserHandle: handle, passkeys: [...record.passkeys, passkey] },
        result: { accepted: true, passkey: { id: passkey.id, name: passkey.name, backedUp: passkey.backedUp, method: passkeyMethod(passkey) } },
      };
    });
  }

  /**
   * Starts a passkey sign-in: for a known user (`owner`: the second factor after her password) her
   * passkeys are the ones allowed; without one (`{ tenant }`: a passkey-only sign-in) the list is
   * empty and the browser offers the discoverable passkeys it holds for us.
   */
  async authenticationOptions(owner: FactorOwner | { tenant: string }): Promise<PasskeyCeremony<PublicKeyCredentialRequestOptionsJSON>> {
    const known = 'sub' in owner;
    const who = known ? checkedOwner(owner) : checkedOwner({ tenant: owner.tenant, sub: '-' });
    const passkeys = known ? ((await this.#records.read(who))?.passkeys ?? []) : [];
    const options = await (await webAuthn()).generateAuthenticationOptions({
      rpID: this.#rp.rpID,
      allowCredentials: passkeys.map((passkey) => ({ id: passkey.id, ...(passkey.transports ? { transports: passkey.transports } : {}) })) as Array<{ id: string; transports?: AuthenticatorTransport[] }>,
      userVerification: known ? 'preferred' : 'required',
      timeout: PASSKEY_CHALLENGE_SECONDS * 1000,
    });
    const ceremony = await this.#keep({ purpose: 'authenticate', tenant: who.tenant, ...(known ? { sub: who.sub } : {}), challenge: options.challenge });
    return { ceremony, options };
  }

  /**
   * Checks a passkey sign-in's answer against its ceremony: for a known user, one of her passkeys;
   * for a passkey-only sign-in, the user the credential's user handle names, user verified. On
   * success the counter and backup state are written (compare-and-set). A refusal with a known
   * user is audited (`sign_in.second_factor_failed`); a cloned authenticator always is.
   */
  async authenticate(ceremony: unknown, response: unknown, owner?: FactorOwner): Promise<PasskeyAuthentication> {
    const expectedOwner = owner ? checkedOwner(owner) : undefined;
    const refuse = (reason: PasskeyRefusal, who = expectedOwner): PasskeyAuthentication => {
      if (who) this.audit.recordRefusal(secondFactorFailed(who, 'passkey', reason === 'expired' || reason === 'not_allowed' ? 'wrong' : reason), { who: who.sub, where: 'passkey' });
      return { accepted: false, reason };
    };
    if (!credentialShape(response, 'get')) return refuse('malformed');
    const answer = response as unknown as AuthenticationResponseJSON;
    const entry = await this.#use(ceremony, 'authenticate', expectedOwner);
    // #use answers a ceremony of the expected owner's tenant (and user, when it names one) only.
    if (!entry) return refuse('expired');
    const tenant = entry.tenant;
    const sub = entry.sub ?? (await this.#userOf(tenant, answer.response.userHandle));
    if (sub === undefined || (expectedOwner && sub !== expectedOwner.sub)) return refuse('wrong');
    const who: FactorOwner = { tenant, sub };
    const record = await this.#records.read(who);
    const passkey = record?.passkeys.find((held) => held.id === answer.id);
    if (!record || !passkey) return refuse('wrong', who);
    // A user handle in the answer must be hers (the credential says whose it is).
    if (answer.response.userHandle !== undefined && !(record.passkeyUserHandle && constantTimeEqual(answer.response.userHandle, record.passkeyUserHandle))) return refuse('wrong', who);
    let verified;
    try {
      verified = await (await webAuthn()).verifyAuthenticationResponse({
        response: answer,
        expectedChallenge: entry.challenge,
        expectedOrigin: this.#rp.origin,
        expectedRPID: this.#rp.rpID,
        // The counter is ours to judge (below), after the signature: the library is given none.
        credential: { id: passkey.id, publicKey: Buffer.from(passkey.publicKey, 'base64url'), counter: 0 },
        requireUserVerification: entry.sub === undefined,
      });
    } catch {
      return refuse('wrong', who);
    }
    if (!verified.verified) return refuse('wrong', who);
    const { newCounter, credentialBackedUp, userVerified } = verified.authenticationInfo;
    const outcome = await this.#records.change<PasskeyAuthentication>(who, (now) => {
      const current = now.passkeys.find((held) => held.id === passkey.id);
      if (!current) return { next: 'unchanged', result: { accepted: false, reason: 'wrong' } };
      // A counter that does not grow past a stored one is a clone (an authenticator without a counter
      // says 0, always: nothing to compare).
      if (current.counter > 0 && newCounter <= current.counter) return { next: 'unchanged', result: { accepted: false, reason: 'cloned_authenticator' } };
      return {
        next: { ...now, passkeys: now.passkeys.map((held) => (held.id === current.id ? { ...held, counter: newCounter, backedUp: credentialBackedUp } : held)) },
        result: { accepted: true, owner: who, passkeyId: current.id, method: passkeyMethod(current), userVerified },
      };
    });
    if (!outcome.accepted) {
      if (outcome.reason === 'cloned_authenticator') {
        // Not counted as a refusal of a window: each clone seen is its own event.
        this.audit.recordLater(secondFactorFailed(who, 'passkey', 'cloned_authenticator'));
        return outcome;
      }
      return refuse(outcome.reason, who);
    }
    return outcome;
  }

  /** Removes one of the user's passkeys (`factor.removed`); false when she holds none by that id. */
  async remove(owner: FactorOwner, passkeyId: string, by: AuditContext): Promise<boolean> {
    const who = checkedOwner(owner);
    return this.#records.change(who, async (record) => {
      if (!record.passkeys.some((held) => held.id === passkeyId)) return { next: 'unchanged', result: false };
      await this.audit.record(factorChanged('factor.removed', by, who, { factor: 'passkey' }));
      return { next: { ...record, passkeys: record.passkeys.filter((held) => held.id !== passkeyId) }, result: true };
    });
  }

  /** Keeps a challenge for one ceremony and answers its id. */
  async #keep(entry: ChallengeEntry & { handle?: string }): Promise<string> {
    const id = randomBytes(24).toString('base64url');
    await this.store.engine(CHALLENGE_MODEL).upsert(id, entry, PASSKEY_CHALLENGE_SECONDS);
    return id;
  }

  /**
   * The ceremony's challenge, used now (never again), when it is one of ours for `purpose` and,
   * with `owner`, for her; else undefined.
   */
  async #use(ceremony: unknown, purpose: ChallengeEntry['purpose'], owner: FactorOwner | undefined): Promise<(ChallengeEntry & { handle?: unknown }) | undefined> {
    if (typeof ceremony !== 'string' || ceremony.length === 0 || ceremony.length > MAX_CEREMONY_LENGTH || !BASE64URL.test(ceremony)) return undefined;
    const adapter = this.store.engine(CHALLENGE_MODEL);
    try {
      await adapter.consume(ceremony);
    } catch (error) {
      if (error instanceof AlreadyConsumed) return undefined;
      throw error;
    }
    const entry = (await adapter.find(ceremony)) as (ChallengeEntry & { handle?: unknown }) | undefined;
    await adapter.destroy(ceremony);
    if (!entry || entry.purpose !== purpose || typeof entry.challenge !== 'string' || typeof entry.tenant !== 'string') return undefined;
    if (owner && (entry.tenant !== owner.tenant || (entry.sub !== undefined && entry.sub !== owner.sub))) return undefined;
    return entry;
  }

  /** The user of a tenant whose passkeys carry `handle`, if any. */
  async #userOf(tenant: string, handle: unknown): Promise<string | undefined> {
    if (typeof handle !== 'string' || handle.length === 0) return undefined;
    const found = await this.store.records.get<{ sub?: unknown }>(PASSKEY_USERS, `${encodeURIComponent(tenant)}:${handle}`);
    return typeof found?.sub === 'string' ? found.sub : undefined;
  }
}
