import { closeSync, openSync, readSync } from 'node:fs';
import { resolve } from 'node:path';
import { clientKeyIds } from '../../policies/client-key-ids.js';
import { MAX_JWKS_BYTES, TOKEN_ENDPOINT_AUTH_METHODS, type ClientJwks, type TokenEndpointAuthMethod } from '../../policies/client-keys.js';
import type { DpopRule } from '../records/client-configurations.js';
import type { OptionName, ParsedArgs } from './args.js';
import { UsageError } from './errors.js';
import { safe } from './output.js';

/*
 * The client-authentication and sender-constraint flags of `clients create|update` and
 * `apps create|update`: `--auth-method`, `--jwks-file`, `--jwks-uri`, `--dpop` (both record kinds)
 * and `--require-par` / `--no-require-par` (apps). What they give is judged by the records
 * (policies/client-keys.ts): a private key member in the file, both `--jwks-file` and `--jwks-uri`,
 * keys for a Basic client are refused there, naming the field. The CLI is the operator's: a
 * `--jwks-uri` may name a loopback host (development), as through the library.
 */

/** The flags both record kinds take. */
export const AUTHENTICATION_FLAGS: readonly OptionName[] = ['auth-method', 'jwks-file', 'jwks-uri', 'dpop'];
/** The flags only apps take. */
export const PAR_FLAGS: readonly OptionName[] = ['require-par', 'no-require-par'];

const DPOP_RULES: readonly DpopRule[] = ['required', 'optional'];

/** The public key set in `--jwks-file`: JSON `{ "keys": [...] }`, at most MAX_JWKS_BYTES. */
function readJwks(path: string): ClientJwks {
  let text: string;
  try {
    const fd = openSync(path, 'r');
    try {
      // One byte over the limit tells a file that is too large without reading all of it.
      const buffer = Buffer.alloc(MAX_JWKS_BYTES + 1);
      const length = readSync(fd, buffer, 0, buffer.length, 0);
      if (length > MAX_JWKS_BYTES) throw new UsageError(`--jwks-file: ${safe(path)} is larger than ${MAX_JWKS_BYTES} bytes`, '--jwks-file');
      text = buffer.subarray(0, length).toString('utf8');
    } finally {
      closeSync(fd);
    }
  } catch (error) {
    if (error instanceof UsageError) throw error;
    throw new UsageError(`--jwks-file: cannot read ${safe(path)} (${(error as NodeJS.ErrnoException).code ?? (error as Error).message})`, '--jwks-file');
  }
  let parsed: unknown;
  try {
    parsed = JSON.parse(text);
  } catch {
    throw new UsageError(`--jwks-file: ${safe(path)} is not JSON: expected a JWK Set, {"keys": [...]}, of public keys`, '--jwks-file');
  }
  if (typeof parsed !== 'object' || parsed === null || Array.isArray(parsed)) {
    throw new UsageError(`--jwks-file: ${safe(path)} is not a JWK Set: expected {"keys": [...]} of public keys`, '--jwks-file');
  }
  // The records check the rest (public keys only, types, sizes, kids) and name the key that fails.
  return parsed as ClientJwks;
}

/**
 * The authentication, DPoP and (apps) PAR fields of a create or update from the flags; nothing for
 * a flag not given. `--jwks-file` is read relative to the working directory.
 */
export function authenticationInput(values: ParsedArgs['values'], cwd: string, command: string): {
  tokenEndpointAuthMethod?: TokenEndpointAuthMethod;
  jwks?: ClientJwks;
  jwksUri?: string;
  dpop?: DpopRule;
  requirePushedAuthorizationRequests?: boolean;
} {
  const method = values['auth-method'];
  if (method !== undefined && !(TOKEN_ENDPOINT_AUTH_METHODS as readonly string[]).includes(method)) {
    throw new UsageError(`${command}: --auth-method "${safe(method)}" is not one of ${TOKEN_ENDPOINT_AUTH_METHODS.join(', ')}`, '--auth-method');
  }
  const dpop = values.dpop;
  if (dpop !== undefined && !(DPOP_RULES as readonly string[]).includes(dpop)) {
    throw new UsageError(`${command}: --dpop "${safe(dpop)}" is not one of ${DPOP_RULES.join(', ')}`, '--dpop');
  }
  if (values['require-par'] && values['no-require-par']) {
    throw new UsageError(`${command}: give --require-par or --no-require-par, not both`, '--no-require-par');
  }
  const jwksFile = values['jwks-file'];
  return {
    ...(method !== undefined ? { tokenEndpointAuthMethod: method as TokenEndpointAuthMethod } : {}),
    ...(jwksFile !== undefined ? { jwks: readJwks(resolve(cwd, jwksFile)) } : {}),
    ...(values['jwks-uri'] !== undefined ? { jwksUri: values['jwks-uri'] } : {}),
    ...(dpop !== undefined ? { dpop: dpop as DpopRule } : {}),
    ...(values['require-par'] ? { requirePushedAuthorizationRequests: true } : {}),
    ...(values['no-require-par'] ? { requirePushedAuthorizationRequests: false } : {}),
  };
}

/**
 * The human lines of a record's authentication: its method, its keys by ID and thumbprint (never
 * their members) or its URL, and its DPoP rule when it has one.
 */
export function authenticationLines(record: { tokenEndpointAuthMethod?: TokenEndpointAuthMethod | undefined; jwks?: ClientJwks | undefined; jwksUri?: string | undefined; dpop?: DpopRule | undefined }): string[] {
  return [
    ...(record.tokenEndpointAuthMethod ? [`  auth_method:   ${record.tokenEndpointAuthMethod}`] : []),
    ...(record.jwks
      ? clientKeyIds(record.jwks).map((key, index) =>
        `  ${index === 0 ? 'keys:         ' : '              '} ${safe(key.kid ?? '-')} (${safe(key.alg ?? key.kty)}, thumbprint ${key.thumbprint})`)
      : []),
    ...(record.jwksUri ? [`  jwks_uri:      ${safe(record.jwksUri)}`] : []),
    ...(record.dpop ? [`  dpop:          ${record.dpop}`] : []),
  ];
}
