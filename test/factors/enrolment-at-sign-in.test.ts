import type { Store } from '../../adapters/types.js';
import { TOTP_ENROLMENT_SECONDS, TOTP_ENROLMENT_SHOWN_AGAIN_SECONDS } from '../../policies/lifetimes.js';
import { AuditTrail, DEFAULT_AUDIT_SETTINGS, type AuditEvent } from '../../src/audit/trail.js';
import { Factors } from '../../src/factors/index.js';
import { totpCode, totpStep } from '../../src/factors/totp.js';
import { useAdapterStore } from '../support/adapter-stores.js';
import { capturingLogger } from '../support/fixtures.js';
import { STORE_KINDS } from '../support/stores.js';

const KEY = 'factor-key-of-the-enrolment-unit-0123456789';
const owner = { tenant: 'acme', sub: 'eli' };
const START = Math.floor(Date.UTC(2026, 0, 5, 9) / 30_000) * 30_000 + 15_000;
const HERE = 'sign-in:here';
const SELF = { actor: { type: 'user' as const, id: 'eli' } };

/**
 * What the sign-in's enrolment uses of Factors (src/endpoints/sign-in/enrolment.ts): the enrolment
 * under way shown again (the same secret while it has time left), and a first code that completes
 * a reset (every other factor goes in the same change, audited by her).
 */
