import { Writable } from 'node:stream';
import type { Store } from '../../adapters/types.js';
import { AuditTrail, DEFAULT_AUDIT_SETTINGS, type AuditEvent } from '../../src/audit/trail.js';
import { Factors, FACTORS, type FactorRecord } from '../../src/factors/index.js';
import { totpCode, totpStep, TOTP_PERIOD_SECONDS } from '../../src/factors/totp.js';
import { createLogger } from '../../src/logger.js';
import { useAdapterStore } from '../support/adapter-stores.js';
import { STORE_KINDS } from '../support/stores.js';
import { redisContents } from '../support/redis.js';

const KEY = 'factor-key-one-0123456789abcdefghijklmnop';
const NEW_KEY = 'factor-key-two-0123456789abcdefghijklmnop';
const alice = { tenant: 'acme', sub: 'alice' };
/** The middle of a time step: a step either side is then a whole step away. */
const START = Math.floor(Date.UTC(2026, 0, 5, 9) / 30_000) * 30_000 + 15_000;
const STEP_MS = TOTP_PERIOD_SECONDS * 1000;

interface Harness {
  store: Store;
  factors: Factors;
  events: AuditEvent[];
  lines: string[];
  clock: { now: number };
  /** Another Factors on the same records (a second instance). */
  on(store: Store, keys?: string[]): Factors;
}

/** Everything a code, secret or recovery code could hide in: Redis keys and values, or the memory store's records. */
async function everythingStored(handle: ReturnType<typeof useAdapterStore>, store: Store): Promise<string> {
  if (handle.kind === 'memory') {
    const records = await store.records.list<FactorRecord>(FACTORS, 'acme');
    return JSON.stringify(records);
  }
  const parts: string[] = [];
  for (const client of handle.nodeClients()) {
    const contents = await redisContents(client, `${handle.prefix}*`);
    if (contents) parts.push(contents);
  }
  return parts.join('\n');
}

const settled = () => new Promise((resolve) => setTimeout(resolve, 50));

