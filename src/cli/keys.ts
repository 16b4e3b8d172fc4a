import { closeSync, fchmodSync, fchownSync, fsyncSync, openSync, readFileSync, realpathSync, renameSync, rmSync, statSync, writeSync } from 'node:fs';
import { basename, dirname, join } from 'node:path';
import { randomBytes } from 'node:crypto';
import type { JWK } from 'jose';
import {
  keyStates,
  type KeyState,
  type KeyStatus,
  type PrivateJwks,
  type SigningAlgorithm,
} from '../engine/keys.js';
import { UsageError } from './errors.js';

export const SIGNING_ALGORITHMS: readonly SigningAlgorithm[] = ['ES256', 'RS256', 'PS256', 'EdDSA'];
/** The server's defaults: ES256 access tokens, RS256 ID tokens. */
const DEFAULT_ALGORITHMS: readonly SigningAlgorithm[] = ['ES256', 'RS256'];

export function parseAlgorithms(values: readonly string[] | undefined): SigningAlgorithm[] {
  if (!values || values.length === 0) return [...DEFAULT_ALGORITHMS];
  for (const value of values) {
    if (!(SIGNING_ALGORITHMS as readonly string[]).includes(value)) {
      throw new UsageError(`--alg: "${value}" is not one of ${SIGNING_ALGORITHMS.join(', ')}`, '--alg');
    }
  }
  return [...new Set(values as SigningAlgorithm[])];
}

/**
 * Writes the key set readable by its owner only (0600). Without `force` an existing file is never
 * touched (O_EXCL); with it, the new file replaces the old one atomically (a synced temporary file
 * in the same directory, renamed over it): a reader sees the old set or the new one, never half.
 * `flag` names the option that gave the path, for messages.
 */
export function writeJwksFile(path: string, jwks: PrivateJwks, force: boolean, flag = '--out'): void {
  writePrivateFile(path, `${JSON.stringify(jwks, null, 2)}\n`, force, flag);
}

/**
 * Writes `text` as writeJwksFile writes a key set: 0600, never over a file without `force`,
 * atomically with it. `keepGroupRead: false` (a backup): the replacing file is 0600 even where the
 * replaced one was group-readable.
 */
export function writePrivateFile(path: string, text: string, force: boolean, flag: string, { keepGroupRead = true }: { keepGroupRead?: boolean } = {}): void {
  if (!force) {
    try {
      writeExclusive(path, text);
    } catch (error) {
      const code = (error as NodeJS.ErrnoException).code;
      if (code === 'EEXIST') throw new UsageError(`${flag}: ${path} exists; use --force to replace it`, flag);
      throw new UsageError(`${flag}: cannot write ${path} (${code ?? (error as Error).message})`, flag);
    }
    return;
  }
  // A symlinked key file (a mounted secret, say) is replaced where it really is, and keeps its
  // owner and (unless told not to) its group-read bit, so that the server can still read it at its next start.
  let target = path;
  let existing: { uid: number; gid: number; mode: number } | undefined;
  try {
    target = realpathSync(path);
    const { uid, gid, mode } = statSync(target);
    existing = { uid, gid, mode: mode & (keepGroupRead ? 0o640 : 0o600) };
  } catch {
    existing = undefined;
  }
  const temporary = join(dirname(target), `.${basename(target)}.${randomBytes(6).toString('hex')}.tmp`);
  try {
    writeExclusive(temporary, text, existing);
    renameSync(temporary, target);
    syncDirectory(dirname(target));
  } catch (error) {
    rmSync(temporary, { force: true });
    const code = (error as NodeJS.ErrnoException).code;
    throw new UsageError(`${flag}: cannot write ${path} (${code ?? (error as Error).message})`, flag);
  }
}

/** The rename is durable only once the directory entry is on disk too. */
function syncDirectory(directory: string): void {
  const fd = openSync(directory, 'r');
  try {
    fsyncSync(fd);
  } finally {
    closeSync(fd);
  }
}

/**
 * Creates `path` (never an existing file) with mode 0600 whatever the umask (or, replacing a key
 * file, its owner and at most its 0640 bits), and syncs it.
 */
function writeExclusive(path: string, text: string, like?: { uid: number; gid: number; mode: number }): void {
  const fd = openSync(path, 'wx', 0o600);
  let written = false;
  try {
    fchmodSync(fd, like ? like.mode | 0o600 : 0o600);
    if (like && (like.uid !== process.getuid?.() || like.gid !== process.getgid?.())) fchownSync(fd, like.uid, like.gid);
    writeSync(fd, text);
    fsyncSync(fd);
    written = true;
  } finally {
    closeSync(fd);
    if (!written) rmSync(path, { force: true });
  }
}

/** A JWKS file as read: the set (other top-level members kept) and the state of each key. */
export interface KeyFile {
  path: string;
  jwks: PrivateJwks & Record<string, unknown>;
  states: KeyStatus[];
}

/**
 * Reads a private JWKS file and states each key by the rotation rule (engine/keys.ts: the first
 * key of each algorithm signs, later ones are only published). Refuses what the server would
 * refuse: a key that is not private, two keys with one kid.
 */
export async function readJwksFile(path: string, flag = '--file'): Promise<KeyFile> {
  let text: string;
  try {
    text = readFileSync(path, 'utf8');
  } catch (error) {
    throw new UsageError(`${flag} ${path}: cannot read the file (${(error as NodeJS.ErrnoException).code ?? (error as Error).message})`, flag);
  }
  let json: unknown;
  try {
    json = JSON.parse(text);
  } catch (error) {
    throw new UsageError(`${flag} ${path}: not JSON (${(error as Error).message})`, flag);
  }
  const isObject = (value: unknown): value is Record<string, unknown> =>
    value !== null && typeof value === 'object' && !Array.isArray(value);
  if (!isObject(json) || !Array.isArray(json.keys) || !json.keys.every(isObject)) {
    throw new UsageError(`${flag} ${path}: not a JSON Web Key Set ({"keys": [...]})`, flag);
  }
  const jwks = json as PrivateJwks & Record<string, unknown>;
  jwks.keys.forEach((jwk, index) => {
    if (typeof jwk.d !== 'string' || !jwk.d) throw new UsageError(`${flag} ${path}: keys[${index}] is not a private key`, flag);
  });
  let states: KeyStatus[];
  try {
    states = await keyStates(jwks.keys);
  } catch (error) {
    throw new UsageError(`${flag} ${path}: ${(error as Error).message}`, flag);
  }
  const kids = new Set<string>();
  for (const { kid, index } of states) {
    if (kids.has(kid)) throw new UsageError(`${flag} ${path}: keys[${index}]: kid ${JSON.stringify(kid)} is used twice`, flag);
    kids.add(kid);
  }
  return { path, jwks, states };
}

/** What the CLI shows of a key: never a private member. */
export interface KeySummary {
  kid: string;
  alg?: string;
  kty: string;
  crv?: string;
  state: KeyState;
}

export function keySummary(jwk: JWK, status: KeyStatus): KeySummary {
  const alg = status.alg ?? jwk.alg;
  return {
    kid: status.kid,
    ...(alg ? { alg } : {}),
    kty: String(jwk.kty),
    ...(jwk.crv ? { crv: jwk.crv } : {}),
    state: status.state,
  };
}

export function summaries(file: KeyFile): KeySummary[] {
  return file.jwks.keys.map((jwk, index) => keySummary(jwk, file.states[index]!));
}
