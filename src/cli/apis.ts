import { readFileSync } from 'node:fs';
import { resolve } from 'node:path';
import { ApiCatalog } from '../../policies/catalog.js';
import { catalogApi, optionsSchema } from '../options.js';
import { UsageError } from './errors.js';

/** The `apis` option of createAuthServer, with the very schema createAuthServer validates it with. */
const apisSchema = optionsSchema.shape.apis;

/**
 * The deployment's API catalog from a JSON file: the `apis` array exactly as given to
 * createAuthServer (or an object with an `apis` member holding it).
 */
export function loadApiCatalog(file: string | undefined, cwd: string): ApiCatalog {
  if (!file) {
    throw new UsageError('--apis <file> or TALENT_AUTH_APIS is required: the API catalog (the apis option of the server)', '--apis');
  }
  let text: string;
  try {
    text = readFileSync(resolve(cwd, file), 'utf8');
  } catch (error) {
    throw new UsageError(`--apis ${file}: cannot read the file (${(error as NodeJS.ErrnoException).code ?? (error as Error).message})`, '--apis');
  }
  let json: unknown;
  try {
    json = JSON.parse(text);
  } catch (error) {
    throw new UsageError(`--apis ${file}: not JSON (${(error as Error).message})`, '--apis');
  }
  const apis = json !== null && typeof json === 'object' && !Array.isArray(json) && 'apis' in json
    ? (json as { apis: unknown }).apis
    : json;
  const result = apisSchema.safeParse(apis);
  if (!result.success) {
    const issue = result.error.issues[0];
    const path = ['apis', ...(issue?.path ?? [])].join('.');
    throw new UsageError(`--apis ${file}: ${path}: ${issue?.message ?? 'invalid'}`, path);
  }
  return new ApiCatalog(result.data.map(catalogApi));
}