describe.each(STORE_KINDS)('a user\'s factors (src/factors), %s store', (kind) => {
  const handle = useAdapterStore(kind);
  let h: Harness;
  const extra: Store[] = [];

  beforeEach(async () => {
    const store = await handle.create();
    const events: AuditEvent[] = [];
    const lines: string[] = [];
    const logger = createLogger({ destination: new Writable({ write(chunk: Buffer, _e, done) { lines.push(chunk.toString('utf8')); done(); } }) });
    const clock = { now: START };
    const on = (other: Store, keys = [KEY]) => new Factors(
      other.records,
      { keys, issuerName: 'auth.example', now: () => clock.now },
      new AuditTrail(other, DEFAULT_AUDIT_SETTINGS, logger, (event) => void events.push(event), () => clock.now),
    );
    h = { store, events, lines, clock, on, factors: on(store) };
  });
  afterEach(async () => {
    // Refusals and uses are audited without waiting: let them land before the stores close.
    await settled();
    await Promise.all([h.store, ...extra.splice(0)].map((store) => store.close()));
  });

  /** Enrols alice's app and answers its secret (the step of START used by the confirmation). */
  async function enrolled(factors = h.factors): Promise<string> {
    const { secret } = await factors.startAuthenticatorApp(alice, 'alice@acme.example');
    expect(await factors.confirmAuthenticatorApp(alice, totpCode(secret, totpStep(h.clock.now)), { actor: { type: 'user', id: 'alice' } })).toEqual({ accepted: true });
    return secret;
  }

  describe('enrolling an authenticator app', () => {
    it('answers a secret, its otpauth URI and a QR code drawn as SVG; nothing is enrolled until a first code', async () => {
      const enrolment = await h.factors.startAuthenticatorApp(alice, 'alice@acme.example');
      expect(enrolment.secret).toMatch(/^[A-Z2-7]{32}$/);
      const uri = new URL(enrolment.uri);
      expect(`${uri.protocol}//${uri.host}${decodeURIComponent(uri.pathname)}`).toBe('otpauth://totp/auth.example:alice@acme.example');
      expect(Object.fromEntries(uri.searchParams)).toEqual({ secret: enrolment.secret, issuer: 'auth.example', algorithm: 'SHA1', digits: '6', period: '30' });
      expect(enrolment.qrSvg).toMatch(/^<svg [^>]*xmlns="http:\/\/www.w3.org\/2000\/svg"[^>]*>.*<path [^>]*d="M/s);
      expect(enrolment.expiresAt).toBe(new Date(START + 600_000).toISOString());
      expect((await h.factors.summary(alice)).authenticatorApp).toBeUndefined();
      expect(await h.factors.verifyAuthenticatorApp(alice, totpCode(enrolment.secret, totpStep(START)))).toEqual({ accepted: false, reason: 'not_enrolled' });
    });

    it.each([
      ['a wrong code', () => '000000', 'wrong'],
      ['a code two steps ahead', (secret: string) => totpCode(secret, totpStep(START) + 2), 'wrong'],
      ['five digits', () => '12345', 'malformed'],
      ['letters', () => 'abcdef', 'malformed'],
      ['a number, not a string', () => 123456, 'malformed'],
    ] as const)('refuses %s and enrols nothing', async (_name, code, reason) => {
      const { secret } = await h.factors.startAuthenticatorApp(alice, 'alice');
      expect(await h.factors.confirmAuthenticatorApp(alice, code(secret), { actor: { type: 'user', id: 'alice' } })).toEqual({ accepted: false, reason });
      expect((await h.factors.summary(alice)).authenticatorApp).toBeUndefined();
      // The enrolment is still pending: the right code confirms it.
      expect(await h.factors.confirmAuthenticatorApp(alice, totpCode(secret, totpStep(START)), { actor: { type: 'user', id: 'alice' } })).toEqual({ accepted: true });
    });

    it('is confirmed by a first valid code, audited as factor.added by whoever confirmed, and that code is used', async () => {
      expect(await h.factors.confirmAuthenticatorApp(alice, '123456', { actor: { type: 'user', id: 'alice' } })).toEqual({ accepted: false, reason: 'not_enrolled' });
      const secret = await enrolled();
      expect(await h.factors.summary(alice)).toEqual({ authenticatorApp: { addedAt: new Date(START).toISOString() }, recoveryCodes: undefined, passkeys: [], resetRequested: false, hostFactor: false });
      expect(h.events.map(({ type, tenant, actor, target, details }) => ({ type, tenant, actor, target, details }))).toEqual([
        { type: 'factor.added', tenant: 'acme', actor: { type: 'user', id: 'alice' }, target: { type: 'user', id: 'alice' }, details: { factor: 'authenticator_app', replaced: false } },
      ]);
      expect(await h.factors.verifyAuthenticatorApp(alice, totpCode(secret, totpStep(START)))).toEqual({ accepted: false, reason: 'replayed' });
      // Confirmed once: the enrolment is gone.
      expect(await h.factors.confirmAuthenticatorApp(alice, totpCode(secret, totpStep(START) + 1), { actor: { type: 'user', id: 'alice' } })).toEqual({ accepted: false, reason: 'not_enrolled' });
    });

    it('ends unconfirmed after 10 minutes', async () => {
      const { secret } = await h.factors.startAuthenticatorApp(alice, 'alice');
      h.clock.now = START + 600_001;
      const code = totpCode(secret, totpStep(h.clock.now));
      expect(await h.factors.confirmAuthenticatorApp(alice, code, { actor: { type: 'user', id: 'alice' } })).toEqual({ accepted: false, reason: 'expired' });
      expect(await h.factors.confirmAuthenticatorApp(alice, code, { actor: { type: 'user', id: 'alice' } })).toEqual({ accepted: false, reason: 'not_enrolled' });
    });

    it('a new enrolment replaces the app she had, audited with replaced: true', async () => {
      const first = await enrolled();
      h.clock.now += STEP_MS;
      const second = await enrolled();
      expect(h.events.at(-1)?.details).toEqual({ factor: 'authenticator_app', replaced: true });
      h.clock.now += STEP_MS;
      expect(await h.factors.verifyAuthenticatorApp(alice, totpCode(first, totpStep(h.clock.now)))).toEqual({ accepted: false, reason: 'wrong' });
      expect(await h.factors.verifyAuthenticatorApp(alice, totpCode(second, totpStep(h.clock.now)))).toEqual({ accepted: true });
    });
  });

  describe('a code of the authenticator app (RFC 6238)', () => {
    // Each row: the step of the code relative to now's, after which steps were accepted, the answer.
    it.each([
      ['the current step', 0, [], { accepted: true }],
      ['the step before (a clock a little behind)', -1, [], { accepted: true }],
      ['the step after (a clock a little ahead)', 1, [], { accepted: true }],
      ['two steps before', -2, [], { accepted: false, reason: 'wrong' }],
      ['two steps after', 2, [], { accepted: false, reason: 'wrong' }],
      ['the current step, used already', 0, [0], { accepted: false, reason: 'replayed' }],
      ['the step before one already accepted', -1, [0], { accepted: false, reason: 'replayed' }],
      ['the current step after the next one was accepted', 0, [1], { accepted: false, reason: 'replayed' }],
      ['the next step after the current one was accepted', 1, [0], { accepted: true }],
    ] as const)('%s', async (_name, offset, accepted, answer) => {
      const secret = await enrolled();
      h.clock.now += 10 * STEP_MS;
      const now = totpStep(h.clock.now);
      for (const step of accepted) expect(await h.factors.verifyAuthenticatorApp(alice, totpCode(secret, now + step))).toEqual({ accepted: true });
      expect(await h.factors.verifyAuthenticatorApp(alice, totpCode(secret, now + offset))).toEqual(answer);
    });

    it.each([
      ['with spaces between its digits', (code: string) => `${code.slice(0, 3)} ${code.slice(3)}`, { accepted: true }],
      ['with a digit too many', (code: string) => `${code}1`, { accepted: false, reason: 'malformed' }],
      ['empty', () => '', { accepted: false, reason: 'malformed' }],
      ['overlong', (code: string) => code.repeat(100), { accepted: false, reason: 'malformed' }],
      ['not a string', () => ({ code: 1 }), { accepted: false, reason: 'malformed' }],
    ] as const)('typed %s', async (_name, typed, answer) => {
      const secret = await enrolled();
      h.clock.now += 10 * STEP_MS;
      expect(await h.factors.verifyAuthenticatorApp(alice, typed(totpCode(secret, totpStep(h.clock.now))))).toEqual(answer);
    });

    it('a refusal is audited as sign_in.second_factor_failed with the reason, never the code', async () => {
      const secret = await enrolled();
      h.clock.now += 10 * STEP_MS;
      await h.factors.verifyAuthenticatorApp(alice, '000000');
      await settled();
      const failed = h.events.filter(({ type }) => type === 'sign_in.second_factor_failed');
      expect(failed).toEqual([expect.objectContaining({ tenant: 'acme', actor: { type: 'user', id: 'alice' }, details: { factor: 'authenticator_app', reason: 'wrong', count: 1, window_seconds: 300 } })]);
      expect(JSON.stringify(failed)).not.toContain('000000');
      expect(JSON.stringify(failed)).not.toContain(secret);
    });

    it('another tenant\'s user of the same sub, or another user, has no app', async () => {
      const secret = await enrolled();
      h.clock.now += 10 * STEP_MS;
      const code = totpCode(secret, totpStep(h.clock.now));
      for (const other of [{ tenant: 'globex', sub: 'alice' }, { tenant: 'acme', sub: 'bob' }]) {
        expect(await h.factors.verifyAuthenticatorApp(other, code)).toEqual({ accepted: false, reason: 'not_enrolled' });
        expect(await h.factors.summary(other)).toEqual({ authenticatorApp: undefined, recoveryCodes: undefined, passkeys: [], resetRequested: false, hostFactor: false });
        expect(await h.factors.reset(other)).toBe(false);
      }
      expect(await h.factors.verifyAuthenticatorApp(alice, code)).toEqual({ accepted: true });
    });

    it('a sealed secret copied into another user\'s record does not open there', async () => {
      await enrolled();
      const record = await h.store.records.get<FactorRecord>(FACTORS, 'acme:alice');
      const secret = record!.authenticatorApp!.secret;
      await h.store.records.put<FactorRecord>(FACTORS, 'acme:mallory', 'acme', { ...record!, sub: 'mallory' });
      expect(secret).not.toMatch(/^[A-Z2-7]{32}$/);
      expect(await h.factors.verifyAuthenticatorApp({ tenant: 'acme', sub: 'mallory' }, '123456')).toEqual({ accepted: false, reason: 'not_enrolled' });
    });

    it('keys rotate: the first seals, every key opens; a key dropped opens nothing', async () => {
      const secret = await enrolled(h.on(h.store, [KEY]));
      h.clock.now += 10 * STEP_MS;
      expect(await h.on(h.store, [NEW_KEY, KEY]).verifyAuthenticatorApp(alice, totpCode(secret, totpStep(h.clock.now)))).toEqual({ accepted: true });
      h.clock.now += STEP_MS;
      expect(await h.on(h.store, [NEW_KEY]).verifyAuthenticatorApp(alice, totpCode(secret, totpStep(h.clock.now)))).toEqual({ accepted: false, reason: 'not_enrolled' });
    });

    it('removing the app is audited as factor.removed; removing again finds none', async () => {
      const secret = await enrolled();
      expect(await h.factors.removeAuthenticatorApp(alice, { actor: { type: 'user', id: 'alice' } })).toBe(true);
      expect(h.events.at(-1)).toEqual(expect.objectContaining({ type: 'factor.removed', tenant: 'acme', actor: { type: 'user', id: 'alice' }, details: { factor: 'authenticator_app' } }));
      expect(await h.factors.removeAuthenticatorApp(alice, { actor: { type: 'user', id: 'alice' } })).toBe(false);
      h.clock.now += 10 * STEP_MS;
      expect(await h.factors.verifyAuthenticatorApp(alice, totpCode(secret, totpStep(h.clock.now)))).toEqual({ accepted: false, reason: 'not_enrolled' });
    });

    it('the same code at once, many times over: exactly one is accepted', async () => {
      const secret = await enrolled();
      const others = kind === 'memory' ? [h.factors] : await Promise.all([0, 1].map(async () => {
        const other = await handle.another();
        extra.push(other);
        return h.on(other);
      }));
      for (let round = 1; round <= 10; round += 1) {
        h.clock.now = START + round * 3 * STEP_MS;
        const code = totpCode(secret, totpStep(h.clock.now));
        const answers = await Promise.all([h.factors, ...others, h.factors, ...others].map((factors) => factors.verifyAuthenticatorApp(alice, code)));
        expect(answers.filter(({ accepted }) => accepted)).toHaveLength(1);
        expect(answers.filter((answer) => !answer.accepted && answer.reason === 'replayed')).toHaveLength(answers.length - 1);
      }
    });
  });

  describe('recovery codes', () => {
    it('ten distinct codes of 80 bits, shown once; listed as how many are left; factor.added', async () => {
      const codes = await h.factors.newRecoveryCodes(alice, { actor: { type: 'user', id: 'alice' } });
      expect(codes).toHaveLength(10);
      expect(new Set(codes).size).toBe(10);
      for (const code of codes) expect(code).toMatch(/^[0-9A-HJKMNP-TV-Z]{4}(-[0-9A-HJKMNP-TV-Z]{4}){3}$/);
      expect((await h.factors.summary(alice)).recoveryCodes).toEqual({ remaining: 10, createdAt: new Date(START).toISOString() });
      expect(h.events.at(-1)).toEqual(expect.objectContaining({ type: 'factor.added', actor: { type: 'user', id: 'alice' }, details: { factor: 'recovery_codes', replaced: false } }));
    });

    it('each is accepted once, typed in any case and grouping; a used one, a wrong one and garbage are refused', async () => {
      const codes = await h.factors.newRecoveryCodes(alice, { actor: { type: 'user', id: 'alice' } });
      expect(await h.factors.useRecoveryCode(alice, codes[3]!.toLowerCase().replace(/-/g, ' '))).toEqual({ accepted: true });
      expect(await h.factors.useRecoveryCode(alice, codes[3])).toEqual({ accepted: false, reason: 'wrong' });
      expect(await h.factors.useRecoveryCode(alice, codes[3]!.replace(/^./, (c) => (c === '0' ? '1' : '0')))).toEqual({ accepted: false, reason: 'wrong' });
      expect(await h.factors.useRecoveryCode(alice, 'not a code')).toEqual({ accepted: false, reason: 'wrong' });
      expect(await h.factors.useRecoveryCode(alice, 42)).toEqual({ accepted: false, reason: 'wrong' });
      for (const code of codes.filter((_, index) => index !== 3)) expect(await h.factors.useRecoveryCode(alice, code)).toEqual({ accepted: true });
      expect((await h.factors.summary(alice)).recoveryCodes?.remaining).toBe(0);
      await settled();
      const used = h.events.filter(({ type }) => type === 'recovery_code.used');
      expect(used.map(({ details }) => details?.remaining)).toEqual([9, 8, 7, 6, 5, 4, 3, 2, 1, 0]);
      expect(used[0]).toEqual(expect.objectContaining({ tenant: 'acme', actor: { type: 'user', id: 'alice' } }));
      expect(h.events.some(({ type, details }) => type === 'sign_in.second_factor_failed' && details?.factor === 'recovery_codes')).toBe(true);
    });

    it('a new set replaces the old one: its codes no longer work', async () => {
      const old = await h.factors.newRecoveryCodes(alice, { actor: { type: 'user', id: 'alice' } });
      const codes = await h.factors.newRecoveryCodes(alice, { actor: { type: 'user', id: 'alice' } });
      expect(h.events.at(-1)?.details).toEqual({ factor: 'recovery_codes', replaced: true });
      expect(await h.factors.useRecoveryCode(alice, old[0])).toEqual({ accepted: false, reason: 'wrong' });
      expect(await h.factors.useRecoveryCode(alice, codes[0])).toEqual({ accepted: true });
    });

    it('made under an older factor key, they still match after a rotation', async () => {
      const codes = await h.on(h.store, [KEY]).newRecoveryCodes(alice, { actor: { type: 'user', id: 'alice' } });
      expect(await h.on(h.store, [NEW_KEY, KEY]).useRecoveryCode(alice, codes[0])).toEqual({ accepted: true });
      expect(await h.on(h.store, [NEW_KEY]).useRecoveryCode(alice, codes[1])).toEqual({ accepted: false, reason: 'wrong' });
    });

    it('the same code at once on several instances: accepted once', async () => {
      const codes = await h.factors.newRecoveryCodes(alice, { actor: { type: 'user', id: 'alice' } });
      const others = kind === 'memory' ? [h.factors] : await Promise.all([0, 1].map(async () => {
        const other = await handle.another();
        extra.push(other);
        return h.on(other);
      }));
      const answers = await Promise.all([h.factors, ...others, h.factors].map((factors) => factors.useRecoveryCode(alice, codes[0])));
      expect(answers.filter(({ accepted }) => accepted)).toHaveLength(1);
      expect((await h.factors.summary(alice)).recoveryCodes?.remaining).toBe(9);
    });
  });

  describe('reset', () => {
    it('removes every factor, audited as factor.reset with the actor; her codes and app no longer work', async () => {
      const secret = await enrolled();
      const codes = await h.factors.newRecoveryCodes(alice, { actor: { type: 'user', id: 'alice' } });
      expect(await h.factors.reset(alice)).toBe(true);
      expect(h.events.at(-1)).toEqual(expect.objectContaining({ type: 'factor.reset', tenant: 'acme', actor: { type: 'operator' }, target: { type: 'user', id: 'alice' }, details: { removed: ['authenticator_app', 'recovery_codes'] } }));
      expect(await h.factors.summary(alice)).toEqual({ authenticatorApp: undefined, recoveryCodes: undefined, passkeys: [], resetRequested: false, hostFactor: false });
      h.clock.now += 10 * STEP_MS;
      expect(await h.factors.verifyAuthenticatorApp(alice, totpCode(secret, totpStep(h.clock.now)))).toEqual({ accepted: false, reason: 'not_enrolled' });
      expect(await h.factors.useRecoveryCode(alice, codes[0])).toEqual({ accepted: false, reason: 'not_enrolled' });
      expect(await h.factors.reset(alice, { actor: { type: 'user', id: 'admin' } })).toBe(false);
    });

    it('bad input is a ValidationError naming the field, nothing stored', async () => {
      await expect(h.factors.reset({ tenant: '', sub: 'alice' })).rejects.toThrow('tenant: must be a string of 1 to 255 characters');
      await expect(h.factors.summary({ tenant: 'acme', sub: 'x'.repeat(256) })).rejects.toThrow('sub: must be a string');
      await expect(h.factors.summary(null as unknown as typeof alice)).rejects.toThrow('tenant: must be a string');
      await expect(h.factors.startAuthenticatorApp(alice, '')).rejects.toThrow('account: must be a string');
      expect(await h.store.records.list(FACTORS, 'acme')).toEqual([]);
    });
  });

  describe('the public list, the host\'s enrolment, removal by id, a requested reset, one code field', () => {
    const admin = { actor: { type: 'user' as const, id: 'admin' } };

    it('list names each factor { id, type, createdAt, label? }, never a secret; ids are random and a new set gets a new id', async () => {
      expect(await h.factors.list(alice)).toEqual([]);
      await enrolled();
      await h.factors.newRecoveryCodes(alice, admin);
      const listed = await h.factors.list(alice);
      expect(listed).toEqual([
        { id: expect.stringMatching(/^[A-Za-z0-9_-]{16}$/), type: 'totp', createdAt: new Date(START).toISOString() },
        { id: expect.stringMatching(/^[A-Za-z0-9_-]{16}$/), type: 'recovery_codes', createdAt: new Date(START).toISOString() },
      ]);
      expect(listed[0]!.id).not.toBe(listed[1]!.id);
      await h.factors.newRecoveryCodes(alice, admin);
      expect((await h.factors.list(alice))[1]!.id).not.toBe(listed[1]!.id);
    });

    it('enrollTotp: active at once (no first code), answers the secret and its URI once, factor.added by the caller; replaces an app', async () => {
      await enrolled();
      const enrolment = await h.factors.enrollTotp(alice, 'alice@acme.example', admin);
      expect(enrolment.secret).toMatch(/^[A-Z2-7]{32}$/);
      expect(enrolment.otpauthUri).toBe(`otpauth://totp/auth.example:alice%40acme.example?issuer=auth.example&secret=${enrolment.secret}&algorithm=SHA1&digits=6&period=30`);
      expect(await h.factors.list(alice)).toEqual([{ id: enrolment.factorId, type: 'totp', createdAt: new Date(START).toISOString() }]);
      expect(h.events.at(-1)).toEqual(expect.objectContaining({ type: 'factor.added', actor: admin.actor, details: { factor: 'authenticator_app', replaced: true } }));
      // The code of this very step works (nothing used it), once.
      const code = totpCode(enrolment.secret, totpStep(h.clock.now));
      expect(await h.factors.checkCode(alice, code)).toEqual({ accepted: true, factor: 'authenticator_app' });
      expect(await h.factors.checkCode(alice, code)).toEqual({ accepted: false, reason: 'replayed', factor: 'authenticator_app' });
      await expect(h.factors.enrollTotp(alice, '', admin)).rejects.toThrow('account: must be a string');
    });

    it('checkCode: six digits are the app\'s code, the shape of a recovery code one (any case and grouping), each once; anything else malformed, unread', async () => {
      const secret = await enrolled();
      const codes = await h.factors.newRecoveryCodes(alice, admin);
      h.clock.now += STEP_MS;
      expect(await h.factors.checkCode(alice, ` ${totpCode(secret, totpStep(h.clock.now))} `)).toEqual({ accepted: true, factor: 'authenticator_app' });
      expect(await h.factors.checkCode(alice, codes[2]!.toLowerCase().replace(/-/g, ' '))).toEqual({ accepted: true, factor: 'recovery_codes' });
      expect(await h.factors.checkCode(alice, codes[2])).toEqual({ accepted: false, reason: 'wrong', factor: 'recovery_codes' });
      // Neither shape: refused unread, nothing audited (not a guess at either).
      await new Promise((resolve) => setTimeout(resolve, 20));
      const before = h.events.length;
      for (const notACode of ['12345', '1234567', '12ab56', 'ABCD-EFGH', '', undefined, 42, 'x'.repeat(100)]) {
        expect(await h.factors.checkCode(alice, notACode)).toEqual({ accepted: false, reason: 'malformed' });
      }
      await new Promise((resolve) => setTimeout(resolve, 20));
      expect(h.events.length).toBe(before);
    });

    it('remove by id: the app or the recovery codes, factor.removed; an unknown id removes nothing; bad ids are refused', async () => {
      await enrolled();
      await h.factors.newRecoveryCodes(alice, admin);
      const [app, codes] = await h.factors.list(alice);
      expect(await h.factors.remove(alice, 'no-such-factor', admin)).toBe(false);
      expect(await h.factors.remove(alice, codes!.id, admin)).toBe(true);
      expect(h.events.at(-1)).toEqual(expect.objectContaining({ type: 'factor.removed', actor: admin.actor, details: { factor: 'recovery_codes' } }));
      expect(await h.factors.list(alice)).toEqual([app]);
      expect(await h.factors.remove(alice, app!.id, admin)).toBe(true);
      expect(await h.factors.list(alice)).toEqual([]);
      expect(await h.factors.remove(alice, app!.id, admin)).toBe(false);
      await expect(h.factors.remove(alice, '', admin)).rejects.toThrow('id: must be a factor id');
    });

    it('two first changes at once (no record yet) both land: neither overwrites the other', async () => {
      const bob = { tenant: 'acme', sub: 'bob' };
      const [codes, enrolment] = await Promise.all([h.factors.newRecoveryCodes(bob, admin), h.on(h.store).enrollTotp(bob, 'bob', admin)]);
      expect(codes).toHaveLength(10);
      expect((await h.factors.list(bob)).map((entry) => entry.type).sort()).toEqual(['recovery_codes', 'totp']);
      expect((await h.factors.list(bob)).find((entry) => entry.type === 'totp')?.id).toBe(enrolment.factorId);
    });

    it('requestReset: her factors stay and work until she completes it; summary says so; a reset clears it; none held: false', async () => {
      expect(await h.factors.requestReset(alice, admin)).toBe(false);
      const secret = await enrolled();
      expect(await h.factors.requestReset(alice, admin)).toBe(true);
      expect(h.events.at(-1)).toEqual(expect.objectContaining({ type: 'factor.reset', actor: admin.actor, target: { type: 'user', id: 'alice' }, details: { requested: true } }));
      expect((await h.factors.summary(alice)).resetRequested).toBe(true);
      h.clock.now += STEP_MS;
      expect(await h.factors.checkCode(alice, totpCode(secret, totpStep(h.clock.now)))).toEqual({ accepted: true, factor: 'authenticator_app' });
      expect(await h.factors.reset(alice, admin)).toBe(true);
      expect((await h.factors.summary(alice)).resetRequested).toBe(false);
    });
  });

  it('nothing stored, logged or audited holds a secret, a code or a recovery code', async () => {
    const used: string[] = [];
    const secret = await enrolled();
    used.push(totpCode(secret, totpStep(START)));
    const pending = await h.factors.startAuthenticatorApp({ tenant: 'acme', sub: 'bob' }, 'bob');
    for (let round = 1; round <= 3; round += 1) {
      h.clock.now = START + round * 3 * STEP_MS;
      const code = totpCode(secret, totpStep(h.clock.now));
      used.push(code);
      await h.factors.verifyAuthenticatorApp(alice, code);
      await h.factors.verifyAuthenticatorApp(alice, code);
    }
    const codes = await h.factors.newRecoveryCodes(alice, { actor: { type: 'user', id: 'alice' } });
    await h.factors.useRecoveryCode(alice, codes[0]);
    await h.factors.useRecoveryCode(alice, codes[0]);
    await settled();
    const everything = [await everythingStored(handle, h.store), ...h.lines, JSON.stringify(h.events)].join('\n');
    expect(everything).toContain('acme');
    for (const hidden of [secret, pending.secret, ...codes, ...codes.map((code) => code.replace(/-/g, ''))]) expect(everything).not.toContain(hidden);
    for (const code of used) expect(everything).not.toMatch(new RegExp(`(?<!\\d)${code}(?!\\d)`));
  });
});
