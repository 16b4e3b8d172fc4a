import { chmodSync, existsSync, lstatSync, symlinkSync, mkdtempSync, readdirSync, readFileSync, rmSync, statSync, writeFileSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import type { JWK } from 'jose';
import { CLI_ENTRY, runCli, type CliRun } from '../support/cli.js';
import { testJwks } from '../support/keys.js';

/**
 * `talent-auth keys list|add|promote|retire`: the key-rotation steps on a JWKS file, run as the
 * built CLI in a subprocess (like cli.test.ts). They need no Redis. The rule they apply: the first
 * key of each algorithm in the file signs; later keys are only published.
 */
const KID = /^[A-Za-z0-9_-]{43}$/;
const PRIVATE_MEMBERS = ['d', 'p', 'q', 'dp', 'dq', 'qi'] as const;
/** Each test spawns the CLI many times (~0.3-1 s each on a loaded machine). */
const SLOW = 120_000;

type Run = CliRun;

interface Jwks {
  keys: Array<JWK & { kid: string }>;
  [member: string]: unknown;
}

describe('talent-auth keys: rotation steps on a JWKS file (built CLI, subprocess)', () => {
  let dir: string;

  function cli(args: string[]): Promise<Run> {
    return runCli(args, dir, { ...process.env, REDIS_URL: undefined });
  }

  const read = (file: string): Jwks => JSON.parse(readFileSync(file, 'utf8')) as Jwks;

  /** No private member of any key ever seen in `file` appears in the output. */
  function expectNoPrivateParts(run: Run, ...sets: Jwks[]): void {
    for (const jwks of sets) {
      for (const key of jwks.keys) {
        for (const member of PRIVATE_MEMBERS) {
          const value = key[member];
          if (typeof value === 'string') {
            expect(run.stdout).not.toContain(value);
            expect(run.stderr).not.toContain(value);
          }
        }
      }
    }
    expect(run.stdout).not.toMatch(/"d"\s*:/);
  }

  async function generated(name: string, algs: string[] = ['ES256', 'RS256']): Promise<string> {
    const file = join(dir, name);
    const run = await cli(['keys', 'generate', '--out', file, ...algs.flatMap((alg) => ['--alg', alg])]);
    expect(run.code).toBe(0);
    return file;
  }

  beforeAll(() => {
    if (!existsSync(CLI_ENTRY)) throw new Error('run `npx tsc -p tsconfig.build.json` first (the test command builds)');
    dir = mkdtempSync(join(tmpdir(), 'talent-auth-keys-'));
  });
  afterAll(() => {
    rmSync(dir, { recursive: true, force: true });
  });

  it('walks the procedure: add publishes, promote switches, retire removes; the file stays 0600 and private parts never show', async () => {
    const file = await generated('rotation.json');
    const initial = read(file);
    const [oldEs, oldRs] = initial.keys as [JWK & { kid: string }, JWK & { kid: string }];

    const listed = await cli(['keys', 'list', '--file', file, '--json']);
    expect(listed.code).toBe(0);
    expect(listed.json).toEqual({
      file,
      keys: [
        { kid: oldEs.kid, alg: 'ES256', kty: 'EC', crv: 'P-256', state: 'signing' },
        { kid: oldRs.kid, alg: 'RS256', kty: 'RSA', state: 'signing' },
      ],
    });
    expectNoPrivateParts(listed, initial);

    // 1. publish the next keys
    const added = await cli(['keys', 'add', '--file', file, '--alg', 'ES256', '--alg', 'RS256', '--json']);
    expect(added.stderr).toContain('not recorded in the audit trail (signing_key.added): give --redis or REDIS_URL');
    expect(added.code).toBe(0);
    const afterAdd = read(file);
    const [newEs, newRs] = afterAdd.keys.slice(2) as [JWK & { kid: string }, JWK & { kid: string }];
    expect(afterAdd.keys.slice(0, 2)).toEqual(initial.keys);
    expect([newEs, newRs].map((key) => [key.alg, key.use, typeof key.d])).toEqual([['ES256', 'sig', 'string'], ['RS256', 'sig', 'string']]);
    expect(newEs.kid).toMatch(KID);
    expect(added.json).toEqual({
      file,
      added: [
        { kid: newEs.kid, alg: 'ES256', kty: 'EC', crv: 'P-256', state: 'published' },
        { kid: newRs.kid, alg: 'RS256', kty: 'RSA', state: 'published' },
      ],
      keys: [
        { kid: oldEs.kid, alg: 'ES256', kty: 'EC', crv: 'P-256', state: 'signing' },
        { kid: oldRs.kid, alg: 'RS256', kty: 'RSA', state: 'signing' },
        { kid: newEs.kid, alg: 'ES256', kty: 'EC', crv: 'P-256', state: 'published' },
        { kid: newRs.kid, alg: 'RS256', kty: 'RSA', state: 'published' },
      ],
    });
    expect(statSync(file).mode & 0o777).toBe(0o600);
    expectNoPrivateParts(added, afterAdd);

    // 2. switch: the new ES256 key moves before the old one
    const promoted = await cli(['keys', 'promote', '--file', file, '--kid', newEs.kid, '--json']);
    expect(promoted.code).toBe(0);
    expect(promoted.stderr).toContain('not recorded in the audit trail (signing_key.promoted)');
    expect(promoted.json).toMatchObject({ file, kid: newEs.kid, alg: 'ES256', previous_kid: oldEs.kid, changed: true });
    expect(read(file).keys.map((key) => key.kid)).toEqual([newEs.kid, oldEs.kid, oldRs.kid, newRs.kid]);
    expect(promoted.json.keys.map((key: { kid: string; state: string }) => [key.kid, key.state])).toEqual([
      [newEs.kid, 'signing'], [oldEs.kid, 'published'], [oldRs.kid, 'signing'], [newRs.kid, 'published'],
    ]);
    // The keys themselves are untouched, only their order.
    expect(read(file).keys.find((key) => key.kid === newEs.kid)).toEqual(newEs);

    const human = await cli(['keys', 'promote', '--file', file, '--kid', newRs.kid]);
    expect(human.code).toBe(0);
    expect(human.stdout).toContain(`Key ${newRs.kid} now signs RS256`);
    expect(human.stdout).toContain(`previous signing key ${oldRs.kid} stays published`);
    expect(human.stdout).toContain('65 minutes');
    expect(human.stdout).toContain(`talent-auth keys retire --file ${file} --kid ${oldRs.kid}`);
    expect(read(file).keys.map((key) => key.kid)).toEqual([newEs.kid, oldEs.kid, newRs.kid, oldRs.kid]);

    // Promoting the signing key again changes nothing (and does not rewrite the file).
    const before = readFileSync(file, 'utf8');
    const again = await cli(['keys', 'promote', '--file', file, '--kid', newEs.kid, '--json']);
    expect(again.code).toBe(0);
    expect(again.json).toMatchObject({ kid: newEs.kid, previous_kid: newEs.kid, changed: false });
    expect(readFileSync(file, 'utf8')).toBe(before);

    // 3. retire: the signing keys are refused, the old ones go
    const refused = await cli(['keys', 'retire', '--file', file, '--kid', newEs.kid, '--json']);
    expect(refused.code).toBe(1);
    expect(refused.stdout).toBe('');
    expect(JSON.parse(refused.stderr)).toMatchObject({ error: 'usage_error', field: '--kid' });
    expect(JSON.parse(refused.stderr).message).toContain('is the signing ES256 key');
    expect(readFileSync(file, 'utf8')).toBe(before);

    const retired = await cli(['keys', 'retire', '--file', file, '--kid', oldEs.kid, '--json']);
    expect(retired.code).toBe(0);
    expect(retired.json).toMatchObject({ file, kid: oldEs.kid, alg: 'ES256', retired: true });
    const retiredHuman = await cli(['keys', 'retire', '--file', file, '--kid', oldRs.kid]);
    expect(retiredHuman.code).toBe(0);
    expect(retiredHuman.stdout).toContain(`Removed key ${oldRs.kid} (RS256, published)`);
    expect(read(file)).toEqual({ keys: [newEs, newRs] });
    expect(statSync(file).mode & 0o777).toBe(0o600);

    const final = await cli(['keys', 'list', '--file', file]);
    expect(final.code).toBe(0);
    expect(final.stdout).toMatch(/^KID\s+ALG\s+KTY\s+STATE\n/);
    expect(final.stdout).toMatch(new RegExp(`${newEs.kid}\\s+ES256\\s+EC P-256\\s+signing`));
    expect(final.stdout).toMatch(new RegExp(`${newRs.kid}\\s+RS256\\s+RSA\\s+signing`));
    expectNoPrivateParts(final, initial, afterAdd);

    // Every write was atomic: no temporary file is left behind.
    expect(readdirSync(dir).filter((name) => name.endsWith('.tmp'))).toEqual([]);
  }, SLOW);

  it('refuses to retire the only key of an algorithm, and says what to do', async () => {
    const file = await generated('only.json', ['ES256']);
    const [only] = read(file).keys;
    const refused = await cli(['keys', 'retire', '--file', file, '--kid', only!.kid]);
    expect(refused.code).toBe(1);
    expect(refused.stderr).toContain('(the only ES256 key)');
    expect(refused.stderr).toContain('add another ES256 key');
    expect(read(file).keys).toHaveLength(1);
  }, SLOW);

  it('states a file written by hand: keys without kid, algorithms in any order, keys that sign nothing', async () => {
    // Keys made in process (the CLI's own generator), then written as an operator might by hand.
    const [first, rsa, second, ed, other] = (await testJwks(['ES256', 'RS256', 'ES256', 'EdDSA', 'ES256'])).jwks.keys;
    const { kid: _kid, alg: _alg, use: _use, ...bareRsa } = rsa!;
    const { kid: edKid, ...edWithoutKid } = ed!;
    const encryption = { ...other!, use: 'enc' };
    const file = join(dir, 'hand.json');
    writeFileSync(file, JSON.stringify({ keys: [bareRsa, first, encryption, edWithoutKid, second], note: 'kept' }), { mode: 0o644 });
    chmodSync(file, 0o644);

    const listed = await cli(['keys', 'list', '--file', file, '--json']);
    expect(listed.code).toBe(0);
    const rows = listed.json.keys as Array<{ kid: string; alg?: string; state: string }>;
    // A key without kid is known by its RFC 7638 thumbprint, as the server names it; an RSA key
    // without alg is RS256 (ID tokens always need RS256); a use "enc" key signs nothing.
    expect(rows.map((row) => [row.alg, row.state])).toEqual([
      ['RS256', 'signing'], ['ES256', 'signing'], ['ES256', 'published'], ['EdDSA', 'signing'], ['ES256', 'published'],
    ]);
    expect(rows[0]!.kid).toMatch(KID);
    expect(rows[3]!.kid).toBe(edKid);

    const promoted = await cli(['keys', 'promote', '--file', file, '--kid', second!.kid, '--json']);
    expect(promoted.code).toBe(0);
    expect(promoted.json.previous_kid).toBe(first!.kid);
    const rewritten = read(file);
    // Moved just before the former signing key; everything else, members included, as it was.
    expect(rewritten).toEqual({ keys: [bareRsa, second, first, encryption, edWithoutKid], note: 'kept' });
    // The group may still read it (a service user's group); the world may not.
    expect(statSync(file).mode & 0o777).toBe(0o640);

    // A symlinked file (a mounted secret) is replaced where it is; the link stays a link.
    const link = join(dir, 'linked.json');
    symlinkSync(file, link);
    expect((await cli(['keys', 'promote', '--file', link, '--kid', first!.kid])).code).toBe(0);
    expect(lstatSync(link).isSymbolicLink()).toBe(true);
    expect(read(file).keys[1]).toEqual(first);

    const encryptionKid = rows[2]!.kid;
    const notSigning = await cli(['keys', 'promote', '--file', file, '--kid', encryptionKid]);
    expect(notSigning.code).toBe(1);
    expect(notSigning.stderr).toContain('signs none of ES256, RS256, PS256, EdDSA');
    expect(notSigning.stderr).toContain('use enc');

    const byThumbprint = await cli(['keys', 'retire', '--file', file, '--kid', encryptionKid, '--json']);
    expect(byThumbprint.code).toBe(0);
    expect(read(file).keys).toHaveLength(4);
  }, SLOW);

  it('adding the first key of an algorithm makes it the signing key of that algorithm', async () => {
    const file = await generated('first.json', ['ES256', 'RS256']);
    const added = await cli(['keys', 'add', '--file', file, '--alg', 'EdDSA']);
    expect(added.code).toBe(0);
    expect(added.stdout).toMatch(/EdDSA\s+kid [A-Za-z0-9_-]{43}\s+signing/);
    expect(added.stdout).toContain('first of its algorithm');
    expect(added.stdout).not.toContain('keys promote');
  }, SLOW);

  it('reports usage errors with exit code 1, as text or JSON, and leaves the file alone', async () => {
    const file = await generated('errors.json');
    const before = readFileSync(file, 'utf8');
    const cases: Array<[string[], RegExp]> = [
      [['keys', 'add', '--file', file], /keys add: --alg is required/],
      [['keys', 'add', '--alg', 'ES256'], /keys add: --file is required/],
      [['keys', 'add', '--file', file, '--alg', 'HS256'], /--alg: "HS256" is not one of/],
      [['keys', 'promote', '--file', file], /keys promote: --kid is required/],
      [['keys', 'promote', '--file', file, '--kid', 'nope'], /key nope in .* not found/],
      [['keys', 'retire', '--file', file, '--kid', 'nope'], /key nope in .* not found/],
      [['keys', 'list', '--file', join(dir, 'missing.json')], /cannot read the file \(ENOENT\)/],
      [['keys', 'list', '--file', file, '--out', 'x'], /keys list does not take --out/],
      [['keys', 'retire', '--file', file, '--kid', 'a', 'extra'], /unexpected argument "extra"/],
    ];
    for (const [args, message] of cases) {
      const run = await cli(args);
      expect({ args, code: run.code, stdout: run.stdout }).toEqual({ args, code: 1, stdout: '' });
      expect(run.stderr).toMatch(message);
    }
    expect(readFileSync(file, 'utf8')).toBe(before);

    const notFound = await cli(['keys', 'promote', '--file', file, '--kid', 'nope', '--json']);
    expect(JSON.parse(notFound.stderr)).toMatchObject({ error: 'not_found' });

    const notJson = join(dir, 'not.json');
    writeFileSync(notJson, '{ nope');
    expect((await cli(['keys', 'list', '--file', notJson])).stderr).toMatch(/not JSON/);
    writeFileSync(notJson, '[]');
    expect((await cli(['keys', 'list', '--file', notJson])).stderr).toMatch(/not a JSON Web Key Set/);

    const publicOnly = join(dir, 'public.json');
    const { d: _d, ...publicKey } = read(file).keys[0]!;
    writeFileSync(publicOnly, JSON.stringify({ keys: [publicKey] }));
    const refused = await cli(['keys', 'add', '--file', publicOnly, '--alg', 'ES256', '--json']);
    expect(refused.code).toBe(1);
    expect(JSON.parse(refused.stderr)).toMatchObject({ error: 'usage_error', field: '--file' });
    expect(JSON.parse(refused.stderr).message).toContain('keys[0] is not a private key');
    expect(read(publicOnly)).toEqual({ keys: [publicKey] });

    const duplicate = join(dir, 'duplicate.json');
    writeFileSync(duplicate, JSON.stringify({ keys: [read(file).keys[0], read(file).keys[0]] }));
    expect((await cli(['keys', 'list', '--file', duplicate])).stderr).toMatch(/keys\[1\]: kid ".*" is used twice/);
  }, SLOW);

  it('has help for each step that states the rule and the waits', async () => {
    const group = await cli(['keys', '--help']);
    expect(group.code).toBe(0);
    expect(group.stdout).toContain('the FIRST key of each algorithm in the file signs');
    const top = await cli(['--help']);
    const helps: Record<string, string> = {};
    for (const command of ['keys list', 'keys add', 'keys promote', 'keys retire']) {
      expect(top.stdout).toContain(command);
      const help = await cli([...command.split(' '), '--help']);
      expect(help.code).toBe(0);
      expect(help.stdout).toContain(`Usage: talent-auth ${command} (--file <file> | --store`);
      expect(help.stdout).toContain('every running server follows each step within seconds, no restart');
      helps[command] = help.stdout;
    }
    expect(helps['keys add']).toContain('jwksCacheMaxAgeSeconds (600 s by default');
    expect(helps['keys promote']).toMatch(/3600 s[\s\S]*clock skew[\s\S]*65 minutes/);
  }, SLOW);
});
