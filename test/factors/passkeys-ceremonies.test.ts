import { Writable } from 'node:stream';
import { StoreUnavailable, type Store } from '../../adapters/types.js';
import { AuditTrail, DEFAULT_AUDIT_SETTINGS, type AuditEvent } from '../../src/audit/trail.js';
import { FACTORS, type FactorRecord } from '../../src/factors/index.js';
import { MAX_PASSKEYS, Passkeys, PASSKEY_USERS, passkeyMethod, relyingParty } from '../../src/factors/passkeys.js';
import { createLogger } from '../../src/logger.js';
import { ValidationError } from '../../policies/errors.js';
import { PASSKEY_CHALLENGE_SECONDS } from '../../policies/lifetimes.js';
import { useAdapterStore } from '../support/adapter-stores.js';
import { SoftwarePasskey } from '../support/software-passkey.js';
import { STORE_KINDS } from '../support/stores.js';

/**
 * Passkeys (src/factors/passkeys.ts) without a browser: bad input, single use, lifetimes, removal;
 * and the ceremonies with an authenticator made in Node (test/support/software-passkey.ts):
 * registration, the second factor after a password, a passkey alone, and each refusal, so that the
 * rules are tested where they live (and by `npm run mutate`). On both stores. The same ceremonies in
 * Chromium: test/factors/passkeys.test.ts.
 */

const ORIGIN = 'https://auth.example';
const alice = { tenant: 'acme', sub: 'alice' };
const bob = { tenant: 'acme', sub: 'bob' };
const byAlice = { actor: { type: 'user' as const, id: 'alice' } };
const settled = () => new Promise((resolve) => setTimeout(resolve, 50));