describe.each(STORE_KINDS)('Factors at the sign-in\'s enrolment (%s store)', (kind) => {
  const handle = useAdapterStore(kind);
  let store: Store;
  let factors: Factors;
  const clock = { now: START };
  let events: AuditEvent[];

  beforeEach(async () => {
    store = await handle.create();
    clock.now = START;
    events = [];
    factors = new Factors(store.records, { keys: [KEY], issuerName: 'auth.example', now: () => clock.now },
      new AuditTrail(store, DEFAULT_AUDIT_SETTINGS, capturingLogger().logger, (event) => void events.push(event), () => clock.now));
  });
  afterEach(async () => {
    await new Promise((resolve) => setTimeout(resolve, 30));
    await store.close();
  });

  it('shows the enrolment under way again while it has more than the shown-again time left, then a new one', async () => {
    const first = await factors.authenticatorAppEnrolment(owner, 'eli@acme.example', HERE);
    clock.now += 1000;
    expect((await factors.authenticatorAppEnrolment(owner, 'eli@acme.example', HERE)).secret).toBe(first.secret);
    // Just past the point where too little time is left: a new secret (not one that ends as she types).
    clock.now = Date.parse(first.expiresAt) - TOTP_ENROLMENT_SHOWN_AGAIN_SECONDS * 1000;
    const renewed = await factors.authenticatorAppEnrolment(owner, 'eli@acme.example', HERE);
    expect(renewed.secret).not.toBe(first.secret);
    expect(Date.parse(renewed.expiresAt)).toBe(clock.now + TOTP_ENROLMENT_SECONDS * 1000);
    // The old one no longer confirms; the new one does.
    expect(await factors.confirmAuthenticatorApp(owner, totpCode(first.secret, totpStep(clock.now)), SELF, { boundTo: HERE })).toMatchObject({ accepted: false });
    expect(await factors.confirmAuthenticatorApp(owner, totpCode(renewed.secret, totpStep(clock.now)), SELF, { boundTo: HERE })).toEqual({ accepted: true });
  });

  it('a first code that completes a reset: everything she held goes with the request, audited (factor.reset by her, before factor.added)', async () => {
    await factors.enrollTotp(owner, 'eli', SELF);
    const oldCodes = await factors.newRecoveryCodes(owner, SELF);
    expect(await factors.requestReset(owner, { actor: { type: 'user', id: 'admin' } })).toBe(true);
    const { secret } = await factors.authenticatorAppEnrolment(owner, 'eli', HERE);
    events.length = 0;
    // A wrong code changes nothing: what she held stays, the request too.
    expect(await factors.confirmAuthenticatorApp(owner, '000000' === totpCode(secret, totpStep(clock.now)) ? '111111' : '000000', SELF, { replaceAll: true, boundTo: HERE, onlyWhenNeeded: true })).toMatchObject({ accepted: false });
    expect((await factors.summary(owner))).toMatchObject({ resetRequested: true, recoveryCodes: { remaining: 10 } });
    expect(await factors.confirmAuthenticatorApp(owner, totpCode(secret, totpStep(clock.now)), SELF, { replaceAll: true, boundTo: HERE, onlyWhenNeeded: true })).toEqual({ accepted: true });
    const summary = await factors.summary(owner);
    expect(summary).toMatchObject({ resetRequested: false, recoveryCodes: undefined, passkeys: [] });
    expect(summary.authenticatorApp).toBeDefined();
    expect(await factors.useRecoveryCode(owner, oldCodes[0])).toMatchObject({ accepted: false });
    await new Promise((resolve) => setTimeout(resolve, 30));
    expect(events.filter((event) => event.type.startsWith('factor.')).map((event) => [event.type, event.actor.id, event.details])).toEqual([
      ['factor.reset', 'eli', { removed: ['authenticator_app', 'recovery_codes'] }],
      ['factor.added', 'eli', { factor: 'authenticator_app', replaced: true }],
    ]);
  });

  it('without replaceAll, a first code keeps what else she holds (an enrolment that is not a reset)', async () => {
    await factors.newRecoveryCodes(owner, SELF);
    const { secret } = await factors.authenticatorAppEnrolment(owner, 'eli', HERE);
    expect(await factors.confirmAuthenticatorApp(owner, totpCode(secret, totpStep(clock.now)), SELF, { boundTo: HERE, onlyWhenNeeded: true })).toEqual({ accepted: true });
    expect(await factors.summary(owner)).toMatchObject({ recoveryCodes: { remaining: 10 } });
  });

  it('an enrolment belongs to where it started: another sign-in neither sees its secret nor confirms it', async () => {
    const mine = await factors.authenticatorAppEnrolment(owner, 'eli', HERE);
    const code = totpCode(mine.secret, totpStep(clock.now));
    expect(await factors.confirmAuthenticatorApp(owner, code, SELF, { boundTo: 'sign-in:elsewhere', onlyWhenNeeded: true })).toEqual({ accepted: false, reason: 'not_enrolled' });
    expect(await factors.confirmAuthenticatorApp(owner, code, SELF)).toEqual({ accepted: false, reason: 'not_enrolled' });
    const theirs = await factors.authenticatorAppEnrolment(owner, 'eli', 'sign-in:elsewhere');
    expect(theirs.secret).not.toBe(mine.secret);
  });

  it('a sign-in begun before she enrolled cannot add an app after, nor a stale reset wipe what she set up', async () => {
    const stale = await factors.authenticatorAppEnrolment(owner, 'eli', HERE);
    // Meanwhile she enrolled elsewhere (the host's enrolment here).
    await factors.enrollTotp(owner, 'eli', SELF);
    const before = await factors.list(owner);
    expect(await factors.confirmAuthenticatorApp(owner, totpCode(stale.secret, totpStep(clock.now)), SELF, { boundTo: HERE, onlyWhenNeeded: true })).toEqual({ accepted: false, reason: 'not_enrolled' });
    expect(await factors.list(owner)).toEqual(before);
    // A reset asked for and completed: a second completion of the same reset finds nothing to do.
    await factors.requestReset(owner, { actor: { type: 'user', id: 'admin' } });
    const first = await factors.authenticatorAppEnrolment(owner, 'eli', HERE);
    expect(await factors.confirmAuthenticatorApp(owner, totpCode(first.secret, totpStep(clock.now)), SELF, { replaceAll: true, boundTo: HERE, onlyWhenNeeded: true })).toEqual({ accepted: true });
    const done = await factors.list(owner);
    const again = await factors.authenticatorAppEnrolment(owner, 'eli', 'sign-in:other');
    expect(await factors.confirmAuthenticatorApp(owner, totpCode(again.secret, totpStep(clock.now)), SELF, { replaceAll: true, boundTo: 'sign-in:other', onlyWhenNeeded: true })).toEqual({ accepted: false, reason: 'not_enrolled' });
    expect(await factors.list(owner)).toEqual(done);
  });
});
