import type { Context, Next } from 'koa';
import { parseBasicAuthorization, type BasicCredentials } from '../../policies/client-authentication.js';
import { InvalidRequest } from '../../policies/errors.js';
import { checkTokenRequest, normalizeTokenRequest, type GrantTable } from '../grants/index.js';
import { translateTokenAnswer } from '../engine/errors.js';
import { encodeForm, parseMultipart, parseUrlEncoded, readBody, type FormParams } from './request-body.js';

const CREDENTIALS = Symbol('the Basic credentials of this request');

type ReadCredentials = { credentials: BasicCredentials | undefined } | { error: unknown };

/**
 * The Basic credentials of a token request, read from its Authorization header once and shared by
 * the request guard and the failed-authentication limit (the engine reads the header again to
 * check the secret: its own parse, which we cannot hand anything to).
 * @throws InvalidClient for a malformed header, each time it is asked.
 */
export function basicCredentialsOf(ctx: Context): BasicCredentials | undefined {
  const state = ctx.state as Record<symbol, ReadCredentials | undefined>;
  let read = state[CREDENTIALS];
  if (!read) {
    const header = ctx.get('authorization');
    try {
      read = { credentials: header ? parseBasicAuthorization(header) : undefined };
    } catch (error) {
      read = { error };
    }
    state[CREDENTIALS] = read;
  }
  if ('error' in read) throw read.error;
  return read.credentials;
}

/** A form body read strictly (no repeated parameter, empty ones dropped). */
export interface ReadForm {
  params: FormParams;
  /** The urlencoded bytes the engine is to read; undefined when they must be re-encoded. */
  raw: Buffer | undefined;
}

/**
 * The form body of a token, revocation or introspection request: urlencoded (or multipart with
 * text fields), within `limit` bytes, each parameter once.
 * @throws InvalidRequest, PayloadTooLarge, RequestTimeout.
 */
export async function readForm(ctx: Context, limit: number): Promise<ReadForm> {
  // RFC 9110 §8.3.1: media types are case-insensitive (Koa leaves them as sent).
  const type = ctx.request.type.toLowerCase();
  if (type === 'application/x-www-form-urlencoded') {
    const raw = await readBody(ctx, limit);
    const params = parseUrlEncoded(raw);
    return { params, raw: params.size === countPairs(raw) ? raw : undefined };
  }
  if (type === 'multipart/form-data') {
    return { params: await parseMultipart(await readBody(ctx, limit), ctx.get('content-type')), raw: undefined };
  }
  throw new InvalidRequest('the request body must be application/x-www-form-urlencoded');
}

/** How many name=value pairs a urlencoded body holds (to tell whether parsing dropped any). */
function countPairs(raw: Buffer): number {
  let pairs = raw.length ? 1 : 0;
  for (const byte of raw) if (byte === 0x26) pairs += 1;
  return pairs;
}

const READABLE_AGAIN: PropertyDescriptor = { value: true, configurable: true };

/**
 * Hands the engine the body we consumed. The engine reads `ctx.req` as a stream; the request is
 * made to yield our bytes in one chunk (own properties on it: cheaper than a new stream, and than
 * an object inheriting from it, which V8 makes pay for turning the request into a prototype).
 */
function replaceBody(ctx: Context, { params, raw }: ReadForm): void {
  const body = raw ?? Buffer.from(encodeForm(params));
  const req = ctx.req;
  req.headers['content-type'] = 'application/x-www-form-urlencoded';
  req.headers['content-length'] = String(body.length);
  delete req.headers['transfer-encoding'];
  Object.defineProperty(req, 'readable', READABLE_AGAIN);
  Object.defineProperty(req, 'iterator', { value: () => [body].values(), configurable: true });
}

/**
 * In front of the engine's token endpoint: reads the body once (size limit, strict parsing, no
 * repeated parameters, multipart accepted), checks the request against its grant's rules
 * (src/grants), then hands the engine a urlencoded body; once the engine answered with tokens,
 * what the grant does after issuing (a code confirmed, a grant extended, the answer's scope).
 */
export function tokenEndpointGuard(limit: number, grants: GrantTable) {
  return async function guardTokenEndpoint(ctx: Context, next: Next): Promise<void> {
    const form = await readForm(ctx, limit);
    const grantType = checkTokenRequest(form.params, () => basicCredentialsOf(ctx));
    replaceBody(ctx, normalizeTokenRequest(grantType, form.params) ? { params: form.params, raw: undefined } : form);
    // RFC 6749 §5.2: errors of the token endpoint are JSON; the engine would render HTML to a
    // caller that prefers it.
    ctx.req.headers.accept = 'application/json';
    await next();
    translateTokenAnswer(ctx as Parameters<typeof translateTokenAnswer>[0], grantType);
    if (ctx.status === 200) await grants.get(grantType)?.afterIssue?.(ctx);
  };
}

/**
 * CORS at the token, revocation and userinfo endpoints: only a browser on the origin of a public
 * app's redirect URI (an SPA exchanging its code, revoking, asking who its user is) may call
 * them; nobody else gets a CORS header.
 *
 * - A preflight is answered here: with the CORS headers when its origin is such an origin, without
 *   them otherwise (the browser then stops). Which app calls is unknown at preflight time; the
 *   request itself is checked against its own client by the engine (clientBasedCORS).
 * - A request without an Origin (a server, curl) gets no CORS header at all; the engine would add
 *   `Access-Control-Allow-Origin: *`.
 * - Every answer carries `Pragma: no-cache` beside the engine's `Cache-Control: no-store`, for
 *   HTTP/1.0 caches (RFC 6749 §5.1).
 */
export function publicAppCors(publicOrigins: () => Promise<ReadonlySet<string>>) {
  return async function tokenCors(ctx: Context, next: Next): Promise<void> {
    const origin = ctx.get('origin');
    ctx.vary('Origin');
    if (ctx.method === 'OPTIONS') {
      ctx.set('Pragma', 'no-cache');
      if (origin && ctx.get('access-control-request-method') && (await publicOrigins()).has(origin)) {
        ctx.set('Access-Control-Allow-Origin', origin);
        ctx.set('Access-Control-Allow-Methods', 'POST');
        const requested = ctx.get('access-control-request-headers');
        if (requested) ctx.set('Access-Control-Allow-Headers', requested);
        ctx.set('Access-Control-Max-Age', '3600');
      }
      ctx.status = 204;
      return;
    }
    try {
      await next();
    } finally {
      ctx.set('Pragma', 'no-cache');
      if (!origin) {
        for (const name of Object.keys(ctx.response.headers)) {
          if (name.toLowerCase().startsWith('access-control-')) ctx.remove(name);
        }
      }
    }
  };
}
