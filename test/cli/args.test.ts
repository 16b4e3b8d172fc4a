import { parseCommandLine } from '../../src/cli/args.js';
import { UsageError } from '../../src/cli/errors.js';

describe('CLI command line', () => {
  it('takes a value that starts with "-" (a key id is base64url: one in 64 does)', () => {
    const kid = '-Vx3nWY94lxrycxpsUwFGFyT7QRbJegDSkBzgoau_OQ';
    const parsed = parseCommandLine(['keys', 'promote', '--file', 'jwks.json', '--kid', kid, '--json']);
    expect(parsed.values).toMatchObject({ file: 'jwks.json', kid, json: true });
    expect(parsed.positionals).toEqual(['keys', 'promote']);
    expect(parseCommandLine(['keys', 'retire', '--kid', '--abc', '--file', 'f']).values.kid).toBe('--abc');
  });

  it('still reports a missing value when the next word is a flag', () => {
    expect(() => parseCommandLine(['clients', 'create', '--name', '--tenant', 'acme'])).toThrow(UsageError);
    expect(() => parseCommandLine(['clients', 'create', '--name', '--tenant', 'acme'])).toThrow(/--name/);
  });

  it('keeps --opt=value and unknown flags as they were', () => {
    expect(parseCommandLine(['keys', 'list', '--file=-odd.json']).values.file).toBe('-odd.json');
    expect(() => parseCommandLine(['keys', 'list', '--nope'])).toThrow(/Unknown option '--nope'/);
  });
});