describe.each(STORE_KINDS)('passkeys without a browser; %s store', (kind) => {
  const handle = useAdapterStore(kind);
  let store: Store;
  let passkeys: Passkeys;
  let events: AuditEvent[];

  beforeEach(async () => {
    store = await handle.create();
    events = [];
    const logger = createLogger({ destination: new Writable({ write(_chunk, _e, done) { done(); } }) });
    passkeys = new Passkeys(store, { baseUrl: `${ORIGIN}/tenant-x`, rpName: 'Acme HR' }, new AuditTrail(store, DEFAULT_AUDIT_SETTINGS, logger, (event) => void events.push(event)));
  });
  afterEach(async () => {
    await settled();
    await store.close();
  });

  const record = (owner = alice) => store.records.get<FactorRecord>(FACTORS, `${owner.tenant}:${owner.sub}`);
  async function registered(passkey: SoftwarePasskey, owner = alice, name = 'Laptop') {
    const { ceremony, options } = await passkeys.registrationOptions(owner, owner.sub, `${owner.sub} display`);
    return passkeys.register(owner, ceremony, JSON.parse(passkey.register(options, ORIGIN)), name, { actor: { type: 'user', id: owner.sub } });
  }
  async function signIn(passkey: SoftwarePasskey, owner?: typeof alice, origin = ORIGIN) {
    const { ceremony, options } = await passkeys.authenticationOptions(owner ?? { tenant: 'acme' });
    return passkeys.authenticate(ceremony, passkey.authenticate(options, origin), owner);
  }
  const refusals = async () => {
    await settled();
    return events.filter((event) => event.type === 'sign_in.second_factor_failed').map((event) => ({ who: event.target?.id, reason: event.details?.reason }));
  };

  it('derives the RP ID and origin from the base URL only', () => {
    expect(relyingParty('https://auth.example:8443/base/')).toEqual({ rpID: 'auth.example', origin: 'https://auth.example:8443' });
  });

  it('names a backup-eligible (synced) passkey swk, one bound to its device hwk', () => {
    expect(passkeyMethod({ backupEligible: true })).toBe('swk');
    expect(passkeyMethod({ backupEligible: false })).toBe('hwk');
  });

  it('keeps the challenge server-side for PASSKEY_CHALLENGE_SECONDS: the options carry it, the browser gets the ceremony id', async () => {
    const { ceremony, options } = await passkeys.registrationOptions(alice, 'alice');
    expect(options.rp.id).toBe('auth.example');
    expect(options.timeout).toBe(PASSKEY_CHALLENGE_SECONDS * 1000);
    expect(ceremony).toMatch(/^[A-Za-z0-9_-]{32}$/);
    expect(ceremony).not.toBe(options.challenge);
    expect(await store.engine('PasskeyChallenge').find(ceremony)).toMatchObject({ purpose: 'register', tenant: 'acme', sub: 'alice', challenge: options.challenge });
    expect(PASSKEY_CHALLENGE_SECONDS).toBe(300);
  });

  const shapes: Array<[string, unknown]> = [
    ['nothing', undefined],
    ['a string', 'credential'],
    ['an array', []],
    ['no response', { id: 'AAAA', rawId: 'AAAA', type: 'public-key' }],
    ['another type', { id: 'AAAA', rawId: 'AAAA', type: 'password', response: { clientDataJSON: 'AA', authenticatorData: 'AA', signature: 'AA' } }],
    ['id and rawId apart', { id: 'AAAA', rawId: 'BBBB', type: 'public-key', response: { clientDataJSON: 'AA', authenticatorData: 'AA', signature: 'AA' } }],
    ['not base64url', { id: 'AA+A', rawId: 'AA+A', type: 'public-key', response: { clientDataJSON: 'AA', authenticatorData: 'AA', signature: 'AA' } }],
    ['a field too long', { id: 'AAAA', rawId: 'AAAA', type: 'public-key', response: { clientDataJSON: 'A'.repeat(20_000), authenticatorData: 'AA', signature: 'AA' } }],
    ['a user handle not a string', { id: 'AAAA', rawId: 'AAAA', type: 'public-key', response: { clientDataJSON: 'AA', authenticatorData: 'AA', signature: 'AA', userHandle: 7 } }],
    ['null', null],
    ['a response that is null', { id: 'AAAA', rawId: 'AAAA', type: 'public-key', response: null }],
    ['an empty id', { id: '', rawId: '', type: 'public-key', response: { clientDataJSON: 'AA', authenticatorData: 'AA', signature: 'AA' } }],
    ['no authenticator data', { id: 'AAAA', rawId: 'AAAA', type: 'public-key', response: { clientDataJSON: 'AA', signature: 'AA' } }],
    ['no signature', { id: 'AAAA', rawId: 'AAAA', type: 'public-key', response: { clientDataJSON: 'AA', authenticatorData: 'AA' } }],
    ['a field one character too long', { id: 'AAAA', rawId: 'AAAA', type: 'public-key', response: { clientDataJSON: 'AA', authenticatorData: 'A'.repeat(16_385), signature: 'AA' } }],
  ];

  it.each(shapes)('refuses a sign-in answer that is %s as malformed, its ceremony left unused', async (_name, response) => {
    const { ceremony } = await passkeys.authenticationOptions(alice);
    expect(await passkeys.authenticate(ceremony, response, alice)).toEqual({ accepted: false, reason: 'malformed' });
    expect(await store.engine('PasskeyChallenge').find(ceremony)).toBeDefined();
    await settled();
    expect(events).toEqual([expect.objectContaining({ type: 'sign_in.second_factor_failed', details: expect.objectContaining({ factor: 'passkey', reason: 'malformed' }) })]);
  });

  it('refuses a registration answer of the wrong shape as malformed, and a ceremony unknown, used or not a string as expired', async () => {
    const { ceremony } = await passkeys.registrationOptions(alice, 'alice');
    expect(await passkeys.register(alice, ceremony, { id: 'AAAA', rawId: 'AAAA', type: 'public-key', response: { clientDataJSON: 'AA' } }, 'Laptop', byAlice)).toEqual({ accepted: false, reason: 'malformed' });
    expect(await passkeys.register(alice, ceremony, { id: 'AAAA', rawId: 'AAAA', type: 'public-key', response: { clientDataJSON: 'AA', attestationObject: 'AA', transports: 'usb' } }, 'Laptop', byAlice)).toEqual({ accepted: false, reason: 'malformed' });
    const answer = { id: 'AAAA', rawId: 'AAAA', type: 'public-key', response: { clientDataJSON: 'AA', attestationObject: 'AA' } };
    for (const wrongCeremony of [undefined, 42, '', 'x'.repeat(65), 'not/base64', 'unknownceremony']) {
      expect(await passkeys.register(alice, wrongCeremony, answer, 'Laptop', byAlice)).toEqual({ accepted: false, reason: 'expired' });
    }
    // Bob cannot complete Alice's registration.
    expect(await passkeys.register(bob, ceremony, answer, 'Laptop', byAlice)).toEqual({ accepted: false, reason: 'expired' });
    // ... and that used it: Alice's own answer after it finds it gone.
    expect(await passkeys.register(alice, ceremony, answer, 'Laptop', byAlice)).toEqual({ accepted: false, reason: 'expired' });
    // Two answers at once on one ceremony: it is used by one of them only (the store's atomic consume).
    const raced = await passkeys.registrationOptions(alice, 'alice');
    const both = await Promise.all([passkeys.register(alice, raced.ceremony, answer, 'Laptop', byAlice), passkeys.register(alice, raced.ceremony, answer, 'Laptop', byAlice)]);
    expect(both.map((outcome) => (outcome.accepted ? 'accepted' : outcome.reason)).sort()).toEqual(['expired', 'wrong']);
    // A garbage answer with a live ceremony: it does not verify.
    const live = await passkeys.registrationOptions(alice, 'alice');
    expect(await passkeys.register(alice, live.ceremony, answer, 'Laptop', byAlice)).toEqual({ accepted: false, reason: 'wrong' });
    expect(await store.records.get(FACTORS, 'acme:alice')).toBeUndefined();
    expect(events.filter((event) => event.type === 'factor.added')).toEqual([]);
  });

  it('throws a ValidationError for a bad name, user name or owner (a caller error, never a 500)', async () => {
    const { ceremony } = await passkeys.registrationOptions(alice, 'alice');
    const answer = { id: 'AAAA', rawId: 'AAAA', type: 'public-key', response: { clientDataJSON: 'AA', attestationObject: 'AA' } };
    for (const name of ['', '   ', 'x'.repeat(65), 7]) await expect(passkeys.register(alice, ceremony, answer, name, byAlice)).rejects.toBeInstanceOf(ValidationError);
    await expect(passkeys.registrationOptions(alice, '')).rejects.toBeInstanceOf(ValidationError);
    await expect(passkeys.registrationOptions({ tenant: '', sub: 'alice' }, 'alice')).rejects.toBeInstanceOf(ValidationError);
    await expect(passkeys.authenticationOptions({ tenant: 'x'.repeat(256) })).rejects.toBeInstanceOf(ValidationError);
  });

  it('removes a passkey (audited) and answers false for one she does not hold', async () => {
    const passkey = { id: 'cred-1', publicKey: 'AA', counter: 0, backupEligible: false, backedUp: false, name: 'Key', createdAt: new Date().toISOString() };
    await store.records.put(FACTORS, 'acme:alice', 'acme', { tenant: 'acme', sub: 'alice', passkeys: [passkey] });
    expect(await passkeys.remove(alice, 'cred-2', byAlice)).toBe(false);
    expect(events).toEqual([]);
    expect(await passkeys.remove(alice, 'cred-1', byAlice)).toBe(true);
    expect((await store.records.get<FactorRecord>(FACTORS, 'acme:alice'))!.passkeys).toEqual([]);
    expect(events).toEqual([expect.objectContaining({ type: 'factor.removed', target: { type: 'user', id: 'alice' }, details: { factor: 'passkey' } })]);
  });

  it('registers a passkey: its public key, counter, flags and name (trimmed), her user handle indexed; audited', async () => {
    const passkey = new SoftwarePasskey({ userVerified: true });
    expect(await registered(passkey, alice, '  Laptop  ')).toEqual({ accepted: true, passkey: { id: passkey.id, name: 'Laptop', backedUp: false, method: 'hwk' } });
    const stored = (await record())!;
    expect(stored.passkeys).toEqual([{ id: passkey.id, publicKey: expect.stringMatching(/^[A-Za-z0-9_-]{40,}$/), counter: 1, backupEligible: false, backedUp: false, transports: ['internal'], name: 'Laptop', createdAt: expect.any(String) }]);
    expect(stored.passkeyUserHandle).toBe(passkey.userHandle);
    expect(await store.records.get(PASSKEY_USERS, `acme:${passkey.userHandle}`)).toEqual({ sub: 'alice' });
    expect(events.filter((event) => event.type === 'factor.added')).toEqual([expect.objectContaining({ tenant: 'acme', actor: { type: 'user', id: 'alice' }, target: { type: 'user', id: 'alice' }, details: { factor: 'passkey' } })]);
    // A synced passkey: backup eligible and backed up, amr swk.
    const synced = new SoftwarePasskey({ userVerified: true, backedUp: true });
    expect(await registered(synced, alice, 'Phone')).toEqual({ accepted: true, passkey: { id: synced.id, name: 'Phone', backedUp: true, method: 'swk' } });
    // Her second passkey keeps her user handle; her passkeys are excluded from the next registration.
    expect((await record())!.passkeyUserHandle).toBe(passkey.userHandle);
    const next = await passkeys.registrationOptions(alice, 'alice');
    expect(next.options.user.id).toBe(passkey.userHandle);
    expect(next.options.excludeCredentials?.map((entry) => entry.id)).toEqual([passkey.id, synced.id]);
    expect(next.options.user.displayName).toBe('alice');
  });

  it('refuses a registration that is hers already, or past MAX_PASSKEYS; one made for another origin or challenge; one user\'s ceremony for another', async () => {
    const passkey = new SoftwarePasskey();
    await registered(passkey);
    expect(await registered(passkey)).toEqual({ accepted: false, reason: 'not_allowed' });
    const other = await passkeys.registrationOptions(alice, 'alice');
    const elsewhere = JSON.parse(new SoftwarePasskey().register(other.options, 'https://evil.example'));
    expect(await passkeys.register(alice, other.ceremony, elsewhere, 'Evil', byAlice)).toEqual({ accepted: false, reason: 'wrong' });
    const wrongChallenge = await passkeys.registrationOptions(alice, 'alice');
    const answer = JSON.parse(new SoftwarePasskey().register({ ...wrongChallenge.options, challenge: 'AAAA' }, ORIGIN));
    expect(await passkeys.register(alice, wrongChallenge.ceremony, answer, 'Key', byAlice)).toEqual({ accepted: false, reason: 'wrong' });
    const hers = await passkeys.registrationOptions(alice, 'alice');
    expect(await passkeys.register(bob, hers.ceremony, JSON.parse(new SoftwarePasskey().register(hers.options, ORIGIN)), 'Key', byAlice)).toEqual({ accepted: false, reason: 'expired' });
    // A ceremony made for a sign-in cannot carry a registration.
    const signInCeremony = await passkeys.authenticationOptions(alice);
    expect(await passkeys.register(alice, signInCeremony.ceremony, JSON.parse(new SoftwarePasskey().register({ challenge: signInCeremony.options.challenge, rp: { id: 'auth.example' } }, ORIGIN)), 'Key', byAlice)).toEqual({ accepted: false, reason: 'expired' });
    expect((await record())!.passkeys).toHaveLength(1);
    for (let held = 1; held < MAX_PASSKEYS; held += 1) await registered(new SoftwarePasskey(), alice, `Key ${held}`);
    expect((await record())!.passkeys).toHaveLength(MAX_PASSKEYS);
    expect(await registered(new SoftwarePasskey(), alice, 'One too many')).toEqual({ accepted: false, reason: 'not_allowed' });
    expect(events.filter((event) => event.type === 'factor.added')).toHaveLength(MAX_PASSKEYS);
  });

  it('the second factor after her password: her passkeys allowed, the counter kept; alone, her user handle finds her (user verification required)', async () => {
    const passkey = new SoftwarePasskey({ userVerified: true });
    await registered(passkey);
    const options = await passkeys.authenticationOptions(alice);
    expect(options.options.allowCredentials?.map((entry) => entry.id)).toEqual([passkey.id]);
    expect(options.options.userVerification).toBe('preferred');
    expect(options.options.rpId).toBe('auth.example');
    expect(await passkeys.authenticate(options.ceremony, passkey.authenticate(options.options, ORIGIN), alice)).toEqual({ accepted: true, owner: alice, passkeyId: passkey.id, method: 'hwk', userVerified: true });
    expect((await record())!.passkeys[0]!.counter).toBe(2);
    // Without the user handle (an authenticator may leave it out for a known user).
    const known = await passkeys.authenticationOptions(alice);
    expect(await passkeys.authenticate(known.ceremony, passkey.authenticate(known.options, ORIGIN, { withUserHandle: false }), alice)).toMatchObject({ accepted: true });
    const alone = await passkeys.authenticationOptions({ tenant: 'acme' });
    expect(alone.options.allowCredentials).toEqual([]);
    expect(alone.options.userVerification).toBe('required');
    expect(await passkeys.authenticate(alone.ceremony, passkey.authenticate(alone.options, ORIGIN))).toEqual({ accepted: true, owner: alice, passkeyId: passkey.id, method: 'hwk', userVerified: true });
    expect((await record())!.passkeys[0]!.counter).toBe(4);
    expect(await refusals()).toEqual([]);
  });

  it('a passkey without user verification: a second factor, never a sign-in alone (audited as hers: its user handle names her)', async () => {
    const passkey = new SoftwarePasskey({ userVerified: false });
    await registered(passkey);
    expect(await signIn(passkey, alice)).toMatchObject({ accepted: true, userVerified: false });
    expect(await signIn(passkey)).toEqual({ accepted: false, reason: 'wrong' });
    // Its user handle named her: the refusal is audited as hers.
    expect(await refusals()).toEqual([{ who: 'alice', reason: 'wrong' }]);
  });

  it('refuses an answer replayed, for another user, another origin, tampered, or with another user handle; audited as hers, nothing changed', async () => {
    const passkey = new SoftwarePasskey();
    await registered(passkey);
    await registered(new SoftwarePasskey(), bob);
    const first = await passkeys.authenticationOptions(alice);
    const answer = passkey.authenticate(first.options, ORIGIN);
    expect(await passkeys.authenticate(first.ceremony, answer, alice)).toMatchObject({ accepted: true });
    const counter = (await record())!.passkeys[0]!.counter;
    // Replayed with its own ceremony (used), then with a fresh one (not the challenge signed).
    expect(await passkeys.authenticate(first.ceremony, answer, alice)).toEqual({ accepted: false, reason: 'expired' });
    const fresh = await passkeys.authenticationOptions(alice);
    expect(await passkeys.authenticate(fresh.ceremony, answer, alice)).toEqual({ accepted: false, reason: 'wrong' });
    // Her passkey for Bob's sign-in; her ceremony presented as Bob's.
    expect(await signIn(passkey, bob)).toEqual({ accepted: false, reason: 'wrong' });
    const hers = await passkeys.authenticationOptions(alice);
    expect(await passkeys.authenticate(hers.ceremony, passkey.authenticate(hers.options, ORIGIN), bob)).toEqual({ accepted: false, reason: 'expired' });
    // Another origin (a look-alike site relaying the ceremony).
    expect(await signIn(passkey, alice, 'https://auth.example.evil')).toEqual({ accepted: false, reason: 'wrong' });
    // A signature changed by one byte.
    const next = await passkeys.authenticationOptions(alice);
    const signed = passkey.authenticate(next.options, ORIGIN) as { response: { signature: string } };
    const signature = Buffer.from(signed.response.signature, 'base64url');
    signature[signature.length - 1]! ^= 1;
    expect(await passkeys.authenticate(next.ceremony, { ...signed, response: { ...signed.response, signature: signature.toString('base64url') } }, alice)).toEqual({ accepted: false, reason: 'wrong' });
    // Her credential with Bob's user handle: the credential says whose it is.
    const bobs = (await record(bob))!.passkeyUserHandle!;
    const handed = await passkeys.authenticationOptions(alice);
    const withBobs = passkey.authenticate(handed.options, ORIGIN) as { response: Record<string, string> };
    expect(await passkeys.authenticate(handed.ceremony, { ...withBobs, response: { ...withBobs.response, userHandle: bobs } }, alice)).toEqual({ accepted: false, reason: 'wrong' });
    // Alone with Bob's user handle: Bob's passkeys do not hold hers.
    const alone = await passkeys.authenticationOptions({ tenant: 'acme' });
    const aloneAnswer = passkey.authenticate(alone.options, ORIGIN) as { response: Record<string, string> };
    expect(await passkeys.authenticate(alone.ceremony, { ...aloneAnswer, response: { ...aloneAnswer.response, userHandle: bobs } })).toEqual({ accepted: false, reason: 'wrong' });
    expect((await record())!.passkeys[0]!.counter).toBe(counter);
    const seen = await refusals();
    expect(seen).toEqual(expect.arrayContaining([{ who: 'alice', reason: 'wrong' }, { who: 'bob', reason: 'wrong' }]));
    expect(seen.every((entry) => entry.who === 'alice' || entry.who === 'bob')).toBe(true);
    expect(JSON.stringify(events)).not.toContain(signed.response.signature);
  });

  it('refuses a cloned authenticator (its counter not above the stored one), alone too; audited as cloned_authenticator, the counter kept', async () => {
    const passkey = new SoftwarePasskey();
    await registered(passkey);
    expect(await signIn(passkey, alice)).toMatchObject({ accepted: true });
    expect(await signIn(passkey, alice)).toMatchObject({ accepted: true });
    const counter = (await record())!.passkeys[0]!.counter;
    expect(counter).toBe(3);
    passkey.counter = counter - 1; // its next answer says `counter`: not above what is stored
    expect(await signIn(passkey, alice)).toEqual({ accepted: false, reason: 'cloned_authenticator' });
    passkey.counter = 0;
    expect(await signIn(passkey)).toEqual({ accepted: false, reason: 'cloned_authenticator' });
    expect((await record())!.passkeys[0]!.counter).toBe(counter);
    expect(await refusals()).toEqual([{ who: 'alice', reason: 'cloned_authenticator' }, { who: 'alice', reason: 'cloned_authenticator' }]);
    // The next answer above it is hers again.
    passkey.counter = counter;
    expect(await signIn(passkey, alice)).toMatchObject({ accepted: true });
  });

  it('a passkey removed, or all of her factors reset, signs in no more', async () => {
    const passkey = new SoftwarePasskey();
    await registered(passkey);
    expect(await passkeys.remove(alice, passkey.id, byAlice)).toBe(true);
    expect(await signIn(passkey, alice)).toEqual({ accepted: false, reason: 'wrong' });
    expect(await signIn(passkey)).toEqual({ accepted: false, reason: 'wrong' });
  });

  describe('the rows each rule needs of its own', () => {
    const createAnswer = (transports: unknown) => ({ id: 'AAAA', rawId: 'AAAA', type: 'public-key', response: { clientDataJSON: 'AA', attestationObject: 'AA', transports } });

    it.each<[string, unknown, 'malformed' | 'wrong']>([
      ['eight transports of 32 characters (the most)', Array.from({ length: 8 }, (_, index) => `${index}`.padEnd(32, 'x')), 'wrong'],
      ['nine transports', Array.from({ length: 9 }, () => 'usb'), 'malformed'],
      ['a transport of 33 characters', ['usb', 'x'.repeat(33)], 'malformed'],
      ['a transport that is not a string', ['usb', 7], 'malformed'],
      ['a registration answer that is null', null, 'malformed'],
    ])('a registration answer with %s: %s', async (name, transports, reason) => {
      const { ceremony } = await passkeys.registrationOptions(alice, 'alice');
      const answer = name === 'a registration answer that is null' ? null : createAnswer(transports);
      expect(await passkeys.register(alice, ceremony, answer, 'Laptop', byAlice)).toEqual({ accepted: false, reason });
    });

    it('a field of exactly the longest length is read (it then does not verify)', async () => {
      const { ceremony } = await passkeys.authenticationOptions(alice);
      const answer = { id: 'AAAA', rawId: 'AAAA', type: 'public-key', response: { clientDataJSON: 'AA', authenticatorData: 'A'.repeat(16_384), signature: 'AA' } };
      expect(await passkeys.authenticate(ceremony, answer, alice)).toEqual({ accepted: false, reason: 'wrong' });
    });

    it('bounds the names: 1 to 255 characters for the browser, 1 to 64 for hers, each said', async () => {
      await expect(passkeys.registrationOptions(alice, 'x'.repeat(255), 'y'.repeat(255))).resolves.toBeDefined();
      await expect(passkeys.registrationOptions(alice, 'x'.repeat(256))).rejects.toThrow(new ValidationError('userName', 'must be a string of 1 to 255 characters'));
      await expect(passkeys.registrationOptions(alice, 'alice', '')).rejects.toThrow(new ValidationError('displayName', 'must be a string of 1 to 255 characters'));
      await expect(passkeys.registrationOptions(alice, 7 as unknown as string, 'Alice')).rejects.toThrow(new ValidationError('userName', 'must be a string of 1 to 255 characters'));
      const { ceremony } = await passkeys.registrationOptions(alice, 'alice');
      const answer = { id: 'AAAA', rawId: 'AAAA', type: 'public-key', response: { clientDataJSON: 'AA', attestationObject: 'AA' } };
      await expect(passkeys.register(alice, ceremony, answer, 'x'.repeat(65), byAlice)).rejects.toThrow(new ValidationError('name', 'must be a string of 1 to 64 characters'));
      // 64 characters is a name: the answer is read (and does not verify).
      expect(await passkeys.register(alice, ceremony, answer, 'x'.repeat(64), byAlice)).toEqual({ accepted: false, reason: 'wrong' });
    });

    it('asks for a discoverable passkey, user verification preferred, within the ceremony\'s time; a sign-in too', async () => {
      const { options } = await passkeys.registrationOptions(alice, 'alice');
      expect(options.authenticatorSelection).toMatchObject({ residentKey: 'preferred', userVerification: 'preferred' });
      const signIn = await passkeys.authenticationOptions(alice);
      expect(signIn.options.timeout).toBe(PASSKEY_CHALLENGE_SECONDS * 1000);
    });

    it('keeps its index of user handles under a stored name (renaming it would orphan every passkey alone)', () => {
      expect(PASSKEY_USERS).toBe('passkey_user');
    });

    it('two first registrations at once: the first kept wins, the other must start again', async () => {
      const first = await passkeys.registrationOptions(alice, 'alice');
      const second = await passkeys.registrationOptions(alice, 'alice');
      expect(first.options.user.id).not.toBe(second.options.user.id);
      const one = new SoftwarePasskey();
      const two = new SoftwarePasskey();
      expect(await passkeys.register(alice, first.ceremony, JSON.parse(one.register(first.options, ORIGIN)), 'One', byAlice)).toMatchObject({ accepted: true });
      expect(await passkeys.register(alice, second.ceremony, JSON.parse(two.register(second.options, ORIGIN)), 'Two', byAlice)).toEqual({ accepted: false, reason: 'expired' });
      expect((await record())!.passkeys.map((held) => held.id)).toEqual([one.id]);
    });

    it('her second passkey signs in as itself: its own key checks the signature, its own counter moves', async () => {
      const one = new SoftwarePasskey();
      const two = new SoftwarePasskey();
      await registered(one, alice, 'One');
      await registered(two, alice, 'Two');
      expect(await signIn(two, alice)).toMatchObject({ accepted: true, passkeyId: two.id });
      expect((await record())!.passkeys.map((held) => [held.id, held.counter])).toEqual([[one.id, 1], [two.id, 2]]);
    });

    it('removes the one passkey named, the others stay', async () => {
      const one = new SoftwarePasskey();
      const two = new SoftwarePasskey();
      await registered(one, alice, 'One');
      await registered(two, alice, 'Two');
      expect(await passkeys.remove(alice, one.id, byAlice)).toBe(true);
      expect((await record())!.passkeys.map((held) => held.id)).toEqual([two.id]);
      expect(await signIn(two, alice)).toMatchObject({ accepted: true });
    });

    it('an authenticator without a counter (always 0) signs in again and again; one that goes back to 0 is a clone', async () => {
      const passkey = new SoftwarePasskey();
      passkey.counter = -1;
      await registered(passkey);
      expect((await record())!.passkeys[0]!.counter).toBe(0);
      for (let time = 0; time < 2; time += 1) {
        passkey.counter = -1;
        expect(await signIn(passkey, alice)).toMatchObject({ accepted: true });
      }
      const counting = new SoftwarePasskey();
      await registered(counting, bob);
      counting.counter = -1;
      expect(await signIn(counting, bob)).toEqual({ accepted: false, reason: 'cloned_authenticator' });
    });

    it("a registration's ceremony cannot carry a sign-in", async () => {
      const passkey = new SoftwarePasskey();
      await registered(passkey);
      const registration = await passkeys.registrationOptions(alice, 'alice');
      const answer = passkey.authenticate({ challenge: registration.options.challenge, rpId: 'auth.example' }, ORIGIN);
      expect(await passkeys.authenticate(registration.ceremony, answer, alice)).toEqual({ accepted: false, reason: 'expired' });
    });

    it("another tenant's user of the same name cannot complete her ceremony", async () => {
      const namesake = { tenant: 'globex', sub: 'alice' };
      const hers = await passkeys.registrationOptions(alice, 'alice');
      expect(await passkeys.register(namesake, hers.ceremony, JSON.parse(new SoftwarePasskey().register(hers.options, ORIGIN)), 'Key', byAlice)).toEqual({ accepted: false, reason: 'expired' });
      const passkey = new SoftwarePasskey();
      await registered(passkey);
      const signIn = await passkeys.authenticationOptions(alice);
      expect(await passkeys.authenticate(signIn.ceremony, passkey.authenticate(signIn.options, ORIGIN), namesake)).toEqual({ accepted: false, reason: 'expired' });
    });

    it('a ceremony begun without a user: her own passkey completes it for her; another user\'s passkey never', async () => {
      const passkey = new SoftwarePasskey();
      await registered(passkey);
      const bobs = new SoftwarePasskey();
      await registered(bobs, bob);
      const open = await passkeys.authenticationOptions({ tenant: 'acme' });
      expect(await passkeys.authenticate(open.ceremony, passkey.authenticate(open.options, ORIGIN), alice)).toMatchObject({ accepted: true, owner: alice });
      const again = await passkeys.authenticationOptions({ tenant: 'acme' });
      expect(await passkeys.authenticate(again.ceremony, bobs.authenticate(again.options, ORIGIN), alice)).toEqual({ accepted: false, reason: 'wrong' });
    });

    it('a store that fails while her ceremony is used: the failure passes through (a 503, never "expired"); the ceremony is hers still once the store answers', async () => {
      const passkey = new SoftwarePasskey();
      await registered(passkey);
      let failing = true;
      // The same store, whose challenges' consume fails while `failing` (Redis gone at that moment).
      const flakyStore = new Proxy(store, {
        get(target, property) {
          if (property !== 'engine') return Reflect.get(target, property, target) as unknown;
          return (model: string) => {
            const adapter = target.engine(model);
            return new Proxy(adapter, {
              get(inner, name) {
                if (name === 'consume' && failing) return () => Promise.reject(new StoreUnavailable('connection'));
                const value = Reflect.get(inner, name, inner) as unknown;
                return typeof value === 'function' ? value.bind(inner) : value;
              },
            });
          };
        },
      });
      const logger = createLogger({ destination: new Writable({ write(_chunk, _e, done) { done(); } }) });
      const flaky = new Passkeys(flakyStore, { baseUrl: `${ORIGIN}/tenant-x`, rpName: 'Acme HR' }, new AuditTrail(store, DEFAULT_AUDIT_SETTINGS, logger, () => {}));
      const { ceremony, options } = await flaky.authenticationOptions(alice);
      const answer = passkey.authenticate(options, ORIGIN);
      await expect(flaky.authenticate(ceremony, answer, alice)).rejects.toBeInstanceOf(StoreUnavailable);
      failing = false;
      expect(await flaky.authenticate(ceremony, answer, alice)).toMatchObject({ accepted: true, owner: alice });
      expect(await refusals()).toEqual([]);
    });
  });
});
