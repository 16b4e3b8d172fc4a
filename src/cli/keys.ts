import { chmodSync, renameSync, rmSync, writeFileSync } from 'node:fs';
import { basename, dirname, join } from 'node:path';
import { randomBytes } from 'node:crypto';
import { generateSigningKey, type PrivateJwks, type SigningAlgorithm } from '../provider/keys.js';
import { UsageError } from './errors.js';

export const SIGNING_ALGORITHMS: readonly SigningAlgorithm[] = ['ES256', 'RS256', 'PS256', 'EdDSA'];
/** The server's defaults: ES256 access tokens, RS256 ID tokens. */
export const DEFAULT_ALGORITHMS: readonly SigningAlgorithm[] = ['ES256', 'RS256'];

export function parseAlgorithms(values: readonly string[] | undefined): SigningAlgorithm[] {
  if (!values || values.length === 0) return [...DEFAULT_ALGORITHMS];
  for (const value of values) {
    if (!(SIGNING_ALGORITHMS as readonly string[]).includes(value)) {
      throw new UsageError(`--alg: "${value}" is not one of ${SIGNING_ALGORITHMS.join(', ')}`, '--alg');
    }
  }
  return [...new Set(values as SigningAlgorithm[])];
}

export async function generateJwks(algorithms: readonly SigningAlgorithm[]): Promise<PrivateJwks> {
  return { keys: await Promise.all(algorithms.map(generateSigningKey)) };
}

/**
 * Writes the key set readable by its owner only (0600). Without `force` an existing file is never
 * touched (O_EXCL); with it, the new file replaces the old one atomically (rename).
 */
export function writeJwksFile(path: string, jwks: PrivateJwks, force: boolean): void {
  const text = `${JSON.stringify(jwks, null, 2)}\n`;
  if (!force) {
    try {
      writeFileSync(path, text, { mode: 0o600, flag: 'wx' });
    } catch (error) {
      const code = (error as NodeJS.ErrnoException).code;
      if (code === 'EEXIST') throw new UsageError(`--out: ${path} exists; use --force to replace it`, '--out');
      throw new UsageError(`--out: cannot write ${path} (${code ?? (error as Error).message})`, '--out');
    }
    return;
  }
  const temporary = join(dirname(path), `.${basename(path)}.${randomBytes(6).toString('hex')}.tmp`);
  try {
    writeFileSync(temporary, text, { mode: 0o600, flag: 'wx' });
    chmodSync(temporary, 0o600);
    renameSync(temporary, path);
  } catch (error) {
    rmSync(temporary, { force: true });
    const code = (error as NodeJS.ErrnoException).code;
    throw new UsageError(`--out: cannot write ${path} (${code ?? (error as Error).message})`, '--out');
  }
}
