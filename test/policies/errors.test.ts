import { readFileSync, writeFileSync } from 'node:fs';
import { join } from 'node:path';
import * as table from '../../policies/errors.js';
import { ERRORS, errorTableMarkdown, OAuthError, TokenError } from '../../policies/errors.js';

/** The codes of RFC 6749 §5.2 and §4.1.2.1, RFC 6750 §3.1, RFC 8707, and our three for APIs. */
const CODES = new Set([
  'invalid_request', 'invalid_client', 'access_denied', 'invalid_grant', 'unauthorized_client', 'unsupported_grant_type', 'invalid_scope',
  'invalid_target', 'invalid_token', 'insufficient_scope', 'temporarily_unavailable', 'server_error', 'not_found', 'conflict', 'not_supported',
]);

const DOCS = join(process.cwd(), 'docs/errors.md');
const BEGIN = '<!-- error table: generated from policies/errors.ts -->';
const END = '<!-- end of the error table -->';

describe('the error table (policies/errors.ts)', () => {
  it.each(ERRORS.map((row) => [row.example.constructor.name, row] as const))('%s', (_name, { example, when }) => {
    expect(example).toBeInstanceOf(OAuthError);
    expect(CODES.has(example.error)).toBe(true);
    expect(example.status).toBeGreaterThanOrEqual(400);
    expect(example.status).toBeLessThan(600);
    expect(example.toJSON()).toEqual({ error: example.error, error_description: example.description });
    expect(example.description).not.toBe('');
    expect(when).not.toBe('');
    // Status, code and headers agree with what HTTP and OAuth say of them.
    if (example.status === 401 && example.error === 'invalid_client') expect(example.headers).toEqual({});
    if (example instanceof TokenError) expect(example.headers['WWW-Authenticate']).toMatch(/^Bearer realm="realm"/);
    if (example.status === 405) expect(example.headers.Allow).toBe('GET, DELETE');
    if (example.status === 429 || example.status === 503) {
      if (!(example instanceof TokenError)) expect(Number(example.headers['Retry-After'])).toBeGreaterThan(0);
    }
  });

  it('has a row for every error class it exports', () => {
    const classes = Object.entries(table)
      .filter(([, value]) => typeof value === 'function' && value.prototype instanceof OAuthError)
      .map(([name]) => name)
      .filter((name) => name !== 'TokenError');
    expect(new Set(ERRORS.map((row) => row.example.constructor.name))).toEqual(new Set(classes));
  });

  it('is what docs/errors.md shows (UPDATE_DOCS=1 writes it)', () => {
    const docs = readFileSync(DOCS, 'utf8');
    const generated = `${BEGIN}\n${errorTableMarkdown()}\n${END}`;
    const current = docs.slice(docs.indexOf(BEGIN), docs.indexOf(END) + END.length);
    if (process.env.UPDATE_DOCS === '1' && current !== generated) writeFileSync(DOCS, docs.replace(current, generated));
    else expect(current).toBe(generated);
  });
});
