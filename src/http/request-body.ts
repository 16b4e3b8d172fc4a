import { BodyConsumedByHost, InvalidRequest, PayloadTooLarge } from '../../policies/errors.js';
import type { Context } from 'koa';

/** Marks (in `ctx.state`) a request whose body a host application's parser had read before us. */
export const HOST_PARSED_BODY = Symbol('talent-auth: body parsed by the host');

/** Tells the operator how to mount us: the fix for a body that a host parser consumed. */
export const MOUNT_BEFORE_BODY_PARSERS =
  'mount talent-auth before any body parser of the host application (express.json(), express.urlencoded(), '
  + 'koa-bodyparser), or skip those parsers for its paths';


/** A form field as a host's form parser may leave it: a string, or several (a repeated name). */
function formPairs(name: string, value: unknown): string[] {
  const values = Array.isArray(value) ? value : [value];
  if (!values.every((item) => typeof item === 'string')) {
    throw new InvalidRequest(`parameter '${name}' is not a plain form field`);
  }
  return values.map((item) => `${encodeURIComponent(name)}=${encodeURIComponent(item as string)}`);
}

/**
 * The body as its bytes, rebuilt from what a host's parser made of it (Express's `req.body`,
 * koa-bodyparser's `ctx.request.body`), so that it goes through our strict parsers all the same:
 * a repeated form field comes back repeated (and is refused as such), a JSON body as JSON. What
 * cannot be rebuilt (a multipart body, a parser that keeps nothing) is a clear error, never a wait
 * for a stream that has already ended.
 */
function hostParsedBody(ctx: Context, limit: number): Buffer {
  const parsed = (ctx.req as { body?: unknown }).body ?? (ctx.request as { body?: unknown }).body;
  const type = ctx.request.type.toLowerCase();
  let body: Buffer | undefined;
  if (Buffer.isBuffer(parsed)) body = parsed;
  else if (typeof parsed === 'string') body = Buffer.from(parsed, 'utf8');
  else if (typeof parsed === 'object' && parsed !== null && !Array.isArray(parsed)) {
    if (type === 'application/json') body = Buffer.from(JSON.stringify(parsed), 'utf8');
    else if (type === 'application/x-www-form-urlencoded') {
      body = Buffer.from(Object.entries(parsed).flatMap(([name, value]) => formPairs(name, value)).join('&'), 'utf8');
    }
  }
  // A host parser consumed the body and left nothing we can use (a multipart or custom parser).
  if (!body) throw new BodyConsumedByHost(`the request body was read by the host application before talent-auth: ${MOUNT_BEFORE_BODY_PARSERS}`);
  (ctx.state as Record<symbol, unknown>)[HOST_PARSED_BODY] = true;
  if (body.length > limit) throw new PayloadTooLarge(limit);
  return body;
}

/**
 * Reads the raw request body, refusing more than `limit` bytes without buffering them. When a
 * host application's body parser read the request first, what it parsed is used instead (the
 * stream has ended and would never deliver a byte).
 */
export function readBody(ctx: Context, limit: number): Promise<Buffer> {
  const req = ctx.req;
  if (req.readableEnded || !req.readable) {
    try {
      return Promise.resolve(hostParsedBody(ctx, limit));
    } catch (error) {
      return Promise.reject(error);
    }
  }
  const declared = ctx.request.length;
  if (declared !== undefined && declared > limit) return Promise.reject(new PayloadTooLarge(limit));
  // Plain stream events: the async-iterator form costs several times more per request.
  return new Promise((resolve, reject) => {
    const chunks: Buffer[] = [];
    let received = 0;
    const onData = (chunk: Buffer) => {
      received += chunk.length;
      if (received > limit) {
        cleanup();
        req.resume();
        reject(new PayloadTooLarge(limit));
      } else {
        chunks.push(chunk);
      }
    };
    const onEnd = () => {
      cleanup();
      if (declared !== undefined && received !== declared) {
        reject(new InvalidRequest('request body length does not match Content-Length'));
      } else {
        resolve(chunks.length === 1 ? chunks[0]! : Buffer.concat(chunks, received));
      }
    };
    const onError = () => {
      cleanup();
      reject(new InvalidRequest('the request body could not be read'));
    };
    const onAborted = () => onError();
    const cleanup = () => {
      req.off('data', onData).off('end', onEnd).off('error', onError).off('aborted', onAborted);
    };
    req.on('data', onData).on('end', onEnd).on('error', onError).on('aborted', onAborted);
  });
}

