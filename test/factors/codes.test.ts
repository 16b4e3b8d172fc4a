import { createHmac } from 'node:crypto';
import { isRecoveryCodeShape, matchRecoveryCode, newRecoveryCodes, recoveryCodeHash, recoveryCodeKeys, RECOVERY_CODE_COUNT } from '../../src/factors/recovery-codes.js';
import { isTotpCodeShape, matchTotp, newTotpSecret, totpCode, totpStep, totpUri, TOTP_PERIOD_SECONDS } from '../../src/factors/totp.js';

/**
 * The rules of a code on their own (src/factors/totp.ts, src/factors/recovery-codes.ts): their
 * shapes at the edges (lengths, alphabet, separators), the window of steps, replays, several keys.
 * The factors' store-level behaviour is test/factors/factors.test.ts.
 */
describe('authenticator-app codes (src/factors/totp.ts)', () => {
  const secret = newTotpSecret();
  const now = Date.UTC(2026, 0, 1, 12, 0, 10);
  const step = totpStep(now);

  it('a secret is 20 random bytes in base32; a step is 30 s; the URI names the parameters every app reads', () => {
    expect(secret).toMatch(/^[A-Z2-7]{32}$/);
    expect(newTotpSecret()).not.toBe(secret);
    expect(TOTP_PERIOD_SECONDS).toBe(30);
    expect(totpStep(now + 20_000)).toBe(step + 1);
    expect(totpStep(now + 19_999)).toBe(step);
    const uri = new URL(totpUri(secret, 'Acme HR', 'alice@acme.example'));
    expect(uri.protocol).toBe('otpauth:');
    expect(Object.fromEntries(uri.searchParams)).toEqual({ issuer: 'Acme HR', secret, algorithm: 'SHA1', digits: '6', period: '30' });
    expect(uri.host).toBe('totp');
    expect(decodeURIComponent(uri.pathname)).toBe('/Acme HR:alice@acme.example');
  });

  it.each<[string, unknown, boolean]>([
    ['six digits', '123456', true],
    ['spaces between them', '123 456', true],
    ['spaces around, 32 characters in all', `${' '.repeat(13)}123456${' '.repeat(13)}`, true],
    ['33 characters in all', `${' '.repeat(14)}123456${' '.repeat(13)}`, false],
    ['five digits', '12345', false],
    ['seven digits', '1234567', false],
    ['a letter', '12345a', false],
    ['a hyphen', '123-456', false],
    ['a number', 123456, false],
    ['nothing', undefined, false],
  ])('the shape of a code: %s', (_name, code, shaped) => {
    expect(isTotpCodeShape(code)).toBe(shaped);
    if (!shaped) expect(matchTotp(secret, code, now, -1)).toEqual({ accepted: false, reason: 'malformed' });
  });

  it.each<[string, number, number, object]>([
    ['the current step', 0, -1, { accepted: true, step }],
    ['one step before', -1, -1, { accepted: true, step: step - 1 }],
    ['one step after', 1, -1, { accepted: true, step: step + 1 }],
    ['two steps before', -2, -1, { accepted: false, reason: 'wrong' }],
    ['two steps after', 2, -1, { accepted: false, reason: 'wrong' }],
    ['the step accepted last', 0, step, { accepted: false, reason: 'replayed' }],
    ['a step before the one accepted last', 0, step + 1, { accepted: false, reason: 'replayed' }],
    ['the step after the one accepted last', 1, step, { accepted: true, step: step + 1 }],
  ])('a code of %s', (_name, offset, lastStep, answer) => {
    expect(matchTotp(secret, totpCode(secret, step + offset), now, lastStep)).toEqual(answer);
  });

  it("another secret's code is wrong", () => {
    expect(matchTotp(secret, totpCode(newTotpSecret(), step), now, -1)).toMatchObject({ accepted: false });
  });
});

