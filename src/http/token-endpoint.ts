import type { Context, Next } from 'koa';
import { InvalidClient, InvalidRequest, MethodNotAllowed, UnsupportedGrantType } from '../../policies/errors.js';
import { translateTokenAnswer } from '../engine/errors.js';
import { encodeForm, parseMultipart, parseUrlEncoded, readBody, type FormParams } from './request-body.js';

export const SUPPORTED_GRANT_TYPES: ReadonlySet<string> = new Set([
  'client_credentials',
  'authorization_code',
  'refresh_token',
]);

const VSCHARS = /^[\x20-\x7e]+$/;

/** Grants whose client must authenticate with HTTP Basic (spec, "Client authentication" 1). */
const BASIC_ONLY_GRANTS: ReadonlySet<string> = new Set(['client_credentials', 'refresh_token']);

/**
 * The parameters each grant requires, and those that belong to another grant and so make a wrong
 * parameter set (spec: invalid_request). Parameters nobody defines are ignored (RFC 6749 §3.1).
 */
const GRANT_PARAMETERS: Record<string, { required: string[]; foreign: string[] }> = {
  client_credentials: { required: [], foreign: ['code', 'code_verifier', 'redirect_uri', 'refresh_token'] },
  authorization_code: { required: ['code', 'redirect_uri'], foreign: ['refresh_token'] },
  refresh_token: { required: ['refresh_token'], foreign: ['code', 'code_verifier', 'redirect_uri'] },
};

function checkParameterSet(grantType: string, params: FormParams, publicClient: boolean): void {
  const { required, foreign } = GRANT_PARAMETERS[grantType]!;
  for (const name of required) {
    if (!params.has(name)) throw new InvalidRequest(`missing required parameter "${name}"`);
  }
  // Spec: the public-client code exchange carries code_verifier (PKCE is always on for them).
  if (publicClient && grantType === 'authorization_code' && !params.has('code_verifier')) {
    throw new InvalidRequest('missing required parameter "code_verifier"');
  }
  const wrong = foreign.filter((name) => params.has(name));
  if (wrong.length) throw new InvalidRequest(`parameter "${wrong[0]}" does not belong to grant_type ${grantType}`);
}

/**
 * RFC 6749 §2.3.1: client_id and client_secret are form-encoded before Base64 in the Basic header.
 * A malformed header is a failed client authentication (401), not a malformed request.
 */
export function parseBasicAuthorization(header: string): { clientId: string; clientSecret: string } {
  const match = /^Basic ([A-Za-z0-9+/]+={0,2})$/i.exec(header);
  if (!match?.[1]) throw new InvalidClient('the Authorization header is not valid HTTP Basic');
  const decoded = Buffer.from(match[1], 'base64').toString('utf8');
  const colon = decoded.indexOf(':');
  if (colon <= 0 || colon === decoded.length - 1) {
    throw new InvalidClient('the Authorization header must carry client_id:client_secret');
  }
  let credentials: { clientId: string; clientSecret: string };
  try {
    credentials = {
      clientId: decodeURIComponent(decoded.slice(0, colon).replace(/\+/g, ' ')),
      clientSecret: decodeURIComponent(decoded.slice(colon + 1).replace(/\+/g, ' ')),
    };
  } catch {
    throw new InvalidClient('the Authorization header credentials are not correctly encoded');
  }
  // RFC 6749 Appendix A.1/A.2: client_id and client_secret are VSCHARs (%x20-7E).
  if (!VSCHARS.test(credentials.clientId) || !VSCHARS.test(credentials.clientSecret)) {
    throw new InvalidClient('the Authorization header credentials hold characters a client ID or secret cannot have');
  }
  return credentials;
}

interface ReadForm {
  params: FormParams;
  /** The urlencoded bytes the engine is to read; undefined when they must be re-encoded. */
  raw: Buffer | undefined;
}

async function readForm(ctx: Context, limit: number): Promise<ReadForm> {
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
  throw new InvalidRequest('the token request body must be application/x-www-form-urlencoded');
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
 * In front of the engine's token endpoint: enforces what the spec and DESIGN require beyond the
 * engine's defaults (size limit, strict parsing, no duplicates, Basic-only credentials, multipart),
 * then passes a normalised urlencoded body on.
 */
export function tokenEndpointGuard(limit: number) {
  return async function guardTokenEndpoint(ctx: Context, next: Next): Promise<void> {
    if (ctx.method !== 'POST') throw new MethodNotAllowed(['POST']);
    const form = await readForm(ctx, limit);
    const { params } = form;
    const grantType = params.get('grant_type');
    if (grantType === undefined) throw new InvalidRequest('missing required parameter "grant_type"');
    if (!SUPPORTED_GRANT_TYPES.has(grantType)) throw new UnsupportedGrantType();
    // Credentials are never put in the request body (spec, "Client authentication" 1).
    if (params.has('client_secret')) {
      throw new InvalidClient('client credentials must not be sent in the request body');
    }
    const authorization = ctx.get('authorization');
    if (authorization) {
      const { clientId } = parseBasicAuthorization(authorization);
      const bodyClientId = params.get('client_id');
      if (bodyClientId !== undefined && bodyClientId !== clientId) {
        throw new InvalidRequest('client_id in the body differs from the authenticated client');
      }
    } else if (BASIC_ONLY_GRANTS.has(grantType)) {
      throw new InvalidClient('client authentication with HTTP Basic is required');
    } else if (!params.has('client_id')) {
      throw new InvalidClient('client_id is required when no Authorization header is sent');
    }
    checkParameterSet(grantType, params, !authorization);
    replaceBody(ctx, form);
    // RFC 6749 §5.2: errors of the token endpoint are JSON; the engine would render HTML to a
    // caller that prefers it.
    ctx.req.headers.accept = 'application/json';
    await next();
    translateTokenAnswer(ctx as Parameters<typeof translateTokenAnswer>[0], grantType);
  };
}

/**
 * CORS at the token endpoint: only a browser on the origin of a public app's redirect URI (an SPA
 * exchanging its code) may call it; nobody else gets a CORS header.
 *
 * - A preflight is answered here: with the CORS headers when its origin is such an origin, without
 *   them otherwise (the browser then stops). Which app calls is unknown at preflight time; the
 *   request itself is checked against its own client by the engine (clientBasedCORS).
 * - A request without an Origin (a server, curl) gets no CORS header at all; the engine would add
 *   `Access-Control-Allow-Origin: *`.
 * - Every answer carries `Pragma: no-cache` beside the engine's `Cache-Control: no-store`, for
 *   HTTP/1.0 caches (RFC 6749 §5.1).
 */
export function tokenEndpointCors(publicOrigins: () => Promise<ReadonlySet<string>>) {
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