export type FormParams = Map<string, string>;

function decodeComponent(value: string): string {
  // Most values have nothing to decode (ids, grant types, base64url): taken as they are.
  if (value.indexOf('%') === -1 && value.indexOf('+') === -1) return value;
  try {
    return decodeURIComponent(value.replace(/\+/g, ' '));
  } catch {
    throw new InvalidRequest('request body values are not correctly URL-encoded');
  }
}

/**
 * RFC 6749 §3.2: parameters MUST NOT be included more than once; §3.1: a parameter sent without a
 * value is treated as omitted.
 */
function addParam(params: FormParams, name: string, value: string): void {
  if (params.has(name)) throw new InvalidRequest(`parameter '${name}' must not be provided twice`);
  params.set(name, value);
}

const utf8 = new TextDecoder('utf-8', { fatal: true });

/**
 * Each name=value pair of an application/x-www-form-urlencoded body, in order, strictly:
 * malformed escapes or invalid UTF-8 are refused, and so is a body that starts with a byte order
 * mark. Names may repeat here; what a repetition means is the visitor's to say.
 */
function visitUrlEncoded(body: Buffer, visit: (name: string, value: string) => void): void {
  // A byte order mark would be read as part of the first name by other parsers (the engine's
  // among them), so that they would see other parameters than we do: refused, not stripped.
  if (body[0] === 0xef && body[1] === 0xbb && body[2] === 0xbf) {
    throw new InvalidRequest('the request body must not start with a byte order mark');
  }
  let text: string;
  try {
    text = utf8.decode(body);
  } catch {
    throw new InvalidRequest('request body is not valid UTF-8');
  }
  for (const pair of text.split('&')) {
    if (pair === '') continue;
    const eq = pair.indexOf('=');
    visit(decodeComponent(eq === -1 ? pair : pair.slice(0, eq)), eq === -1 ? '' : decodeComponent(pair.slice(eq + 1)));
  }
}

/** The name=value pairs of a urlencoded body, in order, repetitions kept (see visitUrlEncoded). */
export function urlEncodedPairs(body: Buffer): Array<[string, string]> {
  const pairs: Array<[string, string]> = [];
  visitUrlEncoded(body, (name, value) => pairs.push([name, value]));
  return pairs;
}

/** application/x-www-form-urlencoded as OAuth reads it: each parameter once (RFC 6749 §3.2), empty ones dropped (§3.1). */
export function parseUrlEncoded(body: Buffer): FormParams {
  const params: FormParams = new Map();
  visitUrlEncoded(body, (name, value) => addParam(params, name, value));
  for (const [name, value] of params) if (value === '') params.delete(name);
  return params;
}

/**
 * multipart/form-data with text fields only: some HTTP clients send a token request this way, and
 * it carries the same parameters; a file part is refused.
 */
export async function parseMultipart(body: Buffer, contentType: string): Promise<FormParams> {
  let form: FormData;
  try {
    form = await new Response(body, { headers: { 'content-type': contentType } }).formData();
  } catch {
    throw new InvalidRequest('request body is not valid multipart/form-data');
  }
  const params: FormParams = new Map();
  for (const [name, value] of form.entries()) {
    if (typeof value !== 'string') throw new InvalidRequest(`parameter '${name}' must not be a file`);
    addParam(params, name, value);
  }
  for (const [name, value] of params) if (value === '') params.delete(name);
  return params;
}

export function encodeForm(params: FormParams): string {
  return new URLSearchParams([...params]).toString();
}