describe('recovery codes (src/factors/recovery-codes.ts)', () => {
  const keys = recoveryCodeKeys(['a-factor-key-of-at-least-32-characters!', 'an-older-factor-key-of-32-characters!!']);

  it('a set: ten distinct codes, four groups of four from an alphabet without look-alikes', () => {
    const codes = newRecoveryCodes();
    expect(RECOVERY_CODE_COUNT).toBe(10);
    expect(codes).toHaveLength(10);
    expect(new Set(codes).size).toBe(10);
    for (const code of codes) expect(code).toMatch(/^[0-9ABCDEFGHJKMNPQRSTVWXYZ]{4}(-[0-9ABCDEFGHJKMNPQRSTVWXYZ]{4}){3}$/);
  });

  it('one key per factor key, each its own; the same factor key, the same key', () => {
    expect(keys).toHaveLength(2);
    expect(keys[0]!.equals(keys[1]!)).toBe(false);
    expect(recoveryCodeKeys(['a-factor-key-of-at-least-32-characters!'])[0]!.equals(keys[0]!)).toBe(true);
    // Known answer: the stored hashes of every release depend on this derivation staying as it is.
    expect(keys[0]!.toString('hex')).toBe(createHmac('sha256', 'a-factor-key-of-at-least-32-characters!').update('talent-auth recovery codes').digest('hex'));
  });

  const code = 'ABCD-EFGH-JKMN-PQRS';
  it.each<[string, unknown, boolean]>([
    ['as shown', code, true],
    ['lower case, spaces', 'abcd efgh jkmn pqrs', true],
    ['no separators', 'ABCDEFGHJKMNPQRS', true],
    ['separators anywhere, 64 characters in all', `${'-'.repeat(24)}ABCDEFGHJKMNPQRS${' '.repeat(24)}`, true],
    ['65 characters in all', `${'-'.repeat(25)}ABCDEFGHJKMNPQRS${' '.repeat(24)}`, false],
    ['a letter too few', 'ABCD-EFGH-JKMN-PQR', false],
    ['a letter too many', 'ABCD-EFGH-JKMN-PQRST', false],
    ['an I (a look-alike)', 'ABCD-EFGH-IKMN-PQRS', false],
    ['an O', 'ABCD-EFGH-OKMN-PQRS', false],
    ['a U', 'ABCD-EFGH-UKMN-PQRS', false],
    ['an L', 'ABCD-EFGH-LKMN-PQRS', false],
    ['another separator', 'ABCD_EFGH_JKMN_PQRS', false],
    ['a number', 1234, false],
  ])('the shape of a code: %s', (_name, typed, shaped) => {
    expect(isRecoveryCodeShape(typed)).toBe(shaped);
    const hashes = [recoveryCodeHash('0000-0000-0000-0000', keys[0]!), recoveryCodeHash(code, keys[0]!)];
    expect(matchRecoveryCode(typed, hashes, keys)).toBe(shaped ? 1 : -1);
  });

  it('stored as an HMAC of the code as typed, normalised: never the code; another key, another hash', () => {
    const hash = recoveryCodeHash(code, keys[0]!);
    expect(hash).toMatch(/^[A-Za-z0-9_-]{43}$/);
    expect(hash).not.toContain('ABCD');
    expect(recoveryCodeHash('abcd efgh jkmn pqrs', keys[0]!)).toBe(hash);
    expect(recoveryCodeHash(code, keys[1]!)).not.toBe(hash);
  });

  it('matched under every key (a set made before a key rotation), at its index; none: -1', () => {
    const older = [recoveryCodeHash('1111-1111-1111-1111', keys[1]!), recoveryCodeHash(code, keys[1]!)];
    expect(matchRecoveryCode(code, older, keys)).toBe(1);
    expect(matchRecoveryCode(code, older, [keys[0]!])).toBe(-1);
    expect(matchRecoveryCode('2222-2222-2222-2222', older, keys)).toBe(-1);
    expect(matchRecoveryCode(code, [], keys)).toBe(-1);
    // The same hash twice (never made so, but a record is data): the first is the one taken.
    const twice = recoveryCodeHash(code, keys[0]!);
    expect(matchRecoveryCode(code, ['x', twice, twice], keys)).toBe(1);
  });
});
