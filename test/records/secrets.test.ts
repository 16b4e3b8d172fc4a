import { digestSecret, generateSecret, secretMatches } from '../../src/records/secrets.js';

describe('client secrets', () => {
  it('are 256-bit random base64url strings', () => {
    const secrets = new Set(Array.from({ length: 100 }, generateSecret));
    expect(secrets.size).toBe(100);
    for (const secret of secrets) expect(Buffer.from(secret, 'base64url')).toHaveLength(32);
  });
  it('are stored as a digest that does not contain them', () => {
    const secret = generateSecret();
    const digest = digestSecret(secret);
    expect(digest).not.toContain(secret);
    expect(digest).toHaveLength(43);
  });
  it('match only the exact secret', () => {
    const secret = generateSecret();
    const digest = digestSecret(secret);
    expect(secretMatches(secret, digest)).toBe(true);
    expect(secretMatches(`${secret} `, digest)).toBe(false);
    expect(secretMatches(secret.slice(1), digest)).toBe(false);
    expect(secretMatches('', digest)).toBe(false);
    expect(secretMatches(secret, 'not-a-digest')).toBe(false);
  });
});
